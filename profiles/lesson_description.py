"""What the course says of a lesson, read without building anything: the tools that need a lesson's
number, parent, title or kind (profiles/diff.py, the homework tool and the grader) read it here.

A lesson is the folder lessons/NN_slug/: its number and slug are the folder's name, and the folder's
lesson.json says the rest, for example lessons/17_dependent_launch/lesson.json:

    {
      "parent": 15,
      "title": "programmatic dependent launch: the next GEMM starts while the one ahead finishes",
      "operands": "bf16",
      "fused_epilogue": true
    }

parent       the lesson whose kernel this one starts from (`make diff`), 0 for the first lesson
title        one line: what the lesson adds (no quotes or backslashes: it becomes a C++ string)
operands     what the lesson multiplies, its kind of workload (gemm::workloads::kind_<operands>,
             common/workloads/): "bf16", or "e4m3_block_scaled" (lesson
             18: e4m3 A and B with block scales, whose shape contract asks K % 16 == 0)
fused_epilogue  whether it computes lesson 15's D = act(alpha * A * B^T + beta * C + bias)

Two fields are optional, for a lesson that is not one GEMM (lesson 19, a layer over several GPUs):
exercise     the file of the folder that holds the exercise regions and the graded instruction
             signature (default "kernel.cuh")
runs         how the grader runs the lesson: "gemm" (default: lessonNN --m M --n N --k K) or
             "tensor_parallel" (lessonNN --gpus 1 --tokens T --chunks C --check-only)
The build reads only the lessons it compiles as GEMMs, which have neither.

The build reads the same file (lessons/lesson_description.cmake, for lessons/CMakeLists.txt) and
writes it into the lesson's C++ entry, gemm::lessons::lessonNN(), so the executables report what
the tools read; both readers refuse a missing or malformed file with the same one-line message.
"""
import json
import re
from pathlib import Path

FOLDER_NAME = re.compile(r"(?P<id>\d\d)_(?P<slug>[a-z0-9_]+)")
FIELDS = {"parent": "number", "title": "string", "operands": "string", "fused_epilogue": "boolean"}
OPTIONAL_FIELDS = {"exercise": ("string", "kernel.cuh"), "runs": ("string", "gemm")}
RUNS = ("gemm", "tensor_parallel")
OPERANDS = ("bf16", "e4m3_block_scaled")
FILE_NAME = "lesson.json"


class DescriptionError(Exception):
    """A lesson's description that is missing or malformed; the message is one line that says
    which file and what is wrong (the build says the same: lessons/lesson_description.cmake)."""


def json_type(value):
    """The JSON type of a value json.loads returned, as JSON names it."""
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object", type(None): "null"}[type(value)]


def describe(folder):
    """{"id", "slug", "parent", "title", "operands", "fused_epilogue"} of the lesson in `folder`
    (lessons/NN_slug/); DescriptionError if its name or its lesson.json is not as above."""
    folder = Path(folder)
    path = folder / FILE_NAME
    where = f"{folder.parent.name}/{folder.name}/{FILE_NAME}"  # lessons/NN_slug/lesson.json
    name = FOLDER_NAME.fullmatch(folder.name)
    if not name:
        raise DescriptionError(f"{folder.name}: a lesson's folder is named NN_slug, such as "
                               "08_tma_mbarrier")
    if not path.is_file():
        raise DescriptionError(f"{where} is missing: every lesson describes itself there "
                               "(docs/conventions.md)")
    try:
        fields = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise DescriptionError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(fields, dict):
        raise DescriptionError(f"{where}: not a JSON object")
    names = ", ".join(FIELDS)
    for field in sorted(fields):
        if field not in FIELDS and field not in OPTIONAL_FIELDS:
            raise DescriptionError(f"{where}: unknown field '{field}' (the fields: {names})")
    for field, expected in FIELDS.items():
        if field not in fields:
            raise DescriptionError(f"{where}: no field '{field}' (the fields: {names})")
        if json_type(fields[field]) != expected:
            raise DescriptionError(f"{where}: '{field}' must be a {expected}, "
                                   f"not a {json_type(fields[field])}")
    lesson_id, parent = int(name["id"]), fields["parent"]
    if not (isinstance(parent, int) and 0 <= parent < lesson_id):
        raise DescriptionError(f"{where}: the parent must be an earlier lesson's number, or 0 for "
                               f"the first lesson (got {json.dumps(parent)})")
    title = fields["title"]
    if not title or any(character in title for character in '"\\\n'):
        raise DescriptionError(f"{where}: the title must be one line, without quotes or "
                               "backslashes")
    if fields["operands"] not in OPERANDS:
        raise DescriptionError(f"{where}: operands must be one of {', '.join(OPERANDS)}, "
                               f"not '{fields['operands']}'")
    optional = {}
    for field, (expected, default) in OPTIONAL_FIELDS.items():
        optional[field] = fields.pop(field, default)
        if json_type(optional[field]) != expected:
            raise DescriptionError(f"{where}: '{field}' must be a {expected}, "
                                   f"not a {json_type(optional[field])}")
    if not re.fullmatch(r"[a-z0-9_]+\.(cuh|hpp)", optional["exercise"]):
        raise DescriptionError(f"{where}: 'exercise' must name a .cuh or .hpp file of the lesson's "
                               f"folder, not '{optional['exercise']}'")
    if optional["runs"] not in RUNS:
        raise DescriptionError(f"{where}: runs must be one of {', '.join(RUNS)}, "
                               f"not '{optional['runs']}'")
    return {"id": lesson_id, "slug": name["slug"], **fields, **optional}
