#!/usr/bin/env python3
"""Builds the homework hand-out of one lesson (`make homework L=NN`, docs/grading.md).

Usage: homework.py NN [--dist DIR]

Writes DIR/homeworkNN/ (default DIR: dist/) and DIR/homeworkNN.tar.gz:

  - the course's files (the tracked and not-ignored files of this git checkout; in a clean
    checkout that is HEAD), without the lessons after NN, without what only the course staff
    needs (the planted submissions, this tool, its tests, the CI script, docs/grading.md), and
    without the common building blocks that spell out the answer of lesson NN or a later one
    (a `// Taught in lesson MM` line in their first 40 lines, MM >= NN) and whatever includes
    them (a test that includes one is dropped, and its line in a CMakeLists.txt with it);
  - everything that lists the lessons regenerated to match: lessons/CMakeLists.txt (the one list
    of the lessons, from which the build writes the registry's), the lesson tables of the READMEs
    and docs, the per-lesson CSV files and reference profiles;
    Markdown links to what the hand-out leaves out become plain text;
  - lesson NN's exercise regions replaced by stubs (regions.cut), its README's solution snippets
    replaced by a placeholder, and a HOMEWORK.md that says what to do, which make targets work,
    and how it is graded.

Then the leak check: if the hand-out still gives away an answer of lesson NN anywhere (earlier
lessons, their READMEs, docs/ and common/ included): the only distinctive line of a region, two of
its lines together, or most of its lines (leaks()); or if the comments of lesson NN's kernel or its
README spell out a statement of an answer in prose (prose_leaks()), the tool fails and names the
place.

It needs a git checkout of the course (git ls-files says which files are the course's); from a
folder that is not one it stops with one line (exit 2).

Exit status: 0 done; 1 the leak check or a consistency check failed; 2 bad usage, not a git
checkout, or a lesson whose markers are malformed.
"""
import argparse
import json
import os
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
sys.path.insert(0, str(ROOT / "profiles"))

import lessons as course_lessons  # noqa: E402  (after the path is set)
import regions  # noqa: E402
import teaching_copy  # noqa: E402
from includes import quoted_includes  # noqa: E402

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


class NotACheckout(HandoutError):
    """The course is not a git checkout here (a release archive, say): usage, exit 2."""


def git(root, *arguments):
    """git's output in `root`, or None when git fails or is missing."""
    try:
        completed = subprocess.run(["git", *arguments], cwd=root, capture_output=True, check=False)
    except OSError:
        return None
    return completed.stdout.decode(errors="replace") if completed.returncode == 0 else None


def is_course_checkout(root):
    """Whether `root` is the top of a git checkout, which the hand-out tool needs (course_files)."""
    top = git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == Path(root).resolve()


# Why the tests that build hand-outs of this course skip in a copy that is not a clone.
NOT_A_CHECKOUT_REASON = ("not a git clone of the course (a release archive or an exported copy): "
                         "the hand-out tool lists the course's files with git")


def course_files(root):
    """The files of the course: tracked, or untracked but not ignored (a new lesson in progress).
    NotACheckout unless `root` is the top of a git checkout: the list comes from git."""
    if not is_course_checkout(root):
        raise NotACheckout(f"{root} is not a git checkout of the course: the hand-out is built from "
                           "the files git lists, so run make homework in a clone of the course")
    listing = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    if listing is None:
        raise HandoutError("git ls-files failed in the course's checkout")
    paths = sorted({path for path in listing.split("\0") if path})
    return [path for path in paths if (root / path).is_file()]


def source_record(root):
    """What the hand-out was built from: {"source": "HEAD 1a2b3c4[ plus uncommitted changes]",
    "commit": the full hash, "uncommitted_changes": bool}. The grading host pins its checkout to
    that commit (gpu_host.py)."""
    commit = (git(root, "rev-parse", "HEAD") or "").strip() or None
    dirty = bool((git(root, "status", "--porcelain") or "").strip())
    source = f"HEAD {commit[:7] if commit else 'unknown'}" + (" plus uncommitted changes" if dirty else "")
    return {"source": source, "commit": commit, "uncommitted_changes": dirty}


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


