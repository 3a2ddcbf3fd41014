#!/usr/bin/env python3
"""Two or more lessons' Nsight Compute metrics side by side, with the change against the first.

Usage: compare.py A B [C ...] [--metric NAME ...] [--names] [--gpu MODEL]
       make compare A=07 B=08 [C=09] [GPU=h100]
       compare.py --model-of "NVIDIA H200"      prints h200: the folder name of a GPU's name

For each lesson the tool reads the local export profiles/reports/lessonNN.csv (written by
`make profile L=NN`) when there is one, else the committed reference
profiles/reference/<model>/lessonNN.csv, and says which one it used. So a student without a GPU or
a profiler can still compare lessons. The references are kept per GPU model (h100, h200, ...:
gpu_model() names the folders), and the folder is the first of:

  1. --gpu MODEL (make compare ... GPU=MODEL);
  2. the model of the GPU here, as `nvidia-smi --query-gpu=name -i 0` names it;
  3. without a GPU here (or with one that is not a Hopper GPU): the folder that holds every lesson
     asked for, and of several such the one with the newest `# date:`; a line above the table
     says which it took and how to take another.

--reference-dir FOLDER reads the references from FOLDER instead, whatever the GPU.

A lesson's kernel is found in an export by its namespace: kernel_namespace() reads it from the
lesson's sources (lessons 15-18 run the final kernel, gemm::hopper::gemm_kernel<...>, with their
own pieces).

The table lists the metrics of profiles/metrics.csv: first the ones the LAST lesson named is meant
to move (profiles/focus.csv, marked *), then the rest. Each later lesson gets a column with the
change against the first lesson: absolute, relative, and a verdict from the metric's `better`
column: "better" or "worse" for a metric whose `better` is "higher" or "lower"; plainly "higher" or
"lower" for one whose `better` is "neither", a rate such as the share of DRAM bandwidth in use,
which rises both when a kernel moves the same bytes faster and when it moves more bytes than it
needs. Changes under 1% are called "same": a kernel's duration moves by about that much from one
run to the next.

A curated metric that a file does not contain is shown as "n/a", with a note under the table
naming the metric and the file (the metric list may be newer than the file). A metric asked for
with --metric that is neither curated nor in every file is an error.

Units: profile.py exports with --print-units base, so a metric has the same unit in every file.
An export made without it has units that ncu chose per value (1.95 ms in one file, 597.12 us in
the other; Kbyte here, byte there). Where the files disagree, compare.py converts the values to
the finest of their units when it knows the units: the byte, second and hertz families with
ncu's decimal prefixes (Kbyte = 1000 bytes), also inside rates such as Gbyte/s or sector/ns; a
note under the table says so. Units it does not know are an error, never a silent mix.

Lessons profiled on different GPUs or at different shapes are compared all the same, with a
warning under the table that names them.

This file also holds what make_reference.py, check_metrics.py, profile.py, results_table.py and
plot_ladder.py share: the readers of the curated list, the focus list and the two profile formats
(ncu's raw CSV export and our reference CSV), the folder name of a GPU model (gpu_model) and the
namespace of a lesson's kernel (kernel_namespace).
"""
import argparse
import csv
import decimal
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from includes import quoted_includes

PROFILES_DIR = Path(__file__).resolve().parent
DEFAULT_REPORTS_DIR = PROFILES_DIR / "reports"
DEFAULT_REFERENCES_ROOT = PROFILES_DIR / "reference"  # one folder per GPU model: h100/, h200/
DEFAULT_LESSONS_DIR = PROFILES_DIR.parent / "lessons"
DEFAULT_METRICS_CSV = PROFILES_DIR / "metrics.csv"
DEFAULT_FOCUS_CSV = PROFILES_DIR / "focus.csv"

METRICS_COLUMNS = ["metric", "label", "better", "collected", "unit_note", "why"]
FOCUS_COLUMNS = ["lesson", "metric"]
REFERENCE_COLUMNS = ["metric", "unit", "value"]

# A relative change smaller than this (in %) is reported as "same": run-to-run noise.
SAME_WITHIN_PERCENT = 1.0

# The `better` column of metrics.csv: which direction of change is an improvement. "neither": no
# direction is (a rate whose meaning depends on the bytes or work behind it); the change is
# reported as higher or lower, without a verdict.
BETTER = ("higher", "lower", "neither")

# How profile.py obtains a curated metric: "full-set" ones are columns of every --set full
# export; "explicit" ones are not, and profile.py asks for them by name with --metrics.
COLLECTED = ("full-set", "explicit")

