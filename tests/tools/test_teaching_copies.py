"""Tests that each piece of code is written once: a lesson's teaching copy and its building block.

A piece that a lesson teaches is spelled out in that lesson's kernel.cuh, where its exercise regions
live, between `// BEGIN TEACHING COPY(name)` and `// END TEACHING COPY`; the later lessons use the
same code from a header under common/ (namespace gemm::taught), between the same two markers. The
two must be the same code: comments (the exercise markers, `NEW in lesson` notes, explanations) and
layout may differ, nothing else. A common header that holds the answer of an exercise region says
which lesson teaches it (`// Taught in lesson NN`), so that the hand-outs of that lesson and of the
ones before it leave the header out (tests/grading/homework.py); that lesson must be the one that
holds the teaching copy.

In a homework hand-out (tests/grading/handout.json) the later lessons and the headers that hold
the hand-out's answers are left out: pairs with a side missing are skipped there, not failed.
profiles/diff.py leaves a parent's teaching copies out of `make diff` when the lesson uses the
building block instead (tested here on small texts). The markers are read by
profiles/teaching_copy.py, as diff.py and the homework tool read them.
"""
import re
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import diff  # noqa: E402  (after the path is set)
import teaching_copy  # noqa: E402

LESSON_FOLDER = re.compile(r"lessons/(?P<lesson>\d\d)_")
IN_A_HANDOUT = (REPOSITORY / "tests" / "grading" / "handout.json").is_file()


def copy_bodies(text, origin):
    """{name: [the lines between its two markers]} of a file's teaching copies."""
    lines = text.splitlines()
    return {name: lines[first + 1:last]
            for name, (first, last) in teaching_copy.teaching_copies(text, origin).items()}


def code_tokens(lines):
    """The code of some lines, comments and layout aside: what two copies must share."""
    code = []
    for line in lines:
        without_comment = line.split("//", 1)[0]
        code.extend(without_comment.split())
    return " ".join(code)


def copies_under(folder, pattern):
    found = {}
    for path in sorted(folder.glob(pattern)):
        text = path.read_text()
        for name, body in copy_bodies(text, path.relative_to(REPOSITORY)).items():
            found.setdefault(name, []).append((path, text, body))
    return found


class TeachingCopiesOfTheCourse(unittest.TestCase):
    def setUp(self):
        self.common = copies_under(REPOSITORY / "common", "**/*.hpp")
        self.lessons = copies_under(REPOSITORY / "lessons", "*/kernel.cuh")

    def test_every_building_block_has_one_teaching_copy_with_the_same_code(self):
        for name, places in self.common.items():
            with self.subTest(building_block=name):
                self.assertEqual(len(places), 1, f"'{name}' is defined in several common headers")
                header, header_text, block = places[0]
                taught = self.lessons.get(name, [])
                if not taught and IN_A_HANDOUT:
                    continue  # the lesson that spells it out comes after this hand-out's
                self.assertTrue(taught, f"{header.relative_to(REPOSITORY)} holds '{name}', but no "
                                "lesson spells it out")
                spelled_out = ", ".join(str(path.relative_to(REPOSITORY)) for path, _, _ in taught)
                self.assertEqual(len(taught), 1, f"several lessons spell out '{name}': "
                                 f"{spelled_out}")
                lesson_path, _, lesson_block = taught[0]
                self.assertEqual(code_tokens(lesson_block), code_tokens(block),
                                 f"{lesson_path.relative_to(REPOSITORY)} and "
                                 f"{header.relative_to(REPOSITORY)} differ in '{name}'")
                taught_in = teaching_copy.taught_in(header_text)
                if taught_in is not None:
                    folder = LESSON_FOLDER.search(str(lesson_path.relative_to(REPOSITORY)))
                    self.assertEqual(taught_in, int(folder["lesson"]),
                                     f"{header.relative_to(REPOSITORY)} says 'Taught in lesson "
                                     f"{taught_in:02d}', but lesson {folder['lesson']} spells "
                                     f"out '{name}'")

    def test_every_teaching_copy_has_its_building_block(self):
        for name, places in self.lessons.items():
            if name not in self.common and IN_A_HANDOUT:
                continue  # the header holds this hand-out's answer: it is left out
            with self.subTest(teaching_copy=name):
                self.assertIn(name, self.common, f"{places[0][0].relative_to(REPOSITORY)} marks "
                              f"'{name}' as a teaching copy, but no header under common/ has it")

    def test_a_header_that_holds_an_answer_says_which_lesson_teaches_it(self):
        for name, places in self.lessons.items():
            for path, text, body in places:
                if not any("BEGIN EXERCISE(" in line for line in body):
                    continue
                with self.subTest(teaching_copy=name):
                    if name not in self.common:
                        continue  # reported by the test above
                    header, header_text, _ = self.common[name][0]
                    self.assertIsNotNone(teaching_copy.taught_in(header_text),
                                         f"{header.relative_to(REPOSITORY)} holds the answer of an "
                                         f"exercise of {path.relative_to(REPOSITORY)}: it needs a "
                                         "'// Taught in lesson NN' line in its first "
                                         f"{teaching_copy.TAUGHT_IN_LINES} lines, or the hand-out "
                                         "leaks it")


class TeachingCopyTools(unittest.TestCase):
    def test_code_tokens_ignore_comments_and_layout_only(self):
        lesson = ["  // BEGIN EXERCISE(x): task", "  int a = f(b,", "          c);  // why",
                  "  // END EXERCISE"]
        common = ["int a = f(b, c);"]
        self.assertEqual(code_tokens(lesson), code_tokens(common))
        self.assertNotEqual(code_tokens(["int a = f(b, d);"]), code_tokens(common))

    def test_unpaired_markers_are_errors(self):
        with self.assertRaisesRegex(ValueError, "no END"):
            teaching_copy.teaching_copies("// BEGIN TEACHING COPY(x)\nint a;\n", "file")
        with self.assertRaisesRegex(ValueError, "without a BEGIN"):
            teaching_copy.teaching_copies("int a;\n// END TEACHING COPY\n", "file")
        with self.assertRaisesRegex(ValueError, "inside 'x'"):
            teaching_copy.teaching_copies("// BEGIN TEACHING COPY(x)\n// BEGIN TEACHING COPY(y)\n",
                                          "file")

    def test_diff_leaves_out_the_parents_copies_that_the_lesson_uses_from_common(self):
        parent = ("a\n// BEGIN TEACHING COPY(piece)\nint piece();\n// END TEACHING COPY\n"
                  "// BEGIN TEACHING COPY(other)\nint other();\n// END TEACHING COPY\nb\n")
        child = "using gemm::taught::piece;\na\nb\n"
        text, names = diff.without_inherited_copies(parent, child)
        self.assertEqual(names, ["piece"])
        self.assertNotIn("int piece();", text)
        self.assertIn("int other();", text)  # not used by the child: its removal is a change

    def test_diff_keeps_a_copy_that_the_lesson_spells_out_again(self):
        parent = "// BEGIN TEACHING COPY(piece)\nint piece();\n// END TEACHING COPY\n"
        child = parent + "gemm::taught::piece\n"
        text, names = diff.without_inherited_copies(parent, child)
        self.assertEqual(names, [])
        self.assertIn("int piece();", text)


if __name__ == "__main__":
    unittest.main()
