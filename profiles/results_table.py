#!/usr/bin/env python3
"""The markdown page of the CSV that `make bench` writes, one pair of files per GPU model.

Usage: results_table.py RESULTS.csv > RESULTS.md
       results_table.py RESULTS.csv --store docs/results
                                      copies RESULTS.csv to docs/results/<model>.csv and writes
                                      docs/results/<model>.md (make bench does this)

<model> is the folder name of the GPU the rows name (compare.gpu_model: h100, h200, ...): every
row of a file must name the same GPU. The page names that GPU in its title.

From the rows of the plain product D = A * B^T, three tables with one row per lesson and one
column per shape of the sweep: % of cuBLAS (the paired ratio), TFLOP/s with the range of cuBLAS's
own TFLOP/s under it, and the SM clock and peak power during the timed pairs, which explain why
the absolute figures move between runs while the ratio stays. Then, where the file has rows of
lesson 15's fused epilogue, one table of those against cuBLASLt's fused epilogue. A lesson that
failed the correctness check on a shape was not timed there: its cells say FAIL.
"""
import argparse
import csv
import shutil
import sys
import textwrap
from pathlib import Path

from compare import ProfileError, gpu_model

PLAIN = "plain"  # the `epilogue` of the plain product's rows


def load(path):
    """The rows of a results CSV; ValueError for a file without rows or columns, or of several
    GPUs (one file per GPU: the figures of two GPUs do not belong in one table)."""
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    if not rows:
        raise ValueError(f"{path}: no measurements")
    required = {"lesson", "slug", "m", "n", "k", "epilogue", "check", "pairs", "lesson_tflops",
                "reference", "reference_tflops", "ratio", "sm_mhz_median", "power_w_peak", "gpu",
                "date", "commit"}
    missing = required - set(rows[0])
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    gpus = list(dict.fromkeys(row["gpu"] for row in rows))
    if len(gpus) > 1:
        raise ValueError(f"{path}: rows of {len(gpus)} GPUs ({', '.join(gpus)}); keep one file "
                         "per GPU")
    return rows


def is_plain(row):
    """True for the plain product's rows; the others carry a fused epilogue."""
    return row["epilogue"] == PLAIN


def shape_of(row):
    return f"{row['m']} x {row['n']} x {row['k']}"


def percent(row):
    return f"{100 * float(row['ratio']):.1f}%" if row["ratio"] else "-"


def tflops(row):
    return row["lesson_tflops"] or "-"


def clock(row):
    """'median MHz / peak W' during the timed pairs; n/a where NVML could not be read."""
    if not row["pairs"]:
        return "-"
    if not row["sm_mhz_median"]:
        return "n/a"
    return f"{row['sm_mhz_median']} MHz / {row['power_w_peak']} W"


def cell(row, text_of):
    """A table cell: '-' where the lesson did not run, FAIL where its check failed."""
    if row is None:
        return "-"
    return "FAIL" if row["check"] == "fail" else text_of(row)


def lesson_name(lesson, slug):
    return f"{lesson:02d} {slug}"


def lesson_ranges(lessons):
    """[1, 2, 3, 5, 9] -> '01-03, 05, 09'."""
    ranges, start = [], None
    for index, lesson in enumerate(lessons):
        if start is None:
            start = lesson
        if index + 1 == len(lessons) or lessons[index + 1] != lesson + 1:
            ranges.append(f"{start:02d}" if start == lesson else f"{start:02d}-{lesson:02d}")
            start = None
    return ", ".join(ranges)


def measured_when(rows):
    """'2026-11-23, commit `71f85ba`', or, when the lessons were measured in several runs, which
    lessons in which: 'lessons 01-08 on 2026-11-23 at commit `71f85ba`; lessons 09-11 on ...'."""
    runs = {}
    for row in rows:
        runs.setdefault((row["date"], row["commit"]), set()).add(int(row["lesson"]))
    if len(runs) == 1:
        (date, commit), = runs
        return f"{date}, commit `{commit}`"
    return "; ".join(f"lessons {lesson_ranges(sorted(lessons))} on {date} at commit `{commit}`"
                     for (date, commit), lessons in sorted(runs.items(), key=lambda run: min(run[1])))


def clock_sentence(rows):
    """How far the SM clock moved over the timed rows, and the highest power: from the file."""
    timed = [row for row in rows if row["pairs"] and row["sm_mhz_median"]]
    if not timed:
        return "NVML could not be read during these runs: the clock columns say n/a."
    clocks = sorted(float(row["sm_mhz_median"]) for row in timed)
    powers = [float(row["power_w_peak"]) for row in timed if row["power_w_peak"]]
    power = f", with power peaks of up to {max(powers):g} W" if powers else ""
    return (f"In these runs the median SM clock of a measurement ranged from {clocks[0]:g} to "
            f"{clocks[-1]:g} MHz{power}.")


