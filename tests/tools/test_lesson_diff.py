"""Tests of profiles/diff.py (`make diff L=NN [CODE=1]`) and of the lesson tree it reads.

The tool tests run on small synthetic lesson folders in a temporary directory. The tree tests read
the real lessons/NN_*/: the tool finds every lesson's parent kernel, and every
`// NEW in lesson XX:` marker in lesson NN's kernel says XX == NN (a marker copied along with an
earlier lesson's code is stale: in lesson NN it must become a plain comment). That each lesson's
description names an existing, earlier parent is tests/tools/test_lesson_descriptions.py's.
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
LESSONS = REPOSITORY / "lessons"
DIFF = REPOSITORY / "profiles" / "diff.py"
sys.path.insert(0, str(REPOSITORY / "profiles"))

import diff  # noqa: E402  (after the path is set)

# A marker anywhere in a line: "// NEW in lesson 08: ..." or, mid-comment, "... NEW in lesson 09:".
NEW_MARKER = re.compile(r"\bNEW in lesson\s*(\d+)")


def new_markers(text):
    """[(line number, lesson number)] of every NEW marker in a kernel's text."""
    return [(number, int(match[1]))
            for number, line in enumerate(text.splitlines(), start=1)
            for match in NEW_MARKER.finditer(line)]


def stale_markers(text, lesson):
    """The markers of `new_markers` that name another lesson than `lesson`."""
    return [(number, marked) for number, marked in new_markers(text) if marked != lesson]


def kernel_text(lesson, body):
    """A small kernel.cuh of lesson `lesson`: namespace, body, kLesson (which, as in the course,
    leaves the lesson's number and parent to its lesson.json)."""
    return (f"// Lesson {lesson:02d}: a synthetic lesson.\n"
            f"namespace lesson{lesson:02d} {{\n"
            + textwrap.dedent(body) +
            "inline constexpr gemm::Lesson kLesson{\n"
            "    .launch = &launch,\n"
            "};\n"
            f"}}  // namespace lesson{lesson:02d}\n")


def describe(folder, parent):
    """The lesson.json of a synthetic lesson with the given parent."""
    (folder / "lesson.json").write_text(json.dumps({"parent": parent, "title": "synthetic",
                                                    "operands": "bf16", "fused_epilogue": False}))


def changed_lines(output):
    """The removed and added lines of a diff's output, without its two header lines."""
    return [line for line in output.splitlines()[2:] if line[:1] in "+-"]