# Values such as "1,234,567": ncu's CSV export groups thousands with commas.
THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")

# The units ncu scales for reading when it exports without --print-units base, as
# (family, power of ten): ncu's prefixes are decimal (32.768 Kbyte is 32768 bytes). A unit not
# listed here (sector, inst, cycle, %, ...) is never scaled and converts only to itself.
SCALED_UNITS = {
    "byte": ("byte", 0), "Kbyte": ("byte", 3), "Mbyte": ("byte", 6), "Gbyte": ("byte", 9),
    "Tbyte": ("byte", 12), "Pbyte": ("byte", 15),
    "nsecond": ("second", -9), "ns": ("second", -9), "usecond": ("second", -6),
    "us": ("second", -6), "msecond": ("second", -3), "ms": ("second", -3),
    "second": ("second", 0), "s": ("second", 0),
    "hz": ("hz", 0), "Khz": ("hz", 3), "Mhz": ("hz", 6), "Ghz": ("hz", 9), "Thz": ("hz", 12),
}

# GPU names as CUDA, nvidia-smi and ncu print them ("NVIDIA H100 80GB HBM3"): after "NVIDIA", the
# model word of a Hopper GPU (H100, H200, H800, H20, GH200), then words that tell a variant apart or
# say nothing the model word does not. A PCIe or NVL card differs from the SXM module of its model
# (SMs, clocks, power limit), so its measurements get folders of their own; the memory's size and
# type ("80GB", "HBM3e") and the SXM form factor are left out.
HOPPER_MODEL = re.compile(r"g?h\d+")
VARIANT_WORDS = ("pcie", "nvl")
IGNORED_WORDS = re.compile(r"\d+gb?|hbm\d+e?|sxm\d*")
MODEL_FOLDER = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")

# A lesson's kernel: a __global__ function of its kernel.cuh, or else the kernel of a header it
# includes: the final kernel of common/hopper/gemm_kernel.cuh (lessons 15-18), or another lesson's.
GLOBAL_FUNCTION = re.compile(r"\b__global__\b")
LESSON_KERNEL = re.compile(r"lessons/(\d\d)_[^/]+/kernel\.cuh")
NAMESPACE_OPENING = re.compile(r"\bnamespace\s+([\w:]+)\s*\{")
CPP_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


class ProfileError(Exception):
    """A problem with an input file or a request; its message is one line for the user."""


@dataclass
class Metric:
    """One row of profiles/metrics.csv."""
    name: str
    label: str
    better: str     # "higher", "lower" or "neither" (see BETTER)
    collected: str  # "full-set" or "explicit" (see COLLECTED)
    unit_note: str
    why: str


@dataclass
class Profile:
    """One lesson's metrics, from an ncu raw export or from a reference file."""
    lesson: str
    path: Path
    kind: str                                 # "local export" or "reference"
    info: dict = field(default_factory=dict)  # gpu, kernel, shape, date, commit, ncu
    units: dict = field(default_factory=dict)  # metric -> unit as ncu printed it
    values: dict = field(default_factory=dict)  # metric -> value text as ncu printed it

    def number(self, metric, shift=0):
        """The metric's value as a float, or None when it is absent or not a number.

        With `shift`, the value times 10**shift (exactly, in decimal): a unit conversion.
        """
        value = parse_decimal(self.values.get(metric, ""))
        return None if value is None else float(value.scaleb(shift))


def lesson_id(text):
    """'3', '03' or 'lesson03' -> '03'. Lessons are always named with two digits."""
    match = re.fullmatch(r"(?:lesson)?(\d{1,2})", text.strip())
    if not match or int(match.group(1)) == 0:
        raise ProfileError(f"'{text}' is not a lesson number (expected NN, for example 07)")
    return f"{int(match.group(1)):02d}"


def gpu_model(name):
    """A GPU's name as CUDA, nvidia-smi and ncu print it -> the folder of its measurements.

    'NVIDIA H100 80GB HBM3' -> 'h100', 'NVIDIA H200' -> 'h200', 'NVIDIA H100 PCIe' -> 'h100-pcie',
    'NVIDIA H100 NVL' -> 'h100-nvl', 'NVIDIA GH200 480GB' -> 'gh200'. An empty name, or one that
    is not a Hopper GPU's, is an error.
    """
    words = name.split()
    if words[:1] and words[0].lower() == "nvidia":
        words = words[1:]
    if not words:
        raise ProfileError(f"'{name}' is not a GPU name: expected one such as "
                           "'NVIDIA H100 80GB HBM3' or 'NVIDIA H200'")
    if not HOPPER_MODEL.fullmatch(words[0].lower()):
        raise ProfileError(f"'{name}' is not the name of a Hopper GPU (H100, H200, H800, H20, "
                           "GH200, ...), the GPUs this course measures")
    parts = [words[0].lower()]
    for word in words[1:]:
        if word.lower() in VARIANT_WORDS:
            parts.append(word.lower())
        elif not IGNORED_WORDS.fullmatch(word.lower()):
            raise ProfileError(f"GPU name '{name}': unknown word '{word}' (after the model, only a "
                               "memory size or type, SXM, PCIe or NVL are known)")
    return "-".join(dict.fromkeys(parts))


