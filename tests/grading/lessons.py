"""The course's lessons as the homework tool and the grader see them.

Each lesson is a folder lessons/NN_slug/ whose kernel.cuh defines `namespace lessonNN` with its
`inline constexpr gemm::Lesson kLesson{ .id = NN, .slug = "...", .title = "...", ...}` and one
line that says which instructions its machine code must contain (docs/grading.md):

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
from lesson_entry import read_entry  # noqa: E402  (after the path is set)

SIGNATURE_LINE = re.compile(r"^// Graded instruction signature:[ \t]*(?P<value>.*?)[ \t]*$", re.MULTILINE)
MNEMONIC = re.compile(r"[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*")


class LessonError(Exception):
    """A lesson folder that does not follow the course's conventions; the message says how."""


# A lesson whose entry says `.operands = gemm::Operands::e4m3_block_scaled` (lesson 18) reads e4m3
# rows of K bytes: its shape contract asks for K % 16 == 0 instead of the course's K % 8 == 0.
OPERANDS_LINE = re.compile(r"\.operands\s*=\s*gemm::Operands::(?P<kind>\w+)")
# A lesson whose entry says `.fused_epilogue = true` (lessons 15-17) computes lesson 15's fused
# epilogue: it is graded with it too (shapes.fused_runs).
FUSED_EPILOGUE_LINE = re.compile(r"\.fused_epilogue\s*=\s*true\b")


@dataclasses.dataclass
class Lesson:
    id: int
    slug: str
    title: str
    folder: str            # "lessons/08_tma_mbarrier"
    signature: list        # ["HGMMA", "UTMALDG", "SYNCS.PHASECHK"]; [] for none
    k_multiple: int = 8    # what the lesson's shape contract asks K to be a multiple of
    operands: str = "bf16"  # gemm::Operands of its entry: bf16, or e4m3_block_scaled (lesson 18)
    fused_epilogue: bool = False  # computes D = act(alpha * A * B^T + beta * C + bias)

    @property
    def kernel(self):
        return f"{self.folder}/kernel.cuh"

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
    kernel = folder / "kernel.cuh"
    origin = str(kernel.relative_to(root))
    text = kernel.read_text()
    fields = read_entry(text)
    if not (isinstance(fields.get("id"), int) and isinstance(fields.get("slug"), str)
            and isinstance(fields.get("title"), str)):
        raise LessonError(f"{origin}: no kLesson entry with .id, .slug and .title")
    lesson_id = fields["id"]
    if folder.name != f"{lesson_id:02d}_{fields['slug']}":
        raise LessonError(f"{origin}: the folder should be lessons/{lesson_id:02d}_{fields['slug']}")
    operands_line = OPERANDS_LINE.search(text)
    operands = operands_line["kind"] if operands_line else "bf16"
    k_multiple = 16 if operands == "e4m3_block_scaled" else 8
    return Lesson(lesson_id, fields["slug"], fields["title"], str(folder.relative_to(root)),
                  read_signature(text, origin), k_multiple, operands,
                  bool(FUSED_EPILOGUE_LINE.search(text)))


def lesson_folders(root):
    """{id: "lessons/NN_slug"} for every lesson folder with a kernel.cuh, by folder name alone
    (a lesson in progress that breaks a convention is still listed)."""
    root = Path(root)
    return {int(folder.name[:2]): str(folder.relative_to(root))
            for folder in sorted((root / "lessons").glob("[0-9][0-9]_*"))
            if (folder / "kernel.cuh").is_file()}


def not_gradeable(root, lesson_id):
    """Why there is nothing to hand out or grade for lesson `lesson_id`: one line."""
    root = Path(root)
    folders = lesson_folders(root)
    others = sorted((root / "lessons").glob(f"{lesson_id:02d}_*"))
    if others:
        return (f"lesson {lesson_id:02d} ({others[0].name}) has no kernel.cuh and so no exercise "
                "region: it is read and run, not handed out or graded (lessons with homework: "
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
