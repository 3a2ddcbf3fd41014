#!/usr/bin/env python3
"""Profiles one lesson kernel with Nsight Compute and exports its raw metrics as CSV.

Usage: profile.py NN [--m M --n N --k K] [--build build] [--no-explicit-metrics]
       make profile L=NN [M=... N=... K=...]

Runs the lesson executable in its --profile mode (one warm-up launch and one launch of the
lesson kernel, no cuBLAS, no check) under ncu, and writes

    profiles/reports/lessonNN.ncu-rep   the full report: open it in the Nsight Compute GUI
    profiles/reports/lessonNN.csv       its raw page as CSV: what compare.py reads
    profiles/reports/lessonNN.json      the shape and ncu version, for make_reference.py

The ncu options, and why (docs/profiling.md explains them for students):

    --set full                     every section, so the report answers later questions too
    --import-source yes            put the CUDA sources into the report: the Source page works on
                                   any machine (the build passes -lineinfo)
    --clock-control none           let the GPU run at its normal boost clock, as in make bench;
                                   ncu's default locks it to the base clock
    --kernel-name-base demangled   match the kernel by its C++ name ...
    --kernel-name regex:^(void )?lessonNN::
                                   ... in namespace lessonNN (templates print "void " first), so
                                   the harness's own kernels (random fill, NaN poison) are ignored
    --launch-skip 1                skip the warm-up launch: it also pays for loading the
                                   module and starts with a cold instruction cache
    --launch-count 1               profile the second launch only
    --metrics <explicit metrics>   the few metrics of profiles/metrics.csv marked
                                   collected=explicit: counters that --set full does not collect
                                   in any form (the others are columns of every full-set export,
                                   checked by check_metrics.py --raw-csv). Only those go here,
                                   because one name that ncu rejects fails the whole profile;
                                   --no-explicit-metrics leaves them out (compare.py then shows
                                   them as n/a). No --metrics at all when none is marked explicit.

The CSV export uses --print-units base so that every value is in the same unit in every file
(nanoseconds, bytes, ...): by default ncu scales each value to a readable unit separately per
kernel (1.95 ms for one lesson, 597.12 us for the next; Kbyte here, byte there). compare.py can
convert the common units, but files in base units need no conversion. It also uses
--print-kernel-base demangled so that the Kernel Name column keeps the namespace: by default ncu
prints "void gemm_kernel<...>(...)" without "lesson03::", and then compare.py cannot tell the
lesson kernel from the harness's kernels in an export that holds several.
"""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from compare import (DEFAULT_METRICS_CSV, DEFAULT_REPORTS_DIR, ProfileError, kernel_name_regex,
                     lesson_id, load_curated_metrics, read_ncu_raw)

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_SIZE = 4096


def profile_command(ncu, executable, lesson, shape, report, metrics):
    """The ncu command line that profiles lesson NN's kernel into `report` (an .ncu-rep path).

    `metrics` are the explicit metrics, collected on top of --set full; none: no --metrics.
    """
    m, n, k = shape
    return ([str(ncu),
             "--set", "full",
             "--import-source", "yes",
             "--clock-control", "none",
             "--kernel-name-base", "demangled",
             "--kernel-name", f"regex:{kernel_name_regex(lesson)}",
             "--launch-skip", "1",
             "--launch-count", "1"]
            + (["--metrics", ",".join(metrics)] if metrics else [])
            + ["--export", str(report),
               "--force-overwrite",
               str(executable), "--profile", "--m", str(m), "--n", str(n), "--k", str(k)])


def explicit_metrics(curated):
    """The names profile.py passes to --metrics: those marked collected=explicit."""
    return [metric.name for metric in curated if metric.collected == "explicit"]


def export_command(ncu, report):
    """The ncu command line that prints the raw page of `report` as CSV on stdout."""
    return [str(ncu), "--import", str(report), "--csv", "--page", "raw",
            "--print-units", "base", "--print-kernel-base", "demangled"]