def lesson_kernel_source(lesson, lessons_dir=DEFAULT_LESSONS_DIR):
    """lessons/NN_<slug>/kernel.cuh of lesson NN."""
    found = sorted(Path(lessons_dir).glob(f"{lesson}_*/kernel.cuh"))
    if len(found) != 1:
        raise ProfileError(f"lesson {lesson}: expected one {Path(lessons_dir) / (lesson + '_*')}"
                           f"/kernel.cuh, found {len(found)}")
    return found[0]


def kernel_namespace(lesson, lessons_dir=DEFAULT_LESSONS_DIR):
    """The namespace of the kernel that lesson NN runs, read from the lessons' sources.

    'lessonNN' when its kernel.cuh defines a __global__ function (comments aside). Otherwise its
    #include lines are followed in order, depth first, to the first source that defines one: a
    lesson's kernel.cuh gives that lesson's namespace, a common header the namespace the kernel is
    declared in. Lessons 15-18 -> 'gemm::hopper' (the final kernel, common/hopper/gemm_kernel.cuh).
    """
    root = Path(lessons_dir).resolve().parent
    visited = set()

    def search(path, namespace):
        if path in visited:
            return None
        visited.add(path)
        code = CPP_COMMENT.sub("", "\n".join(read_text_lines(path)))
        kernel = GLOBAL_FUNCTION.search(code)
        if kernel:
            if namespace:
                return namespace
            openings = NAMESPACE_OPENING.findall(code[:kernel.start()])
            return openings[-1] if openings else None
        for included in quoted_includes(code):
            lesson_include = LESSON_KERNEL.fullmatch(included)
            if lesson_include:
                found = search(lesson_kernel_source(lesson_include[1], lessons_dir),
                               f"lesson{lesson_include[1]}")
            elif (root / included).is_file():
                found = search(root / included, None)
            else:
                found = None
            if found:
                return found
        return None

    namespace = search(lesson_kernel_source(lesson, lessons_dir), f"lesson{lesson}")
    if namespace is None:
        raise ProfileError(f"lesson {lesson}: {lesson_kernel_source(lesson, lessons_dir)} defines "
                           "no __global__ kernel, and no header it includes does")
    return namespace


def kernel_name_regex(namespace):
    """The regular expression that picks the kernels of `namespace` (kernel_namespace()'s answer,
    'lesson07') out of the profiled launches.

    ncu's demangled names start with the return type for function templates
    ("void lesson07::gemm_kernel<...>(...)"), and with the namespace for plain functions
    ("lesson02::gemm_kernel(...)"), so both are accepted.
    """
    return rf"^(void )?{namespace}::"


def parse_decimal(text):
    """'1,234,567' or '12.5' -> Decimal; '', 'n/a', 'nan' and other text -> None."""
    text = text.strip()
    if THOUSANDS.match(text):
        text = text.replace(",", "")
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return None
    return value if value.is_finite() else None


def parse_number(text):
    """'1,234,567' or '12.5' -> float; '', 'n/a', 'nan' and other text -> None."""
    value = parse_decimal(text)
    return None if value is None else float(value)


def parse_unit(unit):
    """A unit as ncu prints it -> (dimension, power of ten), or None for a unit of two '/'.

    'Mbyte' -> (('byte', ''), 6); 'sector/ns' -> (('sector', 'second'), 9) (per nanosecond is
    10**9 per second); 'Kbyte/block' -> (('byte', 'block'), 3); '' -> (('', ''), 0). Two units
    convert into each other when their dimensions are equal, by the difference of the powers.
    """
    parts = unit.strip().split("/")
    if len(parts) > 2:
        return None
    numerator, denominator = (parts + [""])[:2]
    top, top_power = SCALED_UNITS.get(numerator, (numerator, 0))
    bottom, bottom_power = SCALED_UNITS.get(denominator, (denominator, 0))
    return (top, bottom), top_power - bottom_power


