"""What the course's picture tools (layer_svg.py, model_svg.py, timeline_svg.py) share: the start of
an SVG document with its title, a legend of coloured dots, and the command line's last step (read
the data file, draw it, write the picture), with one line and exit code 2 for a file that cannot
be read and 1 for one that cannot be drawn. Standard library only."""
import sys
from pathlib import Path
from xml.sax.saxutils import escape

DEFAULT_IMAGE_DIR = Path(__file__).resolve().parent.parent / "docs" / "img"


def document_start(width, height, title):
    """The SVG element, a white background and the title centred on top: the document's first
    lines (the caller appends the picture and "</svg>")."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2:.1f}" y="24" text-anchor="middle" font-size="14">'
            f'{escape(title)}</text>']


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