def ncu_version(ncu):
    """The last line of `ncu --version` (e.g. 'Version 2025.3.0.0 (build ...)'), or 'unknown'."""
    result = subprocess.run([str(ncu), "--version"], capture_output=True, text=True)
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return lines[-1] if result.returncode == 0 and lines else "unknown"


def run_profile(ncu, executable, lesson, shape, reports_dir, metrics):
    """Profiles, exports and records; returns the paths written. Errors are ProfileError."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    report = reports_dir / f"lesson{lesson}.ncu-rep"
    export = reports_dir / f"lesson{lesson}.csv"
    record = reports_dir / f"lesson{lesson}.json"
    for path in (report, export, record):  # never mistake an earlier run's files for this one's
        path.unlink(missing_ok=True)

    command = profile_command(ncu, executable, lesson, shape, report, metrics)
    result = subprocess.run(command)
    if result.returncode != 0:
        hint = (f"; if it rejected a --metrics name ({', '.join(metrics)}), fix "
                "profiles/metrics.csv or profile with --no-explicit-metrics") if metrics else ""
        raise ProfileError(f"ncu failed with exit code {result.returncode} while profiling lesson "
                           f"{lesson} (its messages are above){hint}")
    if not report.exists():
        raise ProfileError(f"ncu wrote no report: no second launch of a kernel matching "
                           f"{kernel_name_regex(lesson)} (is the kernel in namespace "
                           f"lesson{lesson}?)")

    result = subprocess.run(export_command(ncu, report), stdout=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise ProfileError(f"ncu failed with exit code {result.returncode} "
                           f"while exporting {report}")
    export.write_text(result.stdout)
    read_ncu_raw(export, lesson)  # the export must be readable by compare.py and make_reference.py

    m, n, k = shape
    record.write_text(json.dumps({"lesson": lesson, "m": m, "n": n, "k": k,
                                  "ncu": ncu_version(ncu), "command": command}, indent=2) + "\n")
    return report, export, record


def positive(text):
    """argparse type for a matrix size."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive size")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="profile.py",
        description="Profile lesson NN's kernel with Nsight Compute (report + raw CSV).")
    parser.add_argument("lesson", metavar="NN")
    parser.add_argument("--m", type=positive, default=DEFAULT_SIZE)
    parser.add_argument("--n", type=positive, default=DEFAULT_SIZE)
    parser.add_argument("--k", type=positive, default=DEFAULT_SIZE)
    parser.add_argument("--build", type=Path, default=REPOSITORY / "build",
                        help="the CMake build folder (default: build)")
    parser.add_argument("--ncu", default="ncu", help="the ncu executable (default: ncu on PATH)")
    parser.add_argument("--reports-dir", type=Path, default=DEFAULT_REPORTS_DIR)
    parser.add_argument("--metrics-csv", type=Path, default=DEFAULT_METRICS_CSV)
    parser.add_argument("--no-explicit-metrics", action="store_true",
                        help="collect --set full only, without the metrics marked explicit "
                             "in metrics.csv")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        lesson = lesson_id(args.lesson)
        ncu = shutil.which(args.ncu)
        if ncu is None:
            raise ProfileError(f"'{args.ncu}' not found: install Nsight Compute (ncu comes with "
                               "the CUDA toolkit, in /usr/local/cuda/bin) and put it on PATH")
        executable = args.build / "lessons" / f"lesson{lesson}"
        if not executable.exists():
            raise ProfileError(f"{executable} not found: build it first with make lesson{lesson}")
        curated = load_curated_metrics(args.metrics_csv)
        metrics = [] if args.no_explicit_metrics else explicit_metrics(curated)
        paths = run_profile(ncu, executable, lesson, (args.m, args.n, args.k), args.reports_dir,
                            metrics)
    except ProfileError as error:
        sys.exit(f"profile.py: {error}")
    except OSError as error:
        sys.exit(f"profile.py: {error}")
    for path in paths:
        print(f"wrote {path}")
    print(f"open the report in the Nsight Compute GUI (ncu-ui), or compare: "
          f"make compare A=<an earlier lesson> B={lesson}")


if __name__ == "__main__":
    main()
