"""Tests that a lesson stands on common/, never on another lesson's files.

A lesson's folder holds its technique; what an earlier lesson taught is a building block under
common/, which the later lessons include. So a file under lessons/NN_<slug>/ includes only files of
its own folder, common/ and lessons/registry.hpp (the entries of the lessons, which a program links
rather than compiles: lessons/CMakeLists.txt), and no file under common/ includes a lesson's file.
Includes are read from the text: `#include "lessons/..."` with the course's root-relative paths.
"""
import re
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

from includes import quoted_includes  # noqa: E402  (after the path is set)

LESSON_FOLDER = re.compile(r"lessons/(?P<folder>\d\d_[^/]+)/")
SOURCES = ("*.cu", "*.cuh", "*.cpp", "*.hpp", "*.h")
ALLOWED_EVERYWHERE = {"lessons/registry.hpp"}


def lesson_includes(folder):
    """[(including file, included path)] of every #include "lessons/..." under `folder`."""
    found = []
    for pattern in SOURCES:
        for path in sorted((REPOSITORY / folder).rglob(pattern)):
            for included in quoted_includes(path.read_text(errors="replace")):
                if included.startswith("lessons/"):
                    found.append((str(path.relative_to(REPOSITORY)), included))
    return found


def foreign_includes(pairs):
    """The pairs in which a file includes a lesson file that is not its own lesson's."""
    foreign = []
    for including, included in pairs:
        if included in ALLOWED_EVERYWHERE and not including.startswith("common/"):
            continue
        own = LESSON_FOLDER.match(including)
        target = LESSON_FOLDER.match(included)
        if not (own and target and own["folder"] == target["folder"]):
            foreign.append((including, included))
    return foreign


class LessonsStandOnCommon(unittest.TestCase):
    def test_no_lesson_includes_another_lessons_files(self):
        self.assertEqual(foreign_includes(lesson_includes("lessons")), [])

    def test_common_includes_no_lesson(self):
        self.assertEqual(foreign_includes(lesson_includes("common")), [])

    def test_the_rule_on_small_examples(self):
        self.assertEqual(foreign_includes([
            ("lessons/17_dependent_launch/kernel.cuh", "lessons/15_tma_store_epilogue/kernel.cuh"),
            ("lessons/19_tensor_parallel/main.cu", "lessons/19_tensor_parallel/plan.hpp"),
            ("lessons/08_tma_mbarrier/main.cu", "lessons/registry.hpp"),
            ("common/mlp/mlp_chain.cu", "lessons/registry.hpp"),
        ]), [("lessons/17_dependent_launch/kernel.cuh", "lessons/15_tma_store_epilogue/kernel.cuh"),
             ("common/mlp/mlp_chain.cu", "lessons/registry.hpp")])


if __name__ == "__main__":
    unittest.main()