# The one list of the lessons: their add_lesson(NN ...) calls, from which the build writes the
# registry's list (lessons/registry.hpp).
LESSON_LIST = "lessons/CMakeLists.txt"
ADD_LESSON = re.compile(r"^add_lesson\((\d\d) ")


def drop_later_lessons_from_list(text, last):
    """lessons/CMakeLists.txt without the add_lesson calls of the lessons after `last`."""
    kept = []
    for line in text.split("\n"):
        listed = ADD_LESSON.match(line)
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


# ---- Common building blocks that later lessons include --------------------------------------

# A common file that holds the code of an exercise region of lesson MM says so in its first lines
# (`// Taught in lesson MM: ...`, read by teaching_copy.taught_in): the hand-outs of lessons up to
# MM leave it out, since it holds the answer of lesson MM, or of a lesson after theirs.
SOURCE_SUFFIXES = {".cu", ".cuh", ".cpp", ".hpp", ".h"}


def included_paths(text, path, files):
    """The course files that a source #includes: paths are relative to the repository root (the
    course's convention) or to the including file's folder."""
    found = []
    for include in quoted_includes(text):
        for candidate in (include, os.path.normpath(os.path.join(os.path.dirname(path), include))):
            if candidate in files:
                found.append(candidate)
                break
    return found


def files_to_leave_out_for_common(root, files, lesson_id):
    """{path: why} of the common files taught in lesson `lesson_id` or later, and of every other
    source that includes one of them, directly or through another."""
    sources = {path: (root / path).read_text(errors="replace") for path in files
               if Path(path).suffix in SOURCE_SUFFIXES}
    left_out = {}
    for path, text in sources.items():
        taught = teaching_copy.taught_in(text) if path.startswith("common/") else None
        if taught is not None and taught >= lesson_id:
            left_out[path] = f"taught in lesson {taught:02d}"
    includes = {path: included_paths(text, path, sources) for path, text in sources.items()}
    grown = True
    while grown:
        grown = False
        for path, included in includes.items():
            reason = next((name for name in included if name in left_out), None)
            if path not in left_out and reason:
                left_out[path] = f"includes {reason}"
                grown = True
    return left_out


def drop_cmake_references(text, folder, left_out):
    """A CMakeLists.txt in `folder` without the names of left-out files (a test source listed in
    tests/CMakeLists.txt): the name goes, and its line when nothing else is left on it."""
    names = set(left_out)
    names.update(path[len(folder) + 1:] for path in left_out if folder and path.startswith(folder + "/"))
    if not names:
        return text
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    token = re.compile(r"(?<![\w./-])[ \t]*(?:\$\{\w+\}/)?(?:" + alternatives + r")(?![\w./-])")
    kept = []
    for line in text.split("\n"):
        edited = token.sub("", line)
        if edited == line:
            kept.append(line)
        elif edited.strip():
            kept.append(edited.rstrip())
    return "\n".join(kept)


# ---- Markdown links to what the hand-out leaves out ---------------------------------------------

MARKDOWN_LINK = re.compile(r"(?P<image>!?)\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]"
                           r"\((?P<target>[^()\s]+)(?:[ \t]+\"[^\"]*\")?\)")
FENCED_CODE = re.compile(r"(^[ \t]*```[^\n]*\n.*?^[ \t]*```[^\n]*$)", re.MULTILINE | re.DOTALL)
URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def link_destination(target, page):
    """The repository path a relative link of `page` points to (anchor cut), or None for a URL,
    an anchor of the page itself or a path outside the repository."""
    path = target.split("#")[0]
    if not path or URL_SCHEME.match(path) or path.startswith("/"):
        return None
    resolved = os.path.normpath(os.path.join(os.path.dirname(page), path))
    return None if resolved.startswith("..") else resolved.rstrip("/")