def read_text_lines(path):
    """The lines of a text file; a one-line error for a missing or unreadable file."""
    try:
        with open(path, newline="") as file:
            return file.read().splitlines()
    except OSError as error:
        raise ProfileError(f"cannot read {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise ProfileError(f"{path}: not a text file") from error


def read_csv_rows(path):
    """All rows of a CSV file; one-line errors for a missing, unreadable or broken file."""
    try:
        return list(csv.reader(read_text_lines(path)))
    except csv.Error as error:
        raise ProfileError(f"{path}: not a valid CSV file ({error})") from error


def read_table(path, columns):
    """The rows of a small CSV table with exactly `columns` as header, as dicts."""
    rows = [row for row in read_csv_rows(path) if any(cell.strip() for cell in row)]
    if not rows or rows[0] != columns:
        raise ProfileError(f"{path}: the header must be {','.join(columns)}")
    table = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns):
            raise ProfileError(f"{path}: line {number} has {len(row)} fields, "
                               f"expected {len(columns)}")
        table.append(dict(zip(columns, (cell.strip() for cell in row))))
    return table


def load_curated_metrics(path=DEFAULT_METRICS_CSV):
    """profiles/metrics.csv as a list of Metric, checked for the mistakes a hand edit makes."""
    metrics, seen = [], set()
    for row in read_table(path, METRICS_COLUMNS):
        metric = Metric(row["metric"], row["label"], row["better"], row["collected"],
                        row["unit_note"], row["why"])
        if not re.fullmatch(r"[a-z0-9_]+__[a-z0-9_]+(\.[a-z0-9_]+)*", metric.name):
            raise ProfileError(f"{path}: '{metric.name}' is not a metric name")
        if metric.better not in BETTER:
            raise ProfileError(f"{path}: {metric.name}: better must be 'higher', 'lower' or "
                               f"'neither', not '{metric.better}'")
        if metric.collected not in COLLECTED:
            raise ProfileError(f"{path}: {metric.name}: collected must be 'full-set' or "
                               f"'explicit', not '{metric.collected}'")
        if not metric.label or not metric.why:
            raise ProfileError(f"{path}: {metric.name}: label and why must not be empty")
        if metric.name in seen:
            raise ProfileError(f"{path}: {metric.name} is listed twice")
        seen.add(metric.name)
        metrics.append(metric)
    if not metrics:
        raise ProfileError(f"{path}: no metrics")
    return metrics


def load_focus(path=DEFAULT_FOCUS_CSV, curated=None):
    """profiles/focus.csv as {lesson: [metric, ...]}, in file order.

    With `curated` (a list of Metric), every focus metric must be one of them.
    """
    names = {metric.name for metric in curated} if curated else None
    focus = {}
    for row in read_table(path, FOCUS_COLUMNS):
        lesson = lesson_id(row["lesson"])
        if names is not None and row["metric"] not in names:
            raise ProfileError(f"{path}: lesson {lesson}: {row['metric']} is not in the curated "
                               "metric list")
        focus.setdefault(lesson, []).append(row["metric"])
    return focus


def read_ncu_raw(path, lesson, lessons_dir=DEFAULT_LESSONS_DIR):
    """Lesson NN's kernel from an `ncu --import ... --csv --page raw` export.

    Layout: row 1 the column names (ID, Process ID, ..., Kernel Name, ..., Device, CC, then one
    column per metric), row 2 the units, then one row per profiled kernel. Lines that ncu itself
    prints before the table (starting with "==") are skipped. Metric columns are those whose name
    contains "__" (every ncu metric does; the launch columns before them do not). With more than
    one kernel row, the row of the lesson's kernel is used: the one in the namespace that
    kernel_namespace() reads from the lesson's sources in `lessons_dir`.

    The GPU's name is the metric device__attribute_display_name ("NVIDIA H100 80GB HBM3"): the
    Device column holds only the device's number ("0") in ncu's export. An export without that
    metric falls back to the Device column.
    """
    rows = [row for row in read_csv_rows(path)
            if row and any(cell.strip() for cell in row) and not row[0].startswith("==")]
    if len(rows) < 3:
        raise ProfileError(f"{path}: expected ncu's raw CSV (column names, units, one row per "
                           "kernel), found fewer than 3 rows")
    header, units, kernels = rows[0], rows[1], rows[2:]
    for name in ("Kernel Name", "Device"):
        if name not in header:
            raise ProfileError(f"{path}: no '{name}' column: not an ncu raw CSV export")
    for number, row in enumerate([units] + kernels, start=2):
        if len(row) != len(header):
            raise ProfileError(f"{path}: row {number} has {len(row)} fields, "
                               f"the header {len(header)}")
    name_column = header.index("Kernel Name")
    if len(kernels) == 1:
        row = kernels[0]
    else:
        namespace = kernel_namespace(lesson, lessons_dir)
        pattern = re.compile(kernel_name_regex(namespace))
        matching = [row for row in kernels if pattern.match(row[name_column])]
        if len(matching) != 1:
            raise ProfileError(f"{path}: {len(kernels)} kernels, {len(matching)} of them named "
                               f"{namespace}::... (lesson {lesson}'s kernel); expected exactly one")
        row = matching[0]
    profile = Profile(lesson, Path(path), "local export")
    profile.info["kernel"] = row[name_column]
    for name, unit, value in zip(header, units, row):
        if "__" in name:
            profile.units[name] = unit
            profile.values[name] = value
    profile.info["gpu"] = (profile.values.get("device__attribute_display_name", "").strip()
                           or row[header.index("Device")])
    return profile


