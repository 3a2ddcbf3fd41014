#!/usr/bin/env python3
"""Turns a local Nsight Compute export into a committed reference file for lesson NN.

Usage: make_reference.py NN --commit SHA --date YYYY-MM-DD [--reference-dir FOLDER]

Reads profiles/reports/lessonNN.csv (the raw export of `make profile L=NN`, or of
`make profile L=NN CURATED=1`, which collects just what a reference needs) and the shape that
profile.py recorded next to it (lessonNN.json), and writes profiles/reference/<model>/lessonNN.csv:
only the curated metrics of profiles/metrics.csv, so that students without a GPU or a profiler
can run compare.py against numbers measured on one of our GPUs. <model> is the folder name of the
GPU the export was measured on (compare.gpu_model: h100, h200, ...); --reference-dir FOLDER writes
into FOLDER instead. The file states where its numbers come from, in "# key: value" lines, then a
metric,unit,value table:

    # lesson: 08
    # kernel: void lesson08::gemm_kernel<...>(...)
    # gpu: NVIDIA H100 80GB HBM3
    # shape: 4096 x 4096 x 4096
    # date: 2025-06-30
    # commit: 1a2b3c4
    # ncu: Version 2025.3.0.0 (build ...)
    metric,unit,value
    gpu__time_duration.sum,nsecond,...

The commit is the one the kernel was built from: profile from a clean checkout of it. Every
curated metric must be in the export, so that no reference silently lacks one.
"""
import argparse
import csv
import datetime
import io
import json
import re
import sys
from pathlib import Path

from compare import (DEFAULT_LESSONS_DIR, DEFAULT_METRICS_CSV, DEFAULT_REFERENCES_ROOT,
                     DEFAULT_REPORTS_DIR, REFERENCE_COLUMNS, ProfileError, gpu_model, lesson_id,
                     load_curated_metrics, read_ncu_raw)


def read_shape(record_path):
    """('M x N x K', ncu version) from the lessonNN.json written by profile.py."""
    try:
        with open(record_path) as file:
            record = json.load(file)
        shape = f"{int(record['m'])} x {int(record['n'])} x {int(record['k'])}"
        return shape, record.get("ncu", "")
    except OSError as error:
        raise ProfileError(f"cannot read {record_path} ({error.strerror}): profile.py writes it "
                           "with the shape; run make profile first") from error
    except (ValueError, KeyError, TypeError) as error:
        raise ProfileError(f"{record_path}: no valid m, n, k ({error})") from error


def reference_text(profile, curated, shape, ncu_version, date, commit):
    """The reference file's content; an error if the export lacks a curated metric."""
    missing = [metric.name for metric in curated if profile.number(metric.name) is None]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ProfileError(f"{profile.path}: no value for {missing[0]}{more}; fix "
                           "profiles/metrics.csv (check_metrics.py --raw-csv helps) and "
                           "profile again")
    lines = [f"# lesson: {profile.lesson}",
             f"# kernel: {profile.info['kernel']}",
             f"# gpu: {profile.info['gpu']}",
             f"# shape: {shape}",
             f"# date: {date}",
             f"# commit: {commit}",
             f"# ncu: {ncu_version or 'unknown'}"]
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(REFERENCE_COLUMNS)
    for metric in curated:
        # Plain digits: the thousands separators of ncu's export are for people, not files.
        value = profile.values[metric.name].strip().replace(",", "")
        writer.writerow([metric.name, profile.units[metric.name], value])
    return "\n".join(lines) + "\n" + table.getvalue()


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="make_reference.py",
        description="Write profiles/reference/<model>/lessonNN.csv from a local ncu export.")
    parser.add_argument("lesson", metavar="NN")
    parser.add_argument("--commit", required=True, help="the commit the kernel was built from")
    parser.add_argument("--date", required=True, help="the day of the measurement, YYYY-MM-DD")
    parser.add_argument("--reports-dir", type=Path, default=DEFAULT_REPORTS_DIR)
    parser.add_argument("--references-root", type=Path, default=DEFAULT_REFERENCES_ROOT,
                        help="where the per-model folders are (default: profiles/reference)")
    parser.add_argument("--reference-dir", type=Path,
                        help="write into this folder instead of <references-root>/<model>")
    parser.add_argument("--lessons-dir", type=Path, default=DEFAULT_LESSONS_DIR)
    parser.add_argument("--metrics-csv", type=Path, default=DEFAULT_METRICS_CSV)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        lesson = lesson_id(args.lesson)
        if not re.fullmatch(r"[0-9a-f]{7,40}", args.commit):
            raise ProfileError(f"--commit '{args.commit}' is not a commit SHA (7 to 40 hex digits)")
        try:
            date = datetime.date.fromisoformat(args.date).isoformat()
        except ValueError:
            raise ProfileError(f"--date '{args.date}' is not a date in the form "
                               "YYYY-MM-DD") from None
        export = args.reports_dir / f"lesson{lesson}.csv"
        if not export.exists():
            raise ProfileError(f"no export {export}: run make profile L={lesson} CURATED=1 on the "
                               "GPU to measure first")
        profile = read_ncu_raw(export, lesson, args.lessons_dir)
        if args.reference_dir is not None:
            reference_dir = args.reference_dir
        else:
            try:
                reference_dir = args.references_root / gpu_model(profile.info["gpu"])
            except ProfileError as error:
                raise ProfileError(f"{export}: {error}; name the folder with "
                                   "--reference-dir") from None
        shape, ncu_version = read_shape(export.with_suffix(".json"))
        text = reference_text(profile, load_curated_metrics(args.metrics_csv), shape, ncu_version,
                              date, args.commit)
        reference_dir.mkdir(parents=True, exist_ok=True)
        target = reference_dir / f"lesson{lesson}.csv"
        target.write_text(text)
        print(f"wrote {target}")
    except ProfileError as error:
        sys.exit(f"make_reference.py: {error}")
    except OSError as error:
        sys.exit(f"make_reference.py: cannot write the reference: {error}")


if __name__ == "__main__":
    main()
