#!/usr/bin/env python3
"""Checks that every metric of profiles/metrics.csv exists on the GPU, with a valid suffix.

Usage: check_metrics.py METRICS_CSV QUERY_METRICS_TXT [--raw-csv EXPORT.csv ...]

QUERY_METRICS_TXT is what `ncu --query-metrics --chip gh100` prints: one line per base metric,
with its type (Counter, Ratio or Throughput). A metric name in the curated list is a base name
and suffixes, e.g. dram__bytes_read.sum or sm__throughput.avg.pct_of_peak_sustained_elapsed.
The check:

  - the base name (the part before the first ".") must be in the query output; a close
    spelling is suggested when it is not;
  - the suffixes must fit the type: a Counter takes a rollup (.sum .avg .min .max) and then
    optionally one submetric (.per_second, .pct_of_peak_sustained_active, ...); a Throughput
    takes a rollup and a .pct_of_peak_sustained_* submetric; a Ratio takes nothing or one of
    .ratio .pct .max_rate;
  - launch__* names are launch statistics that ncu records for every kernel, not hardware
    counters, and --query-metrics does not list them: they are checked against the short list
    of launch statistics below instead, and take no suffix.

With --raw-csv (an export of a `--set full` profile), every curated name marked
`collected=full-set` in metrics.csv must also be a column of that export; for a name that is
not, the columns with the same base name are listed. Names marked `explicit` are the allow-list
of counters that --set full does not collect: profile.py asks ncu for them by name (--metrics),
so they are not required in the export, and are only reported in a note. Keep that list short: a
name that ncu rejects in --metrics makes the whole profile fail. The export is the final word on
the exact names: run this on the GPU machine after the first `make profile`.
"""
import argparse
import difflib
import sys

from compare import ProfileError, load_curated_metrics, read_csv_rows

ROLLUPS = {"sum", "avg", "min", "max"}
THROUGHPUT_SUBMETRICS = {"pct_of_peak_sustained_active", "pct_of_peak_sustained_elapsed",
                         "pct_of_peak_sustained_frame", "pct_of_peak_sustained_region"}
COUNTER_SUBMETRICS = THROUGHPUT_SUBMETRICS | {
    "per_second", "per_cycle_active", "per_cycle_elapsed", "per_cycle_in_frame",
    "per_cycle_in_region", "peak_sustained", "peak_sustained_active", "peak_sustained_elapsed",
    "peak_sustained_frame", "peak_sustained_region"}
RATIO_SUBMETRICS = {"ratio", "pct", "max_rate"}
METRIC_TYPES = {"Counter", "Ratio", "Throughput"}

# The launch statistics of ncu's LaunchStats and Occupancy sections.
LAUNCH_METRICS = {
    "launch__block_size", "launch__grid_size", "launch__thread_count",
    "launch__registers_per_thread", "launch__shared_mem_config_size",
    "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_driver", "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps"}


def read_query_metrics(path):
    """{base name: type} from the output of `ncu --query-metrics`.

    Each metric starts a line: name, type, unit, description. Lines that start with a space
    continue a description; headers, rulers and ncu's ==PROF== notes have no metric type.
    """
    try:
        with open(path) as file:
            lines = file.read().splitlines()
    except OSError as error:
        raise ProfileError(f"cannot read {path}: {error.strerror}") from error
    known = {}
    for line in lines:
        fields = line.split()
        if line[:1].strip() and len(fields) >= 2 and fields[1] in METRIC_TYPES:
            known[fields[0]] = fields[1]
    if not known:
        raise ProfileError(f"{path}: no metrics found; expected the output of ncu --query-metrics")
    return known


def suffixes_fit(kind, suffixes):
    """Whether the suffixes after the base name are valid for a metric of type `kind`."""
    if kind == "Ratio":
        return not suffixes or (len(suffixes) == 1 and suffixes[0] in RATIO_SUBMETRICS)
    if not suffixes or suffixes[0] not in ROLLUPS:
        return False
    rest = suffixes[1:]
    if kind == "Throughput":
        return len(rest) == 1 and rest[0] in THROUGHPUT_SUBMETRICS
    return not rest or (len(rest) == 1 and rest[0] in COUNTER_SUBMETRICS)


def problem_with(name, known):
    """What is wrong with one curated metric name, or None when it is fine."""
    base, *suffixes = name.split(".")
    if base.startswith("launch__"):
        if base not in LAUNCH_METRICS:
            return f"{base} is not one of ncu's launch statistics"
        return "launch statistics take no suffix" if suffixes else None
    kind = known.get(base)
    if kind is None:
        close = difflib.get_close_matches(base, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"{base} is not in the query output{hint}"
    if not suffixes_fit(kind, suffixes):
        return f"'.{'.'.join(suffixes)}' is not a valid suffix for {base}, a {kind} metric"
    return None


def raw_columns(path):
    """The column names of an ncu raw CSV export (its first row after ncu's == lines)."""
    for row in read_csv_rows(path):
        if row and not row[0].startswith("=="):
            return row
    raise ProfileError(f"{path}: the file is empty")


def check(metrics_csv, query_txt, raw_csvs=()):
    """All problems found, as lines; an empty list means the curated list is fine."""
    metrics = load_curated_metrics(metrics_csv)
    known = read_query_metrics(query_txt)
    problems = []
    for metric in metrics:
        problem = problem_with(metric.name, known)
        if problem:
            problems.append(f"{metric.name}: {problem}")
    for path in raw_csvs:
        columns = raw_columns(path)
        for metric in metrics:
            if metric.collected == "full-set" and metric.name not in columns:
                base = metric.name.split(".")[0]
                similar = [column for column in columns if column.split(".")[0] == base]
                hint = f"; columns with that base name: {', '.join(similar)}" if similar else ""
                problems.append(f"{metric.name}: not a column of {path}{hint} (it is marked "
                                "full-set; mark it explicit only if --set full has no form of it)")
    return problems


def explicit_notes(metrics_csv, raw_csvs=()):
    """One line per metric marked explicit: collected with --metrics, and whether each export
    has it (an export of profile.py does; one made with --set full alone does not)."""
    notes = []
    for metric in load_curated_metrics(metrics_csv):
        if metric.collected != "explicit":
            continue
        note = f"note: {metric.name} is collected explicitly (profile.py passes it to --metrics)"
        present = [str(path) for path in raw_csvs if metric.name in raw_columns(path)]
        if present:
            note += (f"; it is a column of {', '.join(present)}: if that export was made without "
                     "--metrics, --set full has it, so mark it full-set")
        notes.append(note)
    return notes


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="check_metrics.py",
        description="Check the curated metric names against ncu --query-metrics output.")
    parser.add_argument("metrics_csv", help="the curated list, profiles/metrics.csv")
    parser.add_argument("query_txt", help="output of: ncu --query-metrics --chip gh100")
    parser.add_argument("--raw-csv", action="append", default=[], metavar="EXPORT",
                        help="also require every full-set metric as a column of this export "
                             "(repeatable)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        problems = check(args.metrics_csv, args.query_txt, args.raw_csv)
        notes = explicit_notes(args.metrics_csv, args.raw_csv)
    except ProfileError as error:
        sys.exit(f"check_metrics.py: {error}")
    for line in problems + notes:
        print(line)
    if problems:
        sys.exit(f"check_metrics.py: {len(problems)} problem(s) in {args.metrics_csv}")
    checked = " and ".join([args.query_txt] + args.raw_csv)
    print(f"check_metrics.py: every metric of {args.metrics_csv} is valid ({checked})")


if __name__ == "__main__":
    main()