class LessonTree(unittest.TestCase):
    """A temporary lessons/ folder; run() calls the tool on it as `make diff` would."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())  # a course: lessons/ and common/
        self.addCleanup(shutil.rmtree, self.root)
        self.lessons = self.root / "lessons"
        self.lessons.mkdir()

    def add(self, lesson, parent, body, slug="synthetic"):
        folder = self.lessons / f"{lesson:02d}_{slug}"
        folder.mkdir()
        (folder / "kernel.cuh").write_text(kernel_text(lesson, body))
        describe(folder, parent)
        return folder / "kernel.cuh"

    def run_diff(self, *args):
        command = [sys.executable, str(DIFF), *args, "--lessons", str(self.lessons)]
        return subprocess.run(command, capture_output=True, text=True)

    def assert_usage_error(self, result, *fragments):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("usage: make diff L=NN [CODE=1]: "), result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)


class ParentLookup(LessonTree):
    def setUp(self):
        super().setUp()
        self.add(10, 9, "int ten();\n", slug="cooperative")
        self.add(11, 10, "int eleven();\n", slug="pingpong")
        self.add(12, 10, "int twelve();\n", slug="cluster")

    def test_the_diff_follows_the_parent_field_not_the_number(self):
        result = self.run_diff("12")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertRegex(lines[0], r"^--- .*/10_cooperative/kernel\.cuh$")
        self.assertRegex(lines[1], r"^\+\+\+ .*/12_cluster/kernel\.cuh$")
        self.assertIn("-int ten();", lines)
        self.assertIn("+int twelve();", lines)
        self.assertNotIn("eleven", result.stdout)

    def test_the_usual_parent(self):
        output = self.run_diff("11").stdout
        self.assertIn("10_cooperative/kernel.cuh", output.splitlines()[0])

    def test_one_digit_and_two_digit_numbers(self):
        self.add(2, 1, "int two();\n")
        self.add(3, 2, "int three();\n")
        self.assertIn("02_synthetic/kernel.cuh", self.run_diff("3").stdout.splitlines()[0])
        self.assertEqual(self.run_diff("3").stdout, self.run_diff("03").stdout)

    def test_the_parent_is_read_from_the_description(self):
        self.assertEqual(diff.lesson_parent(self.lessons / "12_cluster"), 10)
        self.assertEqual(diff.parent_kernel(self.lessons, 12),
                         (10, self.lessons / "10_cooperative" / "kernel.cuh"))


class PlainDiff(LessonTree):
    def test_a_unified_diff_with_comments_and_namespaces(self):
        self.add(1, 0, "int x = 1;\n")
        self.add(2, 1, "// a new comment\nint x = 1;\n")
        result = self.run_diff("02")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertRegex(lines[2], r"^@@ -\d+,\d+ \+\d+,\d+ @@$")
        self.assertIn("+// a new comment", lines)
        self.assertIn("-namespace lesson01 {", lines)
        self.assertIn("+namespace lesson02 {", lines)

    def test_a_parents_copy_that_the_lesson_includes_from_common_is_no_change(self):
        # Lesson 15 spells out `piece`; lesson 16 includes a common header that includes the header
        # holding the same code: the copy is no change, and the tool says so on stderr.
        copy = "// BEGIN TEACHING COPY(piece)\nint piece();\n// END TEACHING COPY\n"
        self.add(15, 14, copy + "int fifteen();\n", slug="last")
        (self.root / "common").mkdir()
        (self.root / "common" / "piece.hpp").write_text(copy)
        (self.root / "common" / "table.hpp").write_text('#include "common/piece.hpp"\n')
        folder = self.lessons / "16_supplement"
        folder.mkdir()
        describe(folder, 15)
        (folder / "kernel.cuh").write_text(
            '#include "common/table.hpp"\n' + kernel_text(16, "int sixteen();\n"))
        for args in (("16",), ("16", "--code")):
            result = self.run_diff(*args)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("teaching copies of piece are left out", result.stderr)
            self.assertNotIn("int piece();", result.stdout)
            self.assertIn("-int fifteen();", result.stdout)
            self.assertIn("+int sixteen();", result.stdout)
        # Without the include, the copy's removal is a change.
        (folder / "kernel.cuh").write_text(kernel_text(16, "int sixteen();\n"))
        self.assertIn("-int piece();", self.run_diff("16").stdout)

    def test_includes_are_no_code(self):
        self.add(1, 0, '#include "common/a.hpp"\nint x = 1;\n')
        self.add(2, 1, '#include "common/b.hpp"\nint x = 1;\n')
        self.assertIn('+#include "common/b.hpp"', self.run_diff("02").stdout)
        self.assertNotIn("include", self.run_diff("02", "--code").stdout)

    def test_identical_kernels_print_nothing_and_exit_0(self):
        self.add(1, 0, "int x = 1;\n")
        lesson02 = self.add(2, 1, "int x = 1;\n")
        # Only lesson 02's description is read (for its parent): lesson 01 may hold the same text.
        (self.lessons / "01_synthetic" / "kernel.cuh").write_text(lesson02.read_text())
        for mode in ([], ["--code"]):
            result = self.run_diff("02", *mode)
            self.assertEqual((result.returncode, result.stdout, result.stderr), (0, "", ""))


class CodeOnly(LessonTree):
    PARENT = textwrap.dedent("""\
        // The parent's comment about x.
        int x = 1;

        int f(int a) { return a + x; }  // a trailing comment
        void g() { lesson07::helper(); }
        """)

    def test_comments_and_blank_lines_alone_are_no_change(self):
        self.add(8, 7, self.PARENT)
        self.add(9, 8, """\
            // NEW in lesson 09: a comment that is new,
            //   on two lines.
            int x = 1;
            int f(int a) { return a + x; }  // a trailing comment

               // an indented comment
            void g() { lesson07::helper(); }
            """)
        result = self.run_diff("09", "--code")
        self.assertEqual((result.returncode, result.stdout), (0, ""), result.stderr)
        # The plain diff still shows them.
        self.assertIn("+// NEW in lesson 09: a comment that is new,", self.run_diff("09").stdout)

    def test_the_two_lessons_namespaces_are_the_same_word(self):
        self.add(8, 7, self.PARENT + "int h() { return lesson08::value; }\n")
        self.add(9, 8, self.PARENT + "int h() { return lesson09::value; }\n")
        # namespace lesson08 / lesson09, lesson08:: / lesson09:: and the closing
        # "}  // namespace lessonNN" line all match: no change (the plain diff has them).
        self.assertEqual(self.run_diff("09", "--code").stdout, "")
        self.assertIn("+int h() { return lesson09::value; }", self.run_diff("09").stdout)

    def test_other_namespaces_and_trailing_comments_are_code(self):
        self.add(8, 7, self.PARENT)
        self.add(9, 8, self.PARENT.replace("lesson07::", "lesson06::")
                 .replace("a trailing comment", "another trailing comment"))
        changed = changed_lines(self.run_diff("09", "--code").stdout)
        self.assertIn("-void g() { lesson07::helper(); }", changed)
        self.assertIn("+void g() { lesson06::helper(); }", changed)
        self.assertIn("-int f(int a) { return a + x; }  // a trailing comment", changed)
        self.assertIn("+int f(int a) { return a + x; }  // another trailing comment", changed)

    def test_hunks_show_the_files_own_lines_and_line_numbers(self):
        self.add(8, 7, self.PARENT)
        self.add(9, 8, "// one\n// two\n// three\n" + self.PARENT + "int nine();\n")
        lines = self.run_diff("09", "--code").stdout.splitlines()
        self.assertTrue(lines[0].startswith("--- ") and lines[0].endswith("(code only)"), lines[0])
        self.assertTrue(lines[1].startswith("+++ ") and lines[1].endswith("(code only)"), lines[1])
        # The one hunk (int nine) starts 3 code lines before the change, at `int x`: line 4 of
        # lesson 08's file, line 7 of lesson 09's, which has three more comment lines.
        self.assertEqual(lines[2], "@@ lesson 08 line 4, lesson 09 line 7 @@")
        self.assertEqual(lines[3], " int x = 1;")
        self.assertEqual(lines[4], " int f(int a) { return a + x; }  // a trailing comment")
        self.assertEqual(changed_lines("\n".join(lines)), ["+int nine();"])
        self.assertEqual(lines[-1], " };")  # 3 code lines after it

    def test_code_lines(self):
        text = "a\n\n  // c\nlesson03::b();  // lesson03\nlesson031 lesson04\n"
        self.assertEqual(diff.code_lines(text, ["lesson03", "lesson04"]),
                         [(1, "a", "a"),
                          (4, "lesson03::b();  // lesson03", "lessonNN::b();  // lessonNN"),
                          (5, "lesson031 lesson04", "lesson031 lessonNN")])


class Errors(LessonTree):
    def setUp(self):
        super().setUp()
        self.add(1, 0, "int one();\n")
        self.add(2, 1, "int two();\n")

    def test_missing_lesson_number(self):
        self.assert_usage_error(self.run_diff(), "L=NN")
        self.assert_usage_error(self.run_diff(""), "L=NN")

    def test_malformed_lesson_numbers(self):
        for text in ("x", "0", "00", "123", "-1", "8a"):
            with self.subTest(text=text):
                self.assert_usage_error(self.run_diff(text), "lesson number")

    def test_unknown_option(self):
        self.assert_usage_error(self.run_diff("02", "--words"), "'--words'")

    def test_lesson_that_does_not_exist(self):
        self.assert_usage_error(self.run_diff("07"), "no lesson 07")

    def test_lesson_without_a_parent(self):
        self.assert_usage_error(self.run_diff("01"), "lesson 01 has no parent")

    def test_parent_that_does_not_exist(self):
        self.add(5, 4, "int five();\n")
        self.assert_usage_error(self.run_diff("05"), "lesson 05 names parent 04")

    def test_lesson_without_a_description(self):
        folder = self.lessons / "03_broken"
        folder.mkdir()
        (folder / "kernel.cuh").write_text("namespace lesson03 {}\n")
        self.assert_usage_error(self.run_diff("03"), "lessons/03_broken/lesson.json is missing")
        (folder / "lesson.json").write_text('{"parent": 2, "title": "broken"}')
        self.assert_usage_error(self.run_diff("03"), "lessons/03_broken/lesson.json: no field 'operands'")


class RealTree(unittest.TestCase):
    """The lessons of this repository."""

    def setUp(self):
        self.kernels = {int(path.parent.name[:2]): path
                        for path in sorted(LESSONS.glob("[0-9][0-9]_*/kernel.cuh"))}
        self.assertIn(1, self.kernels)

    def test_the_tool_finds_each_lessons_parent_kernel(self):
        for lesson, path in self.kernels.items():
            with self.subTest(lesson=lesson):
                if lesson == 1:
                    with self.assertRaisesRegex(diff.UsageError, "lesson 01 has no parent"):
                        diff.parent_kernel(LESSONS, lesson)
                    continue
                parent, parent_path = diff.parent_kernel(LESSONS, lesson)
                self.assertEqual(parent_path, self.kernels[parent])
                self.assertLess(parent, lesson, f"{path}: the parent must be an earlier lesson")

    def test_every_new_marker_names_its_own_lesson(self):
        for lesson, path in self.kernels.items():
            with self.subTest(lesson=lesson):
                stale = stale_markers(path.read_text(), lesson)
                self.assertEqual(stale, [], f"{path}: NEW markers of other lessons at "
                                 + ", ".join(f"line {line} (lesson {marked:02d})"
                                             for line, marked in stale))

    def test_the_marker_check_catches_a_stale_marker(self):
        text = ("// NEW in lesson 09: the empty barriers.\n"
                "int x;  // NEW in lesson 08: the full barriers.\n"
                "// Set-up (lesson 08). NEW in lesson 09: more.\n")
        self.assertEqual(new_markers(text), [(1, 9), (2, 8), (3, 9)])
        self.assertEqual(stale_markers(text, 9), [(2, 8)])

    def test_every_lesson_with_a_parent_diffs(self):
        for lesson in self.kernels:
            if lesson == 1:
                continue
            for mode in ([], ["--code"]):
                with self.subTest(lesson=lesson, mode=mode):
                    result = subprocess.run([sys.executable, str(DIFF), f"{lesson:02d}", *mode],
                                            capture_output=True, text=True, cwd=REPOSITORY)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertTrue(result.stdout.startswith("--- lessons/"), result.stdout[:200])

    @unittest.skipUnless(shutil.which("make"), "make is not installed")
    def test_make_diff(self):
        def make(*args):
            return subprocess.run(["make", "--no-print-directory", "-s", "diff", *args],
                                  capture_output=True, text=True, cwd=REPOSITORY)
        plain, code = make("L=09"), make("L=09", "CODE=1")
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(code.returncode, 0, code.stderr)
        self.assertTrue(plain.stdout.startswith("--- lessons/08_"), plain.stdout[:200])
        self.assertIn("(code only)", code.stdout.splitlines()[0])
        self.assertEqual(make("L=09", "CODE=0").stdout, plain.stdout)
        missing = make()
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("usage: make diff L=NN [CODE=1]", missing.stderr)


if __name__ == "__main__":
    unittest.main()
