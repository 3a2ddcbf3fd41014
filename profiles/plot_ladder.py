#!/usr/bin/env python3
"""Bar chart of TFLOP/s per lesson at 4096^3 and 8192^3, with cuBLAS as a line per shape.

Usage: plot_ladder.py docs/results/h100.csv [docs/img/ladder_h100.png]

Without an output path the chart goes to docs/img/ladder_<model>.png, the model from the GPU of
the file's rows (compare.gpu_model: h100, h200, ...).

Reads the CSV that `make bench` writes, only its rows of the plain product D = A * B^T (the
fused-epilogue rows compare with cuBLASLt, not cuBLAS). For each lesson, one bar per shape (its
median TFLOP/s); a lesson that failed the correctness check on a shape gets no bar but the word
FAIL. cuBLAS is timed in pairs with every lesson, so the file holds one cuBLAS figure
(`reference_tflops`) per lesson and shape; the line of the shape's colour is their median. The
title names the GPU, date and commit from the file.

Needs matplotlib, and only this script does: pip install matplotlib.
"""
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from compare import ProfileError, gpu_model
from results_table import is_plain, load

DEFAULT_IMAGE_DIR = Path(__file__).resolve().parent.parent / "docs" / "img"
SIZES = (4096, 8192)
LINE_STYLES = ("--", ":")  # cuBLAS per size: the two lines stay apart where they overlap


@dataclass
class Ladder:
    """What the chart shows, taken out of the results rows."""
    lessons: list   # "01 naive", ... in lesson order
    tflops: dict    # size -> [TFLOP/s or None per lesson] (None: no bar)
    failed: dict    # size -> [True where the lesson failed its check]
    cublas: dict    # size -> median cuBLAS TFLOP/s, or None
    title: str


def bar_label(value):
    """The number printed over a bar: whole TFLOP/s, one decimal below 10 (lesson 01 is 0.5)."""
    if value is None:
        return ""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def distinct(rows, column):
    """The different values of a column, joined: usually just one."""
    return " / ".join(dict.fromkeys(row[column] for row in rows))


def ladder(rows):
    """The chart's data from results.csv's plain rows; ValueError if neither shape is there."""
    def is_cube(row, size):
        return int(row["m"]) == int(row["n"]) == int(row["k"]) == size

    chosen = [row for row in rows
              if is_plain(row) and any(is_cube(row, size) for size in SIZES)]
    if not chosen:
        raise ValueError(f"no rows for {' or '.join(f'{s}^3' for s in SIZES)}")
    lessons = sorted({(int(row["lesson"]), row["slug"]) for row in chosen})
    data = Ladder([f"{lesson:02d} {slug}" for lesson, slug in lessons], {}, {}, {},
                  f"bf16 GEMM on {distinct(chosen, 'gpu')}: TFLOP/s per lesson\n"
                  f"{distinct(chosen, 'date')}, commit {distinct(chosen, 'commit')}")
    for size in SIZES:
        by_lesson = {int(row["lesson"]): row for row in chosen if is_cube(row, size)}
        found = [by_lesson.get(lesson) for lesson, _ in lessons]
        data.failed[size] = [row is not None and row["check"] == "fail" for row in found]
        data.tflops[size] = [float(row["lesson_tflops"])
                             if row and row["check"] != "fail" and row["lesson_tflops"] else None
                             for row in found]
        cublas = [float(row["reference_tflops"]) for row in by_lesson.values()
                  if row["reference_tflops"]]
        data.cublas[size] = statistics.median(cublas) if cublas else None
    return data


def import_pyplot():
    """matplotlib's pyplot, drawing to files only; a one-line exit when it is not installed."""
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot_ladder.py: matplotlib is not installed (pip install matplotlib); "
                 "only this plot needs it")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot


def draw(data, output, pyplot):
    """Grouped bars, one cuBLAS line per shape in the bars' colour, saved to `output`."""
    figure, axes = pyplot.subplots(figsize=(max(8.0, 0.8 * len(data.lessons) + 3), 5.5))
    width = 0.8 / len(SIZES)
    for index, size in enumerate(SIZES):
        colour = f"C{index}"
        offsets = [x - 0.4 + width * (index + 0.5) for x in range(len(data.lessons))]
        heights = [value or 0.0 for value in data.tflops[size]]
        bars = axes.bar(offsets, heights, width, color=colour, label=f"lesson, {size}\u00b3")
        for bar, value, failed in zip(bars, data.tflops[size], data.failed[size]):
            text = "FAIL" if failed else bar_label(value)
            axes.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                          textcoords="offset points")
        if data.cublas[size] is not None:
            axes.axhline(data.cublas[size], color=colour, linestyle=LINE_STYLES[index],
                         linewidth=1.5,
                         label=f"cuBLAS, {size}\u00b3 (median {data.cublas[size]:.0f})")
    axes.set_xticks(range(len(data.lessons)))
    axes.set_xticklabels(data.lessons, rotation=30, ha="right")
    axes.set_ylabel("TFLOP/s (higher is better)")
    axes.set_title(data.title)
    heights = [value for values in data.tflops.values() for value in values if value is not None]
    heights += [value for value in data.cublas.values() if value is not None]
    axes.set_ylim(0, 1.35 * max(heights, default=1.0))  # headroom: the legend sits above the lines
    axes.legend(loc="upper left", ncol=2)
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=150)
    pyplot.close(figure)


def default_output(rows):
    """docs/img/ladder_<model>.png for the GPU of the rows."""
    try:
        return DEFAULT_IMAGE_DIR / f"ladder_{gpu_model(rows[0]['gpu'])}.png"
    except ProfileError as error:
        raise ValueError(f"{error}; name the output file") from None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 2):
        sys.exit("usage: plot_ladder.py RESULTS.csv [OUTPUT.png]")
    pyplot = import_pyplot()
    try:
        rows = load(argv[0])
        output = Path(argv[1]) if len(argv) == 2 else default_output(rows)
        draw(ladder(rows), output, pyplot)
    except (OSError, ValueError) as error:
        sys.exit(f"plot_ladder.py: {error}")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
