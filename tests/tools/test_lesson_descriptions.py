"""Each lesson's description, lessons/NN_slug/lesson.json, and its two readers: the build's
(lessons/lesson_description.cmake, which writes it into the lesson's C++ entry) and the tools'
(profiles/lesson_description.py: the grader, the hand-out tool, `make diff`). Every lesson has one;
both readers take the same facts from it and refuse a broken one with the same one-line message.
"""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import lessons  # noqa: E402  (after the path is set)
from lesson_description import DescriptionError, describe  # noqa: E402

CMAKE_READER = REPOSITORY / "lessons" / "lesson_description.cmake"
GOOD = {"parent": 2, "title": "a synthetic lesson", "operands": "bf16", "fused_epilogue": False}


def lesson_folders():
    return sorted(path.parent for path in (REPOSITORY / "lessons").glob("[0-9][0-9]_*/kernel.cuh"))


def cmake_description(folder):
    """(exit status, what the build's reader printed: the C++ initializer, or its one-line
    error)."""
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "describe.cmake"
        script.write_text("cmake_minimum_required(VERSION 3.24)\n"  # the course's (IN_LIST, ...)
                          f'include("{CMAKE_READER}")\n'
                          f'read_lesson_description(description "{folder}")\n'
                          'message(NOTICE "${description}")\n')
        completed = subprocess.run(["cmake", "-P", script], capture_output=True, text=True)
    lines = completed.stderr.strip().split("\n")
    if completed.returncode != 0:
        # "CMake Error at ...lesson_description.cmake:NN (message):", the message indented, then
        # "Call Stack ..." from the first column.
        message = []
        for line in lines[1:]:
            if not line.startswith("  "):
                break
            message.append(line.strip())
        return completed.returncode, " ".join(message)
    return 0, "\n".join(lines)


def cpp_initializer(description):
    """The initializer that the build's reader writes for a description that the tools' reader
    returned: the two agree when these are equal."""
    return (f"{{.id = {description['id']},\n"
            f"       .parent = {description['parent']},\n"
            f"       .slug = \"{description['slug']}\",\n"
            f"       .title = \"{description['title']}\",\n"
            f"       .workload = &gemm::workloads::kind_{description['operands']},\n"
            f"       .fused_epilogue = {str(description['fused_epilogue']).lower()}}}")


class TheCourse(unittest.TestCase):
    def test_every_lesson_is_described_and_starts_from_an_earlier_one(self):
        folders = lesson_folders()
        numbers = [int(folder.name[:2]) for folder in folders]
        self.assertIn(1, numbers)
        for folder in folders:
            with self.subTest(lesson=folder.name):
                description = describe(folder)
                self.assertEqual(f"{description['id']:02d}_{description['slug']}", folder.name)
                if description["id"] == 1:
                    self.assertEqual(description["parent"], 0, "lesson 01 starts the course")
                else:
                    self.assertIn(description["parent"], numbers)

    def test_the_kinds_of_lesson(self):
        # Lesson 15 adds the fused epilogue, the supplements on bf16 keep it; lesson 18 reads e4m3.
        for folder in lesson_folders():
            with self.subTest(lesson=folder.name):
                description = describe(folder)
                self.assertEqual(description["operands"] == "bf16", description["id"] != 18)
                self.assertEqual(description["fused_epilogue"],
                                 description["id"] >= 15 and description["operands"] == "bf16")

    @unittest.skipUnless(shutil.which("cmake"), "cmake is not installed")
    def test_the_build_reads_what_the_tools_read(self):
        for folder in lesson_folders():
            with self.subTest(lesson=folder.name):
                self.assertEqual(cmake_description(folder), (0, cpp_initializer(describe(folder))))