def unlink_left_out(text, page, left_out):
    """The Markdown of `page` with each link to a left-out path (a file, or a folder that held
    one) turned into its plain words; code blocks are left as they are."""
    def replace(match):
        destination = link_destination(match["target"], page)
        if destination is None or not left_out(destination):
            return match[0]
        return match["text"]

    pieces = FENCED_CODE.split(text)
    return "".join(piece if index % 2 else MARKDOWN_LINK.sub(replace, piece)
                   for index, piece in enumerate(pieces))


def links_out_of(folder, counts=lambda destination: True):
    """(page, link) of every relative Markdown link of a hand-out whose destination is not in it,
    among the destinations `counts` accepts (outside code blocks): what unlink_left_out must have
    left none of."""
    found = []
    for page in sorted(folder.rglob("*.md")):
        relative = str(page.relative_to(folder))
        for link in MARKDOWN_LINK.finditer(FENCED_CODE.sub("", page.read_text())):
            destination = link_destination(link["target"], relative)
            if destination is not None and counts(destination) and not (folder / destination).exists():
                found.append((relative, link[0]))
    return found


# ---- HOMEWORK.md ---------------------------------------------------------------------------------

# Make targets that build from files outside the lessons: the hand-out can run them only when
# those files name no lesson it leaves out.
TARGET_SOURCES = {"resources": ("profiles/resource_study.cu",),
                  "sweep": ("profiles/sweep.cu", "profiles/variants_*.cu"),
                  "roles": ("profiles/role_timeline.cu",)}
MAKE_TARGET = re.compile(r"\bmake (?P<target>lesson\d\d|test|bench|sweep|diff|resources|sanitize|"
                         r"profile|compare|roles|grade)\b")


def unavailable_targets(handout_dir, removed):
    """{make target: the hand-out files it would build that name a lesson the hand-out leaves out}."""
    blocked = {}
    needing = set(map(str, references_to_removed_lessons(handout_dir, removed)))
    for target, patterns in TARGET_SOURCES.items():
        hits = sorted(path for pattern in patterns for path in
                      (str(file.relative_to(handout_dir)) for file in handout_dir.glob(pattern))
                      if path in needing)
        if hits or not any(any(handout_dir.glob(pattern)) for pattern in patterns):
            blocked[target] = hits or list(patterns)
    return blocked


