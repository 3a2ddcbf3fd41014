"""The homework tool (tests/grading/homework.py) on a fake course of three lessons
(tests/tools/fixtures/grading/fake_course/), in seconds and without a compiler: the common building
block that spells out lesson 02's answer (`// Taught in lesson 02`) and everything that includes
it, links to what a hand-out leaves out, the make targets HOMEWORK.md lists, the leak check over
the whole hand-out, the commit the hand-out records, the list of lessons and their descriptions,
and a course that is not a git checkout.
(tests/tools/test_homework.py builds the real course's hand-outs and compiles them.)"""
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import homework  # noqa: E402  (after the path is set)

FAKE_COURSE = REPOSITORY / "tests" / "tools" / "fixtures" / "grading" / "fake_course"


def git(folder, *arguments):
    subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *arguments],
                   cwd=folder, check=True, capture_output=True)


class FakeCourse(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.course = Path(self.scratch.name) / "course"
        shutil.copytree(FAKE_COURSE, self.course)
        self.dist = Path(self.scratch.name) / "dist"

    def tearDown(self):
        self.scratch.cleanup()

    def commit(self):
        git(self.course, "init", "-q")
        git(self.course, "add", "-A")
        git(self.course, "commit", "-q", "-m", "fake course")

    def handout(self, number):
        if not (self.course / ".git").exists():
            self.commit()
        folder, archive, notes = homework.build_handout(self.course, number, self.dist)
        self.assertTrue(archive.is_file())
        return folder, notes

    def files(self, folder):
        return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


class TaughtIn(FakeCourse):
    def test_the_marker_is_read_from_the_first_lines_only(self):
        taught_in = homework.teaching_copy.taught_in
        self.assertEqual(taught_in("// x\n// Taught in lesson 14: lessons/14_stream_k\n"), 14)
        self.assertIsNone(taught_in("// Taught in lesson 4\n"))
        lines = homework.teaching_copy.TAUGHT_IN_LINES
        self.assertIsNone(taught_in("\n" * lines + "// Taught in lesson 14\n"))

    def test_the_lessons_own_handout_leaves_out_the_block_and_what_includes_it(self):
        folder, notes = self.handout(2)
        files = self.files(folder)
        for gone in ("common/fancy.hpp", "common/wrapper.hpp", "tests/host/fancy_test.cpp",
                     "tests/host/wrapper_test.cpp", "tests/gpu/fancy_gpu_test.cu",
                     "lessons/03_third/kernel.cuh"):
            self.assertNotIn(gone, files)
        for kept in ("common/basics.hpp", "tests/host/basics_test.cpp", "tests/gpu/basics_gpu_test.cu"):
            self.assertIn(kept, files)
        cmake = (folder / "tests" / "CMakeLists.txt").read_text()
        self.assertNotIn("fancy_gpu_test.cu", cmake)
        self.assertIn("add_executable(gpu_tests\n    gpu/basics_gpu_test.cu\n)", cmake)
        self.assertTrue(any("common/wrapper.hpp: includes common/fancy.hpp" in note for note in notes), notes)

    def test_a_later_handout_keeps_the_block(self):
        folder, _ = self.handout(3)
        files = self.files(folder)
        for kept in ("common/fancy.hpp", "common/wrapper.hpp", "tests/gpu/fancy_gpu_test.cu"):
            self.assertIn(kept, files)
        self.assertIn("fancy_gpu_test.cu", (folder / "tests" / "CMakeLists.txt").read_text())

    def test_a_kept_lesson_that_needs_a_left_out_block_is_an_error(self):
        kernel = self.course / "lessons" / "01_first" / "kernel.cuh"
        kernel.write_text(kernel.read_text().replace('#include "common/basics.hpp"',
                                                     '#include "common/basics.hpp"\n#include "common/fancy.hpp"'))
        with self.assertRaisesRegex(homework.HandoutError, "lessons/01_first/kernel.cuh includes common/fancy.hpp"):
            self.handout(2)

    def test_cmake_names_of_left_out_files_go_and_their_line_when_it_is_empty(self):
        text = ("add_executable(t gpu/a.cu gpu/b.cu\n    gpu/b.cu\n    ${CMAKE_CURRENT_SOURCE_DIR}/gpu/b.cu\n"
                "    ${PROJECT_SOURCE_DIR}/tests/gpu/b.cu)\nset(x gpu/b.cuh)")
        self.assertEqual(homework.drop_cmake_references(text, "tests", {"tests/gpu/b.cu"}),
                         "add_executable(t gpu/a.cu\n)\nset(x gpu/b.cuh)")


class Links(FakeCourse):
    def test_links_to_left_out_files_become_their_words(self):
        folder, _ = self.handout(2)
        readme = (folder / "README.md").read_text()
        self.assertIn("The last lesson, lesson\n03, builds on the block in\n`common/fancy.hpp`;", readme)
        self.assertIn("[basics](common/basics.hpp)", readme)
        self.assertIn("[here](https://example.com/lessons/03_third/)", readme)
        self.assertIn("[top](#a-fake-course)", readme)
        self.assertIn("[not a link](lessons/03_third/README.md) inside a code block", readme)
        self.assertIn("[first](lessons/01_first/)", readme)
        self.assertNotIn("| 03 |", readme)
        self.assertEqual((folder / "docs" / "notes.md").read_text(),
                         "# Notes\n\nLesson 03's shift: see its README.\n")
        lesson = (folder / "lessons" / "02_second" / "README.md").read_text()
        self.assertIn("later lives in common/fancy.hpp; lesson\n03 uses it (lesson 03).", lesson)

    def test_no_link_of_any_handout_points_outside_it(self):
        for number in (1, 2, 3):
            with self.subTest(lesson=number):
                folder, _ = self.handout(number)
                self.assertEqual(homework.links_out_of(folder), [])


class Targets(FakeCourse):
    def test_homework_page_lists_what_works(self):
        folder, _ = self.handout(2)
        page = (folder / "HOMEWORK.md").read_text()
        self.assertIn("| `make lesson02`, `make` | builds lessons 01-02", page)
        self.assertIn("| `make profile L=MM` | for lessons 01-02", page)
        self.assertIn("`make sweep` | **not in this hand-out**", page)
        self.assertIn("`make roles` | **not in this hand-out**", page)

    def test_a_target_the_readme_asks_for_that_cannot_build_is_named(self):
        lesson = type("Lesson", (), {"id": 6})()
        table = homework.make_targets_table(lesson, {"sweep": ["profiles/variants_hopper.cu"]},
                                            "Run `make sweep GROUPS=x` and make sure of it; `make resources`.")
        self.assertIn("`make resources` | registers", table)
        self.assertIn("The README of lesson 06 also mentions `make sweep`", table)
        self.assertNotIn("`make sure`", table)


class LeakCheck(FakeCourse):
    def test_a_solution_line_in_an_earlier_lessons_readme_fails_the_handout(self):
        readme = self.course / "lessons" / "01_first" / "README.md"
        readme.write_text(readme.read_text() + "\n    return gemm::fancy_scale(input_value) << kThirdLessonShift;\n")
        with self.assertRaises(homework.HandoutError) as raised:
            self.handout(3)
        self.assertIn("lessons/01_first/README.md:5 (exercise shift)", str(raised.exception))

    def test_the_block_of_the_lesson_would_leak_if_it_were_kept(self):
        block = self.course / "common" / "fancy.hpp"
        block.write_text(block.read_text().replace("// Taught in lesson 02", "// Taught in the course"))
        with self.assertRaisesRegex(homework.HandoutError, r"common/fancy.hpp:9 \(exercise scale\)"):
            self.handout(2)


class Record(FakeCourse):
    def test_the_handout_records_its_commit(self):
        folder, _ = self.handout(2)
        record = json.loads((folder / "tests" / "grading" / "handout.json").read_text())
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=self.course, capture_output=True,
                              text=True, check=True).stdout.strip()
        self.assertEqual(record["commit"], head)
        self.assertFalse(record["uncommitted_changes"])
        self.assertEqual(record["source"], f"HEAD {head[:7]}")

    def test_not_a_git_checkout_is_one_line_and_exit_2(self):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = homework.main(["02"], root=self.course)
        self.assertEqual(status, 2)
        self.assertEqual(len(stderr.getvalue().strip().split("\n")), 1, stderr.getvalue())
        self.assertIn("not a git checkout", stderr.getvalue())
        self.assertFalse((self.course / "dist").exists())


class LessonList(FakeCourse):
    def test_the_handout_lists_the_lessons_up_to_its_own(self):
        # The one list of the lessons (the build writes the registry's from it) loses the later
        # lessons; the lessons kept keep their descriptions.
        folder, _ = self.handout(2)
        self.assertEqual((folder / "lessons" / "CMakeLists.txt").read_text(),
                         "add_lesson(01 first)\nadd_lesson(02 second)\n")
        for kept in ("01_first", "02_second"):
            self.assertTrue((folder / "lessons" / kept / "lesson.json").is_file(), kept)

    def test_a_broken_description_is_one_line_and_exit_2(self):
        (self.course / "lessons" / "02_second" / "lesson.json").write_text('{"parent": 1}')
        self.commit()
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = homework.main(["02"], root=self.course)
        self.assertEqual(status, 2)
        self.assertEqual(stderr.getvalue(), "homework: lessons/02_second/lesson.json: no field "
                                            "'title' (the fields: parent, title, operands, "
                                            "fused_epilogue)\n")


if __name__ == "__main__":
    unittest.main()