def read_reference(path, lesson):
    """A reference file written by make_reference.py.

    Layout: "# key: value" lines (lesson, kernel, gpu, shape, date, commit, ncu), then a CSV
    table with the columns metric,unit,value.
    """
    profile = Profile(lesson, Path(path), "reference")
    lines = read_text_lines(path)
    for line in lines:
        if line.startswith("#"):
            key, _, value = line.lstrip("#").partition(":")
            profile.info[key.strip()] = value.strip()
    try:
        table = [row for row in csv.reader(line for line in lines if not line.startswith("#"))
                 if any(cell.strip() for cell in row)]
    except csv.Error as error:
        raise ProfileError(f"{path}: not a valid CSV file ({error})") from error
    if not table or table[0] != REFERENCE_COLUMNS:
        raise ProfileError(f"{path}: after the # lines, the header must be "
                           f"{','.join(REFERENCE_COLUMNS)}")
    for number, row in enumerate(table[1:], start=2):
        if len(row) != 3:
            raise ProfileError(f"{path}: table row {number} has {len(row)} fields, expected 3")
        metric, unit, value = (cell.strip() for cell in row)
        profile.units[metric] = unit
        profile.values[metric] = value
    if profile.info.get("lesson", lesson) != lesson:
        raise ProfileError(f"{path}: this reference is for lesson {profile.info['lesson']}, "
                           f"not {lesson}")
    return profile


def read_profile(path, lesson, lessons_dir=DEFAULT_LESSONS_DIR):
    """Either format, told apart by the first line: '#' or 'metric,' for ours, else ncu's."""
    first = next((line for line in read_text_lines(path) if line.strip()), None)
    if first is None:
        raise ProfileError(f"{path}: the file is empty")
    if first.startswith("#") or first.startswith("metric,"):
        return read_reference(path, lesson)
    return read_ncu_raw(path, lesson, lessons_dir)


def shape_of_export(csv_path):
    """The shape profile.py recorded next to an export (lessonNN.json), or None."""
    try:
        with open(Path(csv_path).with_suffix(".json")) as file:
            record = json.load(file)
        return f"{record['m']} x {record['n']} x {record['k']}"
    except (OSError, ValueError, KeyError):
        return None


def relative_to_here(path):
    """The path as the user would type it: relative to the current folder when inside it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd())
    except ValueError:
        return Path(path)


def gpu_here(nvidia_smi="nvidia-smi"):
    """The name of GPU 0 as nvidia-smi prints it; None without nvidia-smi, or when it does not
    answer (no GPU, no driver)."""
    executable = shutil.which(nvidia_smi)
    if executable is None:
        return None
    try:
        result = subprocess.run([executable, "--query-gpu=name", "--format=csv,noheader",
                                 "-i", "0"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return lines[0] if result.returncode == 0 and lines else None


def reference_models(references_root):
    """The GPU models that have a reference folder under `references_root`, sorted."""
    root = Path(references_root)
    return sorted(path.name for path in root.iterdir() if path.is_dir()) if root.is_dir() else []


def models_with_reference(lesson, references_root):
    """The GPU models whose reference folder holds lesson NN."""
    return [model for model in reference_models(references_root)
            if (Path(references_root) / model / f"lesson{lesson}.csv").exists()]


def newest_reference_date(folder, lessons):
    """The latest `# date:` of the lessons' references in `folder` (YYYY-MM-DD sorts as text)."""
    return max(read_reference(Path(folder) / f"lesson{lesson}.csv", lesson).info.get("date", "")
               for lesson in lessons)


