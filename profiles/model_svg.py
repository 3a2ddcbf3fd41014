#!/usr/bin/env python3
"""Lesson 16's cost model against the oracle, as a picture: estimated time against measured time.

Usage: model_svg.py POINTS.csv --title "..." [--out FILE.svg]

POINTS.csv is what `shape_model_report --csv ORACLE.csv --points POINTS.csv` writes: for every
configuration the model weighs at every shape of the oracle sweep, the model's estimate and the
measured median time, in microseconds. Each becomes a point on log-log axes, estimate across,
measured up; the model's pick at each shape is drawn in orange, the other configurations in blue,
and the dashed line is estimate = measured. A model that ranks well need not lie on the line: what
counts is that at each shape the orange point is the lowest of its shape's points. Standard library
only. Without --out the picture goes to docs/img/<the file's name>.svg.
"""
import math
import sys

from svg_picture import (csv_rows, default_image, document_end, document_start, dot_legend, draw,
                         picture_arguments)

SIZE = 560            # the square plot, in SVG pixels
LEFT, TOP, RIGHT, BOTTOM = 70, 50, 20, 80
PICK_COLOUR, OTHER_COLOUR = "#f58518", "#4c78a8"


class PointsError(Exception):
    """A points file this tool cannot read; one line."""


def read_points(text, origin="points"):
    """[(estimate_us, measured_us, picked)] of a points CSV."""
    points = []
    for number, row in csv_rows(text, {"estimate_us", "measured_us", "picked"}, PointsError, origin,
                                "shape_model_report --points"):
        try:
            estimate, measured = float(row["estimate_us"]), float(row["measured_us"])
        except ValueError:
            raise PointsError(f"{origin}:{number}: a time that is not a number") from None
        if estimate <= 0 or measured <= 0:
            raise PointsError(f"{origin}:{number}: a time that is not positive")
        points.append((estimate, measured, row["picked"] == "yes"))
    return points


def decades(low, high):
    """The powers of ten from below `low` to above `high`."""
    return [10.0 ** power for power in range(math.floor(math.log10(low)),
                                             math.ceil(math.log10(high)) + 1)]


def render_svg(points, title):
    values = [value for estimate, measured, _ in points for value in (estimate, measured)]
    ticks = decades(min(values), max(values))
    low, high = math.log10(ticks[0]), math.log10(ticks[-1])
    width, height = LEFT + SIZE + RIGHT, TOP + SIZE + BOTTOM

    def x(value):
        return LEFT + (math.log10(value) - low) / (high - low) * SIZE

    def y(value):
        return TOP + SIZE - (math.log10(value) - low) / (high - low) * SIZE

    out = document_start(width, height, title)
    for tick in ticks:
        out.append(f'<line x1="{x(tick):.1f}" y1="{TOP}" x2="{x(tick):.1f}" y2="{TOP + SIZE}" '
                   'stroke="#dddddd"/>')
        out.append(f'<line x1="{LEFT}" y1="{y(tick):.1f}" x2="{LEFT + SIZE}" y2="{y(tick):.1f}" '
                   'stroke="#dddddd"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{TOP + SIZE + 16}" text-anchor="middle">{tick:g}</text>')
        out.append(f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    out.append(f'<line x1="{x(ticks[0]):.1f}" y1="{y(ticks[0]):.1f}" x2="{x(ticks[-1]):.1f}" '
               f'y2="{y(ticks[-1]):.1f}" stroke="#888888" stroke-dasharray="4 4"/>')
    out.append(f'<text x="{LEFT + SIZE / 2}" y="{TOP + SIZE + 36}" text-anchor="middle">'
               'the model\'s estimate, us</text>')
    out.append(f'<text transform="translate(18 {TOP + SIZE / 2}) rotate(-90)" '
               'text-anchor="middle">measured median, us</text>')
    # The picks last, on top of the others.
    for estimate, measured, picked in sorted(points, key=lambda point: point[2]):
        out.append(f'<circle cx="{x(estimate):.1f}" cy="{y(measured):.1f}" r="{4 if picked else 3}" '
                   f'fill="{PICK_COLOUR if picked else OTHER_COLOUR}" fill-opacity="0.8"/>')
    out += dot_legend((("the model's pick", PICK_COLOUR), ("another configuration", OTHER_COLOUR)),
                      LEFT, height - 12, 180)
    return document_end(out)


def main(argv=None):
    args = picture_arguments("Draw lesson 16's estimates against the oracle.",
                             "points").parse_args(argv)
    return draw("model_svg", args.points, lambda text: read_points(text, str(args.points)),
                lambda points: render_svg(points, args.title),
                args.out or default_image(args.points), PointsError)

if __name__ == "__main__":
    sys.exit(main())
