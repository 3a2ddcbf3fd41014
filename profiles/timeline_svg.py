#!/usr/bin/env python3
"""A timeline file of lesson 17 or 19, drawn as a Gantt chart in SVG (no library needed).

Usage: timeline_svg.py TIMELINE --tokens T [--out FILE.svg]

TIMELINE is one of the text files the lessons' timelines write, committed under
profiles/sweeps/:

  - lesson 19's (`./lesson19 --timeline`): per token count and variant, each rank's records,
    "  SMs   1.0 ..  97.0  GEMM 1, rows of rank 0" or "  copy engine ...", in microseconds;
  - lesson 17's (`make timeline`): per token count and way of running the chain, three runs of
    "run i: GEMM 1  0.0 .. 47.6 us   GEMM 2  49.2 .. 96.0 us ...". The chart takes each way's last
    run (the first one pays for loading the modules).

The chart has one row per rank and engine (lesson 19) or per way (lesson 17), a bar per record,
coloured by what it is (GEMM 1, GEMM 2, NCCL, a pull, a push, the sum of the slots), and a time
axis in microseconds. Its title names the file's first line: the GPU, the date and the commit.
Without --out it goes to docs/img/<the file's name>_<T>.svg.
"""
import math
import re
import sys
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from svg_picture import default_image, document_end, document_start, draw, picture_arguments, \
    tick_step

SECTION = re.compile(r"^(?P<tokens>\d+) tokens, (?P<what>[^:]+):")
RANK = re.compile(r"^rank (?P<rank>\d+):\s*$")
RECORD_19 = re.compile(r"^\s+(?P<lane>SMs|copy engine)\s+(?P<start>-?[\d.]+)\s+\.\.\s+"
                       r"(?P<end>-?[\d.]+)\s+(?P<label>\S.*?)\s*$")
RUN_17 = re.compile(r"^\s+run (?P<run>\d+):(?P<body>.*)$")
BAR_17 = re.compile(r"(?P<label>GEMM \d)\s+(?P<start>-?[\d.]+)\s+\.\.\s+(?P<end>-?[\d.]+) us")

# What a bar is, from the start of its label, and its colour.
KINDS = (("GEMM 1", "#4c78a8"), ("GEMM 2", "#f58518"), ("NCCL", "#54a24b"), ("pull", "#b279a2"),
         ("push", "#e45756"), ("sum", "#9d755d"))
OTHER_COLOUR = "#bab0ac"

# Layout, in SVG pixels.
WIDTH = 900
LEFT = 230          # room for the row names
RIGHT = 20
TOP = 50
ROW_HEIGHT = 26
BAR_HEIGHT = 18
AXIS_ROOM = 50
LEGEND_ROOM = 30


class TimelineError(Exception):
    """A timeline file this tool cannot read, or a token count it does not hold; one line."""


@dataclass
class Bar:
    start: float
    end: float
    label: str

    @property
    def kind(self):
        return next((name for name, _ in KINDS if self.label.startswith(name)), "other")


@dataclass
class Row:
    name: str
    bars: list = field(default_factory=list)


@dataclass
class Chart:
    title: str
    rows: list


def colour(kind):
    return dict(KINDS).get(kind, OTHER_COLOUR)


def read_timeline(text, tokens, origin="timeline"):
    """The chart of the sections of `text` at `tokens` tokens: their rows, in file order."""
    lines = text.split("\n")
    # A file may hold several runs, each under its own comment block, whose first line says what
    # ran where: the title takes the one above the section drawn.
    heading, title, previous = origin, None, ""
    rows, section, rank, found = [], None, None, False
    for number, line in enumerate(lines, start=1):
        if line.startswith("#") and not previous.startswith("#"):
            heading = line.lstrip("# ").strip()
        previous = line
        start = SECTION.match(line)
        if start:
            section = start["what"].strip() if int(start["tokens"]) == tokens else None
            if section is not None and title is None:
                title = heading
            found = found or section is not None
            rank = None
            continue
        if section is None:
            continue
        if RANK.match(line):
            rank = int(RANK.match(line)["rank"])
            continue
        record = RECORD_19.match(line)
        if record:
            if rank is None:
                raise TimelineError(f"{origin}:{number}: a record before any 'rank N:' line")
            name = f"{section.split(',')[0]}: rank {rank}, {record['lane']}"
            row = next((row for row in rows if row.name == name), None)
            if row is None:
                row = Row(name)
                rows.append(row)
            row.bars.append(Bar(float(record["start"]), float(record["end"]), record["label"]))
            continue
        run = RUN_17.match(line)
        if run:
            bars = [Bar(float(bar["start"]), float(bar["end"]), bar["label"])
                    for bar in BAR_17.finditer(run["body"])]
            if not bars:
                raise TimelineError(f"{origin}:{number}: a run without 'GEMM N a .. b us' in it")
            # Each way's last run stands for it: the row is replaced run after run.
            rows = [row for row in rows if row.name != section] + [Row(section, bars)]
    if not found:
        raise TimelineError(f"{origin}: no section at {tokens} tokens")
    if not rows:
        raise TimelineError(f"{origin}: the sections at {tokens} tokens hold no record")
    return Chart(f"{title}: {tokens} tokens", rows)


