#!/usr/bin/env python3
"""Builds docs/results.md from the CSV that `make bench` writes (docs/results.csv).

Usage: results_table.py docs/results.csv > docs/results.md

Two tables, one row per lesson and one column per shape of the sweep: % of cuBLAS (measured in
the same run) and TFLOP/s, with the range of cuBLAS's own TFLOP/s under the second. A lesson
that failed the correctness check on a shape was not timed there: its cells say FAIL.
"""
import csv
import sys


def load(path):
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    if not rows:
        raise ValueError(f"{path}: no measurements")
    required = {"lesson", "slug", "m", "n", "k", "check", "lesson_tflops", "cublas_tflops",
                "ratio_to_cublas", "lesson_median_ms", "gpu", "date", "commit"}
    missing = required - set(rows[0])
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return rows


def shape_of(row):
    return f"{row['m']} x {row['n']} x {row['k']}"


def percent(row):
    return f"{100 * float(row['ratio_to_cublas']):.1f}%" if row["ratio_to_cublas"] else "-"


def cell(row, text_of):
    """A table cell: '-' where the lesson did not run, FAIL where its check failed."""
    if row is None:
        return "-"
    return "FAIL" if row["check"] == "fail" else text_of(row)


def render(rows):
    shapes = list(dict.fromkeys(shape_of(r) for r in rows))
    lessons = list(dict.fromkeys((int(r["lesson"]), r["slug"]) for r in rows))
    by_key = {(int(r["lesson"]), shape_of(r)): r for r in rows}
    meta = rows[0]
    checked = "Every measurement passed the correctness check first."
    if any(r["check"] == "fail" for r in rows):
        checked += (" FAIL marks a lesson that failed the check on that shape; it was not timed"
                    " there.")
    out = ["# Results", "",
           f"Measured by `make bench` on {meta['gpu']}, {meta['date']}, commit `{meta['commit']}`.",
           "Each lesson and cuBLAS (`cublasGemmEx`, bf16 in and out, fp32 compute) are timed in the",
           "same process, one after the other: warm-up, L2 flushed before every repetition, median",
           "of the repetitions. The ratio to cuBLAS is the figure that counts; absolute times drift",
           "between runs. " + checked, "",
           "## % of cuBLAS", "",
           "| lesson | " + " | ".join(shapes) + " |",
           "|---|" + "---:|" * len(shapes)]
    for lesson, slug in lessons:
        cells = [cell(by_key.get((lesson, shape)), percent) for shape in shapes]
        out.append(f"| {lesson:02d} {slug} | " + " | ".join(cells) + " |")
    out += ["", "## TFLOP/s", "", "| lesson | " + " | ".join(shapes) + " |",
            "|---|" + "---:|" * len(shapes)]
    for lesson, slug in lessons:
        cells = [cell(by_key.get((lesson, shape)), lambda r: r["lesson_tflops"] or "-")
                 for shape in shapes]
        out.append(f"| {lesson:02d} {slug} | " + " | ".join(cells) + " |")
    cublas = []
    for shape in shapes:
        values = [float(r["cublas_tflops"]) for r in rows if shape_of(r) == shape and r["cublas_tflops"]]
        cublas.append(f"{min(values):.0f}-{max(values):.0f}" if values else "-")
    out.append("| cuBLAS (range over the lessons' runs) | " + " | ".join(cublas) + " |")
    out.append("")
    return "\n".join(out)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: results_table.py RESULTS.csv > RESULTS.md")
    try:
        print(render(load(argv[1])), end="")
    except (OSError, ValueError) as error:
        sys.exit(f"results_table.py: {error}")


if __name__ == "__main__":
    main(sys.argv)