def make_targets_table(lesson, unavailable, readme_text):
    """The Markdown of HOMEWORK.md's section on the make targets: which work in this hand-out."""
    number = f"{lesson.id:02d}"
    earlier = f"lessons 01-{number}" if lesson.id > 1 else "lesson 01"
    rows = [
        ("`make lesson" + number + "`, `make`", f"builds {earlier}, the tests and the benchmark"),
        ("`make test`", f"every test; lesson {number}'s GPU tests fail until your regions are written"),
        ("`make sanitize`", f"compute-sanitizer on {earlier}; it stops at lesson {number} until your "
                            "regions are written"),
        ("`make bench`", f"times {earlier} (lesson {number} traps until its regions are written)"),
        ("`make diff L=MM`", f"for {earlier}: what a lesson adds to its parent"),
        ("`make profile L=MM`", f"for {earlier} (needs Nsight Compute)"),
        ("`make compare A=MM B=KK`", f"for {earlier}: your profiles, or the committed H100 "
                                     "reference profiles of these lessons"),
    ]
    for target, what in (("resources", "registers, shared memory and spills of every lesson"),
                         ("sweep", "the configuration tables of the READMEs"),
                         ("roles", "where a launch of lesson 16's kernel spends its time, role "
                                   "by role")):
        if target in unavailable:
            rows.append((f"`make {target}`", "**not in this hand-out**: it builds "
                         + ", ".join(f"`{path}`" for path in unavailable[target])
                         + f", which need lessons after {number} or the common copies of "
                         f"lesson {number}'s answers, left out of it"))
        else:
            rows.append((f"`make {target}`", what))
    rows.append((f"`make grade L={number} SUBMISSION=...`", "the grader's public part (below)"))
    lines = ["| command | in this hand-out |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    asked = sorted({match["target"] for match in MAKE_TARGET.finditer(readme_text)})
    blocked = [target for target in asked if target in unavailable]
    if blocked:
        lines += ["", f"The README of lesson {number} also mentions "
                  + ", ".join(f"`make {target}`" for target in blocked)
                  + ": that part of its exercises needs the full course, which this hand-out is not. "
                  "Do the rest, and measure with `./lesson" + number + "` where it asks for a table."]
    return "\n".join(lines)


def render_homework_page(lesson, lesson_regions, source, targets_table):
    """HOMEWORK.md from tests/grading/homework_template.md."""
    template = string.Template((GRADING_DIR / "homework_template.md").read_text())
    tasks = "\n".join(f"- **`{region.name}`**: {region.task}" for region in lesson_regions)
    host_checks = regions.host_checks(lesson_regions)
    technique = (f"the machine code contains the lesson's characteristic instructions "
                 f"({', '.join(f'`{name}`' for name in lesson.signature)})"
                 if lesson.signature else "nothing lesson-specific beyond correctness")
    if host_checks:
        technique += ", and the host check" + ("s " if len(host_checks) > 1 else " ") + \
            ", ".join(f"`{name}`" for name in host_checks) + " passes on your code"
    number = f"{lesson.id:02d}"
    return template.substitute(
        id=number, slug=lesson.slug, folder=lesson.folder, title=lesson.title,
        tasks=tasks, region_count=len(lesson_regions), technique=technique, source=source,
        targets=targets_table, exercise=lesson.exercise,
        **(LAYER_PAGE if lesson.tensor_parallel else GEMM_PAGE)(number))


# What HOMEWORK.md says of testing and grading: a GEMM lesson, and a layer over GPUs (lesson 19),
# whose runs are token counts on one GPU (shapes.token_runs, grade.Grader.gpu_layer).
def GEMM_PAGE(number):
    return {
        "stopped": "kernel",
        "self_test": (f"make lesson{number} && ./lesson{number} --m 333 --n 136 --k 264    # both check lines must say PASS\n"
                      f"./lesson{number}                                                # 4096^3: checked, then timed\n"
                      f"cmake --build build --target gpu_tests && (cd build && ctest -R lesson{number})"),
        "grader_checks": "checks the machine code, and runs every public shape, the reruns and the\nsanitizers",
        "public_graded": "every shape of the course's GPU test list (`tests/gpu/lesson_shapes_test.cu`)",
        "hidden_graded": ("ragged, tiny, skinny and large shapes and input seeds you have not seen, "
                          "all inside the shape contract (M >= 1, N and K multiples of 8)"),
        "robustness_graded": ("the same inputs twice give the same bits; compute-sanitizer memcheck, "
                              "racecheck and synccheck find nothing at a small ragged shape"),
        "performance_graded": ("only when everything else passed: your kernel timed against the "
                               "course's solution, alternately, on two large shapes; full points at "
                               "0.9 of its speed or better, proportionally less below"),
    }


def LAYER_PAGE(number):
    return {
        "stopped": "program",
        "self_test": (f"make lesson{number} && ./lesson{number} --gpus 1 --tokens 1,7,1000 --chunks 3 --check-only\n"
                      "    # every variant's check must pass, and the rehearsal line must say every row\n"
                      "    # is where it belongs\n"
                      f"./build/tests/host_check_row_mapping                       # 1 to 16 ranks, on the host"),
        "grader_checks": ("runs the host check, and runs every public token count on one GPU (each run "
                          "checks the layer and\nrehearses the copies of every rank count) and the reruns"),
        "public_graded": "the token counts of the lesson's GPU test (1, 7, 256 and 1000), each in 2-4 chunks per rank",
        "hidden_graded": ("one token, an odd count, a count that no rank count divides, and a large "
                          "one, in chunk counts and seeds you have not seen"),
        "robustness_graded": "the same run twice gives the same figures",
        "performance_graded": ("not timed: your regions decide where rows go, not how fast they move; "
                               "the points follow from everything else passing"),
    }


# ---- The leak check ------------------------------------------------------------------------------

def distinctive_solution_lines(root, lesson_id):
    """(exercise, line) of lesson `lesson_id`'s solution that the hand-out must not contain: every
    distinctive line of its regions (regions.solution_lines), wherever else the course has it. A
    line that an earlier lesson spells out too gives the answer away just the same: the earlier
    lesson must change, or the exercise."""
    return regions.solution_lines((root / course_lessons.load(root, lesson_id).kernel).read_text())


# Two lines of an answer that follow each other in its region give it away when a file holds them
# this close together (a comment or a blank line may sit between them).
LEAK_NEARBY_LINES = 3


def leaks(handout_dir, solution):
    """(file, line number, exercise) for every place where the hand-out gives an exercise away.

    An exercise's answer is in the hand-out when a file holds its only distinctive line; or two of
    its distinctive lines that follow each other in the region, within LEAK_NEARBY_LINES lines of
    each other; or, anywhere, more than half of its distinctive lines. One line that the answer
    shares with other code (a loop header, a fence that an earlier lesson taught) does not give the
    answer away; its substance does."""
    answers = {}
    for name, solution_line in solution:
        answers.setdefault(name, []).append(solution_line)
    # places[name][i]: (file, line number) of every copy of the exercise's i-th distinctive line.
    places = {name: [[] for _ in lines] for name, lines in answers.items()}
    for path in sorted(handout_dir.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        relative = path.relative_to(handout_dir)
        for number, line in enumerate(text.split("\n"), start=1):
            normal = " ".join(line.split())
            for name, lines in answers.items():
                for index, solution_line in enumerate(lines):
                    if solution_line in normal:
                        places[name][index].append((relative, number))
    found = set()
    for name, lines in answers.items():
        copies = places[name]
        if len(lines) == 1:
            found.update((file, number, name) for file, number in copies[0])
            continue
        for first, second in zip(copies, copies[1:]):
            for file, number in first:
                for other_file, other_number in second:
                    if file == other_file and 0 < other_number - number <= LEAK_NEARBY_LINES:
                        found.update({(file, number, name), (file, other_number, name)})
        present = [index for index, copy in enumerate(copies) if copy]
        if 2 * len(present) > len(lines):
            found.update((*copies[index][0], name) for index in present)
    return sorted(found, key=lambda place: (str(place[0]), place[1], place[2]))


# ---- The prose leak check: the words next to a region ------------------------------------------

# What prose and code share when the prose states an answer: `accumulator[4j + 2] += ...` in a
# README and `accumulator[4 * j + 2] += ...` in the region. Both are compared without case,
# whitespace, backticks, multiplication signs, the course's namespaces and a closing semicolon.
PROSE_DROPPED = re.compile(r"[\s`*;]|\bgemm::|\bptx::|\bhopper::|\btaught::|\bstd::")
# Shorter statements ("i = 0") say nothing on their own, nor does a call without arguments
# (`wgmma_fence()`): prose names the instructions it teaches.
PROSE_MIN_CHARS = 12
BARE_CALL = re.compile(r"^[\w:<>]+\(\)$")


def prose_normal(text):
    return PROSE_DROPPED.sub("", text.lower())


def solution_statements(solution):
    """(exercise, normalized text) of what prose must not spell out: each distinctive solution line,
    and its right-hand side (after `=`, `+=`, `return`) where that is long enough on its own."""
    found = set()
    for name, line in solution:
        candidates = [line]
        right = re.split(r"(?<![=!<>])[-+*/|&^]?=(?!=)|\breturn\b", line, maxsplit=1)
        if len(right) == 2:
            candidates.append(right[1])
        for candidate in candidates:
            normal = prose_normal(candidate)
            if len(normal) >= PROSE_MIN_CHARS and not BARE_CALL.match(normal):
                found.add((name, normal))
    return sorted(found)


def prose_leaks(handout_dir, lesson, solution):
    """(file, line number, exercise) for every place where the comments of the lesson's hand-out
    kernel, or its README, spell out a statement of an exercise's answer. A sentence may wrap, so
    each line is read together with the next."""
    statements = solution_statements(solution)
    found = set()
    for relative, comments_only in ((lesson.kernel, True), (f"{lesson.folder}/README.md", False)):
        path = handout_dir / relative
        if not path.is_file():
            continue
        lines = path.read_text().split("\n")
        if comments_only:
            lines = [line.split("//", 1)[1] if "//" in line else "" for line in lines]
        normal = [prose_normal(line) for line in lines] + [""]
        for index, line in enumerate(normal[:-1]):
            following = normal[index + 1]
            for name, statement in statements:
                # On this line, or starting on it and ending on the next (the next line's own
                # copies are its own).
                starts_here = statement in line + following and statement not in following
                if statement in line or starts_here:
                    found.add((Path(relative), index + 1, name))
    return sorted(found, key=lambda place: (str(place[0]), place[1], place[2]))


def references_to_removed_lessons(handout_dir, removed):
    """Code and build files that still name a folder of a lesson left out (they cannot build)."""
    pattern = re.compile(r"lessons/(" + "|".join(sorted(removed)) + r")/") if removed else None
    found = []
    for path in sorted(handout_dir.rglob("*")):
        if pattern and path.is_file() and path.suffix in {".cu", ".cuh", ".cpp", ".hpp", ".txt"}:
            if pattern.search(path.read_text(errors="replace")):
                found.append(path.relative_to(handout_dir))
    return found


# ---- The hand-out --------------------------------------------------------------------------------

def select_files(root, files, lesson_id):
    """(the course files the hand-out keeps, {left-out source: why} of the common building blocks
    and what includes them)."""
    def kept(path):
        owner = lesson_of_path(path)
        if is_course_only(path) or (owner is not None and owner > lesson_id):
            return False
        reference_profile = LESSON_FILE.match(Path(path).name)
        return not (path.startswith("profiles/reference/") and reference_profile and
                    int(reference_profile["id"]) > lesson_id)

    candidates = [path for path in files if kept(path)]
    left_out = files_to_leave_out_for_common(root, candidates, lesson_id)
    needed = sorted(path for path in left_out if path.startswith("lessons/"))
    if needed:
        raise HandoutError("the hand-out must leave out common files taught in lesson "
                           f"{lesson_id:02d} or later, but lessons it keeps need them: "
                           + "; ".join(f"{path} {left_out[path]}" for path in needed))
    return [path for path in candidates if path not in left_out], left_out


def build_handout(root, lesson_id, dist):
    """Writes dist/homeworkNN/ and dist/homeworkNN.tar.gz; returns (folder, archive, notes on
    files that still need a lesson the hand-out leaves out)."""
    root = Path(root)
    files = course_files(root)
    folders = course_lessons.lesson_folders(root)
    lesson = course_lessons.load(root, lesson_id)
    course_kernel = (root / lesson.kernel).read_text()
    lesson_regions = regions.parse_regions(course_kernel, lesson.kernel)
    if not lesson_regions:
        raise HandoutError(f"{lesson.kernel} has no exercise region")
    removed = {folders[number].split("/")[-1] for number in folders if number > lesson_id}
    kept, left_out_common = select_files(root, files, lesson_id)

    target = dist / f"homework{lesson_id:02d}"
    if target.exists():
        shutil.rmtree(target)
    for path in kept:
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
    rewrite(LESSON_LIST, lambda text: drop_later_lessons_from_list(text, lesson_id))
    if lesson_id < 2:
        rewrite("tests/CMakeLists.txt", drop_executable_tests)
        (target / "tests/host/executable_test.cpp").unlink(missing_ok=True)

    present = {str(file.relative_to(target)) for file in target.rglob("*")}
    in_course = set(files) | {str(parent) for path in files for parent in Path(path).parents}

    def left_out(path):
        return path in in_course and path not in present

    for file in sorted(target.rglob("*")):
        relative = str(file.relative_to(target))
        if file.suffix == ".md":
            rewrite(relative, lambda text, page=relative: unlink_left_out(
                drop_later_lessons_from_tables(text, lesson_id), page, left_out))
        elif file.suffix == ".csv" and not relative.startswith("tests/"):
            rewrite(relative, lambda text: drop_later_lessons_from_csv(text, lesson_id))
        elif file.name in {"Makefile", "CMakeLists.txt"}:
            folder = os.path.dirname(relative)
            rewrite(relative, lambda text, folder=folder: drop_cmake_references(
                drop_course_only_blocks(text), folder, left_out_common))

    record = source_record(root)
    readme = (target / lesson.folder / "README.md")
    table = make_targets_table(lesson, unavailable_targets(target, removed),
                               readme.read_text() if readme.is_file() else "")
    (target / "HOMEWORK.md").write_text(render_homework_page(lesson, lesson_regions,
                                                             record["source"], table))
    # What the hand-out's grader (public mode) needs and cannot derive without the solution: the
    # kernel as handed out, and each region's limits (regions.region_limits); and the commit it
    # comes from, to which the grading host pins its checkout.
    course_lines = course_kernel.split("\n")
    handout_record = {"lesson": lesson_id, "slug": lesson.slug, **record,
                      "limits": {region.name: regions.region_limits(region.body(course_lines))
                                 for region in lesson_regions}}
    (target / "tests/grading").mkdir(parents=True, exist_ok=True)
    (target / "tests/grading/handout.json").write_text(json.dumps(handout_record, indent=2) + "\n")
    shutil.copy2(target / lesson.kernel, target / "tests/grading/handout_kernel.cuh")

    solution = distinctive_solution_lines(root, lesson_id)
    found = sorted(set(leaks(target, solution)) | set(prose_leaks(target, lesson, solution)),
                   key=lambda place: (str(place[0]), place[1], place[2]))
    if found:
        places = "\n".join(f"  {file}:{number} (exercise {name})" for file, number, name in found)
        raise HandoutError(f"leak check: lines of lesson {lesson_id:02d}'s solution are in the "
                           f"hand-out (change the file, mark the snippet, or leave it out):\n{places}")

    warnings = [f"{path} refers to a lesson that is not in the hand-out: the targets built from "
                "it (not the lesson's own) will not build"
                for path in references_to_removed_lessons(target, removed)]
    warnings += [f"left out {path}: {why}" for path, why in sorted(left_out_common.items())]
    archive = dist / f"homework{lesson_id:02d}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(target, arcname=target.name)
    return target, archive, warnings


def main(argv=None, root=ROOT):
    parser = argparse.ArgumentParser(description="Build the homework hand-out of one lesson.")
    parser.add_argument("lesson", help="lesson number, e.g. 08")
    parser.add_argument("--dist", type=Path, default=root / "dist",
                        help="where to write homeworkNN/ and homeworkNN.tar.gz (default: dist/)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"\d{1,2}", args.lesson.strip()) or int(args.lesson) == 0:
        print(f"homework: L must be a lesson number such as 08, not '{args.lesson}'", file=sys.stderr)
        return 2
    try:
        folder, archive, warnings = build_handout(root, int(args.lesson), args.dist.resolve())
    except (NotACheckout, regions.RegionError, course_lessons.LessonError) as error:
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
