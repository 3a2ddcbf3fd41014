#!/usr/bin/env python3
"""One launch of lesson 16's kernel, block by block and role by role, drawn from the clock stamps
of `make roles` (profiles/role_timeline.cu) as a Gantt chart in SVG (no library needed).

Usage: roles_svg.py ROLES.csv --shape MxNxK --config NAME --title TITLE [--out FILE.svg]

ROLES.csv holds one row per block and event (block, role, item, event, t_us: microseconds after
the first block started). The chart has one row per block of the launch of that shape and
configuration, in three thin lanes: the producer (its set-up, the first work item worked out,
then its loads until the last is issued) and the two math warpgroups (each work item's MMAs from
its receipt until they complete, then the fixup and the epilogue until its stores are issued, and
at the end the last stores draining). Without --out it goes to docs/img/<the file's name>.svg.
"""
import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from svg_picture import csv_rows, default_image, document_end, document_start, draw, \
    picture_arguments, tick_step

NEEDED = {"m", "n", "k", "configuration", "block", "role", "item", "event", "t_us"}
ROLES = ("producer", "math 0", "math 1")

# The producer's bars: from one of its events to the next.
PRODUCER_PHASES = (("started", "set up", "set-up"),
                   ("set up", "first posted", "first item worked out and posted"),
                   ("first posted", "last load", "loads"))

# A math warpgroup's bars for each item: from one of its events to the next.
ITEM_PHASES = (("received", "first slice", "waiting for the first slice"),
               ("first slice", "MMAs complete", "MMAs"),
               ("MMAs complete", "stored", "fixup and epilogue"))

# What each bar is, and its colour.
PHASES = (("set-up", "#bab0ac"), ("first item worked out and posted", "#9d755d"),
          ("loads", "#54a24b"), ("waiting for the first slice", "#bcd8ec"), ("MMAs", "#4c78a8"),
          ("fixup and epilogue", "#f58518"), ("stores draining", "#e45756"))

# Layout, in SVG pixels.
WIDTH = 900
LEFT = 80
RIGHT = 20
TOP = 50
LANE_HEIGHT = 2.5
BLOCK_GAP = 1.5
AXIS_ROOM = 50
LEGEND_ROOM = 30


class RolesError(Exception):
    """A file this tool cannot read, or a shape and configuration it does not hold; one line."""


@dataclass
class Bar:
    start: float
    end: float
    phase: str


@dataclass
class Block:
    number: int
    lanes: dict = field(default_factory=lambda: {role: [] for role in ROLES})


def read_roles(text, shape, configuration, origin="roles"):
    """The blocks of the launch of `shape` (m, n, k) and `configuration`, each with its bars."""
    stamps = defaultdict(dict)  # block -> (role, item, event) -> t_us
    for number, row in csv_rows(text, NEEDED, RolesError, origin, "make roles writes them"):
        if (int(row["m"]), int(row["n"]), int(row["k"])) != shape:
            continue
        if row["configuration"] != configuration:
            continue
        try:
            item = int(row["item"]) if row["item"] else -1
            stamps[int(row["block"])][(row["role"], item, row["event"])] = float(row["t_us"])
        except ValueError:
            raise RolesError(f"{origin}:{number}: a block, item or time that is not a number")
    if not stamps:
        raise RolesError(f"{origin}: no rows of {'x'.join(map(str, shape))} with {configuration}")
    blocks = []
    for number in sorted(stamps):
        stamp = stamps[number]
        block = Block(number)
        for first, then, phase in PRODUCER_PHASES:
            start, end = stamp.get(("producer", -1, first)), stamp.get(("producer", -1, then))
            if start is not None and end is not None:
                block.lanes["producer"].append(Bar(start, end, phase))
        for role in ROLES[1:]:
            items = sorted({item for (who, item, _) in stamp if who == role and item >= 0})
            last_store = None
            for item in items:
                for first, then, phase in ITEM_PHASES:
                    start, end = stamp.get((role, item, first)), stamp.get((role, item, then))
                    if start is not None and end is not None:
                        block.lanes[role].append(Bar(start, end, phase))
                stored = stamp.get((role, item, "stored"))
                if stored is not None:
                    last_store = stored
            finished = stamp.get((role, -1, "finished"))
            if last_store is not None and finished is not None:
                block.lanes[role].append(Bar(last_store, finished, "stores draining"))
        blocks.append(block)
    return blocks


def render_svg(blocks, title):
    """The blocks as an SVG document (a string)."""
    bars = [bar for block in blocks for lane in block.lanes.values() for bar in lane]
    if not bars:
        raise RolesError("the launch has no complete step to draw")
    high = max(bar.end for bar in bars)
    step = tick_step(high)
    high = math.ceil(high / step) * step
    plot_width = WIDTH - LEFT - RIGHT
    block_height = len(ROLES) * LANE_HEIGHT + BLOCK_GAP
    bottom = TOP + len(blocks) * block_height
    height = int(math.ceil(bottom + AXIS_ROOM + LEGEND_ROOM))

    def x(time):
        return LEFT + time / high * plot_width

    out = document_start(WIDTH, height, title)
    tick = 0.0
    while tick <= high + step / 2:
        out.append(f'<line x1="{x(tick):.1f}" y1="{TOP}" x2="{x(tick):.1f}" y2="{bottom:.1f}" '
                   'stroke="#dddddd"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{bottom + 16:.1f}" text-anchor="middle">'
                   f'{tick:g}</text>')
        tick += step
    out.append(f'<text x="{LEFT + plot_width / 2:.1f}" y="{bottom + 34:.1f}" '
               'text-anchor="middle">microseconds after the first block started</text>')
    colours = dict(PHASES)
    for index, block in enumerate(blocks):
        top = TOP + index * block_height
        if index % 16 == 0:
            out.append(f'<text x="{LEFT - 8}" y="{top + block_height:.1f}" text-anchor="end">'
                       f'block {block.number}</text>')
        for lane, role in enumerate(ROLES):
            y = top + lane * LANE_HEIGHT
            for bar in block.lanes[role]:
                out.append(f'<rect x="{x(bar.start):.2f}" y="{y:.2f}" '
                           f'width="{max(x(bar.end) - x(bar.start), 0.5):.2f}" '
                           f'height="{LANE_HEIGHT:.2f}" fill="{colours[bar.phase]}">'
                           f'<title>block {block.number}, {role}: {escape(bar.phase)}, '
                           f'{bar.start:g} .. {bar.end:g} us</title></rect>')
    legend_x = LEFT
    for name, colour in PHASES:
        if not any(bar.phase == name for bar in bars):
            continue
        out.append(f'<rect x="{legend_x}" y="{height - 22}" width="12" height="12" '
                   f'fill="{colour}"/>')
        out.append(f'<text x="{legend_x + 16}" y="{height - 12}">{escape(name)}</text>')
        legend_x += 30 + 7 * len(name)
    return document_end(out)


def parse_shape(text):
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"--shape takes MxNxK, got '{text}'")
    return tuple(int(part) for part in parts)


def main(argv=None):
    parser = picture_arguments("Draw one launch of lesson 16's kernel, role by role, as SVG.",
                               "roles")
    parser.add_argument("--shape", type=parse_shape, required=True, help="MxNxK")
    parser.add_argument("--config", required=True, help="the configuration that ran")
    args = parser.parse_args(argv)
    return draw("roles_svg", args.roles,
                lambda text: read_roles(text, args.shape, args.config, str(args.roles)),
                lambda blocks: render_svg(blocks, args.title),
                args.out or default_image(args.roles), RolesError)


if __name__ == "__main__":
    sys.exit(main())
