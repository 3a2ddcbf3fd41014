"""The course's lessons as the homework tool and the grader see them.

Each lesson is a folder lessons/NN_slug/ with its description, lesson.json (its title, the operands
it reads, whether it computes the fused epilogue: profiles/lesson_description.py, which the build
reads too), and an exercise file, kernel.cuh (or the file lesson.json names: lesson 19's rows.hpp),
that defines `namespace lessonNN` and has one line that says which instructions its machine code
must contain (docs/grading.md):

    // Graded instruction signature: HGMMA UTMALDG SYNCS.PHASECHK

Each word is a SASS mnemonic as `cuobjdump -sass` prints it, optionally with leading modifiers:
an instruction matches when its full mnemonic is the word or starts with the word and a dot
(SYNCS.PHASECHK matches SYNCS.PHASECHK.TRANS64.TRYWAIT). `none` means nothing to check.
"""
import dataclasses
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "profiles"))
from lesson_description import DescriptionError, describe  # noqa: E402  (after the path is set)

SIGNATURE_LINE = re.compile(r"^// Graded instruction signature:[ \t]*(?P<value>.*?)[ \t]*$", re.MULTILINE)
MNEMONIC = re.compile(r"[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*")


class LessonError(Exception):
    """A lesson folder that does not follow the course's conventions; the message says how."""


@dataclasses.dataclass
class Lesson:
    id: int
    slug: str
    title: str
    folder: str            # "lessons/08_tma_mbarrier"
    signature: list        # ["HGMMA", "UTMALDG", "SYNCS.PHASECHK"]; [] for none
    # Computes D = act(alpha * A * B^T + beta * C + bias) (lessons 15-17): graded with it too
    # (shapes.fused_runs).
    fused_epilogue: bool = False
    exercise: str = "kernel.cuh"  # the file with the exercise regions, in the folder
    runs: str = "gemm"            # "gemm", or "tensor_parallel" (lesson 19: shapes.token_runs)

    @property
    def kernel(self):
        """The exercise file, from the course's root: what a submission is spliced into."""
        return f"{self.folder}/{self.exercise}"

    @property
    def tensor_parallel(self):
        return self.runs == "tensor_parallel"

    @property
    def namespace(self):
        return f"lesson{self.id:02d}"


def read_signature(text, origin):
    lines = SIGNATURE_LINE.findall(text)
    if len(lines) != 1:
        raise LessonError(f"{origin}: needs exactly one '// Graded instruction signature: ...' line "
                          f"(found {len(lines)})")
    words = lines[0].split()
    if words == ["none"]:
        return []
    bad = [word for word in words if not MNEMONIC.fullmatch(word)]
    if not words or bad:
        raise LessonError(f"{origin}: the instruction signature must be SASS mnemonics such as "
                          f"HGMMA or SYNCS.PHASECHK, or 'none' (got '{lines[0]}')")
    return words


def read_lesson(folder, root):
    try:
        description = describe(folder)
    except DescriptionError as error:
        raise LessonError(str(error)) from None
    kernel = folder / description["exercise"]
    signature = read_signature(kernel.read_text(), str(kernel.relative_to(root)))
    return Lesson(description["id"], description["slug"], description["title"],
                  str(folder.relative_to(root)), signature, description["fused_epilogue"],
                  description["exercise"], description["runs"])


def exercise_file(folder):
    """The name of a lesson folder's exercise file: the one its lesson.json names, else kernel.cuh
    (a malformed lesson.json is read_lesson's to report)."""
    try:
        return describe(folder)["exercise"]
    except DescriptionError:
        return "kernel.cuh"


def lesson_folders(root):
    """{id: "lessons/NN_slug"} for every lesson folder with an exercise file, by folder name alone
    (a lesson in progress that breaks a convention is still listed)."""
    root = Path(root)
    return {int(folder.name[:2]): str(folder.relative_to(root))
            for folder in sorted((root / "lessons").glob("[0-9][0-9]_*"))
            if (folder / exercise_file(folder)).is_file()}


def not_gradeable(root, lesson_id):
    """Why there is nothing to hand out or grade for lesson `lesson_id`: one line."""
    root = Path(root)
    folders = lesson_folders(root)
    others = sorted((root / "lessons").glob(f"{lesson_id:02d}_*"))
    if others:
        return (f"lesson {lesson_id:02d} ({others[0].name}) has no exercise file and so no "
                "exercise region: it is read and run, not handed out or graded (lessons with homework: "
                + ", ".join(f"{number:02d}" for number in sorted(folders)) + ")")
    return (f"no lesson {lesson_id:02d} under lessons/ (have: "
            + ", ".join(f"{number:02d}" for number in sorted(folders)) + ")")


def load(root, lesson_id):
    """The Lesson of number `lesson_id`; LessonError if there is none or it breaks a convention."""
    root = Path(root)
    folders = lesson_folders(root)
    if lesson_id not in folders:
        raise LessonError(not_gradeable(root, lesson_id))
    return read_lesson(root / folders[lesson_id], root)
