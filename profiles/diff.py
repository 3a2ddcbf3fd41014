#!/usr/bin/env python3
"""What a lesson adds: its kernel.cuh against its parent's (`make diff L=NN [CODE=1]`).

Usage: diff.py NN [--code] [--lessons DIR]

Every lesson names its parent, the lesson whose kernel it starts from, in its description
(`"parent": P` in lessons/NN_slug/lesson.json, profiles/lesson_description.py). Usually that is
lesson NN - 1, but the course may branch (lesson 12 starts from lesson 10 or 11), so the parent is
read from the description, never guessed from the number.

Without --code the output is a plain unified diff of the two files. With --code it shows the code
only: blank lines, comment-only lines (whose text starts with //) and #include lines are left out,
the two lessons' namespaces (lesson08 and lesson09, in `namespace lesson09` and `lesson09::`) count
as the same word, and indentation does not count, so a change of comments, of the headers a file
includes, of the namespace's name or of indentation alone (code wrapped in a new loop) is no
change. The lines shown
are the files' own, and each hunk starts with its first line's numbers in the two files
("@@ lesson 08 line 40, lesson 09 line 43 @@"), so a hunk can be found in the editor: the code
view is for reading, not a patch to apply.

Teaching copies: a piece that a lesson teaches is spelled out in its kernel.cuh between
`// BEGIN TEACHING COPY(name)` and `// END TEACHING COPY`, and the same code (the tool test
tests/tools/test_teaching_copies.py keeps them identical) sits in common/ for the later lessons,
which use it from there (`gemm::taught::name`, or through a common header that the lesson
includes, directly or not, such as the final kernel's table of configurations). Both views leave
the parent's teaching copies that the lesson uses from common/ out of the comparison, and say so in
one line on stderr: the lesson uses the very same code, so they are no change.

Exit status: 0 whether or not the kernels differ; 2, with one line on stderr, for a missing or
malformed lesson number, a lesson that does not exist, one without a parent, a lesson.json missing
or malformed, or teaching-copy markers that do not pair up.
"""
import difflib
import re
import signal
import sys
from pathlib import Path

from includes import quoted_includes
from lesson_description import DescriptionError, describe
from teaching_copy import teaching_copies

LESSONS_DIR = Path(__file__).resolve().parents[1] / "lessons"
USAGE = "usage: make diff L=NN [CODE=1]"


# Lines of context around each change, as diff -u shows them.
CONTEXT_LINES = 3
INCLUDE = re.compile(r"#[ \t]*include\b")


class UsageError(Exception):
    """A request the tool cannot serve; its message is one line for the user."""


def lesson_number(text):
    """'9', '09' -> 9. Anything else (empty, letters, 0, three digits) is a UsageError."""
    if not re.fullmatch(r"\d{1,2}", text.strip()) or int(text) == 0:
        shown = text.strip() or "nothing"
        raise UsageError(f"L must be a lesson number such as 08, not {shown}")
    return int(text)


def lesson_folder(lessons_dir, number):
    """lessons/NN_slug/ of lesson `number`, with its kernel.cuh; a UsageError if there is none."""
    named = sorted(Path(lessons_dir).glob(f"{number:02d}_*"))
    folders = [path for path in named if (path / "kernel.cuh").is_file()]
    if named and not folders:
        raise UsageError(f"lesson {number:02d} ({named[0].name}) has no kernel.cuh: it is not one "
                         "GEMM kernel to diff against its parent's (its README says what it adds)")
    if not folders:
        raise UsageError(f"no lesson {number:02d} under {relative_to_here(lessons_dir)}")
    if len(folders) > 1:
        raise UsageError(f"more than one lesson {number:02d}: "
                         + ", ".join(str(relative_to_here(path)) for path in folders))
    return folders[0]


def lesson_parent(folder):
    """The parent of the lesson in `folder`, from its description; a UsageError if that is missing
    or malformed."""
    try:
        return describe(folder)["parent"]
    except DescriptionError as error:
        raise UsageError(str(error)) from None


def parent_kernel(lessons_dir, number):
    """(parent number, the parent's kernel.cuh) of lesson `number`."""
    parent = lesson_parent(lesson_folder(lessons_dir, number))
    if parent == 0:
        raise UsageError(f"lesson {number:02d} has no parent: it is where the course starts")
    try:
        return parent, lesson_folder(lessons_dir, parent) / "kernel.cuh"
    except UsageError:
        raise UsageError(f"lesson {number:02d} names parent {parent:02d}, "
                         "which does not exist") from None