def introduction(rows):
    """What was measured, where, and how: the paired protocol in a few sentences."""
    meta = rows[0]
    out = [f"# Results on {meta['gpu']}", "",
           f"Measured by `make bench` on {meta['gpu']}, {measured_when(rows)}.",
           "Each lesson and its reference are timed in the same process, alternately, pair by pair.",
           "The reference is cuBLAS (`cublasGemmEx`, bf16 in and out, fp32 compute) for the plain",
           "product `D = A * B^T`, and cuBLASLt's fused epilogue for lesson 15's fused rows. Both",
           "sides first run until the clock settles (at least 0.3 s of GPU work), and the L2 cache",
           "is flushed before every run. Each side's time is its median over the pairs; the ratio",
           "is the median of the per-pair ratios reference time / lesson time (above 100%: the",
           "lesson is faster), so whatever the clock does between pairs cancels out of it."]
    timed = [int(r["pairs"]) for r in rows if r["pairs"]]
    if timed and min(timed) < max(timed):
        out.append(f"Each measurement has {min(timed)} to {max(timed)} timed pairs (the slow early"
                   " lessons the fewest).")
    elif timed:
        out.append(f"Each measurement has {timed[0]} timed pairs.")
    out += ["The SM clock, the power and the throttle reasons are sampled through NVML during the",
            "timed pairs. The clock columns show why the absolute TFLOP/s move between runs while",
            "the ratio holds: the clock follows the GPU's power and temperature."]
    out += textwrap.wrap(clock_sentence(rows), width=90)
    out.append("Every measurement passed the correctness check first.")
    if any(r["check"] == "fail" for r in rows):
        out.append("FAIL marks a lesson that failed the check on that shape; it was not timed"
                   " there.")
    return out + [""]


def lesson_table(title, shapes, lessons, by_key, text_of):
    """A '## title' table: one row per lesson, one column per shape."""
    out = [f"## {title}", "", "| lesson | " + " | ".join(shapes) + " |",
           "|---|" + "---:|" * len(shapes)]
    for lesson, slug in lessons:
        cells = [cell(by_key.get((lesson, shape)), text_of) for shape in shapes]
        out.append(f"| {lesson_name(lesson, slug)} | " + " | ".join(cells) + " |")
    return out


def cublas_range(plain, shapes):
    """The table row of cuBLAS's TFLOP/s per shape: lowest-highest over the lessons' runs."""
    ranges = []
    for shape in shapes:
        values = [float(r["reference_tflops"]) for r in plain
                  if shape_of(r) == shape and r["reference_tflops"]]
        ranges.append(f"{min(values):.0f}-{max(values):.0f}" if values else "-")
    return "| cuBLAS (range over the lessons' runs) | " + " | ".join(ranges) + " |"


def fused_table(fused):
    """One row per lesson, shape and epilogue, against the reference it was timed with."""
    out = ["## Fused epilogue", "",
           "The lessons with lesson 15's fused epilogue, timed the same way against cuBLASLt's",
           "matmul with the same epilogue fused into it.", "",
           "| lesson | shape | epilogue | TFLOP/s | reference | reference TFLOP/s"
           " | % of the reference | SM clock / peak power |",
           "|---|---|---|---:|---|---:|---:|---:|"]
    for row in sorted(fused, key=lambda r: int(r["lesson"])):
        cells = [lesson_name(int(row["lesson"]), row["slug"]), shape_of(row),
                 f"`{row['epilogue']}`", cell(row, tflops), row["reference"] or "-",
                 row["reference_tflops"] or "-", cell(row, percent), cell(row, clock)]
        out.append("| " + " | ".join(cells) + " |")
    return out


def render(rows):
    plain = [r for r in rows if is_plain(r)]
    fused = [r for r in rows if not is_plain(r)]
    shapes = list(dict.fromkeys(shape_of(r) for r in plain))
    lessons = list(dict.fromkeys((int(r["lesson"]), r["slug"]) for r in plain))
    by_key = {(int(r["lesson"]), shape_of(r)): r for r in plain}
    out = introduction(rows)
    out += lesson_table("% of cuBLAS", shapes, lessons, by_key, percent) + [""]
    out += lesson_table("TFLOP/s", shapes, lessons, by_key, tflops)
    out += [cublas_range(plain, shapes), ""]
    out += lesson_table("SM clock and power", shapes, lessons, by_key, clock) + [""]
    if fused:
        out += fused_table(fused) + [""]
    return "\n".join(out)


def store(results_csv, rows, folder):
    """Copies the CSV to folder/<model>.csv and writes folder/<model>.md; returns both paths."""
    try:
        model = gpu_model(rows[0]["gpu"])
    except ProfileError as error:
        raise ValueError(f"{results_csv}: {error}") from None
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    csv_target, page_target = folder / f"{model}.csv", folder / f"{model}.md"
    if Path(results_csv).resolve() != csv_target.resolve():
        shutil.copyfile(results_csv, csv_target)
    page_target.write_text(render(rows))
    return csv_target, page_target


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="results_table.py",
        description="The markdown tables of a make bench CSV: on stdout, or with --store as "
                    "DIR/<model>.csv and DIR/<model>.md.")
    parser.add_argument("results_csv", metavar="RESULTS.csv")
    parser.add_argument("--store", metavar="DIR", type=Path,
                        help="copy the CSV to DIR/<model>.csv and write DIR/<model>.md, the "
                             "model from the GPU of its rows (h100, h200, ...)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        rows = load(args.results_csv)
        if args.store is None:
            print(render(rows), end="")
        else:
            for path in store(args.results_csv, rows, args.store):
                print(f"wrote {path}")
    except (OSError, ValueError) as error:
        sys.exit(f"results_table.py: {error}")


if __name__ == "__main__":
    main()