class BrokenDescriptions(unittest.TestCase):
    """A lesson 03 in a temporary course, described by each case's text."""

    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.lessons = Path(scratch.name) / "lessons"

    def folder(self, name="03_synthetic", text=None):
        folder = self.lessons / name
        folder.mkdir(parents=True)
        if text is not None:
            (folder / "lesson.json").write_text(text)
        return folder

    def assert_refused(self, folder, message):
        """Both readers refuse the description with `message`, one line."""
        with self.assertRaises(DescriptionError) as raised:
            describe(folder)
        self.assertEqual(str(raised.exception), message)
        if shutil.which("cmake"):
            status, printed = cmake_description(folder)
            self.assertNotEqual(status, 0)
            self.assertEqual(printed, message)

    def test_a_good_description(self):
        folder = self.folder(text=json.dumps(GOOD))
        expected = {"id": 3, "slug": "synthetic", **GOOD, "exercise": "kernel.cuh", "runs": "gemm"}
        self.assertEqual(describe(folder), expected)
        if shutil.which("cmake"):
            self.assertEqual(cmake_description(folder), (0, cpp_initializer(expected)))

    def test_a_lesson_that_is_not_one_gemm(self):
        """The two optional fields (Python only: the build compiles no such lesson)."""
        folder = self.folder(text=json.dumps({**GOOD, "exercise": "rows.hpp",
                                              "runs": "tensor_parallel"}))
        self.assertEqual(describe(folder)["exercise"], "rows.hpp")
        self.assertEqual(describe(folder)["runs"], "tensor_parallel")
        for case, (field, value, words) in enumerate((
                ("exercise", "../kernel.cuh", "must name a .cuh or .hpp file"),
                ("exercise", 3, "'exercise' must be a string"),
                ("runs", "nccl", "runs must be one of gemm, tensor_parallel"))):
            with self.subTest(field=field, value=value):
                with self.assertRaises(DescriptionError) as raised:
                    describe(self.folder(f"0{4 + case}_synthetic",
                                         text=json.dumps({**GOOD, field: value})))
                self.assertIn(words, str(raised.exception))

    def test_each_broken_description_is_named_with_what_is_wrong(self):
        file = "lessons/03_synthetic/lesson.json"
        cases = {
            "no file": (None, f"{file} is missing: every lesson describes itself there "
                              "(docs/conventions.md)"),
            "not an object": ("[1, 2]", f"{file}: not a JSON object"),
            "an unknown field": (json.dumps({**GOOD, "parnet": 2}),
                                 f"{file}: unknown field 'parnet' (the fields: parent, title, "
                                 "operands, fused_epilogue)"),
            "a missing field": (json.dumps({key: GOOD[key] for key in ("parent", "title",
                                                                        "operands")}),
                                f"{file}: no field 'fused_epilogue' (the fields: parent, title, "
                                "operands, fused_epilogue)"),
            "a parent in quotes": (json.dumps({**GOOD, "parent": "2"}),
                                   f"{file}: 'parent' must be a number, not a string"),
            "a flag as a number": (json.dumps({**GOOD, "fused_epilogue": 1}),
                                   f"{file}: 'fused_epilogue' must be a boolean, not a number"),
            "a later parent": (json.dumps({**GOOD, "parent": 3}),
                               f"{file}: the parent must be an earlier lesson's number, or 0 for "
                               "the first lesson (got 3)"),
            "a fractional parent": (json.dumps({**GOOD, "parent": 1.5}),
                                    f"{file}: the parent must be an earlier lesson's number, or 0 "
                                    "for the first lesson (got 1.5)"),
            "a quote in the title": (json.dumps({**GOOD, "title": 'the "best" one'}),
                                     f"{file}: the title must be one line, without quotes or "
                                     "backslashes"),
            "an empty title": (json.dumps({**GOOD, "title": ""}),
                               f"{file}: the title must be one line, without quotes or "
                               "backslashes"),
            "unknown operands": (json.dumps({**GOOD, "operands": "fp16"}),
                                 f"{file}: operands must be one of bf16, e4m3_block_scaled, "
                                 "not 'fp16'"),
        }
        for case, (text, message) in cases.items():
            with self.subTest(case=case):
                shutil.rmtree(self.lessons, ignore_errors=True)
                self.assert_refused(self.folder(text=text), message)

    def test_text_that_is_not_json(self):
        # The two parsers word the detail differently; both name the file and say so.
        folder = self.folder(text='{"parent": 2,,}')
        with self.assertRaisesRegex(DescriptionError,
                                    r"^lessons/03_synthetic/lesson\.json: not valid JSON \(.+\)$"):
            describe(folder)
        if shutil.which("cmake"):
            status, printed = cmake_description(folder)
            self.assertNotEqual(status, 0)
            self.assertRegex(printed, r"^lessons/03_synthetic/lesson\.json: not valid JSON \(.+\)$")

    def test_a_folder_not_named_after_its_lesson(self):
        self.assert_refused(self.folder(name="3_synthetic", text=json.dumps(GOOD)),
                            "3_synthetic: a lesson's folder is named NN_slug, such as "
                            "08_tma_mbarrier")

    def test_the_grader_says_it_in_one_line(self):
        self.folder(text=json.dumps({**GOOD, "operands": "fp16"}))
        kernel = self.lessons / "03_synthetic" / "kernel.cuh"
        kernel.write_text("// Graded instruction signature: none\n")
        with self.assertRaisesRegex(lessons.LessonError,
                                    r"^lessons/03_synthetic/lesson\.json: operands"):
            lessons.load(self.lessons.parent, 3)


if __name__ == "__main__":
    unittest.main()