def relative_to_here(path):
    """The path as the user would type it: relative to the current folder when inside it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd())
    except ValueError:
        return Path(path)


def included_files(text, root):
    """The files under `root` that a source includes, directly or through others (the course's
    includes are relative to the repository root)."""
    found, pending = set(), quoted_includes(text)
    while pending:
        path = pending.pop()
        file = Path(root) / path
        if path in found or not file.is_file():
            continue
        found.add(path)
        pending += quoted_includes(file.read_text(errors="replace"))
    return found


def common_copies(files, root):
    """The names of the teaching copies that these common/ files hold."""
    names = set()
    for path in files:
        if path.startswith("common/"):
            names.update(teaching_copies((Path(root) / path).read_text(errors="replace"), path))
    return names


def without_inherited_copies(old_text, new_text, root=None):
    """(the parent's text without the teaching copies that the lesson uses from common/ instead of
    spelling them out itself, the names of those copies). ValueError on unpaired markers. `root`:
    the repository, to follow the lesson's includes into common/ (None: names only)."""
    lines = old_text.splitlines()
    kept_names = teaching_copies(new_text, "the lesson's kernel.cuh")
    parent_copies = teaching_copies(old_text, "the parent's kernel.cuh")
    included = common_copies(included_files(new_text, root), root) if root else set()
    dropped = {name: span for name, span in parent_copies.items()
               if name not in kept_names and (f"gemm::taught::{name}" in new_text or name in included)}
    for first, last in sorted(dropped.values(), reverse=True):
        del lines[first:last + 1]
    return "\n".join(lines) + "\n", sorted(dropped)


def inherited_note(names, old_number, new_number):
    if not names:
        return []
    return [f"(lesson {old_number:02d}'s teaching copies of {', '.join(names)} are left out: "
            f"lesson {new_number:02d} uses the same code from common/, through gemm::taught)"]


def unified_diff(old_path, new_path, old_text, new_text):
    """The two files as `diff -u` shows them (without timestamps), as a list of lines."""
    return list(difflib.unified_diff(old_text.splitlines(), new_text.splitlines(),
                                     str(relative_to_here(old_path)),
                                     str(relative_to_here(new_path)), n=CONTEXT_LINES,
                                     lineterm=""))


def code_lines(text, namespaces):
    """[(line number, line, comparison key)] of the code lines of a file.

    Blank lines, lines whose text starts with // and #include lines are left out. The key is the
    line without its indentation and with every namespace name in `namespaces` (whole words, such as lesson08)
    replaced by lessonNN: what the code view compares, while it shows the line itself. Ignoring
    indentation keeps code that a lesson merely wraps in a new loop from showing as changed.
    """
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, namespaces)) + r")\b")
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("//") and not INCLUDE.match(stripped):
            lines.append((number, line, pattern.sub("lessonNN", stripped)))
    return lines


def code_diff(old_path, new_path, old_text, new_text, old_number, new_number):
    """The code view of the two kernels (see the module's description), as a list of lines."""
    namespaces = [f"lesson{old_number:02d}", f"lesson{new_number:02d}"]
    old = code_lines(old_text, namespaces)
    new = code_lines(new_text, namespaces)
    matcher = difflib.SequenceMatcher(None, [key for _, _, key in old],
                                      [key for _, _, key in new], autojunk=False)
    out = []
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        if not out:
            out.append(f"--- {relative_to_here(old_path)} (code only)")
            out.append(f"+++ {relative_to_here(new_path)} (code only)")
        first = group[0]
        old_line = old[first[1]][0] if first[1] < len(old) else "end"
        new_line = new[first[3]][0] if first[3] < len(new) else "end"
        out.append(f"@@ lesson {old_number:02d} line {old_line}, "
                   f"lesson {new_number:02d} line {new_line} @@")
        for tag, old_start, old_end, new_start, new_end in group:
            if tag == "equal":
                out += [" " + line for _, line, _ in new[new_start:new_end]]
                continue
            out += ["-" + line for _, line, _ in old[old_start:old_end]]
            out += ["+" + line for _, line, _ in new[new_start:new_end]]
    return out


def parse_args(argv):
    """(lesson text, code only?, lessons folder) from the command line; a UsageError otherwise."""
    lesson, code, lessons_dir = None, False, LESSONS_DIR
    arguments = list(argv)
    while arguments:
        argument = arguments.pop(0)
        if argument == "--code":
            code = True
        elif argument == "--lessons" and arguments:
            lessons_dir = Path(arguments.pop(0))
        elif lesson is None and not argument.startswith("--"):
            lesson = argument
        else:
            raise UsageError(f"unexpected argument '{argument}'")
    if lesson is None or not lesson.strip():
        raise UsageError("name a lesson with L=NN")
    return lesson, code, lessons_dir


def main(argv=None):
    # `make diff L=09 | head` closes the pipe early: end quietly, as diff does.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        lesson, code, lessons_dir = parse_args(sys.argv[1:] if argv is None else argv)
        number = lesson_number(lesson)
        parent, old_path = parent_kernel(lessons_dir, number)
        new_path = lesson_folder(lessons_dir, number) / "kernel.cuh"
    except UsageError as error:
        print(f"{USAGE}: {error}", file=sys.stderr)
        return 2
    new_text = new_path.read_text()
    try:
        old_text, inherited = without_inherited_copies(old_path.read_text(), new_text,
                                                       Path(lessons_dir).resolve().parent)
    except ValueError as error:  # teaching-copy markers that do not pair up
        print(f"make diff: {error}", file=sys.stderr)
        return 2
    lines = (code_diff(old_path, new_path, old_text, new_text, parent, number) if code
             else unified_diff(old_path, new_path, old_text, new_text))
    for note in inherited_note(inherited, parent, number):
        print(note, file=sys.stderr)
    if lines:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