def lesson_list(lessons):
    """['05'] -> 'lesson 05'; ['05', '06'] -> 'lessons 05, 06'."""
    return f"lesson {lessons[0]}" if len(lessons) == 1 else f"lessons {', '.join(lessons)}"


def choose_reference_folder(lessons, references_root, gpu=None, nvidia_smi="nvidia-smi"):
    """(folder, note): the reference folder for `lessons` (those without a local export), and one
    line that says why that one and how to pick another.

    The model is --gpu's, else that of the GPU here (nvidia-smi), else (no GPU, or not a Hopper
    one) that of the folder that holds every lesson asked for: of several, the newest by date.
    """
    root = relative_to_here(references_root)
    models = reference_models(root)
    if gpu is not None:
        if not MODEL_FOLDER.fullmatch(gpu):
            raise ProfileError(f"GPU={gpu}: not a GPU model; name a folder of {root}/ "
                               f"({', '.join(models) or 'there is none yet'})")
        return root / gpu, f"references: {root / gpu}/ (GPU={gpu})"
    name = gpu_here(nvidia_smi)
    if name is not None:
        try:
            model = gpu_model(name)
        except ProfileError:
            model = None
        if model is not None:
            others = [other for other in models if other != model]
            pick = f"; GPU={others[0]} picks another ({', '.join(others)})" if others else ""
            return root / model, f"references: {root / model}/ (the GPU here is {name}{pick})"
        why = f"the GPU here, {name}, is not a Hopper GPU"
    else:
        why = "no GPU here"
    holding = [model for model in models
               if all((root / model / f"lesson{lesson}.csv").exists() for lesson in lessons)]
    if not holding:
        having = {lesson: models_with_reference(lesson, root) for lesson in lessons}
        found = "; ".join(f"lesson {lesson}: {', '.join(where) or 'none'}"
                          for lesson, where in having.items())
        unmeasured = [lesson for lesson, where in having.items() if not where] or lessons
        raise ProfileError(f"{why}, and no folder of {root}/ holds references of "
                           f"{lesson_list(lessons)} ({found}); profile {lesson_list(unmeasured)} "
                           f"on a Hopper GPU: make profile L={unmeasured[0]}")
    if len(holding) == 1:
        return root / holding[0], (f"references: {root / holding[0]}/ ({why}; the only folder "
                                   f"with {lesson_list(lessons)})")
    dates = {model: newest_reference_date(root / model, lessons) for model in holding}
    chosen = max(holding, key=lambda model: (dates[model], model))
    other = next(model for model in holding if model != chosen)
    return root / chosen, (f"references: {root / chosen}/ ({why}; of {', '.join(holding)}, which "
                           f"all have {lesson_list(lessons)}, the newest, {dates[chosen]}; "
                           f"GPU={other} picks another)")


def find_profile(lesson, reports_dir, reference_dir, references_root=None,
                 lessons_dir=DEFAULT_LESSONS_DIR):
    """Lesson NN's local export if there is one, else its reference; an error if neither.

    `reference_dir` is None when every lesson has a local export. With `references_root`, the
    error names the other GPU models that have a reference of the lesson.
    """
    local = relative_to_here(Path(reports_dir) / f"lesson{lesson}.csv")
    if local.exists():
        profile = read_profile(local, lesson, lessons_dir)
        profile.info.setdefault("shape", shape_of_export(local))
        return profile
    reference = relative_to_here(Path(reference_dir) / f"lesson{lesson}.csv")
    if reference.exists():
        return read_profile(reference, lesson, lessons_dir)
    others = models_with_reference(lesson, references_root) if references_root else []
    elsewhere = (f"; references of lesson {lesson} exist for {', '.join(others)}: "
                 f"GPU={others[0]} uses them" if others else "")
    raise ProfileError(f"lesson {lesson}: no profile: neither {local} (make profile L={lesson} "
                       f"writes it, on a Hopper GPU with Nsight Compute) nor "
                       f"{reference}{elsewhere}")


def describe_source(profile):
    """One line: which file a lesson's numbers come from and what it says about itself."""
    details = [profile.info.get("gpu") or "unknown GPU"]
    if profile.info.get("shape"):
        details.append(f"shape {profile.info['shape']}")
    if profile.kind == "reference":
        details.append(f"measured {profile.info.get('date', '?')} at commit "
                       f"{profile.info.get('commit', '?')}")
    return f"lesson {profile.lesson}: {profile.path} ({profile.kind}; {', '.join(details)})"


