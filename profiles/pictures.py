#!/usr/bin/env python3
"""Every picture the course's pages show that a tool draws from a committed file: the one list of
them, and the command that draws them all again (`make pictures`).

Usage: pictures.py [--check]

Without --check each picture is drawn again, in place, from its data file. With --check each is
drawn into a scratch folder and compared with the committed one, byte for byte; the exit code is 1
if any differs (the test tools.pictures runs it), with one line per picture saying how to redraw
it. The pictures of a lesson that a hand-out does not have (a lesson after the hand-out's) are
skipped.
Standard library only. (The results plot, docs/img/ladder_*.png, needs matplotlib:
plot_ladder.py, `make bench`.)
"""
import argparse
import contextlib
import dataclasses
import filecmp
import io
import sys
import tempfile
from pathlib import Path

import fp8_svg
import layer_svg
import model_svg
import roles_svg
import timeline_svg

REPOSITORY = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Picture:
    lesson: int      # the lesson whose README shows it
    image: str       # the picture, from the repository's root
    tool: object     # the module whose main() draws it
    data: str        # the committed file it is drawn from
    arguments: tuple  # the tool's other arguments

    def command(self):
        quoted = " ".join(f'"{a}"' if " " in a else a for a in self.arguments)
        return f"python3 profiles/{self.tool.__name__}.py {self.data} {quoted}"

    def draw(self, out):
        return self.tool.main([str(REPOSITORY / self.data), *self.arguments, "--out", str(out)])


PICTURES = (
    Picture(16, "docs/img/model_16_h100.svg", model_svg, "profiles/sweeps/model_16_h100.csv",
            ("--title", "Lesson 16's estimates against the oracle: NVIDIA H100, 2026-11-28, commit "
                        "882054d")),
    Picture(16, "docs/img/model_16_h200.svg", model_svg, "profiles/sweeps/model_16_h200.csv",
            ("--title", "Lesson 16's estimates against the oracle: NVIDIA H200, 2026-11-29, commit "
                        "37ecb1b")),
    Picture(16, "docs/img/roles_16_h200_1024.svg", roles_svg, "profiles/sweeps/roles_16_h200.csv",
            ("--shape", "1024x1024x1024", "--config", "64x128_c2_sk8", "--title",
             "Lesson 16 at 1024^3, block by block: NVIDIA H200, 2026-11-29, commit ee0d6b0")),
    Picture(17, "docs/img/timeline_17_h200_128.svg", timeline_svg,
            "profiles/sweeps/timeline_17_h200.txt", ("--tokens", "128")),
    Picture(18, "docs/img/fp8_18_standard_h200.svg", fp8_svg,
            "profiles/sweeps/fp8_18_standard_h200.csv",
            ("--title", "Lesson 18 on an NVIDIA H200: 2026-11-29, commit 1f41f6b")),
    Picture(19, "docs/img/timeline_19_h200_8192.svg", timeline_svg,
            "profiles/sweeps/timeline_19_h200.txt", ("--tokens", "8192")),
    Picture(19, "docs/img/timeline_19_h200_arriving_1024.svg", timeline_svg,
            "profiles/sweeps/timeline_19_h200_arriving.txt", ("--tokens", "1024")),
    Picture(19, "docs/img/layer_19_h200.svg", layer_svg, "profiles/sweeps/layer_19_h200.csv",
            ("--title", "Lesson 19's layer on two NVIDIA H200s: 2026-11-29, commit dc05315, rank 0")),
    Picture(19, "docs/img/layer_19_h200x4.svg", layer_svg, "profiles/sweeps/layer_19_h200x4.csv",
            ("--title", "Lesson 19's layer on four NVIDIA H200s: 2026-11-28, commit fed9846, "
                        "rank 0")),
)


def present(pictures=PICTURES):
    """The pictures of the lessons this tree has, with their data (a hand-out lacks the later
    lessons)."""
    return [picture for picture in pictures
            if list((REPOSITORY / "lessons").glob(f"{picture.lesson:02d}_*/README.md"))
            and (REPOSITORY / picture.data).is_file()]


def main(argv=None):
    parser = argparse.ArgumentParser(description="Draw every committed picture again.")
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed pictures instead of writing them")
    args = parser.parse_args(argv)
    if not args.check:
        return max((picture.draw(REPOSITORY / picture.image) for picture in present()), default=0)
    differing = 0
    with tempfile.TemporaryDirectory() as scratch:
        for index, picture in enumerate(present()):
            out = Path(scratch) / f"{index}.svg"
            with contextlib.redirect_stdout(io.StringIO()):  # each tool's "wrote ..." line
                drawn = picture.draw(out) == 0
            if not drawn or not filecmp.cmp(out, REPOSITORY / picture.image, shallow=False):
                print(f"pictures: {picture.image} is not the drawing of {picture.data}: "
                      f"redraw it: {picture.command()}", file=sys.stderr)
                differing += 1
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
