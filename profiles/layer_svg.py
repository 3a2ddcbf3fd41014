#!/usr/bin/env python3
"""Lesson 19's layer at every token count, as a picture: each way's time over stream order's.

Usage: layer_svg.py LAYER.csv --title "..." [--rank R] [--out FILE.svg]

LAYER.csv is what `lesson19 --csv` writes: per token count and rank, the medians and the ratios of
the paired timings. The picture takes one rank's rows (default rank 0) and draws, against the
token count on a log axis, the one-shot and the overlapped variants' time over stream order's
(each from its own pairing), and the layer's (the variant it chose; 1 where it chose stream order
itself) as larger dots on top. The dashed line at 1 is stream order: below it a variant is
faster. Standard library only. Without --out the picture goes to docs/img/<the file's name>.svg.
"""
import math
import sys
from xml.sax.saxutils import escape

from svg_picture import (csv_rows, default_image, document_end, document_start, dot_legend, draw,
                         picture_arguments, ratio_grid, ratio_scale)

WIDTH, HEIGHT = 620, 360          # the plot, in SVG pixels
LEFT, TOP, RIGHT, BOTTOM = 70, 50, 20, 90
SERIES = (("one_shot_over_stream", "one-shot / stream order", "#4c78a8"),
          ("overlapped_over_stream", "overlapped / stream order", "#54a24b"),
          ("layer_over_stream", "the layer (its choice) / stream order", "#f58518"))
NEEDED = {"tokens", "rank", "layer"} | {column for column, _, _ in SERIES}


class LayerError(Exception):
    """A file this tool cannot read; one line."""


def read_layer(text, rank=0, origin="layer"):
    """[(tokens, {column: ratio}, layer)] of one rank's rows, by token count."""
    points = []
    for number, row in csv_rows(text, NEEDED, LayerError, origin, "lesson19 --csv"):
        if row["rank"] != str(rank):
            continue
        try:
            tokens = int(row["tokens"])
            ratios = {column: float(row[column]) for column, _, _ in SERIES}
        except ValueError:
            raise LayerError(f"{origin}:{number}: a token count or ratio that is not a number") from None
        if tokens < 1 or min(ratios.values()) <= 0:
            raise LayerError(f"{origin}:{number}: a token count or ratio that is not positive")
        points.append((tokens, ratios, row["layer"]))
    if not points:
        raise LayerError(f"{origin}: no rows of rank {rank}")
    return sorted(points)


def render_svg(points, title):
    tokens = [point[0] for point in points]
    low_x, high_x = math.log2(tokens[0]) - 0.5, math.log2(tokens[-1]) + 0.5
    low_y, high_y, y = ratio_scale([ratio for _, values, _ in points for ratio in values.values()],
                                   TOP, HEIGHT)
    width, height = LEFT + WIDTH + RIGHT, TOP + HEIGHT + BOTTOM

    def x(value):
        return LEFT + (math.log2(value) - low_x) / (high_x - low_x) * WIDTH

    out = document_start(width, height, title)
    out += ratio_grid(low_y, high_y, y, LEFT, LEFT + WIDTH)
    for count in tokens:
        out.append(f'<line x1="{x(count):.1f}" y1="{TOP}" x2="{x(count):.1f}" y2="{TOP + HEIGHT}" '
                   'stroke="#eeeeee"/>')
        out.append(f'<text x="{x(count):.1f}" y="{TOP + HEIGHT + 16}" text-anchor="middle">{count}</text>')
    out.append(f'<text x="{LEFT + WIDTH / 2}" y="{TOP + HEIGHT + 36}" text-anchor="middle">'
               'tokens</text>')
    out.append(f'<text transform="translate(18 {TOP + HEIGHT / 2}) rotate(-90)" '
               'text-anchor="middle">time over stream order\'s</text>')
    for column, _, colour in SERIES:
        layer = column == "layer_over_stream"
        path = " ".join(f"{x(count):.1f},{y(values[column]):.1f}" for count, values, _ in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="{3 if layer else 1.5}"/>')
        for count, values, _ in points:
            out.append(f'<circle cx="{x(count):.1f}" cy="{y(values[column]):.1f}" '
                       f'r="{5 if layer else 3}" fill="{colour}"/>')
    for count, values, chosen in points:
        out.append(f'<text x="{x(count):.1f}" y="{y(values["layer_over_stream"]) - 9:.1f}" '
                   f'text-anchor="middle" font-size="10">{escape(chosen)}</text>')
    out += dot_legend([(name, colour) for _, name, colour in SERIES], LEFT, height - 14, 200)
    return document_end(out)


def main(argv=None):
    parser = picture_arguments("Draw lesson 19's layer at every token count.", "layer")
    parser.add_argument("--rank", type=int, default=0, help="whose rows (default 0)")
    args = parser.parse_args(argv)
    return draw("layer_svg", args.layer,
                lambda text: read_layer(text, args.rank, str(args.layer)),
                lambda points: render_svg(points, args.title),
                args.out or default_image(args.layer), LayerError)

if __name__ == "__main__":
    sys.exit(main())
