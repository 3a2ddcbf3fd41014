#!/usr/bin/env python3
"""Profiles one lesson kernel with Nsight Compute and exports its raw metrics as CSV.

Usage: profile.py NN [--m M --n N --k K] [--build build] [--no-explicit-metrics | --curated-only]
       make profile L=NN [M=... N=... K=...] [CURATED=1]

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
                                   the harness's own kernels (random fill, NaN poison) are ignored.
                                   A lesson that runs a kernel of a header it includes is
                                   profiled in that kernel's namespace: lessons 15-18 in
                                   gemm::hopper::, the final kernel (compare.py's
                                   kernel_namespace reads it from the sources)
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

--curated-only collects the curated metrics alone, for reference files (make_reference.py): no
--set full and no --import-source, but --metrics with every name of profiles/metrics.csv and
device__attribute_display_name (the GPU's name, which the reference folder is named after). ncu
then replays the kernel only for the passes those counters take, fewer than the full set's many;
the report has only those metrics and no Source page. Each name it collects must exist
(check_metrics.py checks them against ncu --query-metrics), and each curated metric must have a
value in the export, as make_reference.py wants.

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

from compare import (DEFAULT_LESSONS_DIR, DEFAULT_METRICS_CSV, DEFAULT_REPORTS_DIR, ProfileError,
                     kernel_name_regex, kernel_namespace, lesson_id, load_curated_metrics,
                     read_ncu_raw)

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_SIZE = 4096

# The GPU's name: a column of every --set full export; a curated-only profile asks for it.
GPU_NAME_METRIC = "device__attribute_display_name"


def profile_command(ncu, executable, kernel_regex, shape, report, metrics, full_set=True):
    """The ncu command line that profiles the kernel matching `kernel_regex` into `report` (an
    .ncu-rep path).

    `metrics` go to --metrics (none: no --metrics): on top of --set full and the sources with
    `full_set`, alone without it (--curated-only).
    """
    m, n, k = shape
    return ([str(ncu)]
            + (["--set", "full", "--import-source", "yes"] if full_set else [])
            + ["--clock-control", "none",
               "--kernel-name-base", "demangled",
               "--kernel-name", f"regex:{kernel_regex}",
               "--launch-skip", "1",
               "--launch-count", "1"]
            + (["--metrics", ",".join(metrics)] if metrics else [])
            + ["--export", str(report),
               "--force-overwrite",
               str(executable), "--profile", "--m", str(m), "--n", str(n), "--k", str(k)])


def explicit_metrics(curated):
    """The names profile.py passes to --metrics with --set full: those marked collected=explicit."""
    return [metric.name for metric in curated if metric.collected == "explicit"]


def curated_only_metrics(curated):
    """The names profile.py passes to --metrics with --curated-only: every curated metric, and the
    GPU's name for make_reference.py."""
    return [metric.name for metric in curated] + [GPU_NAME_METRIC]


def export_command(ncu, report):
    """The ncu command line that prints the raw page of `report` as CSV on stdout."""
    return [str(ncu), "--import", str(report), "--csv", "--page", "raw",
            "--print-units", "base", "--print-kernel-base", "demangled"]


def ncu_version(ncu):
    """The last line of `ncu --version` (e.g. 'Version 2025.3.0.0 (build ...)'), or 'unknown'."""
    result = subprocess.run([str(ncu), "--version"], capture_output=True, text=True)
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return lines[-1] if result.returncode == 0 and lines else "unknown"


def run_profile(ncu, executable, lesson, shape, reports_dir, curated, collection, lessons_dir):
    """Profiles, exports and records; returns the paths written. Errors are ProfileError.

    `collection`: "full" (--set full and the explicit metrics), "full-without-explicit" (--set
    full alone) or "curated-only" (the curated metrics alone).
    """
    reports_dir.mkdir(parents=True, exist_ok=True)
    report = reports_dir / f"lesson{lesson}.ncu-rep"
    export = reports_dir / f"lesson{lesson}.csv"
    record = reports_dir / f"lesson{lesson}.json"
    for path in (report, export, record):  # never mistake an earlier run's files for this one's
        path.unlink(missing_ok=True)

    namespace = kernel_namespace(lesson, lessons_dir)
    metrics = {"full": explicit_metrics(curated), "full-without-explicit": [],
               "curated-only": curated_only_metrics(curated)}[collection]
    command = profile_command(ncu, executable, kernel_name_regex(namespace), shape, report, metrics,
                              full_set=collection != "curated-only")
    result = subprocess.run(command)
    if result.returncode != 0:
        hint = {"full": f"; if it rejected a --metrics name ({', '.join(metrics)}), fix "
                        "profiles/metrics.csv or profile with --no-explicit-metrics",
                "full-without-explicit": "",
                "curated-only": "; if it rejected a --metrics name, check profiles/metrics.csv "
                                "with check_metrics.py against ncu --query-metrics"}[collection]
        raise ProfileError(f"ncu failed with exit code {result.returncode} while profiling lesson "
                           f"{lesson} (its messages are above){hint}")
    if not report.exists():
        raise ProfileError(f"ncu wrote no report: no second launch of a kernel matching "
                           f"{kernel_name_regex(namespace)} (is lesson {lesson}'s kernel in "
                           f"namespace {namespace}?)")

    result = subprocess.run(export_command(ncu, report), stdout=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise ProfileError(f"ncu failed with exit code {result.returncode} "
                           f"while exporting {report}")
    export.write_text(result.stdout)
    # The export must be readable by compare.py and make_reference.py.
    profile = read_ncu_raw(export, lesson, lessons_dir)
    if collection == "curated-only":
        missing = [metric.name for metric in curated if profile.number(metric.name) is None]
        missing += [] if profile.values.get(GPU_NAME_METRIC, "").strip() else [GPU_NAME_METRIC]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise ProfileError(f"{export}: no value for {missing[0]}{more}, although ncu was "
                               "asked for it: make_reference.py needs every curated metric and "
                               "the GPU's name")

    m, n, k = shape
    record.write_text(json.dumps({"lesson": lesson, "m": m, "n": n, "k": k,
                                  "kernel_namespace": namespace, "collection": collection,
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
    parser.add_argument("--lessons-dir", type=Path, default=DEFAULT_LESSONS_DIR,
                        help="the lessons' sources, which name the kernel's namespace")
    collection = parser.add_mutually_exclusive_group()
    collection.add_argument("--no-explicit-metrics", action="store_true",
                            help="collect --set full only, without the metrics marked explicit "
                                 "in metrics.csv")
    collection.add_argument("--curated-only", action="store_true",
                            help="collect only the metrics of metrics.csv (few replay passes, no "
                                 "Source page): enough for make_reference.py")
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
        collection = ("curated-only" if args.curated_only else
                      "full-without-explicit" if args.no_explicit_metrics else "full")
        paths = run_profile(ncu, executable, lesson, (args.m, args.n, args.k), args.reports_dir,
                            curated, collection, args.lessons_dir)
    except ProfileError as error:
        sys.exit(f"profile.py: {error}")
    except OSError as error:
        sys.exit(f"profile.py: {error}")
    for path in paths:
        print(f"wrote {path}")
    if args.curated_only:
        print(f"compare: make compare A=<an earlier lesson> B={lesson}; or, from a clean checkout, "
              f"make the reference: python3 profiles/make_reference.py {lesson} "
              "--commit $(git rev-parse --short HEAD) --date $(date -u +%F)")
    else:
        print(f"open the report in the Nsight Compute GUI (ncu-ui), or compare: "
              f"make compare A=<an earlier lesson> B={lesson}")


if __name__ == "__main__":
    main()