def format_number(value):
    """1234567 -> '1,234,567'; 45.678 -> '45.68'; 0.01234 -> '0.0123'."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def describe_change(before, after, better):
    """'-1,000,000 (-100.0%) better' for a metric that went from `before` to `after`.

    `better` is "higher" or "lower" (the verdict is better, worse or same), "neither" (the
    verdict only says higher, lower or same) or None (a metric outside the curated list: no
    verdict at all). There is no relative change from 0: the text says "(from 0)" instead.
    """
    if before is None or after is None:
        return "n/a"
    delta = after - before
    sign = "+" if delta > 0 else ""
    if before != 0:
        relative = 100.0 * delta / abs(before)
        text = f"{sign}{format_number(delta)} ({relative:+.1f}%)"
        unchanged = abs(relative) < SAME_WITHIN_PERCENT
    else:
        text = "0" if delta == 0 else f"{sign}{format_number(delta)} (from 0)"
        unchanged = delta == 0
    if better is None:
        return text
    if unchanged:
        return f"{text} same"
    if better == "neither":
        return f"{text} {'higher' if delta > 0 else 'lower'}"
    improved = (delta > 0) == (better == "higher")
    return f"{text} {'better' if improved else 'worse'}"


def choose_metrics(curated, focus_names, requested, profiles):
    """The (metric name, label, better, is_focus) rows to show, in order.

    Without `requested`: the focus metrics first, then the rest of the curated list. With it:
    exactly those, each either curated or present in every profile.
    """
    by_name = {metric.name: metric for metric in curated}
    if requested:
        for name in requested:
            if name in by_name:
                continue
            lacking = [profile.path for profile in profiles if name not in profile.values]
            if lacking:
                raise ProfileError(f"unknown metric '{name}': not in the curated metric list "
                                   f"and not in {lacking[0]}")
        names = list(dict.fromkeys(requested))
    else:
        names = [name for name in focus_names if name in by_name]
        names += [metric.name for metric in curated if metric.name not in names]
    rows = []
    for name in names:
        metric = by_name.get(name)
        label = metric.label if metric else name
        better = metric.better if metric else None
        rows.append((name, label, better, name in focus_names))
    return rows


def common_unit(name, profiles):
    """(unit, shifts, note) to show the metric in one unit across the files that have it.

    shifts[i] is the power of ten that converts profiles[i]'s value into `unit`: 0 where the
    files agree. Where they disagree, `unit` is the finest of their units and `note` says so;
    units that parse_unit cannot relate are an error.
    """
    units = {profile.units[name] for profile in profiles if name in profile.units}
    if len(units) <= 1:
        return (units.pop() if units else ""), [0] * len(profiles), None
    parsed = {unit: parse_unit(unit) for unit in units}
    dimensions = {scale[0] if scale else unit for unit, scale in parsed.items()}
    if len(dimensions) > 1:
        raise ProfileError(f"{name}: the files disagree on its unit ({', '.join(sorted(units))}) "
                           "and compare.py cannot convert between them; export them with "
                           "--print-units base (profile.py does)")
    target = min(sorted(units), key=lambda unit: parsed[unit][1])
    shifts = [parsed[profile.units[name]][1] - parsed[target][1] if name in profile.units else 0
              for profile in profiles]
    note = (f"note: {name}: the files use different units ({', '.join(sorted(units))}); "
            f"all its values are shown in {target}")
    return target, shifts, note


def render_table(rows, right_aligned):
    """Columns padded to their widest cell; those in `right_aligned` (numbers) to the right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.rjust(width) if i in right_aligned else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return lines


def differing(profiles, key):
    """'NVIDIA H100 80GB HBM3: lesson 15; NVIDIA H200: lesson 16' when the profiles disagree on
    info[key] (gpu, shape), else None."""
    groups = {}
    for profile in profiles:
        groups.setdefault(profile.info.get(key) or "unknown", []).append(profile.lesson)
    if len(groups) < 2:
        return None
    return "; ".join(f"{value}: {lesson_list(lessons)}" for value, lessons in groups.items())