def lanes_of(bars):
    """A lane per bar (0, 1, ...): each bar takes the first lane whose bars all end before it
    starts."""
    lane_ends, lanes = [], []
    for bar in bars:
        lane = next((i for i, end in enumerate(lane_ends) if end <= bar.start), len(lane_ends))
        if lane == len(lane_ends):
            lane_ends.append(bar.end)
        else:
            lane_ends[lane] = bar.end
        lanes.append(lane)
    return lanes


def render_svg(chart):
    """The chart as an SVG document (a string)."""
    low = min(0.0, min(bar.start for row in chart.rows for bar in row.bars))
    high = max(bar.end for row in chart.rows for bar in row.bars)
    step = tick_step(high - low)
    high = math.ceil(high / step) * step  # the axis ends on a tick; it starts where the first bar does
    plot_width = WIDTH - LEFT - RIGHT
    height = TOP + len(chart.rows) * ROW_HEIGHT + AXIS_ROOM + LEGEND_ROOM

    def x(time):
        return LEFT + (time - low) / (high - low) * plot_width

    out = document_start(WIDTH, height, chart.title)
    bottom = TOP + len(chart.rows) * ROW_HEIGHT
    tick = math.ceil(low / step) * step
    while tick <= high + step / 2:
        out.append(f'<line x1="{x(tick):.1f}" y1="{TOP}" x2="{x(tick):.1f}" y2="{bottom}" '
                   'stroke="#dddddd"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{bottom + 16}" text-anchor="middle">{tick:g}</text>')
        tick += step
    out.append(f'<text x="{LEFT + plot_width / 2:.1f}" y="{bottom + 34}" text-anchor="middle">'
               'microseconds</text>')
    for index, row in enumerate(chart.rows):
        top = TOP + index * ROW_HEIGHT
        out.append(f'<text x="{LEFT - 8}" y="{top + ROW_HEIGHT / 2 + 4:.1f}" text-anchor="end">'
                   f'{escape(row.name)}</text>')
        # Bars that overlap in time (a dependent GEMM 2 starting before GEMM 1 ends) share the row
        # in thinner lanes, so that neither hides the other.
        lanes = lanes_of(row.bars)
        bar_height = BAR_HEIGHT / (max(lanes) + 1)
        for bar, lane in zip(row.bars, lanes):
            left, right = x(bar.start), x(bar.end)
            y = top + (ROW_HEIGHT - BAR_HEIGHT) / 2 + lane * bar_height
            out.append(f'<rect x="{left:.1f}" y="{y:.1f}" width="{max(right - left, 1.0):.1f}" '
                       f'height="{bar_height:.1f}" fill="{colour(bar.kind)}" stroke="white" '
                       f'stroke-width="1"><title>{escape(bar.label)}: {bar.start:g} .. '
                       f'{bar.end:g} us</title></rect>')
    kinds = [name for name, _ in KINDS if any(bar.kind == name for row in chart.rows
                                               for bar in row.bars)]
    legend_x = LEFT
    for name in kinds:
        out.append(f'<rect x="{legend_x}" y="{height - 22}" width="12" height="12" '
                   f'fill="{colour(name)}"/>')
        out.append(f'<text x="{legend_x + 16}" y="{height - 12}">{escape(name)}</text>')
        legend_x += 30 + 8 * len(name)
    return document_end(out)


def main(argv=None):
    parser = picture_arguments("Draw a lesson 17 or 19 timeline as SVG.", "timeline", titled=False)
    parser.add_argument("--tokens", type=int, required=True, help="the token count to draw")
    args = parser.parse_args(argv)
    return draw("timeline_svg", args.timeline,
                lambda text: read_timeline(text, args.tokens, str(args.timeline)), render_svg,
                args.out or default_image(args.timeline, f"_{args.tokens}"), TimelineError)

if __name__ == "__main__":
    sys.exit(main())
