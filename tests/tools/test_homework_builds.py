"""The homework hand-outs build: each hand-out of the lessons named in HOMEWORK_LESSONS (a comma
list of lesson numbers; all lessons without it) is configured with CMake, and what the hand-out
changes is compiled through the course's compile rule (its flags and ptxas guard): the lesson's
kernels with its stubs (the lesson's one kernel translation unit, lessons/CMakeLists.txt, which
exists only if the hand-out's add_lesson calls name the lesson) and the registry of its lessons
(the list that the build writes from those calls). The lesson's main.cu, the harness and the
earlier lessons' kernels are the course's own, identical in every hand-out (main.cu is host code
that calls the lesson's entry, declared by that registry): the course's build compiles them. Lesson
19 is its own program: its main.cu, which includes the hand-out's rows.hpp. A lesson whose machine
code the grader does not check (its instruction signature is `none`: lesson 16, whose regions are
host code) is compiled to PTX only: its stubs change no kernel, and ptxas would only assemble the
course's own kernels again (half of its 35 s on two cores). ctest runs a few
lessons per test (tests/tools/CMakeLists.txt), so that no test runs long on two cores. It needs
nvcc, not a GPU.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import homework  # noqa: E402  (after the path is set)
import lessons  # noqa: E402

COMPILE_SECONDS = 600


def chosen_lessons(folders):
    named = os.environ.get("HOMEWORK_LESSONS", "")
    return [int(number) for number in named.split(",")] if named else sorted(folders)


class HandoutsBuild(unittest.TestCase):
    def test_each_handout_builds_its_lesson(self):
        if not shutil.which("cmake"):
            self.skipTest("cmake is not installed")
        if not homework.is_course_checkout(REPOSITORY):
            self.skipTest(homework.NOT_A_CHECKOUT_REASON)
        folders = lessons.lesson_folders(REPOSITORY)
        with tempfile.TemporaryDirectory() as scratch:
            for number in chosen_lessons(folders):
                with self.subTest(lesson=number):
                    folder, _, _ = homework.build_handout(REPOSITORY, number, Path(scratch) / "dist")
                    build = Path(scratch) / f"build{number:02d}"
                    architectures = ([] if lessons.load(REPOSITORY, number).signature
                                     else ["-DCMAKE_CUDA_ARCHITECTURES=90a-virtual"])
                    configure = subprocess.run(
                        ["cmake", "-S", folder, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                         *architectures],
                        capture_output=True, text=True, timeout=COMPILE_SECONDS)
                    self.assertEqual(configure.returncode, 0,
                                     configure.stdout[-2000:] + configure.stderr[-3000:])
                    if lessons.load(REPOSITORY, number).tensor_parallel:
                        # Its own program, not in the registry: the hand-out changes its main's
                        # includes only. Where CMake skipped it (no NCCL), it said why.
                        skipped = build / "lessons" / "lesson19_skipped.txt"
                        if skipped.is_file():
                            self.skipTest(skipped.read_text().strip())
                        objects = [f"{Path(lessons.load(REPOSITORY, number).folder).name}/main.cu.o"]
                    else:
                        objects = [f"entries/lesson{number:02d}_entry.cu.o", "registry.cpp.o",
                                   "registry/all_lessons.cpp.o"]
                    compiled = subprocess.run(["make", "-C", build / "lessons", *objects],
                                              capture_output=True, text=True,
                                              timeout=COMPILE_SECONDS)
                    self.assertEqual(compiled.returncode, 0,
                                     compiled.stdout[-2000:] + compiled.stderr[-3000:])
                    shutil.rmtree(build)


if __name__ == "__main__":
    unittest.main()
