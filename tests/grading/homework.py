#!/usr/bin/env python3
"""Builds the homework hand-out of one lesson (`make homework L=NN`, docs/grading.md).

Usage: homework.py NN [--dist DIR]

Writes DIR/homeworkNN/ (default DIR: dist/) and DIR/homeworkNN.tar.gz:

  - the course's files (the tracked and not-ignored files of this working tree; in a clean
    checkout that is HEAD), without the lessons after NN and without what only the course staff
    needs (the planted submissions, this tool, its tests, the CI script, docs/grading.md);
  - everything that lists the lessons regenerated to match: lessons/CMakeLists.txt, the registry,
    the lesson tables of the READMEs and docs, the per-lesson CSV files and reference profiles;
  - lesson NN's exercise regions replaced by stubs (regions.cut), its README's solution snippets
    replaced by a placeholder, and a HOMEWORK.md that says what to do and how it is graded.

Then the leak check: if any distinctive line of lesson NN's solution (regions.solution_lines)
still appears anywhere in the hand-out, the tool fails and names the place. Later lessons repeat
earlier answers verbatim, which is why they are left out.

Exit status: 0 done; 1 the leak check or a consistency check failed; 2 bad usage or a lesson
whose markers are malformed.
"""
import argparse
import json
import re
import shutil
import string
import subprocess
import sys
import tarfile
from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parent
ROOT = GRADING_DIR.parents[1]
sys.path.insert(0, str(GRADING_DIR))

import lessons as course_lessons  # noqa: E402  (after the path is set)
import regions  # noqa: E402

# Files only the course staff needs: the planted submissions and fixtures hold solutions, the
# tools below need the solutions or git, and the CI script builds lessons the hand-out lacks.
COURSE_ONLY = (
    ".ci/",
    "docs/grading.md",
    "tests/grading/homework.py",
    "tests/grading/homework_template.md",
    "tests/grading/planted/",
    "tests/grading/validate.py",
    "tests/grading/gradescope/",
    "tests/tools/test_homework.py",
    "tests/tools/test_grading",
    "tests/tools/fixtures/grading/",
)
# Blocks of shared files that only the course needs (the `make homework` target, the
# registration of the tests above) sit between these two lines; the hand-out drops them.
COURSE_ONLY_BEGIN = re.compile(r"^\s*#\s*BEGIN COURSE ONLY\b")
COURSE_ONLY_END = re.compile(r"^\s*#\s*END COURSE ONLY\b")

# README snippets of a solution that quote it without the kernel's markers are marked so:
#   <!-- BEGIN SOLUTION(name) --> ... <!-- END SOLUTION -->
SOLUTION_BEGIN = re.compile(r"^<!-- BEGIN SOLUTION\((?P<name>[a-z0-9_]+)\) -->\s*$")
SOLUTION_END = re.compile(r"^<!-- END SOLUTION -->\s*$")

LESSON_ROW = re.compile(r"^\|\s*(?P<id>\d\d)\b")          # "| 07 | ..." or "| 07 wgmma | ..."
LESSON_TABLE_HEADER = re.compile(r"^\|\s*(#|lesson)\s*\|", re.IGNORECASE)
LESSON_FILE = re.compile(r"^lesson(?P<id>\d\d)\.")         # profiles/reference/h100/lesson07.csv
TEXT_SUFFIXES = {".md", ".txt", ".cu", ".cuh", ".cpp", ".hpp", ".h", ".py", ".sh", ".csv",
                 ".json", ".cmake", ".in", ""}


class HandoutError(Exception):
    """The hand-out cannot be built as asked; the message says why."""


def course_files(root):
    """The files of the course: tracked, or untracked but not ignored (a new lesson in progress)."""
    listing = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             cwd=root, capture_output=True, check=False)
    if listing.returncode != 0:
        raise HandoutError("git ls-files failed: the hand-out is built from a git checkout of the "
                           "course\n" + listing.stderr.decode(errors="replace"))
    paths = sorted({path for path in listing.stdout.decode().split("\0") if path})
    return [path for path in paths if (root / path).is_file()]


