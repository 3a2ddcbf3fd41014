#!/usr/bin/env python3
"""Lesson 18 on every shape of a sweep, as a picture: how fast it is against the three kernels its
README weighs it with, each as the other's time over lesson 18's (above 1: lesson 18 is faster).

Usage: fp8_svg.py SWEEP.csv --title "..." [--out FILE.svg]

SWEEP.csv is what `lesson18 sweep --csv` writes: per shape the paired ratios against cuBLASLt's
block-scaled fp8 (the reference this lesson must beat), cuBLASLt's per-tensor fp8 (the same bytes,
no block scales to promote) and lesson 16 (bf16, twice the bytes). The shapes go along the x axis
in the file's order, one column each; the dashed line at 1 is "as fast". Standard library only.
Without --out the picture goes to docs/img/<the file's name>.svg.
"""
import sys
from xml.sax.saxutils import escape

from svg_picture import (csv_rows, default_image, document_end, document_start, dot_legend, draw,
                         picture_arguments, ratio_grid, ratio_scale)

COLUMN_WIDTH, HEIGHT = 56, 320    # one shape's column, the plot's height, in SVG pixels
LEFT, TOP, RIGHT, BOTTOM = 70, 50, 90, 130
SERIES = (("vs_block_scaled", "cuBLASLt block-scaled fp8 / lesson 18", "#e45756"),
          ("vs_per_tensor", "cuBLASLt per-tensor fp8 / lesson 18", "#4c78a8"),
          ("vs_lesson16", "lesson 16 (bf16) / lesson 18", "#54a24b"))
NEEDED = {"m", "n", "k"} | {column for column, _, _ in SERIES}


class SweepError(Exception):
    """A file this tool cannot read; one line."""


def shape_name(m, n, k):
    return f"{m}^3" if m == n == k else f"{m} x {n} x {k}"


def read_sweep(text, origin="sweep"):
    """[(shape name, {column: ratio})] in the file's order."""
    points = []
    for number, row in csv_rows(text, NEEDED, SweepError, origin, "lesson18 sweep --csv"):
        try:
            m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
            ratios = {column: float(row[column]) for column, _, _ in SERIES}
        except ValueError:
            raise SweepError(f"{origin}:{number}: a size or ratio that is not a number") from None
        if min(m, n, k) < 1 or min(ratios.values()) <= 0:
            raise SweepError(f"{origin}:{number}: a size or ratio that is not positive")
        points.append((shape_name(m, n, k), ratios))
    return points


def render_svg(points, title):
    low_y, high_y, y = ratio_scale([ratio for _, values in points for ratio in values.values()],
                                   TOP, HEIGHT)
    width = LEFT + COLUMN_WIDTH * len(points) + RIGHT
    height = TOP + HEIGHT + BOTTOM

    def x(index):
        return LEFT + (index + 0.5) * COLUMN_WIDTH

    out = document_start(width, height, title)
    out += ratio_grid(low_y, high_y, y, LEFT, width - RIGHT)
    for index, (name, _) in enumerate(points):
        out.append(f'<line x1="{x(index):.1f}" y1="{TOP}" x2="{x(index):.1f}" y2="{TOP + HEIGHT}" '
                   'stroke="#eeeeee"/>')
        out.append(f'<text transform="translate({x(index) + 4:.1f} {TOP + HEIGHT + 10}) '
                   f'rotate(45)" font-size="10">{escape(name)}</text>')
    out.append(f'<text transform="translate(18 {TOP + HEIGHT / 2}) rotate(-90)" '
               'text-anchor="middle">the other\'s time over lesson 18\'s</text>')
    for column, _, colour in SERIES:
        for index, (_, values) in enumerate(points):
            out.append(f'<circle cx="{x(index):.1f}" cy="{y(values[column]):.1f}" r="4" '
                       f'fill="{colour}"/>')
    out += dot_legend([(name, colour) for _, name, colour in SERIES], LEFT, height - 14, 250)
    return document_end(out)


def main(argv=None):
    args = picture_arguments("Draw lesson 18 against its references.", "sweep").parse_args(argv)
    return draw("fp8_svg", args.sweep, lambda text: read_sweep(text, str(args.sweep)),
                lambda points: render_svg(points, args.title),
                args.out or default_image(args.sweep), SweepError)

if __name__ == "__main__":
    sys.exit(main())