def render_comparison(profiles, curated, focus, requested=(), show_names=False,
                      reference_note=None):
    """The whole report as text: sources, the table, the legend and any notes.

    `reference_note` is the line that says which reference folder was chosen, and why.
    """
    last = profiles[-1].lesson
    focus_names = focus.get(last, [])
    first = profiles[0]
    out = [f"Nsight Compute metrics of lessons {', '.join(p.lesson for p in profiles)}; "
           f"changes are against lesson {first.lesson}."]
    if reference_note:
        out.append("  " + reference_note)
    out += ["  " + describe_source(profile) for profile in profiles]
    out.append("")

    header = ["", "metric" if show_names else "what", "unit"]
    header += [f"lesson {profile.lesson}" for profile in profiles]
    header += [f"{profile.lesson} vs {first.lesson}" for profile in profiles[1:]]
    table, notes = [header], []
    shown = choose_metrics(curated, focus_names, requested, profiles)
    for name, label, better, is_focus in shown:
        unit, shifts, unit_note = common_unit(name, profiles)
        if unit_note:
            notes.append(unit_note)
        values = [profile.number(name, shift) for profile, shift in zip(profiles, shifts)]
        row = ["*" if is_focus else "", name if show_names else label, unit]
        row += ["n/a" if value is None else format_number(value) for value in values]
        row += [describe_change(values[0], value, better) for value in values[1:]]
        table.append(row)
        for profile, value in zip(profiles, values):
            if value is None:
                found = profile.values.get(name)
                why = "is not in" if found is None else f"has no number ('{found}') in"
                notes.append(f"note: {name} {why} {profile.path}")
    value_columns = range(3, 3 + len(profiles))
    out += render_table(table, right_aligned=set(value_columns))
    out.append("")
    if any(is_focus for _, _, _, is_focus in shown):
        out.append(f"* what lesson {last} is meant to move (profiles/focus.csv)")
    out.append("better / worse: by the 'better' column of profiles/metrics.csv; higher / lower: "
               "a metric with no better direction; "
               f"same: changed by less than {SAME_WITHIN_PERCENT:g}%")
    shapes = differing([profile for profile in profiles if profile.info.get("shape")], "shape")
    if shapes:
        out.append(f"warning: the lessons were profiled at different shapes ({shapes}); counts "
                   "do not compare")
    gpus = differing(profiles, "gpu")
    if gpus:
        out.append(f"warning: the lessons were profiled on different GPUs ({gpus}); times, rates "
                   "and cache figures do not compare")
    out += notes
    return "\n".join(out) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="compare.py",
        description="Nsight Compute metrics of two or more lessons side by side.")
    parser.add_argument("lessons", nargs="*", metavar="NN", help="lesson numbers, e.g. 07 08")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME",
                        help="show only this metric (repeatable); curated or in every file")
    parser.add_argument("--names", action="store_true",
                        help="show ncu's metric names instead of the plain labels")
    parser.add_argument("--gpu", metavar="MODEL",
                        help="use the references of this GPU model, a folder of "
                             "profiles/reference/ such as h100 (make compare: GPU=MODEL)")
    parser.add_argument("--reports-dir", type=Path, default=DEFAULT_REPORTS_DIR)
    parser.add_argument("--references-root", type=Path, default=DEFAULT_REFERENCES_ROOT,
                        help="the folder of the per-model reference folders")
    parser.add_argument("--reference-dir", type=Path,
                        help="read the references from this folder, whatever the GPU")
    parser.add_argument("--nvidia-smi", default="nvidia-smi",
                        help="the nvidia-smi that names the GPU here (default: on PATH)")
    parser.add_argument("--lessons-dir", type=Path, default=DEFAULT_LESSONS_DIR)
    parser.add_argument("--metrics-csv", type=Path, default=DEFAULT_METRICS_CSV)
    parser.add_argument("--focus-csv", type=Path, default=DEFAULT_FOCUS_CSV)
    parser.add_argument("--model-of", metavar="NAME",
                        help="print the folder name of a GPU's name ('NVIDIA H200' -> h200) "
                             "and exit")
    args = parser.parse_args(argv)
    if args.model_of is None and len(args.lessons) < 2:
        parser.error("name at least two lessons, e.g. compare.py 07 08")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.model_of is not None:
            print(gpu_model(args.model_of))
            return
        lessons = [lesson_id(text) for text in args.lessons]
        curated = load_curated_metrics(args.metrics_csv)
        focus = load_focus(args.focus_csv, curated)
        without_export = [lesson for lesson in lessons
                          if not (args.reports_dir / f"lesson{lesson}.csv").exists()]
        references_root, note = None, None
        if args.reference_dir is not None:
            reference_dir = args.reference_dir
        elif without_export:
            references_root = args.references_root
            reference_dir, note = choose_reference_folder(without_export, references_root,
                                                          args.gpu, args.nvidia_smi)
        else:
            reference_dir = None
        profiles = [find_profile(lesson, args.reports_dir, reference_dir, references_root,
                                 args.lessons_dir)
                    for lesson in lessons]
        print(render_comparison(profiles, curated, focus, args.metric, args.names, note), end="")
    except ProfileError as error:
        sys.exit(f"compare.py: {error}")


if __name__ == "__main__":
    main()