def source_description(root):
    """'HEAD 1a2b3c4' or 'HEAD 1a2b3c4 plus uncommitted changes', for the hand-out's record."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                          text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                           text=True).stdout.strip()
    return f"HEAD {head}" + (" plus uncommitted changes" if dirty else "")


def is_course_only(path):
    return any(path == prefix.rstrip("/") or path.startswith(prefix) for prefix in COURSE_ONLY)


def lesson_of_path(path):
    """The lesson number of a path under lessons/NN_slug/, or None."""
    match = re.match(r"lessons/(\d\d)_[^/]+/", path)
    return int(match[1]) if match else None


def drop_course_only_blocks(text):
    kept, skipping = [], False
    for line in text.split("\n"):
        if COURSE_ONLY_BEGIN.match(line):
            skipping = True
        elif COURSE_ONLY_END.match(line) and skipping:
            skipping = False
        elif not skipping:
            kept.append(line)
    return "\n".join(kept)


def drop_later_lessons_from_tables(text, last):
    """Markdown: the rows of lesson tables (first column '#' or 'lesson') after lesson `last`.
    A table left with no rows is replaced by one line that says so."""
    kept, table, in_lesson_table = [], [], False

    def end_table():
        rows = table[2:]  # after the header and the separator
        if table and not rows:
            kept.append(f"*(This table holds only lessons after {last:02d}.)*")
        else:
            kept.extend(table)
        table.clear()

    for line in text.split("\n"):
        if in_lesson_table and line.startswith("|"):
            row = LESSON_ROW.match(line)
            if not (row and int(row["id"]) > last):
                table.append(line)
            continue
        if in_lesson_table:
            end_table()
            in_lesson_table = False
        if LESSON_TABLE_HEADER.match(line):
            in_lesson_table = True
            table.append(line)
        else:
            kept.append(line)
    if in_lesson_table:
        end_table()
    return "\n".join(kept)


def drop_later_lessons_from_csv(text, last):
    """A CSV whose first column is 'lesson': the rows of lessons after `last`."""
    lines = text.split("\n")
    if not lines or not lines[0].startswith("lesson,"):
        return text
    return "\n".join([lines[0]] + [line for line in lines[1:]
                                   if not re.match(r"^\d+,", line) or int(line.split(",")[0]) <= last])


def regenerate_lesson_lists(text, path, last):
    """lessons/CMakeLists.txt and lessons/registry.cu without the lessons after `last`."""
    kept = []
    for line in text.split("\n"):
        listed = (re.match(r"^add_lesson\((\d\d) ", line) if path == "lessons/CMakeLists.txt" else
                  re.match(r'^#include "lessons/(\d\d)_', line) or
                  re.match(r"^\s*lesson(\d\d)::kLesson,\s*$", line))
        if not (listed and int(listed[1]) > last):
            kept.append(line)
    return "\n".join(kept)


def drop_executable_tests(text):
    """tests/CMakeLists.txt without the executable tests, which run lessons 01 and 02 (the
    hand-out of lesson 01 has no lesson 02)."""
    block = re.compile(r"\n# The lesson executables themselves.*?gtest_discover_tests\(executable_tests[^\n]*\n",
                       re.DOTALL)
    if not block.search(text):
        raise HandoutError("tests/CMakeLists.txt: cannot find the executable_tests block, which "
                           "needs lesson 02; update drop_executable_tests")
    return block.sub("\n", text)


def cut_readme_solutions(text, lesson_regions, origin):
    """A lesson README with its solution snippets replaced by a placeholder: the ones between
    SOLUTION markers, and code blocks that quote a region with the kernel's own markers (up to
    END EXERCISE, or to the end of the code block when the quote stops inside the region)."""
    names = {region.name for region in lesson_regions}
    out = []
    open_name, closes_at, in_code = None, None, False

    def start(name, number, placeholder):
        if name not in names:
            raise HandoutError(f"{origin}:{number}: no exercise named '{name}' in the kernel")
        out.append(placeholder)

    for number, line in enumerate(text.split("\n"), start=1):
        fence = line.lstrip().startswith("```")
        if open_name is None:
            solution = SOLUTION_BEGIN.match(line)
            begin = regions.BEGIN_MARKER.match(line) if in_code else None
            out.append(line)
            if solution:
                open_name, closes_at = solution["name"], SOLUTION_END
                start(open_name, number, f"*(The code of exercise `{open_name}` is yours to write: "
                                         "it is cut from this hand-out.)*")
            elif begin:
                open_name = regions.parse_attributes(begin["spec"], f"{origin}:{number}")[0]
                closes_at = regions.END_MARKER
                start(open_name, number, f"{begin['indent']}// ... exercise {open_name}: yours to write ...")
            elif fence:
                in_code = not in_code
        elif closes_at.match(line):
            out.append(line)
            open_name = None
        elif fence and closes_at is regions.END_MARKER:
            out.append(line)  # the quote ends inside the region: the code block closes it
            open_name, in_code = None, False
    if open_name is not None:
        raise HandoutError(f"{origin}: the snippet of exercise '{open_name}' is not closed")
    return "\n".join(out)


def render_homework_page(lesson, lesson_regions, source):
    """HOMEWORK.md from tests/grading/homework_template.md."""
    template = string.Template((GRADING_DIR / "homework_template.md").read_text())
    tasks = "\n".join(f"- **`{region.name}`**: {region.task}" for region in lesson_regions)
    host_checks = sorted({region.attributes["host-check"] for region in lesson_regions
                          if "host-check" in region.attributes})
    technique = (f"the machine code contains the lesson's characteristic instructions "
                 f"({', '.join(f'`{name}`' for name in lesson.signature)})"
                 if lesson.signature else "nothing lesson-specific beyond correctness")
    if host_checks:
        technique += ", and the host check" + ("s " if len(host_checks) > 1 else " ") + \
            ", ".join(f"`{name}`" for name in host_checks) + " passes on your code"
    return template.substitute(
        id=f"{lesson.id:02d}", slug=lesson.slug, folder=lesson.folder, title=lesson.title,
        tasks=tasks, region_count=len(lesson_regions), technique=technique, source=source)


def distinctive_solution_lines(root, lesson_id):
    """(exercise, line) of lesson `lesson_id`'s solution that the hand-out must not contain: its
    distinctive lines (regions.solution_lines), less those an earlier lesson, which the hand-out
    keeps, already has (a loop header from lesson 03 gives nothing of lesson 07 away)."""
    folders = course_lessons.lesson_folders(root)
    earlier = {regions.normalize(line) for number, folder in folders.items() if number < lesson_id
               for line in (root / folder / "kernel.cuh").read_text().split("\n")}
    kernel = (root / folders[lesson_id] / "kernel.cuh").read_text()
    return [(name, line) for name, line in regions.solution_lines(kernel)
            if not any(line in other for other in earlier)]


def leaks(handout_dir, solution):
    """(file, line number, exercise) for every distinctive solution line still in the hand-out."""
    found = []
    for path in sorted(handout_dir.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            normal = " ".join(line.split())
            for name, solution_line in solution:
                if solution_line in normal:
                    found.append((path.relative_to(handout_dir), number, name))
    return found


def references_to_removed_lessons(handout_dir, removed):
    """Code and build files that still name a folder of a lesson left out (they cannot build)."""
    pattern = re.compile(r"lessons/(" + "|".join(sorted(removed)) + r")/") if removed else None
    found = []
    for path in sorted(handout_dir.rglob("*")):
        if pattern and path.is_file() and path.suffix in {".cu", ".cuh", ".cpp", ".hpp", ".txt"}:
            if pattern.search(path.read_text(errors="replace")):
                found.append(path.relative_to(handout_dir))
    return found


def build_handout(root, lesson_id, dist):
    """Writes dist/homeworkNN/ and dist/homeworkNN.tar.gz; returns (folder, archive, notes on
    files that still need a lesson the hand-out leaves out)."""
    folders = course_lessons.lesson_folders(root)
    lesson = course_lessons.load(root, lesson_id)
    course_kernel = (root / lesson.kernel).read_text()
    lesson_regions = regions.parse_regions(course_kernel, lesson.kernel)
    if not lesson_regions:
        raise HandoutError(f"{lesson.kernel} has no exercise region")
    removed = {folders[number].split("/")[-1] for number in folders if number > lesson_id}

    target = dist / f"homework{lesson_id:02d}"
    if target.exists():
        shutil.rmtree(target)
    for path in course_files(root):
        owner = lesson_of_path(path)
        if is_course_only(path) or (owner is not None and owner > lesson_id):
            continue
        reference_profile = LESSON_FILE.match(Path(path).name)
        if path.startswith("profiles/reference/") and reference_profile and \
                int(reference_profile["id"]) > lesson_id:
            continue
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / path, destination)

    def rewrite(path, transform):
        file = target / path
        if file.is_file():
            file.write_text(transform(file.read_text()))

    rewrite(lesson.kernel, regions.cut)
    rewrite(f"{lesson.folder}/README.md",
            lambda text: cut_readme_solutions(text, lesson_regions, f"{lesson.folder}/README.md"))
    for path in ("lessons/CMakeLists.txt", "lessons/registry.cu"):
        rewrite(path, lambda text, path=path: regenerate_lesson_lists(text, path, lesson_id))
    if lesson_id < 2:
        rewrite("tests/CMakeLists.txt", drop_executable_tests)
        (target / "tests/host/executable_test.cpp").unlink(missing_ok=True)
    for file in sorted(target.rglob("*")):
        relative = str(file.relative_to(target))
        if file.suffix == ".md":
            rewrite(relative, lambda text: drop_later_lessons_from_tables(text, lesson_id))
        elif file.suffix == ".csv" and not relative.startswith("tests/"):
            rewrite(relative, lambda text: drop_later_lessons_from_csv(text, lesson_id))
        elif file.name in {"Makefile", "CMakeLists.txt"}:
            rewrite(relative, drop_course_only_blocks)

    source = source_description(root)
    (target / "HOMEWORK.md").write_text(render_homework_page(lesson, lesson_regions, source))
    # What the hand-out's grader (public mode) needs and cannot derive without the solution: the
    # kernel as handed out, and each region's limits (regions.region_limits).
    course_lines = course_kernel.split("\n")
    record = {"lesson": lesson_id, "slug": lesson.slug, "source": source,
              "limits": {region.name: regions.region_limits(region.body(course_lines))
                         for region in lesson_regions}}
    (target / "tests/grading/handout.json").write_text(json.dumps(record, indent=2) + "\n")
    shutil.copy2(target / lesson.kernel, target / "tests/grading/handout_kernel.cuh")

    found = leaks(target, distinctive_solution_lines(root, lesson_id))
    if found:
        places = "\n".join(f"  {file}:{number} (exercise {name})" for file, number, name in found)
        raise HandoutError(f"leak check: lines of lesson {lesson_id:02d}'s solution are still in the "
                           f"hand-out (mark the snippet or leave the file out):\n{places}")

    warnings = [f"{path} refers to a lesson that is not in the hand-out: the targets built from "
                "it (not the lesson's own) will not build"
                for path in references_to_removed_lessons(target, removed)]
    archive = dist / f"homework{lesson_id:02d}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(target, arcname=target.name)
    return target, archive, warnings


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the homework hand-out of one lesson.")
    parser.add_argument("lesson", help="lesson number, e.g. 08")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist",
                        help="where to write homeworkNN/ and homeworkNN.tar.gz (default: dist/)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"\d{1,2}", args.lesson.strip()) or int(args.lesson) == 0:
        print(f"homework: L must be a lesson number such as 08, not '{args.lesson}'", file=sys.stderr)
        return 2
    try:
        folder, archive, warnings = build_handout(ROOT, int(args.lesson), args.dist.resolve())
    except (regions.RegionError, course_lessons.LessonError) as error:
        print(f"homework: {error}", file=sys.stderr)
        return 2
    except HandoutError as error:
        print(f"homework: {error}", file=sys.stderr)
        return 1
    for warning in warnings:
        print(f"homework: note: {warning}")
    print(f"homework: wrote {folder} and {archive}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
