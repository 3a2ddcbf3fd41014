#!/usr/bin/env python3
"""Builds docs/results.md from the CSV that `make bench` writes (docs/results.csv).

Usage: results_table.py docs/results.csv > docs/results.md

From the rows of the plain product D = A * B^T, three tables with one row per lesson and one
column per shape of the sweep: % of cuBLAS (the paired ratio), TFLOP/s with the range of cuBLAS's
own TFLOP/s under it, and the SM clock and peak power during the timed pairs, which explain why
the absolute figures move between runs while the ratio stays. Then, where the file has rows of
lesson 15's fused epilogue, one table of those against cuBLASLt's fused epilogue. A lesson that
failed the correctness check on a shape was not timed there: its cells say FAIL.
"""
import csv
import sys

PLAIN = "plain"  # the `epilogue` of the plain product's rows


def load(path):
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


def introduction(rows):
    """What was measured, where, and how: the paired protocol in a few sentences."""
    meta = rows[0]
    out = ["# Results", "",
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
            "the ratio holds: the H100 at its 700 W limit runs between about 1500 and 1980 MHz.",
            "Every measurement passed the correctness check first."]
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


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: results_table.py RESULTS.csv > RESULTS.md")
    try:
        print(render(load(argv[1])), end="")
    except (OSError, ValueError) as error:
        sys.exit(f"results_table.py: {error}")


if __name__ == "__main__":
    main(sys.argv)
