"""The homework hand-outs (tests/grading/homework.py): one per lesson, each holding no later lesson
and no line of its own solution. That each builds is tests/tools/test_homework_builds.py's.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import homework  # noqa: E402  (after the path is set)
import lessons  # noqa: E402
import regions  # noqa: E402


class Handouts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not homework.is_course_checkout(REPOSITORY):
            raise unittest.SkipTest(homework.NOT_A_CHECKOUT_REASON)
        cls.scratch = tempfile.TemporaryDirectory()
        cls.dist = Path(cls.scratch.name) / "dist"
        cls.folders = lessons.lesson_folders(REPOSITORY)
        cls.handouts, cls.errors = {}, {}
        for number in cls.folders:
            try:
                folder, archive, _ = homework.build_handout(REPOSITORY, number, cls.dist)
                cls.handouts[number] = folder
            except (homework.HandoutError, regions.RegionError, lessons.LessonError) as error:
                cls.errors[number] = str(error)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def handout(self, number):
        """The folder of lesson `number`'s hand-out (call it inside a subTest: a hand-out that
        could not be built fails that lesson's subtest, and the other lessons go on)."""
        self.assertNotIn(number, self.errors, self.errors.get(number))
        return self.handouts[number]

    def test_every_lesson_has_a_handout_and_an_archive(self):
        for number in self.folders:
            with self.subTest(lesson=number):
                folder = self.handout(number)
                self.assertTrue((self.dist / f"homework{number:02d}.tar.gz").is_file())
                self.assertTrue((folder / "HOMEWORK.md").is_file())

    def test_a_handout_holds_the_lessons_up_to_its_own_and_nothing_staff_only(self):
        for number in self.folders:
            with self.subTest(lesson=number):
                folder = self.handout(number)
                present = sorted(int(path.name[:2]) for path in (folder / "lessons").glob("[0-9][0-9]_*"))
                self.assertEqual(present, [lesson for lesson in self.folders if lesson <= number])
                # The one list of the lessons is trimmed (the build writes the registry's from it);
                # the registry's own files stay the course's, and each lesson keeps its description.
                cmake = (folder / "lessons" / "CMakeLists.txt").read_text()
                gemm_lessons = [lesson for lesson in present
                                if not lessons.load(REPOSITORY, lesson).tensor_parallel]
                self.assertEqual([int(found) for found in re.findall(r"^add_lesson\((\d\d) ", cmake, re.M)],
                                 gemm_lessons)
                for registry in ("lessons/registry.hpp", "lessons/registry.cpp"):
                    self.assertEqual((folder / registry).read_text(), (REPOSITORY / registry).read_text())
                for lesson in present:
                    self.assertEqual(lessons.load(folder, lesson), lessons.load(REPOSITORY, lesson))
                for path in homework.COURSE_ONLY:
                    self.assertFalse((folder / path).exists(), path)
                self.assertNotIn("homework.py", (folder / "Makefile").read_text())
                self.assertIn("grade:", (folder / "Makefile").read_text())
                record = json.loads((folder / "tests" / "grading" / "handout.json").read_text())
                self.assertEqual(record["lesson"], number)
                for later in (lesson for lesson in self.folders if lesson > number):
                    self.assertNotIn(f"| {later:02d} |", (folder / "README.md").read_text())

    def test_the_regions_are_stubs_with_their_markers(self):
        for number in self.folders:
            with self.subTest(lesson=number):
                folder = self.handout(number)
                kernel = lessons.load(REPOSITORY, number).kernel
                course = (REPOSITORY / kernel).read_text()
                handed_out = (folder / kernel).read_text()
                self.assertEqual(handed_out, regions.cut(course))
                self.assertEqual((folder / "tests" / "grading" / "handout_kernel.cuh").read_text(), handed_out)
                names = [region.name for region in regions.parse_regions(course)]
                self.assertEqual([region.name for region in regions.parse_regions(handed_out)], names)
                for name in names:
                    self.assertIn(f"`{name}`", (folder / "HOMEWORK.md").read_text())

    def test_readme_snippets_of_the_solution_are_cut(self):
        for number in self.folders:
            with self.subTest(lesson=number):
                folder = self.handout(number)
                readme = (folder / self.folders[number] / "README.md").read_text()
                for _, line in homework.distinctive_solution_lines(REPOSITORY, number):
                    self.assertFalse(any(line in " ".join(text.split()) for text in readme.split("\n")), line)

    def test_no_markdown_link_points_outside_the_handout(self):
        def in_course(destination):  # a link the course itself leaves dangling is not the hand-out's
            return (REPOSITORY / destination).exists()

        for number in self.folders:
            with self.subTest(lesson=number):
                self.assertEqual(homework.links_out_of(self.handout(number), in_course), [])

    def test_the_homework_page_covers_every_make_target_the_readme_asks_for(self):
        for number in self.folders:
            with self.subTest(lesson=number):
                folder = self.handout(number)
                readme = (folder / self.folders[number] / "README.md").read_text()
                page = (folder / "HOMEWORK.md").read_text()
                for match in homework.MAKE_TARGET.finditer(readme):
                    target = match["target"]
                    if not target.startswith("lesson"):
                        self.assertIn(f"`make {target}", page, f"lesson {number:02d}: make {target}")

    def test_tests_that_compare_teaching_copies_skip_in_a_handout(self):
        # A lesson's teaching copy and its common/ copy: the hand-out may hold only one of them.
        for number in self.folders:
            with self.subTest(lesson=number):
                folder = self.handout(number)
                tests = sorted(path.name for path in (folder / "tests" / "tools").glob("test_teaching*.py"))
                if not tests:
                    continue
                for name in tests:
                    completed = subprocess.run(
                        [sys.executable, "-m", "unittest", "discover", "-s", "tests/tools", "-p", name],
                        cwd=folder, capture_output=True, text=True, timeout=600,
                        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
                    self.assertEqual(completed.returncode, 0, completed.stderr[-3000:])

    def test_later_lessons_leave_the_tables_and_an_emptied_table_says_so(self):
        text = ("| lesson | ratio |\n|---|---:|\n| 03 | 12% |\n| 10 cooperative | 87% |\nprose\n"
                "| lesson | ratio |\n|---|---:|\n| 11 | 73% |\n| 12 | 84% |\n")
        self.assertEqual(homework.drop_later_lessons_from_tables(text, 9),
                         "| lesson | ratio |\n|---|---:|\n| 03 | 12% |\nprose\n"
                         "*(This table holds only lessons after 09.)*\n")

    def test_the_leak_check_finds_an_answer_anywhere(self):
        # Lesson 05's pipeline_step has two distinctive lines: together they give it away, either
        # one alone (a wait that other code shares) does not.
        solution = homework.distinctive_solution_lines(REPOSITORY, 5)
        self.assertEqual([line for name, line in solution if name == "pipeline_step"],
                         ["gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();",
                          "start_loading(kt + Tile::kStages - 1);"])
        cases = {
            "both lines, a comment between": ("Quoted:\n    gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();\n"
                                              "    // then\n    start_loading(kt + Tile::kStages - 1);\n",
                                              [("docs/notes.md", 2), ("docs/notes.md", 4)]),
            "one line alone": ("Quoted:\n    gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();\n", []),
            "both lines, far apart": ("gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();\n" + "x\n" * 10
                                      + "start_loading(kt + Tile::kStages - 1);\n",
                                      [("docs/notes.md", 1), ("docs/notes.md", 12)]),
        }
        for case, (text, expected) in cases.items():
            with self.subTest(case=case), tempfile.TemporaryDirectory() as scratch:
                folder = Path(scratch)
                (folder / "docs").mkdir()
                (folder / "docs" / "notes.md").write_text(text)
                self.assertEqual([(str(path), line) for path, line, _ in homework.leaks(folder, solution)],
                                 expected)

    def test_the_prose_check_reads_the_lessons_comments_and_readme(self):
        # Lesson 18's promotion, written out in words next to the region or in the README (wrapped
        # over two lines), is found; naming an instruction (a bare call) or the layout of another
        # file is not.
        lesson = lessons.load(REPOSITORY, 18)
        solution = homework.distinctive_solution_lines(REPOSITORY, 18)
        statements = [statement for name, statement in homework.solution_statements(solution)
                      if name == "promotion"]
        self.assertIn("accumulator[4j+2]+=scales.lowersum[4j+2]", statements)
        cases = {
            "a comment states a line": (
                "x\n    // accumulator[4j + 2] += scales.lower * sum[4j + 2] for the lower row\n", "",
                [(lesson.kernel, 2)]),
            "the README wraps it": (
                "", "Add `accumulator[4 * j + 2] +=\nscales.lower * sum[4 * j + 2]` to each.\n",
                [(f"{lesson.folder}/README.md", 1), (f"{lesson.folder}/README.md", 2)]),
            "code is not prose": ("accumulator[4 * j + 2] += scales.lower * sum[4 * j + 2];\n", "", []),
            "instructions by name": ("", "Then `wgmma_commit_group()` closes the group.\n", []),
        }
        for case, (kernel, readme, expected) in cases.items():
            with self.subTest(case=case), tempfile.TemporaryDirectory() as scratch:
                folder = Path(scratch)
                (folder / lesson.folder).mkdir(parents=True)
                (folder / lesson.kernel).write_text(kernel)
                (folder / lesson.folder / "README.md").write_text(readme)
                self.assertEqual([(str(path), line) for path, line, _ in
                                  homework.prose_leaks(folder, lesson, solution)], expected)


if __name__ == "__main__":
    unittest.main()
