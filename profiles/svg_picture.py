"""What the course's picture tools (layer_svg.py, model_svg.py, timeline_svg.py, fp8_svg.py,
roles_svg.py) share: reading a CSV with the columns it needs, the start and the end of an SVG
document, round steps for a time axis, a vertical scale of ratios with its grid, a legend of coloured dots, the command line (the data file,
--title, --out), and its last step (read the data file, draw it, write the picture), with one
line and exit code 2 for a file that cannot be read and 1 for one that cannot be drawn. Standard
library only."""
import argparse
import csv
import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

DEFAULT_IMAGE_DIR = Path(__file__).resolve().parent.parent / "docs" / "img"


def csv_rows(text, needed, error, origin, written_by):
    """The rows of the CSV `text`, as (line number, {column: value}) from line 2 (the header is line
    1); or `error` naming the columns of `needed` it lacks and what writes such a file."""
    rows = list(csv.DictReader(text.splitlines()))
    if not rows or not set(needed) <= set(rows[0]):
        raise error(f"{origin}: needs the columns {', '.join(sorted(needed))} ({written_by})")
    return list(enumerate(rows, start=2))


def document_start(width, height, title):
    """The SVG element, a white background and the title centred on top: the document's first
    lines (the caller appends the picture, then hands them to document_end)."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2:.1f}" y="24" text-anchor="middle" font-size="14">'
            f'{escape(title)}</text>']


def document_end(lines):
    """The document: `lines`, from document_start's on, and the closing tag, one per line."""
    return "\n".join(lines + ["</svg>"]) + "\n"


def picture_arguments(description, data, titled=True):
    """The command line the tools share: the data file (the argument `data`), --title (what the
    picture shows, where `titled`) and --out. A tool adds its own arguments, then parses."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(data, type=Path)
    if titled:
        parser.add_argument("--title", required=True,
                            help="what the picture shows: GPU(s), date, commit")
    parser.add_argument("--out", type=Path,
                        help="the SVG to write (default: docs/img/<the data file's name>.svg)")
    return parser


def default_image(source, suffix=""):
    """Where a picture of `source` goes without --out: docs/img/<its name><suffix>.svg."""
    return DEFAULT_IMAGE_DIR / f"{source.stem}{suffix}.svg"


def tick_step(span):
    """A round step (1, 2 or 5 times a power of ten) that cuts `span` into 5 to 10 ticks."""
    for power in range(-3, 9):
        for mantissa in (1, 2, 5):
            step = mantissa * 10 ** power
            if span / step <= 10:
                return step
    return 10 ** 9


def ratio_scale(ratios, top, height):
    """A vertical scale for time ratios on a plot `height` pixels high from `top`: from the tenth
    below the smallest of `ratios` and 1 to the tenth above the largest. Returns (low, high, y),
    y(ratio) the ratio's SVG y."""
    low = math.floor(min(*ratios, 1.0) * 10) / 10
    high = math.ceil(max(*ratios, 1.0) * 10) / 10
    return low, high, lambda ratio: top + height - (ratio - low) / (high - low) * height


def ratio_grid(low, high, y, left, right):
    """The scale's lines and labels every 0.1 from `low` to `high` between x = `left` and `right`,
    and the dashed line at 1: as fast as the reference."""
    lines = []
    for step in range(round((high - low) / 0.1) + 1):
        value = low + step * 0.1
        lines.append(f'<line x1="{left}" y1="{y(value):.1f}" x2="{right}" y2="{y(value):.1f}" '
                     'stroke="#dddddd"/>')
        lines.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
                     f'{value:.1f}</text>')
    lines.append(f'<line x1="{left}" y1="{y(1.0):.1f}" x2="{right}" y2="{y(1.0):.1f}" '
                 'stroke="#888888" stroke-dasharray="4 4"/>')
    return lines


def dot_legend(items, left, baseline, spacing):
    """A legend of (name, colour) items in a row from `left`, each a dot and its name on the text
    line `baseline`, `spacing` pixels apart."""
    lines = []
    for index, (name, colour) in enumerate(items):
        x = left + index * spacing
        lines.append(f'<circle cx="{x + 6}" cy="{baseline - 4}" r="4" fill="{colour}"/>')
        lines.append(f'<text x="{x + 16}" y="{baseline}">{escape(name)}</text>')
    return lines


def draw(tool, source, read, render, out, data_error):
    """Reads `source`, makes its picture with render(read(text)) and writes it to `out`; prints
    one line. Returns the exit code: 2 when `source` cannot be read, 1 when read() raises
    data_error (its message is the line), 0 when the picture is written."""
    try:
        text = source.read_text()
    except OSError as error:
        print(f"{tool}: cannot read {source}: {error.strerror}", file=sys.stderr)
        return 2
    try:
        picture = render(read(text))
    except data_error as error:
        print(f"{tool}: {error}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(picture)
    print(f"{tool}: wrote {out}")
    return 0
