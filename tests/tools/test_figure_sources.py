"""The figures of a README's results tables come from the committed file the README names.

Each case below is one table: where it is (the README, and the line just above it or its header),
the file its figures come from, and how a row is made from that file. A table whose rows differ
from what the file gives fails here: measure again and write both, never one. A hand-out that
leaves a lesson out leaves its tables out too (the case is skipped).
"""
import csv
import math
import re
import statistics
import subprocess
import sys
import unittest
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import compare  # noqa: E402  (after the path is set)
import layer_table  # noqa: E402
import sass_stalls  # noqa: E402
import timeline_svg  # noqa: E402

SWEEPS = REPOSITORY / "profiles" / "sweeps"
RESULTS_H100 = REPOSITORY / "docs" / "results" / "h100.csv"  # make bench's, the ladder's figures
LESSON_15 = REPOSITORY / "lessons" / "15_tma_store_epilogue" / "README.md"
LESSON_16 = REPOSITORY / "lessons" / "16_shape_heuristics" / "README.md"
# Lesson 16's measurements past its current figures: the H100's, the H200's steps, what was left out.
LESSON_16_MEASURED = REPOSITORY / "lessons" / "16_shape_heuristics" / "measurements.md"
LESSON_17 = REPOSITORY / "lessons" / "17_dependent_launch" / "README.md"
LESSON_18 = REPOSITORY / "lessons" / "18_fp8_block_scaled" / "README.md"
LESSON_19 = REPOSITORY / "lessons" / "19_tensor_parallel" / "README.md"


def table_after(readme, marker):
    """The table lines (those starting with '|') that begin on the first line after `marker`'s line
    that starts one (`marker`: a whole line of the README, or a table's header line itself)."""
    lines = readme.read_text().splitlines()
    start = lines.index(marker)
    if not lines[start].startswith("|"):
        start += 1
        while not lines[start].startswith("|"):
            start += 1
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def shape_label(row):
    """A shape as the READMEs write it: 4096^3, or 3000 x 5000 x 4000."""
    m, n, k = row["m"], row["n"], row["k"]
    return f"{m}^3" if m == n == k else f"{m} x {n} x {k}"


def rounded(value, decimals):
    """`value` (a decimal string, or a Decimal) to `decimals` places, halves rounded up, in decimal
    (as one rounds by hand: 78.85 is 78.9, which binary floating point would make 78.8)."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def rounded_like(value, cell):
    """`value` rounded as `cell` is written: to as many decimals as it has."""
    return rounded(value, len(cell.split(".")[1]) if "." in cell else 0)


def percent(ratio):
    """A ratio of the file (a decimal string) as a percentage to a tenth."""
    return rounded(Decimal(ratio) * 100, 1) + "%"


def geometric_mean(values):
    values = [float(value) for value in values]
    return math.exp(sum(math.log(value) for value in values) / len(values))


def unbold(line):
    """A table line without the bold marks that stress a figure."""
    return line.replace("**", "")


def cells_of(line):
    """The cells of a Markdown table line, stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_line(cells):
    """A Markdown table line of `cells`."""
    return "| " + " | ".join(cells) + " |"


def rows_of(text):
    """The rows of a CSV file's text."""
    return list(csv.DictReader(text.splitlines()))


def read_rows(path):
    return rows_of(Path(path).read_text())


SHAPE = re.compile(r"^(?:(\d+)\^3|(\d+) x (\d+) x (\d+))(?: \(.*\))?$")


def shape_of(label):
    """(M, N, K) of a shape as the READMEs write it (4096^3, 3000 x 5000 x 4000, either with a
    note in brackets after it), or None."""
    shape = SHAPE.match(label)
    if shape is None:
        return None
    if shape.group(1):
        return (int(shape.group(1)),) * 3
    return tuple(int(group) for group in shape.groups()[1:])


def bench_figures(rows):
    """The plain product's rows of a `make bench` file, by (lesson, M, N, K)."""
    return {(int(row["lesson"]), int(row["m"]), int(row["n"]), int(row["k"])): row
            for row in rows if row["epilogue"] == "plain"}


# The 71f85ba `make bench` on the H100 as its file was before lessons 09-11 were measured again
# (e7ccc8c): the course's history holds it.
BENCH_71F85BA = "401f7be:docs/results.csv"


def earlier_bench(test, source=BENCH_71F85BA):
    """The plain product's rows of a `make bench` file as the history holds it (`git show
    source`); skips `test` where there is no history (an exported copy)."""
    revision = subprocess.run(["git", "show", source], cwd=REPOSITORY, capture_output=True,
                              text=True)
    if revision.returncode != 0:
        test.skipTest(f"needs the course's git history: git show {source}")
    return bench_figures(rows_of(revision.stdout))


def prose(readme):
    """A README's text with its line breaks folded into spaces, so that a sentence wrapped across
    lines is found whole."""
    return " ".join(readme.read_text().split())


def checked_rows(test, page, data):
    """The rows of `data`, a sweep whose every run `page` quotes; the test fails unless every row's
    check passed (a figure of a wrong product is no figure), and skips without the two files."""
    needs(page, data)
    rows = read_rows(data)
    test.assertTrue(all(row["check"] == "pass" for row in rows), f"{data.name}: a failed check")
    return rows


def needs(*paths):
    missing = [str(path.relative_to(REPOSITORY)) for path in paths if not path.exists()]
    if missing:
        raise unittest.SkipTest(f"not in this tree: {', '.join(missing)}")


def launches_by_side(path):
    """{(shape label, side): [its launches' rows]} of a CSV that Nsight Compute's launches of a
    lesson and of cuBLAS were written to, one row per launch (a `side` column names which)."""
    sides = {}
    for row in read_rows(path):
        sides.setdefault((shape_label(row), row["side"]), []).append(row)
    return sides


def launch_median(launches, metric):
    """The median of `metric` over `launches` (rows of launches_by_side)."""
    return statistics.median(float(row[metric]) for row in launches)


def role_medians(path, events):
    """{(shape label, configuration): [the median over the blocks of each of `events`]} of the
    model's picks in a CSV of `make roles` (one row per block and event; an event is
    (role, item, event) as the CSV spells them)."""
    stamps = {}
    for row in read_rows(path):
        if row["chosen_by"] == "model":
            key = (shape_label(row), row["configuration"])
            stamps.setdefault(key, {}).setdefault((row["role"], row["item"], row["event"]),
                                                  []).append(float(row["t_us"]))
    return {key: [statistics.median(stamp[event]) for event in events]
            for key, stamp in stamps.items()}


class MakeBenchTables(unittest.TestCase):
    """The ladder's results tables (lessons 01-14), from `make bench` on the H100
    (docs/results/h100.csv, the plain product's rows): a table whose first column is the shape
    and whose other columns are all of these kinds, every cell rounded as the cell is:
      `NN TFLOP/s`, `NN %`, `NN clock` (or `lesson NN ...`)   lesson NN's figures of the shape
      `% of cuBLAS`, `SM clock`                                 the README's own lesson's
      `cuBLAS TFLOP/s`                                          cuBLAS's, timed beside that lesson
      `NN / MM`, `NN - MM`                                      the two lessons' % of cuBLAS as
                                                                the row shows them: their
                                                                quotient, their difference in
                                                                points
    A shape may carry a note in brackets ("4224^3 (wave-quantized)"). Other tables (sweeps of a
    lesson's settings, tables of lessons by shape) are not this check's."""

    FIGURE = re.compile(r"^(?:lesson )?(\d\d) (TFLOP/s|%|clock)$")
    QUOTIENT = re.compile(r"^(\d\d) / (\d\d)$")
    DIFFERENCE = re.compile(r"^(\d\d) - (\d\d)$")
    # Columns whose run the file no longer holds: lesson 12's table compares it with lesson 10 of
    # the same run (71f85ba), whose rows of lesson 10 the file replaced with e7ccc8c's (lessons
    # 09-11 measured again); they are in the file as commit 401f7be wrote it.
    EARLIER_RUN = {("12_cluster_multicast", 10): BENCH_71F85BA}

    def column_kinds(self, header, lesson):
        """[(kind, lessons)] for every column after the shape, or None if one is not this check's."""
        kinds = []
        for cell in cells_of(header)[1:]:
            figure = self.FIGURE.match(cell)
            quotient, difference = self.QUOTIENT.match(cell), self.DIFFERENCE.match(cell)
            if figure:
                kinds.append((figure.group(2), (int(figure.group(1)),)))
            elif cell == "% of cuBLAS":
                kinds.append(("%", (lesson,)))
            elif cell == "SM clock":
                kinds.append(("clock", (lesson,)))
            elif cell == "cuBLAS TFLOP/s":
                kinds.append(("cuBLAS", (lesson,)))
            elif quotient:
                kinds.append(("/", (int(quotient.group(1)), int(quotient.group(2)))))
            elif difference:
                kinds.append(("-", (int(difference.group(1)), int(difference.group(2)))))
            else:
                return None
        return kinds

    def expected_cell(self, kind, rows, cell, shown):
        if kind == "TFLOP/s":
            return rounded_like(rows[0]["lesson_tflops"], cell)
        if kind == "cuBLAS":
            return rounded_like(rows[0]["reference_tflops"], cell)
        if kind == "%":
            return rounded_like(Decimal(rows[0]["ratio"]) * 100, cell[:-1]) + "%"
        if kind == "clock":
            return f"{rows[0]['sm_mhz_median']} MHz"
        first, second = (Decimal(shown[int(row["lesson"])][:-1]) for row in rows)
        if kind == "/":
            return rounded_like(first / second, cell)
        points = rounded_like(first - second, cell.lstrip("+"))
        return points if points.startswith("-") else "+" + points

    def test_every_lesson(self):
        needs(RESULTS_H100)
        current = bench_figures(read_rows(RESULTS_H100))
        checked = 0
        for readme in sorted(REPOSITORY.glob("lessons/[01][0-9]_*/README.md")):
            folder, lesson = readme.parent.name, int(readme.parent.name[:2])
            if lesson > 14:
                continue
            lines = readme.read_text().splitlines()
            for start, header in enumerate(lines):
                if not header.startswith("| shape"):
                    continue
                kinds = self.column_kinds(header, lesson)
                if not kinds:
                    continue
                for line in lines[start + 2:]:
                    if not line.startswith("|"):
                        break
                    cells = [unbold(cell) for cell in cells_of(line)]
                    shape = shape_of(cells[0])
                    self.assertIsNotNone(shape, f"{folder}: {line}")
                    # Each lesson's % of cuBLAS as this row shows it (the derived columns').
                    shown = {owners[0]: cell for cell, (kind, owners) in zip(cells[1:], kinds)
                             if kind == "%"}
                    for cell, (kind, owners) in zip(cells[1:], kinds):
                        rows = []
                        for owner in owners:
                            source = self.EARLIER_RUN.get((folder, owner))
                            figures = earlier_bench(self, source) if source else current
                            row = figures.get((owner, *shape))
                            self.assertIsNotNone(row, f"{folder}: no lesson {owner} at {line}")
                            rows.append(row)
                        self.assertEqual(cell, self.expected_cell(kind, rows, cell, shown),
                                         f"{folder}, {header}: {line}")
                        checked += 1
        self.assertGreater(checked, 0)


class ReadmeResultsTables(unittest.TestCase):
    """The README's tables of every lesson at 4096^3 and 8192^3, one per GPU, from `make bench`
    (docs/results/<gpu>.csv): per row the lesson's TFLOP/s, % of cuBLAS (of cuBLASLt with the same
    epilogue for the fused rows) and median SM clock at the two shapes."""

    HEADER = ("| # | lesson | 4096^3 TFLOP/s | % of cuBLAS | SM clock | 8192^3 TFLOP/s "
              "| % of cuBLAS | SM clock |")
    MARKERS = {"h200": "**NVIDIA H200 SXM**", "h100": "**NVIDIA H100 SXM**"}
    EPILOGUES = {"fused bias + GELU, vs cuBLASLt's GELU_BIAS epilogue": "D = gelu(A*B^T + bias)",
                 "D = A * B^T + C, vs cuBLASLt with C": "D = A*B^T + 1 * C"}

    def test_tables(self):
        readme = REPOSITORY / "README.md"
        lines = readme.read_text().splitlines()
        for model, marker in self.MARKERS.items():
            data = REPOSITORY / "docs" / "results" / f"{model}.csv"
            needs(data)
            rows = {(int(row["lesson"]), row["epilogue"], int(row["m"]), int(row["n"]),
                     int(row["k"])): row for row in read_rows(data)}
            start = next(index for index, line in enumerate(lines) if line.startswith(marker))
            header = lines.index(self.HEADER, start)
            table = []
            for line in lines[header + 2:]:
                if not line.startswith("|"):
                    break
                table.append(line)
            self.assertGreater(len(table), 10, model)
            for line in table:
                cells = [unbold(cell) for cell in cells_of(line)]
                lesson, label = int(cells[0]), cells[1]
                epilogue = self.EPILOGUES.get(label, "plain")
                shown = iter(cells[2:])
                for size in (4096, 8192):
                    row = rows[(lesson, epilogue, size, size, size)]
                    if epilogue == "plain":
                        self.assertEqual(label, row["slug"], line)
                    # TFLOP/s to a tenth, an exact half either way (the table's tool rounded in
                    # binary); the ratio as a percentage; the clock.
                    tflops = row["lesson_tflops"]
                    self.assertIn(next(shown), {rounded(tflops, 1), f"{float(tflops):.1f}"}, line)
                    self.assertEqual(next(shown), percent(row["ratio"]), line)
                    self.assertEqual(next(shown), f"{row['sm_mhz_median']} MHz", line)


    def test_lesson_15_on_the_h200(self):
        # The paragraph under the H200's table: lesson 15's ratios at the shapes it names and
        # its geometric mean over the standard sweep, from the same file.
        data = REPOSITORY / "docs" / "results" / "h200.csv"
        needs(data)
        rows = {shape_label(row): row for row in read_rows(data)
                if row["lesson"] == "15" and row["epilogue"] == "plain"}

        def shown(shape):
            return percent(rows[shape]["ratio"])

        text = prose(REPOSITORY / "README.md")
        self.assertIn(f"({shown('4096^3')} at 4096^3, {shown('8192^3')} at 8192^3)", text)
        self.assertIn(f"({shown('8192 x 8192 x 1024')} at 8192 x 8192 x 1024, "
                      f"{shown('4096 x 14336 x 4096')} at 4096 x 14336 x 4096, "
                      f"{shown('2304 x 4352 x 8192')} at 2304 x 4352 x 8192)", text)
        self.assertIn(f"{shown('1024^3')} at 1024^3 and {shown('1024 x 1024 x 8192')[:-1]}-"
                      f"{shown('1024 x 1024 x 16384')} at 1024 x 1024 x 8192 and 16384", text)
        mean = geometric_mean(row["ratio"] for row in rows.values())
        self.assertIn(f"over the {len(rows)} shapes of the standard sweep is {mean:.3f}", text)


class BranchTables(unittest.TestCase):
    """Lessons 11 and 12 on which of lessons 10 and 11 lesson 12 starts from: the geometric means
    of the paired ratios over the first nine standard shapes, and single shapes, from the two
    `make bench` runs on the H100 (e7ccc8c in docs/results/h100.csv for lessons 10 and 11; 71f85ba
    in that file as commit 401f7be wrote it)."""

    LESSON_11 = REPOSITORY / "lessons" / "11_pingpong" / "README.md"
    LESSON_12 = REPOSITORY / "lessons" / "12_cluster_multicast" / "README.md"
    FIRST_NINE = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (6144, 6144, 6144),
                  (8192, 8192, 8192), (8192, 8192, 1024), (1024, 1024, 8192), (4096, 14336, 4096),
                  (3000, 5000, 4000)]

    def runs(self):
        needs(self.LESSON_11, self.LESSON_12, RESULTS_H100)
        return {"71f85ba": earlier_bench(self), "e7ccc8c": bench_figures(read_rows(RESULTS_H100))}

    def mean(self, figures, lesson):
        ratios = [figures[(lesson, *shape)]["ratio"] for shape in self.FIRST_NINE]
        return f"{geometric_mean(ratios):.3f}"

    def test_lesson_12(self):
        runs = self.runs()
        for line in table_after(self.LESSON_12, "| figure | run | lesson 10 | lesson 11 |")[2:]:
            cells = [unbold(cell) for cell in cells_of(line)]
            commit = cells[1].split(",")[0]
            figures = runs[commit]
            if cells[0].startswith("geometric mean") or cells[0] == "the same":
                expected = [self.mean(figures, 10), self.mean(figures, 11)]
            else:
                shape = shape_of(cells[0])
                expected = [percent(figures[(lesson, *shape)]["ratio"]) for lesson in (10, 11)]
                self.assertTrue(all(figures[(lesson, *shape)]["commit"] == commit
                                    for lesson in (10, 11)), line)
            self.assertEqual(cells[2:], expected, line)

    def test_lesson_11(self):
        runs = self.runs()
        lines = table_after(self.LESSON_11, "| run | lesson 10 | lesson 11 |")[2:]
        self.assertEqual(len(lines), 2)
        for line in lines:
            cells = [unbold(cell) for cell in cells_of(line)]
            commit = re.search(r"commit (\w+)", cells[0]).group(1)
            self.assertEqual(cells[1:], [self.mean(runs[commit], 10), self.mean(runs[commit], 11)],
                             line)


class ClusterCostTable(unittest.TestCase):
    """Lesson 12's table of median times against lesson 10's, from the 71f85ba bench: lesson 12's
    rows of docs/results/h100.csv and lesson 10's of that run (its file as commit 401f7be wrote
    it); the tiles and slices follow from the shape (lesson 10's 128 x 256 tiles, 64-deep slices)."""

    HEADER = "| shape | 10 ms | 12 ms | 12 vs 10 | tiles (lesson 10 blocks) | slices per tile |"
    LESSON_12 = REPOSITORY / "lessons" / "12_cluster_multicast" / "README.md"

    def test_rows(self):
        needs(self.LESSON_12, RESULTS_H100)
        tens = earlier_bench(self)
        twelves = bench_figures(read_rows(RESULTS_H100))
        lines = table_after(self.LESSON_12, self.HEADER)[2:]
        self.assertEqual(len(lines), 9)
        for line in lines:
            cells = cells_of(line)
            m, n, k = shape_of(cells[0])
            ten, twelve = tens[(10, m, n, k)], twelves[(12, m, n, k)]
            self.assertEqual(twelve["commit"], "71f85ba", line)
            change = Decimal(twelve["lesson_median_ms"]) / Decimal(ten["lesson_median_ms"]) - 1
            shown = rounded(change * 100, 1)
            self.assertEqual(cells[1:], [ten["lesson_median_ms"], twelve["lesson_median_ms"],
                                         ("" if shown.startswith("-") else "+") + shown + "%",
                                         str(-(-m // 128) * -(-n // 256)), str(k // 64)], line)


class RegisterStudyTable(unittest.TestCase):
    """Lesson 06's registers at five tile shapes, from what `make resources` wrote of ptxas's report
    (profiles/sweeps/ptxas_05_06.csv): each row's kernel is lessonNN's TileShape<block rows, block
    columns, warp rows, warp columns, stages>."""

    HEADER = ("| kernel | block tile | warp tile | stages | registers | stack B | spill stores B "
              "| spill loads B |")
    LESSON_06 = REPOSITORY / "lessons" / "06_fragment_interleaving" / "README.md"
    DATA = SWEEPS / "ptxas_05_06.csv"

    def test_rows(self):
        needs(self.LESSON_06, self.DATA)
        kernels = {row["kernel"]: row for row in read_rows(self.DATA)}
        lines = table_after(self.LESSON_06, self.HEADER)[2:]
        self.assertEqual(len(lines), len(kernels))
        for line in lines:
            cells = [unbold(cell) for cell in cells_of(line)]
            lesson = "lesson" + cells[0].split()[1]
            shape = ", ".join(cells[1].split(" x ") + cells[2].split(" x ") + [cells[3]])
            row = kernels[f"{lesson}::gemm_kernel<{lesson}::TileShape<{shape}> >"]
            self.assertEqual(cells[4:], [row["registers"], row["stack_bytes"],
                                         row["spill_store_bytes"], row["spill_load_bytes"]], line)
        # The table of the two buffers' price: lesson 05's and lesson 06's registers at the two
        # warp tiles of the 128 x 128 block tile, and the sentence on 64 x 64's spills.
        def kernel(lesson, warp_tile):
            return kernels[f"lesson{lesson}::gemm_kernel<lesson{lesson}::TileShape<128, 128, "
                           f"{warp_tile}, 3> >"]

        price = table_after(self.LESSON_06, "| warp tile | accumulators | one buffer (A + B) "
                                            "| two buffers | lesson 05 | lesson 06 |")[2:]
        for line, warp_tile in zip(price, ("64, 64", "64, 32")):
            cells = [unbold(cell) for cell in cells_of(line)]
            five, six = kernel("05", warp_tile), kernel("06", warp_tile)
            spills = int(six["spill_store_bytes"]) > 0
            self.assertEqual(cells[4:], [five["registers"], six["registers"] + (" and spills" if
                                                                                 spills else "")],
                             line)
        spilled = kernel("06", "64, 64")
        text = prose(self.LESSON_06)
        self.assertIn(f"a {spilled['stack_bytes']}-byte stack frame, {spilled['spill_store_bytes']} "
                      f"bytes of spill stores and {spilled['spill_load_bytes']} of spill loads", text)
        sample = next(iter(kernels.values()))
        self.assertIn(f"(nvcc {sample['nvcc']}, target sm_90a, commit {sample['commit']}, "
                      f"{sample['date']},", text)


class LessonsByShapeTables(unittest.TestCase):
    """Lessons 03 and 04's tables of lessons by shape (`make bench`, docs/results/h100.csv): a row
    per lesson ("02 smem_tiling"), and per shape a "<shape> TFLOP/s" column followed by its "%"
    and, where there is one, its "MHz"."""

    HEADERS = (("03_tensor_cores", "| lesson | 4096^3 TFLOP/s | % | 8192^3 TFLOP/s | % "
                                   "| 1024^3 TFLOP/s | % |"),
               ("04_swizzled_smem", "| lesson | 4096^3 TFLOP/s | % | MHz | 8192^3 TFLOP/s | % | MHz "
                                    "| 2048^3 TFLOP/s | % | MHz |"))
    def test_tables(self):
        needs(RESULTS_H100)
        figures = bench_figures(read_rows(RESULTS_H100))
        for folder, header in self.HEADERS:
            readme = REPOSITORY / "lessons" / folder / "README.md"
            if not readme.exists():
                continue
            heads = cells_of(header)[1:]
            for line in table_after(readme, header)[2:]:
                cells = [unbold(cell) for cell in cells_of(line)]
                lesson = int(cells[0].split()[0])
                shape = None
                for head, cell in zip(heads, cells[1:]):
                    if head.endswith(" TFLOP/s"):
                        shape = head[:-len(" TFLOP/s")]
                    row = figures.get((lesson, *shape_of(shape)))
                    self.assertIsNotNone(row, f"{folder}: {line}")
                    if head.endswith(" TFLOP/s"):
                        expected = rounded_like(row["lesson_tflops"], cell)
                    elif head == "%":
                        expected = percent(row["ratio"])
                    else:
                        expected = row["sm_mhz_median"]
                    self.assertEqual(cell, expected, f"{folder}, {head}: {line}")


class SettingSweepTables(unittest.TestCase):
    """A lesson's sweep of one setting (`make sweep GROUPS=...`): a table "| shape | <setting> |
    TFLOP/s | % of cuBLAS | SM clock |" whose source the lines above it link
    (profiles/sweeps/NAME.csv). Each row is the variant "lessonNN <key>=<value>" of its shape (a
    blank shape: the row above's), marked "(default)" where the file says it is the default."""

    HEADER = re.compile(r"^\| shape \| ([a-z ]+) \| TFLOP/s \| % of cuBLAS \| SM clock \|$")
    SOURCE = re.compile(r"profiles/sweeps/(\w+\.csv)")

    def test_every_sweep_table(self):
        checked = 0
        for readme in sorted(REPOSITORY.glob("lessons/*/*.md")):
            lines = readme.read_text().splitlines()
            for start, header in enumerate(lines):
                if not self.HEADER.match(header):
                    continue
                sources = set(self.SOURCE.findall("\n".join(lines[max(0, start - 8):start])))
                self.assertEqual(len(sources), 1, f"{readme.parent.name}: {header}: its file?")
                data = SWEEPS / sources.pop()
                needs(data)
                variants = {}
                for row in read_rows(data):
                    value = row["variant"].split()[1].split("=")[1]
                    variants[(shape_label(row), value)] = row
                shape = None
                for line in lines[start + 2:]:
                    if not line.startswith("|"):
                        break
                    cells = cells_of(line)
                    shape = unbold(cells[0]) or shape
                    setting = unbold(cells[1])
                    default = setting.endswith(" (default)")
                    value = setting.removesuffix(" (default)").replace(" ", "")
                    row = variants.get((shape, value))
                    where = f"{readme.parent.name}: {line}"
                    self.assertIsNotNone(row, f"no variant {value} at {shape} in {data.name}: {where}")
                    self.assertEqual(default, row["default"] == "yes", where)
                    self.assertEqual(cells[2:], [rounded_like(row["lesson_tflops"], cells[2]),
                                                 percent(row["ratio"]),
                                                 f"{row['sm_mhz_median']} MHz"], where)
                    checked += 1
        self.assertGreater(checked, 0)


class SweepMatrices(unittest.TestCase):
    """Sweeps laid out as a matrix: each case names the README and the table's header, the file,
    the layout, and how a label names the file's variant (a format for the number the label starts
    with, or a map of the labels, bold marks left out).
      columns     a column per variant, a row per shape, cells "TFLOP/s, %, MHz" (or with " / "
                  between, or "TFLOP/s" after the first figure, or no TFLOP/s at all)
      rows        a row per variant, a column per shape, the same cells
      one shape   a row per variant, the columns TFLOP/s, %, clock of the shape named"""

    CELL = re.compile(r"^(?:([\d.]+)(?: TFLOP/s)?(?:, | / ))?([\d.]+%)(?:, | / )(\d+)(?: MHz)?$")
    NUMBER = re.compile(r"(\d+)")
    CASES = (
        ("06_fragment_interleaving",
         "| shape | 05, 4 warps of 64 x 64 (default) | 05, 8 warps of 64 x 32 "
         "| 06, 8 warps of 64 x 32 |", "interleave_05_06.csv", "columns",
         {"05, 4 warps of 64 x 64 (default)": "lesson05 warp=64x64",
          "05, 8 warps of 64 x 32": "lesson05 warp=64x32",
          "06, 8 warps of 64 x 32": "lesson06 warp=64x32"}),
        ("09_warp_specialization",
         "| shape | 2 stages (64 KB) | 3 stages (96 KB) | **4 stages** (128 KB, the default) "
         "| 5 stages (160 KB) |", "stages_09.csv", "columns", "lesson09 stages={}"),
        ("10_cooperative", "| shape | 3 stages (144 KB) | **4 stages** (192 KB, the default) |",
         "stages_10.csv", "columns", "lesson10 stages={}"),
        ("11_pingpong",
         "| shape | after issue, G = 1 | after retire, G = 1 | after issue, G = 8 "
         "| after retire, G = 8 |", "handover_11.csv", "columns",
         {f"after {place}, G = {group}": f"lesson11 hand-over=after-{place} group={group}"
          for place in ("issue", "retire") for group in (1, 8)}),
        ("11_pingpong", "| shape | G = 1 (row-major) | **G = 8** (the default) | G = 16 |",
         "raster_11.csv", "columns",
         {"G = 1 (row-major)": "lesson11 group=1", "G = 8 (the default)": "lesson11 group=8",
          "G = 16": "lesson11 group=16"}),
        ("11_pingpong", "| tile, stages | 4096^3 | 8192^3 | 6144^3 |", "tiles_11.csv", "rows",
         {"128 x 128, 6 (default)": "lesson11 tile=128x128 stages=6",
          "128 x 128, 5": "lesson11 tile=128x128 stages=5",
          "64 x 256, 5": "lesson11 tile=64x256 stages=5",
          "64 x 256, 4": "lesson11 tile=64x256 stages=4"}),
        ("13_persistent_raster", "| G | 4096^3 | 8192^3 | 6144^3 |", "raster_13.csv", "rows",
         "lesson13 group={}"),
        ("13_persistent_raster", "| grid | 4096^3 | 8192^3 | 6144^3 |", "grid_13.csv", "rows",
         {"66 clusters (default)": "lesson13 clusters=all",
          "64 clusters": "lesson13 clusters=64"}),
        ("14_stream_k",
         "| order of a cluster's parts | 4224^3 TFLOP/s | % of cuBLAS (paired) "
         "| median SM clock |", "order_14.csv", "one shape 4224^3",
         {"last tile to first (the lesson's)": "lesson14 parts=last-to-first",
          "first tile to last": "lesson14 parts=first-to-last"}),
    )

    def variant_of(self, label, naming):
        label = unbold(label)
        if isinstance(naming, dict):
            return naming[label]
        return naming.format(self.NUMBER.match(label).group(1))

    def check_cell(self, cell, row, where):
        figures = self.CELL.match(unbold(cell))
        self.assertIsNotNone(figures, where)
        tflops, share, clock = figures.groups()
        expected_tflops = None if tflops is None else rounded_like(row["lesson_tflops"], tflops)
        self.assertEqual((tflops, share, clock),
                         (expected_tflops, percent(row["ratio"]), row["sm_mhz_median"]), where)

    def test_cases(self):
        for folder, header, name, layout, naming in self.CASES:
            readme, data = REPOSITORY / "lessons" / folder / "README.md", SWEEPS / name
            if not (readme.exists() and data.exists()):
                continue
            rows = {(row["variant"], shape_label(row)): row for row in read_rows(data)}
            lines = table_after(readme, header)
            heads = cells_of(lines[0])[1:]
            for line in lines[2:]:
                cells = cells_of(line)
                where = f"{folder}, {header}: {line}"
                if layout.startswith("one shape"):
                    row = rows.get((self.variant_of(cells[0], naming), layout.split()[-1]))
                    self.assertIsNotNone(row, where)
                    self.check_cell(", ".join(cells[1:]).replace(" MHz", ""), row, where)
                    continue
                for head, cell in zip(heads, cells[1:]):
                    if layout == "columns":
                        key = (self.variant_of(head, naming), unbold(cells[0]))
                    else:
                        key = (self.variant_of(cells[0], naming), head)
                    row = rows.get(key)
                    self.assertIsNotNone(row, f"no {key} in {name}: {where}")
                    self.check_cell(cell, row, where)


class CompareTables(unittest.TestCase):
    """The tables of the lessons' READMEs that `make compare A=AA B=BB` printed from the committed
    reference profiles: headed "| metric | lesson AA | lesson BB |" or "| what | lesson AA | lesson BB
    | BB vs AA |", under a paragraph that names the commit the profiles were measured at. Each row's
    label is a metric's label in profiles/metrics.csv (a unit in parentheses may follow it), its
    values are what the reference files of that commit hold (profiles/reference/<gpu>/lessonNN.csv,
    to the digits shown), and its change is what compare.py says of them."""

    HEADER = re.compile(r"^\| (metric|what) \| lesson (\d\d) \| lesson (\d\d) \|(?: (\d\d) vs (\d\d) \|)?$")
    COMMIT = re.compile(r"commit ([0-9a-f]{7})")
    UNIT = re.compile(r" \((ns|%|bytes)\)$")

    def tables(self):
        found = []
        for readme in sorted((REPOSITORY / "lessons").glob("*/README.md")):
            lines = readme.read_text().splitlines()
            for index, line in enumerate(lines):
                header = self.HEADER.match(line)
                if not header:
                    continue
                above = " ".join(lines[max(0, index - 6):index])
                commits = self.COMMIT.findall(above)
                end = index + 2
                while end < len(lines) and lines[end].startswith("|"):
                    end += 1
                found.append((readme, index + 1, header, commits[-1] if commits else None,
                              lines[index + 2:end]))
        return found

    @staticmethod
    def reference(lesson, commit):
        """The reference profile of `lesson` measured at `commit`, whichever GPU's folder has it."""
        for path in sorted((REPOSITORY / "profiles" / "reference").glob(f"*/lesson{lesson}.csv")):
            profile = compare.read_reference(path, lesson)
            if profile.info.get("commit") == commit:
                return profile
        return None

    def metric_of(self, label, curated):
        """The metric of `curated` (profiles/metrics.csv) whose label the row's is, with or
        without a unit or an abbreviation in parentheses at the end of either."""
        label = label.lstrip("* ").replace("`", "")
        for candidate in (label, self.UNIT.sub("", label)):
            for metric in curated:
                if candidate in (metric.label, re.sub(r" \([^)]*\)$", "", metric.label)):
                    return metric
        return None

    @staticmethod
    def shown(cell):
        """The number a cell shows, and its decimals: "1,418,656" (1418656, 0), "61.85" (61.85,
        2), "1.58%" (1.58, 2)."""
        text = cell.replace(",", "").rstrip("%").strip()
        decimals = len(text.partition(".")[2])
        return Decimal(text), decimals

    def test_every_compare_table(self):
        tables = self.tables()
        if not tables:
            self.skipTest("no lesson with a make compare table in this tree")
        curated = compare.load_curated_metrics()
        for readme, number, header, commit, rows in tables:
            place = f"{readme.relative_to(REPOSITORY)}:{number}"
            self.assertIsNotNone(commit, f"{place}: the paragraph above names no commit")
            first, second = header[2], header[3]
            profiles = [self.reference(first, commit), self.reference(second, commit)]
            self.assertTrue(all(profiles),
                            f"{place}: no reference profile of lessons {first} and {second} "
                            f"at commit {commit}")
            self.assertGreater(len(rows), 0, place)
            for row in rows:
                cells = cells_of(row)
                metric = self.metric_of(cells[0], curated)
                self.assertIsNotNone(metric, f"{place}: '{cells[0]}' is no metric's label")
                values = [profile.number(metric.name) for profile in profiles]
                for cell, value in zip(cells[1:3], values):
                    shown, decimals = self.shown(cell)
                    self.assertEqual(shown, Decimal(rounded(Decimal(str(value)), decimals)),
                                     f"{place}: {cells[0]}: {cell} against {value} in the "
                                     f"reference at {commit}")
                if header[4]:
                    self.assertEqual(cells[3], compare.describe_change(*values, metric.better),
                                     f"{place}: {cells[0]}")


class Lesson15Tables(unittest.TestCase):
    """Lesson 15 on the H100: its results against lesson 14 (docs/results/h100.csv, `make
    bench`), its fused epilogues before the loader (fused_epilogue_15.csv) and its stages and
    buffers (tuning_15.csv). Rows may be in any order and any subset of the file's."""

    def rows_match(self, header, expected_by_label):
        lines = table_after(LESSON_15, header)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            label = unbold(cells_of(line)[0])
            self.assertIn(label, expected_by_label, f"lesson 15's table: {line}")
            self.assertEqual(unbold(line), expected_by_label[label])

    def test_results_against_lesson_14(self):
        needs(LESSON_15, RESULTS_H100)
        figures = bench_figures(read_rows(RESULTS_H100))
        expected = {}
        for (lesson, *shape), row in figures.items():
            if lesson != 15:
                continue
            label = shape_label(row)
            lesson_14 = float(figures[(14, *shape)]["ratio"])
            cells = [label, f"{float(row['lesson_tflops']):.1f}", percent(row["ratio"]),
                     f"{float(row['ratio']) / lesson_14:.2f}x", f"{row['sm_mhz_median']} MHz"]
            expected[label] = table_line(cells)
        self.rows_match("| shape | lesson 15 TFLOP/s | % of cuBLAS | vs lesson 14 | SM clock |",
                        expected)

    def test_fused_epilogues_before_the_loader(self):
        data = SWEEPS / "fused_epilogue_15.csv"
        needs(LESSON_15, data)
        ratios = {}
        for row in read_rows(data):
            if row["lesson"] == "15":
                ratios.setdefault(shape_label(row), {})[row["epilogue"]] = row["ratio"]
        expected = {}
        for label, by_epilogue in ratios.items():
            if len(by_epilogue) == 3:
                cells = [label] + [percent(by_epilogue[epilogue]) for epilogue in
                                   ("plain", "D = gelu(A*B^T + bias)", "D = A*B^T + 1 * C")]
                expected[label] = table_line(cells)
        self.rows_match("| shape | plain | gelu(A B^T + bias) | A B^T + C |", expected)

    def test_stages_and_buffers(self):
        data = SWEEPS / "tuning_15.csv"
        needs(LESSON_15, data)
        ratios = {}
        for row in read_rows(data):
            settings = dict(part.split("=") for part in row["variant"].split()[1:])
            buffers = "1 buffer" if settings["buffers"] == "1" else f"{settings['buffers']} buffers"
            label = f"{settings['stages']} stages, {buffers}, group {settings['group']}"
            if row["default"] == "yes":
                label += " (the lesson's)"
            ratios.setdefault(label, {})[shape_label(row)] = row["ratio"]
        expected = {label: table_line([label] + [percent(by_shape[shape]) for shape in
                                                        ("4096^3", "8192^3", "6144^3")])
                    for label, by_shape in ratios.items()}
        # The lesson's own row names its setting in bold and says so after it.
        lines = table_after(LESSON_15, "| configuration | 4096^3 | 8192^3 | 6144^3 |")[2:]
        self.assertEqual(sorted(unbold(line) for line in lines), sorted(expected.values()))


class Lesson15ProfileMoves(unittest.TestCase):
    """Lesson 15's "What moved in the profile": lessons 14 and 15 in the H100's committed
    references (profiles/reference/h100/), each figure in the unit the list shows."""

    REFERENCES = REPOSITORY / "profiles" / "reference" / "h100"

    def test_moves(self):
        needs(LESSON_15, self.REFERENCES / "lesson14.csv", self.REFERENCES / "lesson15.csv")
        before, after = (compare.read_reference(self.REFERENCES / f"lesson{lesson}.csv", lesson)
                         for lesson in ("14", "15"))

        def move(metric, shown):
            return f"{shown(before.number(metric))} -> {shown(after.number(metric))}"

        def count(value):
            return f"{value:,.0f}"

        text = prose(LESSON_15)
        duration = "gpu__time_duration.sum"
        change = after.number(duration) / before.number(duration) - 1
        for figure in (
                f"TMA store instructions {move('smsp__sass_inst_executed_op_tma_st.sum', count)}",
                "tensor pipe busy " + move(
                    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                    lambda v: f"{v:.2f}%"),
                f"kernel duration {move(duration, count)} ns ({change * 100:.1f}%)",
                "long-scoreboard stalls " + move(
                    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                    lambda v: f"{v:.2f}"),
                "dynamic shared memory "
                f"{move('launch__shared_mem_per_block_dynamic', count)} bytes",
                "shared-memory store bank conflicts "
                f"{move('l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum', count)}."):
            self.assertIn(figure, text)


class PlainLoaderSentences(unittest.TestCase):
    """The plain product before and after lesson 15's loader of C and the bias, one run of both
    builds (plain_16_h200_loader.csv): the geometric means that lesson 15's README and lesson 16's
    measurements.md give."""

    DATA = SWEEPS / "plain_16_h200_loader.csv"

    def test_geometric_means(self):
        needs(LESSON_15, self.DATA)
        by_commit = {}
        for row in read_rows(self.DATA):
            by_commit.setdefault(row["commit"], []).append(row["ratio"])
        before, after = (f"{geometric_mean(by_commit[commit]):.3f}"
                         for commit in ("0f3e853", "895fae6"))
        self.assertIn(f"geometric mean {after} with it and {before} before, of cuBLAS over the "
                      f"standard sweep", prose(LESSON_15))
        self.assertEqual(before, after, "the pages say the two are level")
        self.assertIn(f"(geometric mean {after} of cuBLAS both before and after:",
                      prose(LESSON_16_MEASURED))


class Lesson16BenchTables(unittest.TestCase):
    """Lesson 16's `make bench` on the H100 (bench_16_plain_h100.csv) and the H200
    (bench_16_h200.csv): the table of the standard and held-out shapes, and the workload set's
    ratios per layer with their geometric mean per token count (the plain product's rows)."""

    HELD_OUT = " (held out)"
    LAYERS = ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (10240, 8192),
              (8192, 8192), (57344, 8192), (8192, 28672))
    WORKLOAD_HEADER = ("| tokens | 8B QKV | 8B O | 8B gate-up | 8B down | 70B QKV | 70B O "
                       "| 70B gate-up | 70B down | geometric mean |")

    def plain_rows(self, data):
        needs(LESSON_16, data)
        rows = [row for row in read_rows(data) if row["epilogue"] == "plain"]
        self.assertTrue(all(row["check"] == "pass" for row in rows))
        return rows

    def check_shapes(self, page, header, data, figures_of):
        # A shape of the standard sweep that is also a workload (8192^3) is timed twice: the table
        # gives the first run, the standard sweep's.
        by_label = {}
        for row in self.plain_rows(data):
            by_label.setdefault(shape_label(row), row)
        lines = table_after(page, header)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            label = cells_of(line)[0]
            shape = label[:-len(self.HELD_OUT)] if label.endswith(self.HELD_OUT) else label
            self.assertIn(shape, by_label, f"lesson 16's table: {line}")
            row = by_label[shape]
            self.assertEqual(unbold(line), table_line([label] + figures_of(row)))

    def check_workloads(self, page, data, first_line):
        ratios = {(int(row["m"]), int(row["n"]), int(row["k"])): float(row["ratio"])
                  for row in self.plain_rows(data)}
        lines = table_after(page, first_line)
        self.assertEqual(lines[0], self.WORKLOAD_HEADER)
        for line in lines[2:]:
            tokens = int(cells_of(line)[0])
            row = [ratios[(tokens, n, k)] for n, k in self.LAYERS]
            mean = geometric_mean(row)
            self.assertEqual(unbold(line), table_line(
                [str(tokens)] + [f"{ratio:.3f}" for ratio in row] + [f"{mean:.3f}"]))

    def test_h100_shapes(self):
        self.check_shapes(LESSON_16_MEASURED, "| shape | TFLOP/s | / cuBLAS | SM clock |",
                          SWEEPS / "bench_16_plain_h100.csv",
                          lambda row: [f"{float(row['lesson_tflops']):.1f}",
                                       percent(row["ratio"]), f"{row['sm_mhz_median']} MHz"])

    def test_h200_shapes(self):
        self.check_shapes(LESSON_16, "| shape | configuration chosen | TFLOP/s | / cuBLAS | SM clock |",
                          SWEEPS / "bench_16_h200.csv",
                          lambda row: [row["configuration"], f"{float(row['lesson_tflops']):.1f}",
                                       percent(row["ratio"]), f"{row['sm_mhz_median']} MHz"])

    def test_h100_workloads(self):
        self.check_workloads(LESSON_16_MEASURED, SWEEPS / "bench_16_plain_h100.csv",
                             "The workload set, ratio to cuBLAS per layer (M = tokens, N x K the "
                             "layer):")

    def test_h200_workloads(self):
        self.check_workloads(LESSON_16, SWEEPS / "bench_16_h200.csv",
                             "The workload set on the H200, ratio to cuBLAS per layer:")


    def test_h200_decode_rows_before_and_after_the_short_box(self):
        before = {(int(row["m"]), int(row["n"]), int(row["k"])): float(row["ratio"])
                  for row in self.plain_rows(SWEEPS / "bench_16_h200_7dba6e5.csv")}
        after = {(int(row["m"]), int(row["n"]), int(row["k"])): float(row["ratio"])
                 for row in self.plain_rows(SWEEPS / "bench_15_16_h200_0d1d1d4.csv")
                 if row["lesson"] == "16"}
        header = self.WORKLOAD_HEADER.replace(" geometric mean |", "")
        lines = table_after(LESSON_16_MEASURED, header)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            tokens = int(cells_of(line)[0])
            cells = [f"{before[(tokens, n, k)]:.3f} -> {after[(tokens, n, k)]:.3f}"
                     for n, k in self.LAYERS]
            self.assertEqual(line, table_line([str(tokens)] + cells))


class LayerTables(unittest.TestCase):
    """Lesson 19's results on two and four GPUs: profiles/layer_table.py of its layer CSVs."""

    def check(self, marker, data):
        needs(LESSON_19, data)
        expected = layer_table.table(data.read_text(), rank=0, origin=data.name)
        self.assertEqual(table_after(LESSON_19, marker), expected,
                         f"lesson 19's table under {marker!r} is not "
                         f"`profiles/layer_table.py {data.relative_to(REPOSITORY)}`")

    def test_two_gpus(self):
        self.check("Two GPUs:", SWEEPS / "layer_19_h200.csv")

    def test_four_gpus(self):
        self.check("Four GPUs:", SWEEPS / "layer_19_h200x4.csv")


class NcclLatencySentence(unittest.TestCase):
    """Lesson 19's "Where each one wins": what each NCCL collective of a 64-token layer takes on
    two H200s, from the committed timelines of every variant (timeline_19_h200_variants.txt)."""

    DATA = SWEEPS / "timeline_19_h200_variants.txt"

    def test_range(self):
        needs(LESSON_19, self.DATA)
        durations, tokens = [], None
        for line in self.DATA.read_text().splitlines():
            header = re.match(r"(\d+) tokens, ", line)
            if header:
                tokens = int(header.group(1))
                continue
            span = re.match(r"\s+SMs\s+([\d.]+) \.\.\s+([\d.]+)\s+NCCL$", line)
            if span and tokens == 64:
                durations.append(float(span.group(2)) - float(span.group(1)))
        self.assertGreater(len(durations), 0)
        self.assertIn(f"each collective takes {min(durations):.1f}-{max(durations):.1f} us to move "
                      f"256 KB", prose(LESSON_19))


class Lesson19OverlappedLayer(unittest.TestCase):
    """Lesson 19's sentences on the overlapped layer: its timelines (timeline_19_h200_arriving.txt
    at dc05315; timeline_19_h200_variants.txt, the design before) and the layer's CSVs
    (layer_19_h200.csv at dc05315; layer_19_h200_fed9846.csv and layer_19_h200x4.csv before), rank
    0's rows but for the checks' errors, which are every rank's."""

    ARRIVING = SWEEPS / "timeline_19_h200_arriving.txt"
    VARIANTS = SWEEPS / "timeline_19_h200_variants.txt"
    TWO = SWEEPS / "layer_19_h200.csv"
    BEFORE = SWEEPS / "layer_19_h200_fed9846.csv"
    FOUR = SWEEPS / "layer_19_h200x4.csv"
    ERRORS = ("stream_error", "one_shot_error", "overlapped_error", "cublaslt_nccl_error")

    @staticmethod
    def bars(path, tokens, variant, rank, lane="SMs"):
        """One rank's bars of one lane at `tokens` tokens, as timeline_svg.py reads the file (a row
        per variant, rank and lane, named "<variant>: rank <r>, <lane>"), in file order."""
        chart = timeline_svg.read_timeline(path.read_text(), tokens, path.name)
        return next(row.bars for row in chart.rows
                    if row.name.startswith(variant) and row.name.endswith(f": rank {rank}, {lane}"))

    @staticmethod
    def span_of(bars, label):
        return next((bar.start, bar.end) for bar in bars if bar.label == label)

    def duration(self, bars, label):
        start, end = self.span_of(bars, label)
        return end - start

    @staticmethod
    def rank0(path):
        return {int(row["tokens"]): row for row in read_rows(path) if row["rank"] == "0"}

    @staticmethod
    def range_text(values, digits):
        return f"{min(values):.{digits}f}-{max(values):.{digits}f}"

    def setUp(self):
        needs(LESSON_19, self.ARRIVING, self.VARIANTS, self.TWO, self.BEFORE, self.FOUR)
        self.text = prose(LESSON_19)

    def test_the_timelines(self):
        def sms(tokens, variant, rank=0):
            return self.bars(self.ARRIVING, tokens, variant, rank)
        one = {t: self.duration(sms(t, "overlapped"), "GEMM 1, every row") for t in (1024, 2048)}
        stream = {t: self.duration(sms(t, "stream"), "GEMM 1") for t in (1024, 2048)}
        self.assertIn(f"one launch of the first GEMM took {one[2048]:.1f} us at 2048 tokens, "
                      f"against {stream[2048]:.1f} for stream order's on the same rows, and "
                      f"{one[1024]:.1f} at 1024 against {stream[1024]:.1f}", self.text)
        self.assertIn(f"launch takes {one[1024]:.1f} us against {stream[1024]:.1f} for stream "
                      "order's on the same rows", self.text)
        gaps = []
        for tokens in (1024, 2048, 8192):
            for rank in (0, 1):
                bars = sms(tokens, "overlapped", rank)
                last = next(i for i, bar in enumerate(bars) if bar.label == "sum of the slots")
                gaps.append(bars[last].start - bars[last - 1].end)
        self.assertIn(f"which starts {self.range_text(gaps, 1)} us after the last GEMM ends",
                      self.text)
        rank0 = sms(1024, "overlapped")
        pull = self.bars(self.ARRIVING, 1024, "overlapped", 0, lane="copy engine")
        second = (self.span_of(rank0, "GEMM 2, rows of rank 0")[1]
                  - self.span_of(rank0, "GEMM 2, rows of rank 1")[0])
        self.assertIn(f"which landed at {self.span_of(pull, 'pull rows of rank 1')[1]:.1f} us there); "
                      f"the second GEMM's two launches {second:.1f} us against "
                      f"{self.duration(sms(1024, 'stream'), 'GEMM 2'):.1f} for one; the sum of "
                      f"the slots {self.duration(rank0, 'sum of the slots'):.1f} us", self.text)
        before = sorted(bar.end - bar.start
                        for tokens in (1, 64, 2048, 8192) for rank in (0, 1)
                        for bar in self.bars(self.VARIANTS, tokens, "overlapped", rank)
                        if bar.label == "flag barrier")
        self.assertIn(f"where they took {before[0]:.1f}-{before[-2]:.1f} us each (two H200s, "
                      f"commit f6dae06, timeline_19_h200_variants.txt; one end barrier at 8192 "
                      f"tokens took {before[-1]:.0f} us)", self.text)

    def test_the_layers_ranges(self):
        two, before, four = self.rank0(self.TWO), self.rank0(self.BEFORE), self.rank0(self.FOUR)
        def values(rows, column, tokens=lambda t: True):
            return [float(row[column]) for t, row in rows.items() if tokens(t)]
        text = self.text
        self.assertIn(f"({self.range_text(values(two, 'layer_over_stream'), 2)} of it on two GPUs, "
                      f"{self.range_text(values(four, 'layer_over_stream'), 2)} on four)", text)
        self.assertIn(f"({self.range_text(values(two, 'layer_over_cublaslt'), 2)} on two, "
                      f"{self.range_text(values(four, 'layer_over_cublaslt'), 2)} on four)", text)
        small = lambda t: t <= 64
        self.assertIn(f"{self.range_text(values(two, 'overlapped_over_stream', small), 2)} times "
                      f"slower than stream order at 1-64 tokens on two GPUs "
                      f"({self.range_text(values(four, 'overlapped_over_stream', small), 1)} on four",
                      text)
        self.assertIn(f"{self.range_text(values(two, 'one_shot_over_stream', small), 2)} of stream "
                      f"order at 1-64 tokens on two GPUs, "
                      f"{self.range_text(values(two, 'one_shot_over_stream', lambda t: 256 <= t <= 512), 2)}"
                      f" at 256-512 ("
                      f"{self.range_text(values(four, 'one_shot_over_stream', lambda t: t <= 512), 2)}"
                      " on four)", text)
        large = lambda t: t >= 1024
        self.assertIn(f"{self.range_text(values(two, 'overlapped_over_stream', large), 2)} of stream "
                      f"order on two GPUs "
                      f"({self.range_text(values(before, 'overlapped_over_stream', large), 2)} at "
                      "fed9846", text)
        self.assertIn(f"met from 2048 tokens up on two GPUs "
                      f"({self.range_text(values(two, 'layer_over_gemms_alone', lambda t: t >= 2048), 3)})"
                      f" and missed at 1024 ({float(two[1024]['layer_over_gemms_alone']):.3f})", text)
        self.assertIn(f"At fed9846 the same two GPUs gave "
                      f"{self.range_text(values(before, 'layer_over_gemms_alone', large), 2)} from "
                      f"1024 up", text)
        self.assertIn(f"at fed9846: {self.range_text(values(four, 'layer_over_gemms_alone', large), 2)}"
                      " from 1024 up", text)
        self.assertIn(f"At 1-64 tokens the layer is "
                      f"{self.range_text(values(two, 'layer_over_gemms_alone', small), 2)} times its "
                      "GEMMs alone on two GPUs", text)
        for path, marker in ((self.TWO, "(worst normalized error {}; a rank"),
                             (self.FOUR, "worst normalized error {})")):
            errors = [float(row[column]) for row in read_rows(path) for column in self.ERRORS
                      if float(row[column]) > 0]
            self.assertIn(marker.format(self.range_text(errors, 2)), text)


class Lesson19BandExercise(unittest.TestCase):
    """Lesson 19's exercise on the band of the first GEMM's grid: its figures are
    arriving_band_19_h200.csv's (rank 0, as the program printed them)."""

    DATA = SWEEPS / "arriving_band_19_h200.csv"

    def test_figures(self):
        needs(LESSON_19, self.DATA)
        ratio = {(row["band"], int(row["tokens"])): row["layer_over_gemms_alone"]
                 for row in read_rows(self.DATA)}
        own, eight = "one rank's rows", "8 cluster rows"
        self.assertIn(f"the layer over its GEMMs alone {ratio[(own, 1024)]} and {ratio[(own, 2048)]} "
                      f"with bands of one rank's rows, {ratio[(eight, 1024)]} and "
                      f"{ratio[(eight, 2048)]} with bands of 8, and {ratio[(own, 8192)]} against "
                      f"{ratio[(eight, 8192)]} at 8192 tokens", prose(LESSON_19))


class LayerTableTool(unittest.TestCase):
    """profiles/layer_table.py refuses what it cannot read, in one line."""

    @staticmethod
    def one_row(**values):
        """A file of the columns the tool needs and one row: 1 in each, but for `values`."""
        row = {column: "1" for column in sorted(layer_table.NEEDED)} | values
        return ",".join(row) + "\n" + ",".join(row.values()) + "\n"

    def test_a_file_without_the_columns(self):
        with self.assertRaisesRegex(layer_table.LayerTableError, "needs the columns"):
            layer_table.table("tokens,rank\n1,0\n")

    def test_a_variant_it_does_not_know(self):
        with self.assertRaisesRegex(layer_table.LayerTableError, "no variant called 'two-shot'"):
            layer_table.table(self.one_row(rank="0", layer="two-shot"))

    def test_no_rows_of_the_rank(self):
        with self.assertRaisesRegex(layer_table.LayerTableError, "no rows of rank 0"):
            layer_table.table(self.one_row(rank="1", layer="stream"))


class LayerDesignHistory(unittest.TestCase):
    """Lesson 19's earlier measurements of the overlapped layer: the two designs on four H100s
    (tensor_parallel_19_h100.csv), the first, chunk-major design on one, two and four H200s at
    75a002f, and the layer alone at 4a7ee76 on two and four H200s (tensor_parallel_19_h200.csv).
    Each row is rank 0's row of its GPUs, design, chunks and tokens in the file."""

    ALONE_HEADER = ("| GPUs | tokens | stream order | overlapped | cuBLASLt + NCCL | overlapped / stream "
                    "| overlapped / cuBLASLt + NCCL | stream / cuBLASLt + NCCL | SM clock (rank 0) |")

    H100_HEADER = ("| GPUs | design | chunks | tokens | stream order | overlapped | cuBLASLt + NCCL "
                   "| overlapped / stream | overlapped / cuBLASLt + NCCL | SM clock (rank 0) |")
    H200_HEADER = ("| GPUs | tokens | chunks | stream order | overlapped | cuBLASLt + NCCL "
                   "| overlapped / stream | overlapped / cuBLASLt + NCCL | stream / cuBLASLt + NCCL "
                   "| SM clock (rank 0) |")

    def check_rows(self, data, header, key, ratios, commit=None):
        """Each row of the table under `header`: its first len(key) cells name rank 0's row of
        `data` (by the columns `key`, of `commit` where given), the rest are that row's times,
        `ratios` and SM clock."""
        needs(LESSON_19, data)
        rows = {tuple(row[column] for column in key): row for row in read_rows(data)
                if row["rank"] == "0" and commit in (None, row["commit"])}
        lines = table_after(LESSON_19, header)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            cells = [unbold(cell) for cell in cells_of(line)]
            row = rows.get(tuple(cells[:len(key)]))
            self.assertIsNotNone(row, line)
            expected = [f"{float(row[column]):.1f}" for column in
                        ("stream_us", "overlapped_us", "cublaslt_nccl_us")]
            expected += [f"{float(row[column]):.3f}" for column in ratios]
            self.assertEqual(cells[len(key):], expected + [f"{row['sm_mhz_median']} MHz"], line)

    def test_two_designs_on_h100s(self):
        self.check_rows(SWEEPS / "tensor_parallel_19_h100.csv", self.H100_HEADER,
                        ("gpus", "design", "chunks", "tokens"),
                        ("overlapped_over_stream", "overlapped_over_cublaslt"))

    def test_chunk_major_on_h200s(self):
        self.check_rows(SWEEPS / "tensor_parallel_19_h200.csv", self.H200_HEADER,
                        ("gpus", "tokens", "chunks"),
                        ("overlapped_over_stream", "overlapped_over_cublaslt",
                         "stream_over_cublaslt"), commit="75a002f")

    def test_the_layer_alone_on_h200s(self):
        self.check_rows(SWEEPS / "tensor_parallel_19_h200.csv", self.ALONE_HEADER,
                        ("gpus", "tokens"),
                        ("overlapped_over_stream", "overlapped_over_cublaslt",
                         "stream_over_cublaslt"), commit="4a7ee76")


class DecodeSwapTable(unittest.TestCase):
    """Lesson 16's swapped operands for decode: each row's best configuration of either kind, its
    time and its ratio, and cuBLAS's time, from decode_swap_16_h200.csv; and the geometric means
    the text gives."""

    HEADER = "| shape (M x N x K) | cuBLAS us | best as given | best swapped |"
    DATA = SWEEPS / "decode_swap_16_h200.csv"

    def rows_by_shape(self):
        measured = checked_rows(self, LESSON_16_MEASURED, self.DATA)
        shapes = {}
        for row in measured:
            shapes.setdefault((row["m"], row["n"], row["k"]), []).append(row)
        return shapes

    @staticmethod
    def best(rows, swapped):
        return max((row for row in rows if ("swap" in row["variant"]) == swapped),
                   key=lambda row: float(row["ratio"]))

    @staticmethod
    def cell(row):
        return (f"`{row['variant']}` {float(row['lesson_median_ms']) * 1000:.1f} us, "
                f"{float(row['ratio']):.3f}")

    def test_rows(self):
        shapes = self.rows_by_shape()
        lines = table_after(LESSON_16_MEASURED, self.HEADER)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            shape = tuple(cells_of(line)[0].split(" x "))
            self.assertIn(shape, shapes, f"lesson 16's decode table: {line}")
            as_given, swapped = (self.best(shapes[shape], False), self.best(shapes[shape], True))
            expected = (f"| {' x '.join(shape)} | "
                        f"{float(as_given['reference_median_ms']) * 1000:.1f} | "
                        f"{self.cell(as_given)} | {self.cell(swapped)} |")
            self.assertEqual(line, expected)

    def test_geometric_means(self):
        shapes = self.rows_by_shape()
        text = prose(LESSON_16_MEASURED)
        for swapped, words in ((False, "the best configuration as given is"),
                               (True, "best swapped one")):
            ratios = [float(self.best(rows, swapped)["ratio"]) for rows in shapes.values()]
            mean = geometric_mean(ratios)
            self.assertIn(f"Over the {len(shapes)} shapes", text)
            self.assertRegex(text, f"{words} {mean:.3f}")


class ChainSentences(unittest.TestCase):
    """Lesson 17's sentences about its H100 chain (chain_17.csv), the smaller model's chain
    (chain_17_small.csv) and the H200 run before lesson 16's refit (chain_17_h200_c8093bd.csv)."""

    def test_h100_chain(self):
        data = SWEEPS / "chain_17.csv"
        needs(LESSON_17, data)
        rows = read_rows(data)
        text = prose(LESSON_17)
        saved = [float(row["stream_us"]) - float(row["dependent_us"]) for row in rows
                 if int(row["tokens"]) <= 2048]
        self.assertIn(f"saves {min(saved):.1f}-{max(saved):.1f} us per chain up to 2048 tokens",
                      text)
        self.assertIn(f"in all {min(saved):.1f}-{max(saved):.1f} us", text)
        at_128 = next(row for row in rows if row["tokens"] == "128")
        self.assertIn(f"ahead at 128 tokens ({rounded(at_128['dependent_over_cublaslt'], 3)})",
                      text)
        small = [row for row in rows if int(row["tokens"]) <= 512]
        over = [float(row["dependent_over_stream"]) for row in small]
        self.assertIn(f"Measured {min(over):.3f} to {max(over):.3f}", text)
        dependent = [float(row["dependent_us"]) for row in small]
        self.assertIn(f"of a dependent chain of {min(dependent):.0f}-{max(dependent):.0f} us", text)
        every = [float(row["dependent_over_stream"]) for row in rows]
        self.assertIn(f"at all seven counts ({min(every):.3f}-{max(every):.3f})", text)

    def test_smaller_model(self):
        data = SWEEPS / "chain_17_small.csv"
        needs(LESSON_17, data)
        by_tokens = {int(row["tokens"]): row for row in read_rows(data)}
        text = prose(LESSON_17)
        at_64, at_512, at_4096 = by_tokens[64], by_tokens[512], by_tokens[4096]
        self.assertIn(f"the dependent chain takes {rounded(at_64['dependent_over_stream'], 3)} of "
                      f"stream order at 64 tokens and **{rounded(at_512['dependent_over_stream'], 3)}"
                      f"** at 512", text)
        self.assertIn(f"the graph {rounded(at_64['graph_over_stream'], 3)} at 64", text)
        def times(row):
            return f"({float(row['dependent_us']):.1f} against {float(row['cublaslt_us']):.1f} us)"

        self.assertIn(f"takes {rounded(at_64['dependent_over_cublaslt'], 2)} times its time at 64 "
                      f"tokens {times(at_64)} and {rounded(at_512['dependent_over_cublaslt'], 2)} "
                      f"times at 512 {times(at_512)}", text)
        self.assertIn(f"and {rounded(at_4096['dependent_over_cublaslt'], 2)} times only at 4096 "
                      f"tokens", text)

    def test_h200_before_the_refit(self):
        data = SWEEPS / "chain_17_h200_c8093bd.csv"
        needs(LESSON_17, data)
        rows = read_rows(data)
        ratios = [rounded(row["dependent_over_cublaslt"], 3) for row in rows]
        self.assertIn(f"gave {', '.join(ratios[:-1])} and {ratios[-1]}: the two runs differ",
                      prose(LESSON_17))


class ChainTimelineBlock(unittest.TestCase):
    """Lesson 17's timeline: the second run of each way in timeline_17_h200.txt, each line as the
    README gives it (spaces aside), and the sentences' figures at 128 tokens."""

    DATA = SWEEPS / "timeline_17_h200.txt"
    RUN = re.compile(r"GEMM 1 +([\d.]+) \.\. +([\d.]+) us +GEMM 2 +([\d.]+) \.\. +([\d.]+) us "
                     r"+GEMM 2 starts +([+-][\d.]+) us after GEMM 1 ends")

    def test_block_and_sentences(self):
        needs(LESSON_17, self.DATA)
        runs, heading = {}, None
        for line in self.DATA.read_text().splitlines()[1:]:
            if not line.startswith("  run"):
                heading = line
            elif line.startswith("  run 2:"):
                runs[heading] = self.RUN.search(line).groups()
        text = LESSON_17.read_text()
        for heading, figures in runs.items():
            shown = re.search(re.escape(heading) + r"\n(.*)\n", text)
            self.assertIsNotNone(shown, heading)
            self.assertEqual(self.RUN.search(shown.group(1)).groups(), figures, heading)
        stream = runs["128 tokens, stream order (lesson 16):"]
        dependent = runs["128 tokens, dependent launch (lesson 17):"]
        early = -float(dependent[4])
        sooner = float(stream[3]) - float(dependent[3])
        words = prose(LESSON_17)
        self.assertIn(f"the second GEMM's first blocks start {early:.1f} us before the first GEMM "
                      f"ends", words)
        self.assertIn(f"the chain ends only {sooner:.1f} us sooner in this timeline "
                      f"({dependent[3]} against {stream[3]} us)", words)
        self.assertIn(f"(starts {early:.1f} us early)", words)


class ChainTable(unittest.TestCase):
    """Lesson 17's chain on the H100: every row of its table from chain_17.csv (what
    `lesson17 chain --csv` wrote)."""

    HEADER = ("| tokens | stream order | dependent | graph | cuBLASLt | dependent / stream "
              "| graph / stream | dependent / cuBLASLt | SM clock |")
    DATA = SWEEPS / "chain_17.csv"

    def test_rows(self):
        needs(LESSON_17, self.DATA)
        measured = read_rows(self.DATA)
        expected = []
        for row in measured:
            times = [f"{float(row[column]):.1f}"
                     for column in ("stream_us", "dependent_us", "graph_us", "cublaslt_us")]
            ratios = [f"{float(row[column]):.3f}" for column in
                      ("dependent_over_stream", "graph_over_stream", "dependent_over_cublaslt")]
            cells = [row["tokens"]] + times + ratios + [f"{row['sm_mhz_median']} MHz"]
            expected.append(table_line(cells))
        self.assertEqual(table_after(LESSON_17, self.HEADER)[2:], expected)

    def test_h200_sentences(self):
        # Lesson 17's H200 bullet (the chain at this commit's model and the run before it) and the
        # goals paragraph of lesson 16's README that quotes it.
        now, before = SWEEPS / "chain_17_h200.csv", SWEEPS / "chain_17_h200_37ecb1b.csv"
        needs(LESSON_17, now, before)
        ratios = lambda rows: ", ".join(rounded(row["dependent_over_cublaslt"], 3)
                                        for row in rows)
        rows = read_rows(now)
        over_stream = [float(row["dependent_over_stream"]) for row in rows]
        text = prose(LESSON_17)
        self.assertIn(f"takes {min(over_stream):.3f}-{max(over_stream):.3f} of stream order, and "
                      f"{ratios(rows[:-1])} and {ratios(rows[-1:])} times cuBLASLt's chain", text)
        self.assertIn(f"(`profiles/sweeps/chain_17_h200_37ecb1b.csv`) it was "
                      f"{ratios(read_rows(before)[:-1])} and {ratios(read_rows(before)[-1:])}.",
                      text)
        up_to_512 = [float(row["dependent_over_cublaslt"]) for row in rows
                     if int(row["tokens"]) <= 512]
        from_1024 = [float(row["dependent_over_cublaslt"]) for row in rows
                     if int(row["tokens"]) >= 1024]
        self.assertIn(f"{min(up_to_512):.3f}-{max(up_to_512):.3f} from 64 to 512 tokens, "
                      f"{min(from_1024):.3f}-{max(from_1024):.3f} from 1024 to 4096",
                      prose(LESSON_16))
        self.assertTrue(all(row["commit"] == "036e172" for row in rows))


class Fp8StandardTable(unittest.TestCase):
    """Lesson 18's standard sweep: every row of its table from fp8_18_standard_h200.csv (what
    `lesson18 sweep --shapes standard --csv` wrote)."""

    HEADER = ("| shape | TFLOP/s | / cuBLASLt block | / cuBLASLt per-tensor | / lesson 16 (bf16) "
              "| err/allow | chosen | best alone | SM MHz |")
    DATA = SWEEPS / "fp8_18_standard_h200.csv"
    ALONE = "alone_"

    def expected(self, row):
        alone = {column[len(self.ALONE):]: float(value) for column, value in row.items()
                 if column.startswith(self.ALONE)}
        best = max(alone, key=alone.get)
        cells = [shape_label(row), f"{float(row['lesson18_tflops']):.0f}",
                 f"{float(row['vs_block_scaled']):.3f}", f"{float(row['vs_per_tensor']):.3f}",
                 f"{float(row['vs_lesson16']):.3f}", f"{float(row['error_over_allowed']):.3f}",
                 row["configuration"], f"{best} {alone[best]:.3f}", row["sm_mhz_median"]]
        return table_line(cells)

    def test_rows(self):
        measured = checked_rows(self, LESSON_18, self.DATA)
        self.assertEqual(table_after(LESSON_18, self.HEADER)[2:],
                         [self.expected(row) for row in measured])

    def test_the_sentences(self):
        # The goal's geometric mean over M, N >= 2048, the lesson-16 ratio at 8192^3, cuBLASLt's
        # rates at 4096^3-8192^3 (lesson 18's TFLOP/s over its ratio) and the quantizer's times.
        needs(LESSON_18, self.DATA)
        by_shape = {shape_label(row): row for row in read_rows(self.DATA)}
        large = [row for row in by_shape.values() if int(row["m"]) >= 2048 and int(row["n"]) >= 2048]
        cubes = [by_shape[label] for label in ("4096^3", "6144^3", "8192^3")]

        def rates(column):
            values = [float(row["lesson18_tflops"]) / float(row[column]) for row in cubes]
            return f"{min(values):.0f}-{max(values):.0f}"

        def gemm_ms(row):
            return 2 * int(row["m"]) * int(row["n"]) * int(row["k"]) / float(row["lesson18_tflops"]) / 1e9

        text = prose(LESSON_18)
        mean = geometric_mean(row["vs_block_scaled"] for row in large)
        self.assertIn(f"| {mean:.3f} ({len(large)} shapes) |", text)
        self.assertIn(f"| {float(by_shape['8192^3']['vs_lesson16']):.3f} | missed |", text)
        self.assertIn(f"cuBLASLt reached {rates('vs_block_scaled')} TFLOP/s block-scaled and "
                      f"{rates('vs_per_tensor')} per-tensor at 4096^3-8192^3", text)
        small, big = by_shape["4096^3"], by_shape["8192^3"]
        self.assertIn(f"{float(small['quantize_ms']):.3f} ms at 4096^3 and "
                      f"{float(big['quantize_ms']):.2f} ms at 8192^3, against the GEMM's "
                      f"{gemm_ms(small):.2f} and {gemm_ms(big):.2f} ms", text)

    def test_the_workload_layers(self):
        # The sentence on the Llama layers: the geometric means, the range and the largest error
        # of fp8_18_workloads_h200.csv.
        data = SWEEPS / "fp8_18_workloads_h200.csv"
        needs(LESSON_18, data)
        measured = read_rows(data)

        def mean(column):
            return geometric_mean(row[column] for row in measured)

        block = [float(row["vs_block_scaled"]) for row in measured]
        text = prose(LESSON_18)
        self.assertIn(f"({len(measured)} shapes,", text)
        self.assertIn(f"geometric mean **{mean('vs_block_scaled'):.3f}** of cuBLASLt block-scaled "
                      f"({min(block):.3f} to {max(block):.3f}), {mean('vs_per_tensor'):.3f} of "
                      f"per-tensor, **{mean('vs_lesson16'):.3f} x lesson 16**; err/allow at most "
                      f"{max(float(row['error_over_allowed']) for row in measured):.3f}", text)


# Rows that lesson 18's two profile tables share: the row's label, the metric, and how its value is
# shown.
# How a profile table shows a metric's value: a percentage, or a ratio per instruction.
def one_decimal_percent(value):
    return f"{value:.1f}%"


def two_decimals(value):
    return f"{value:.2f}"


SHARED_PROFILE_ROWS = {
    "kernel duration": ("gpu__time_duration.sum", lambda v: f"{v / 1000:.1f} us"),
    "bytes read from DRAM": ("dram__bytes_read.sum", lambda v: f"{v / 1e6:.1f} MB"),
    "tensor pipe busy, of the active cycles": (
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        one_decimal_percent),
    "instructions executed": ("smsp__inst_executed.sum", lambda v: f"{v / 1e6:.1f} M"),
    "stall: fixed-latency wait, per issued instruction": (
        "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", two_decimals),
}


def check_metric_rows(test, page, header, rows, left, right):
    """Every row of the two-column table under `header`: a label of `rows` (its metric and how a
    value is shown), then the metric's value on each side, `left(metric)` and `right(metric)`."""
    lines = table_after(page, header)[2:]
    test.assertEqual(len(lines), len(rows))
    for line in lines:
        label = cells_of(line)[0]
        test.assertIn(label, rows, line)
        metric, shown = rows[label]
        test.assertEqual(line, table_line([label, shown(left(metric)), shown(right(metric))]))


class Fp8ProfileTable(unittest.TestCase):
    """Lesson 18's profile table: each row a curated metric of the committed H200 references of
    lessons 15 and 18 (profiles/reference/h200/), in the unit the row shows."""

    HEADER = "| what | lesson 15 (bf16, 128 x 256) | lesson 18 (e4m3, 128 x 128) |"
    REFERENCES = REPOSITORY / "profiles" / "reference" / "h200"
    ROWS = {  # beside the shared rows: the row's label, the metric, and how its value is shown
        **SHARED_PROFILE_ROWS,
        "L2 hit rate": ("lts__t_sector_hit_rate.pct", one_decimal_percent),
        "FMA pipe busy, of the active cycles": (
            "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", one_decimal_percent),
        "instructions per cycle": ("sm__inst_issued.avg.per_cycle_active", two_decimals),
        "global-load sectors requested at L1": (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", lambda v: f"{v:,.0f}"),
        "shared-memory load wavefronts": (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", lambda v: f"{v:,.0f}"),
        "stall: math pipe throttle, per issued instruction": (
            "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
            two_decimals),
    }

    def test_rows(self):
        needs(LESSON_18, self.REFERENCES / "lesson15.csv", self.REFERENCES / "lesson18.csv")
        bf16, fp8 = (compare.read_reference(self.REFERENCES / f"lesson{lesson}.csv", lesson)
                     for lesson in ("15", "18"))
        check_metric_rows(self, LESSON_18, self.HEADER, self.ROWS, bf16.number, fp8.number)


class Fp8ProfileAt8192(unittest.TestCase):
    """Lesson 18's profile at 8192^3 against lesson 16's: each row a metric of
    profiles/reference/h200/lesson18_vs_16_8192.csv (copied from the two ncu raw exports), and the
    ratios of the sentences under the table."""

    HEADER = ("| what | lesson 16 (bf16, 128 x 256, clusters of 2) "
              "| lesson 18 (e4m3, 128 x 128, alone) |")
    DATA = REPOSITORY / "profiles" / "reference" / "h200" / "lesson18_vs_16_8192.csv"
    ROWS = {  # beside the shared rows: the row's label, the metric, and how its value is shown
        **SHARED_PROFILE_ROWS,
        "SM clock": ("sm__cycles_elapsed.avg.per_second", lambda v: f"{v / 1e6:.0f} MHz"),
        "L2 throughput, of its peak": ("lts__throughput.avg.pct_of_peak_sustained_elapsed",
                                       one_decimal_percent),
        "L2 sectors read by the SMs": ("lts__t_sectors_srcunit_tex_op_read.sum",
                                       lambda v: f"{v / 1e6:.1f} M"),
        "FMA pipe busy, of the active cycles": (
            "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", one_decimal_percent),
        "issue slots used, of the active cycles": (
            "smsp__issue_active.avg.pct_of_peak_sustained_active", one_decimal_percent),
        "stall: dispatch, per issued instruction": (
            "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
            two_decimals),
    }

    def setUp(self):
        needs(LESSON_18, self.DATA)
        self.values = {row["metric"]: (float(row["lesson16"]), float(row["lesson18"]))
                       for row in read_rows(self.DATA)}

    def test_rows(self):
        check_metric_rows(self, LESSON_18, self.HEADER, self.ROWS,
                          lambda metric: self.values[metric][0],
                          lambda metric: self.values[metric][1])

    def test_sentences(self):
        text = prose(LESSON_18)
        bf16, fp8 = self.values["gpu__time_duration.sum"]
        self.assertIn(f"Lesson 18 takes {fp8 / bf16:.2f} of lesson 16's time: {bf16 / fp8:.2f} "
                      f"times its speed", text)
        busy = self.values["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"]
        self.assertIn(f"The tensor pipe idles {100 - busy[1]:.0f}% of the cycles (lesson 16's "
                      f"{100 - busy[0]:.0f}%)", text)
        l2 = self.values["lts__throughput.avg.pct_of_peak_sustained_elapsed"][1]
        goal_ns = bf16 / 1.6
        self.assertIn(f"At 1.6 times lesson 16 ({goal_ns / 1000:.0f} us) with the same bytes, L2 "
                      f"would have to run at {l2 * fp8 / goal_ns:.0f}% of its peak", text)


class Fp8MachineCodeStalls(unittest.TestCase):
    """Lesson 18's "Where, in the machine code": the table is `sass_stalls.py loop` of
    profiles/reference/h200/lesson18_sass_8192.csv, and the sentences' counts and shares are that
    file's."""

    DATA = REPOSITORY / "profiles" / "reference" / "h200" / "lesson18_sass_8192.csv"
    INTEGER = ("IMAD", "R2UR", "VIADD", "LEA", "SEL", "LOP3", "ISETP", "SHF")

    def setUp(self):
        needs(LESSON_18, self.DATA)
        self.rows = sass_stalls.read_rows(self.DATA.read_text(), self.DATA.name)
        self.lines, self.summary = sass_stalls.loop_table(self.rows)

    def test_table(self):
        self.assertEqual(table_after(LESSON_18, self.lines[0]), self.lines)

    def test_sentences(self):
        text = prose(LESSON_18)
        s = self.summary
        self.assertIn(f"holds {s['samples'] / s['kernel_samples']:.0%} of the kernel's samples "
                      f"({s['samples']:,} of {s['kernel_samples']:,}): {s['instructions']} "
                      "instructions a pass", text)
        loop = sass_stalls.hottest_loop(self.rows)
        integer = [r for r in loop if sass_stalls.opcode(r["instruction"]) in self.INTEGER]
        share = sum(r["samples"] for r in integer) / s["samples"]
        self.assertIn(f"({', '.join(self.INTEGER)}: {len(integer)} of the {s['instructions']}) "
                      f"take {share:.1%}", text)


class Fp8CostTable(unittest.TestCase):
    """Lesson 18's "What fp8 costs in accuracy": the medians of the standard sweep in the table,
    the ranges over its shapes and over the workload layers in the sentence under it."""

    HEADER = "| lesson | relative rms error vs the bf16 product |"
    STANDARD = SWEEPS / "fp8_18_standard_h200.csv"
    WORKLOADS = SWEEPS / "fp8_18_workloads_h200.csv"

    @staticmethod
    def scientific(value, digits):
        """1.66e-3, as the README writes it: `digits` after the point, no padded exponent."""
        mantissa, exponent = f"{value:.{digits}e}".split("e")
        return f"{mantissa}e{int(exponent)}"

    def spans(self, rows):
        return " and ".join(
            f"{self.scientific(min(values), 3)}-{self.scientific(max(values), 3)}"
            for values in ([float(row[column]) for row in rows]
                           for column in ("bf16_rms_error", "fp8_rms_error")))

    def test_table_and_ranges(self):
        needs(LESSON_18, self.STANDARD, self.WORKLOADS)
        standard, workloads = read_rows(self.STANDARD), read_rows(self.WORKLOADS)
        medians = [statistics.median(float(row[column]) for row in standard)
                   for column in ("bf16_rms_error", "fp8_rms_error")]
        self.assertEqual(table_after(LESSON_18, self.HEADER)[2:],
                         [table_line(["16 (bf16 operands)", self.scientific(medians[0], 2)]),
                          table_line(["18 (e4m3, 1 x 128 / 128 x 128 scales)",
                                      self.scientific(medians[1], 2)])])
        text = prose(LESSON_18)
        self.assertIn(f"(the medians of the standard sweep's {len(standard)} shapes, H200, "
                      f"{standard[0]['date']}, commit {standard[0]['commit']}), within "
                      f"{self.spans(standard)} on each of them, and {self.spans(workloads)} on the "
                      f"{len(workloads)} workload layers ({workloads[0]['commit']})", text)
        self.assertIn(f"About {medians[1] / medians[0]:.0f} times lesson 16's", text)


class Fp8AccuracyTable(unittest.TestCase):
    """Lesson 18's error against K: every row of its table, and the growth of fast accumulation's
    error, from accuracy_18_h200.csv (what `lesson18 accuracy --csv` wrote)."""

    HEADER = ("| K | lesson 18 | cuBLASLt block-scaled | cuBLASLt per-tensor "
              "| per-tensor, fast accumulation |")
    DATA = SWEEPS / "accuracy_18_h200.csv"
    COLUMNS = ("lesson18", "cublaslt_block_scaled", "cublaslt_per_tensor",
               "cublaslt_per_tensor_fast_accumulation")

    def test_rows(self):
        measured = checked_rows(self, LESSON_18, self.DATA)
        self.assertEqual(table_after(LESSON_18, self.HEADER)[2:],
                         [table_line([row["k"]] + [f"{float(row[column]):.3e}"
                                                   for column in self.COLUMNS])
                          for row in measured])

    def test_the_growth(self):
        needs(LESSON_18, self.DATA)
        longest = max(read_rows(self.DATA), key=lambda row: int(row["k"]))
        growth = (float(longest["cublaslt_per_tensor_fast_accumulation"])
                  / float(longest["cublaslt_per_tensor"]) - 1)
        self.assertIn(f"to {growth * 100:.1f}% above the promoted per-tensor sums at "
                      f"K = {longest['k']}", prose(LESSON_18))


class Fp8DescriptorFigures(unittest.TestCase):
    """Lesson 18's "Descriptors once per slice": the profile before and after
    (profile_18_8192_h200.csv, profile_18_8192_opcodes_h200.csv), the paired table (the mean of
    each variant's two rounds in descriptors_18_h200.csv) and lesson 16's same change
    (descriptors_16_h200.csv)."""

    HEADER = "| shape | before (e866440) | descriptors once per slice (1f41f6b) |"
    PROFILE = SWEEPS / "profile_18_8192_h200.csv"
    OPCODES = SWEEPS / "profile_18_8192_opcodes_h200.csv"
    PAIRED = SWEEPS / "descriptors_18_h200.csv"
    BF16 = SWEEPS / "descriptors_16_h200.csv"
    SLICES_AND_WARPS = 4096 * 64 * 8  # 8192^3 in 128 x 128 tiles: tiles x slices x consumer warps

    @staticmethod
    def mean_ratio(rows, variant, shape, configuration):
        ratios = [float(row["ratio"]) for row in rows if row["variant"] == variant
                  and shape_label(row) == shape and row["configuration"] == configuration]
        return sum(ratios) / len(ratios)

    def test_profile_sentences(self):
        needs(LESSON_18, self.PROFILE, self.OPCODES)
        metric = {row["metric"]: row for row in read_rows(self.PROFILE)}

        def value(name, side):
            return float(metric[name][side])

        instructions = "smsp__inst_executed.sum"
        tensor = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
        l2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
        latency = "smsp__average_warp_latency_per_inst_issued.ratio"
        opcodes = {row["opcode"]: int(row["warp_instructions_executed"])
                   for row in read_rows(self.OPCODES)}
        total = sum(opcodes.values())
        integer = sum(opcodes[name] for name in
                      ("LOP3", "R2UR", "IMAD", "SHF", "VIADD", "LEA", "IADD3", "MOV", "SEL"))
        text = prose(LESSON_18)
        self.assertIn(f"the tensor pipe busy {value(tensor, 'before'):.0f}% of the active cycles, "
                      f"{value(instructions, 'before') / self.SLICES_AND_WARPS:.0f} warp "
                      f"instructions per slice and consumer warp "
                      f"({value(instructions, 'before') / 1e6:.0f} M over 4,096 tiles", text)
        self.assertIn(f"each warp issuing one every {value(latency, 'before'):.1f} cycles", text)
        self.assertIn(f"the promotion's FFMAs are a third of what the kernel executes", text)
        self.assertAlmostEqual(opcodes["FFMA"] / total, 1 / 3, delta=0.01)
        self.assertIn(f"SEL) {integer / total * 100:.0f}%", text)
        after = value(instructions, "after") / self.SLICES_AND_WARPS
        self.assertIn(f"{after:.0f} instructions per slice and warp, the tensor pipe busy "
                      f"{value(tensor, 'after'):.0f}%", text)
        fewer = 1 - value(instructions, "after") / value(instructions, "before")
        self.assertIn(f"measured: {fewer * 100:.0f}% fewer instructions", text)
        self.assertIn(f"busier ({value(l2, 'after'):.0f}% of its peak, from "
                      f"{value(l2, 'before'):.0f}%)", text)
        self.assertIn(f"a consumer warp executes {after:.0f} instructions per slice, 64 of them the "
                      f"promotion's FFMAs, one every {value(latency, 'after'):.1f} cycles, and the "
                      f"tensor pipe is busy {value(tensor, 'after'):.0f}%", text)
        self.assertIn(f"whose throughput is at {value(l2, 'after'):.0f}% of its peak at 8192^3", text)

    def test_paired_table(self):
        needs(LESSON_18, self.PAIRED)
        rows = [row for row in read_rows(self.PAIRED) if row["run"] == "3"]
        expected = []
        for line in table_after(LESSON_18, self.HEADER)[2:]:
            label = cells_of(line)[0]
            shape, _, forced = label.partition(" (`")
            configuration = forced.rstrip("`)") or "128x128_c1"
            expected.append(table_line([label] + [
                f"{self.mean_ratio(rows, variant, shape, configuration):.3f}"
                for variant in ("A18", "D18")]))
        self.assertEqual(table_after(LESSON_18, self.HEADER)[2:], expected)
        self.assertEqual(len(expected), 5)

        def less_time(shape, configuration="128x128_c1"):
            return 100 * (1 - self.mean_ratio(rows, "A18", shape, configuration)
                          / self.mean_ratio(rows, "D18", shape, configuration))

        large = [less_time(shape) for shape in ("4096^3", "8192^3")]
        small = [less_time("2048^3"), less_time("1024 x 1024 x 8192", "64x128_c1")]
        self.assertIn(f"{min(large):.0f}-{max(large):.0f}% less time at 4096^3-8192^3 and "
                      f"{min(small):.0f}-{max(small):.0f}% at the smaller shapes", prose(LESSON_18))
        eight = "8192^3"
        self.assertIn(f"(0.{self.mean_ratio(rows, 'D18', eight, '128x128_c2') * 1000:.0f} against "
                      f"0.{self.mean_ratio(rows, 'D18', eight, '128x128_c1') * 1000:.0f})",
                      prose(LESSON_18))

    def test_lesson_16(self):
        needs(LESSON_18, self.BF16)
        rows = read_rows(self.BF16)
        shapes = {shape_label(row) for row in rows}
        gains = [self.mean_ratio(rows, "B16", shape, configuration) /
                 self.mean_ratio(rows, "A16", shape, configuration)
                 for shape in shapes
                 for configuration in {row["configuration"] for row in rows
                                       if shape_label(row) == shape}]
        self.assertIn(f"({min(gains):.2f}-{max(gains):.2f} of before at {len(shapes)} shapes, "
                      f"`profiles/sweeps/descriptors_16_h200.csv`)", prose(LESSON_18))


class Fp8WideTileSentence(unittest.TestCase):
    """Lesson 18's "Tried and left out: 128 x 256 tiles", from wide_tile_18_h200.csv."""

    DATA = SWEEPS / "wide_tile_18_h200.csv"

    def test_the_sentence(self):
        needs(LESSON_18, self.DATA)
        runs = {(shape_label(row), row["configuration"]): row for row in read_rows(self.DATA)}

        def ratio(shape, configuration):
            return runs[(shape, configuration)]["ratio"]

        def mhz(configuration):
            return runs[("8192^3", configuration)]["sm_mhz_median"]

        text = prose(LESSON_18)
        self.assertIn(f"at 8192^3 {ratio('8192^3', '128x256_c1_s32')}, with clusters of two "
                      f"{ratio('8192^3', '128x256_c2_s32')}, against `128x128_c1`'s "
                      f"{ratio('8192^3', '128x128_c1')}, at a higher clock ({mhz('128x256_c1_s32')} "
                      f"and {mhz('128x256_c2_s32')} against {mhz('128x128_c1')} MHz", text)
        self.assertIn(f"at 4096^3 {ratio('4096^3', '128x256_c1_s32')} and "
                      f"{ratio('4096^3', '128x256_c2_s32')} against {ratio('4096^3', '128x128_c1')}",
                      text)
        self.assertTrue(all(float(row["ratio"]) < float(ratio(shape, "128x128_c1"))
                            for (shape, configuration), row in runs.items()
                            if configuration != "128x128_c1"), "slower at every shape")


class Fp8ClusterSentence(unittest.TestCase):
    """Lesson 18's "Which configuration": one block against clusters of two, each timed alone, from
    fp8_18_standard_h200_e72a132.csv."""

    DATA = SWEEPS / "fp8_18_standard_h200_e72a132.csv"

    def test_the_sentence(self):
        needs(LESSON_18, self.DATA)
        rows = read_rows(self.DATA)
        gains = [float(row["alone_128x128_c1"]) / float(row["alone_128x128_c2"]) - 1
                 for row in rows]
        faster = [gain for gain in gains if gain > 0]
        by_shape = {shape_label(row): row for row in rows}

        def pair(shape):
            row = by_shape[shape]
            return f"{float(row['alone_128x128_c1']):.3f} against {float(row['alone_128x128_c2']):.3f}"

        text = prose(LESSON_18)
        self.assertIn(f"on {len(faster)} of the {len(rows)} shapes, by "
                      f"{min(faster) * 100:.1f}-{max(faster) * 100:.1f}% (4096^3: {pair('4096^3')} "
                      f"of cuBLASLt; 8192^3: {pair('8192^3')}), and slower at 3000 x 5000 x 4000 "
                      f"({pair('3000 x 5000 x 4000')})", text)


class Lesson16FusedTables(unittest.TestCase):
    """Lesson 16's epilogue loader on the H200: each row of its table from the fused rows of the
    benches after (fused_epilogue_16_h200.csv) and before it (fused_epilogue_16_h200_before.csv),
    the plain ratio from the after file on the standard shapes and from bench_16_h200_75a002f.csv
    on the workload rows (marked *); and the table of their geometric means."""

    HEADER = ("| shape | configuration | + C, before | **+ C** | gelu(+ bias), before | gelu(+ bias) "
              "| plain / cuBLAS |")
    SUMMARY_HEADER = "| | standard shapes (9) | workload rows (15) |"
    WITH_C, GELU = "D = A*B^T + 1 * C", "D = gelu(A*B^T + bias)"

    @staticmethod
    def rows_by_shape(path, epilogue):
        # A standard shape that is also a workload (8192^3) is timed twice: the table gives the
        # second run, the workload set's.
        return {shape_label(row): row for row in read_rows(path) if row["epilogue"] == epilogue}

    def setUp(self):
        after, before = (SWEEPS / "fused_epilogue_16_h200.csv",
                         SWEEPS / "fused_epilogue_16_h200_before.csv")
        plain_workloads = SWEEPS / "bench_16_h200_75a002f.csv"
        needs(LESSON_16_MEASURED, after, before, plain_workloads)
        self.after = {kind: self.rows_by_shape(after, kind) for kind in (self.WITH_C, self.GELU, "plain")}
        self.before = {kind: self.rows_by_shape(before, kind) for kind in (self.WITH_C, self.GELU)}
        self.plain_workloads = self.rows_by_shape(plain_workloads, "plain")
        self.standard = list(self.after["plain"])

    @staticmethod
    def cell(row):
        return f"{float(row['ratio']):.3f} ({row['sm_mhz_median']})"

    def test_rows(self):
        lines = table_after(LESSON_16_MEASURED, self.HEADER)[2:]
        self.assertEqual(len(lines), len(self.after[self.WITH_C]))
        for line in lines:
            label = cells_of(line)[0]
            with_c = self.after[self.WITH_C][label]
            standard = label in self.standard
            plain = self.after["plain"][label] if standard else self.plain_workloads[label]
            self.assertEqual(line, table_line([
                label, with_c["configuration"], self.cell(self.before[self.WITH_C][label]),
                f"**{self.cell(with_c)}**", self.cell(self.before[self.GELU][label]),
                self.cell(self.after[self.GELU][label]),
                self.cell(plain) + ("" if standard else "*")]))

    def test_means(self):
        def summary(rows, labels, lowest):
            ratios = [float(rows[label]["ratio"]) for label in labels]
            mean = f"{geometric_mean(ratios):.3f}"
            return f"{mean}, lowest {min(ratios):.3f}" if lowest else mean

        groups = ([label for label in self.after[self.WITH_C] if label in self.standard],
                  [label for label in self.after[self.WITH_C] if label not in self.standard])
        self.assertEqual([len(group) for group in groups], [9, 15])
        expected = [
            ["+ C, before"] + [summary(self.before[self.WITH_C], g, False) for g in groups],
            ["**+ C**"] + [summary(self.after[self.WITH_C], g, True) for g in groups],
            ["gelu(+ bias), before"] + [summary(self.before[self.GELU], g, False) for g in groups],
            ["gelu(+ bias)"] + [summary(self.after[self.GELU], g, True) for g in groups],
        ]
        lines = table_after(LESSON_16_MEASURED, self.SUMMARY_HEADER)[2:]
        self.assertEqual([unbold(line) for line in lines],
                         [unbold(table_line(cells)) for cells in expected])


class Lesson16H200Sentences(unittest.TestCase):
    """The sentences under lesson 16's H200 bench tables: geometric means, lows and the decode
    rows' DRAM rates, from bench_16_h200.csv (`gemm_bench --shapes standard,held_out,workloads`
    writes the 13 standard shapes, then the 10 held out, then the 64 of the workload set)."""

    DATA = SWEEPS / "bench_16_h200.csv"
    COPY_TB_PER_S = 4.275  # what a copy reaches on the H200 (docs/hardware.md, section 10)
    COUNTS = {0: "none", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}

    def setUp(self):
        needs(LESSON_16, self.DATA)
        self.rows = read_rows(self.DATA)
        plain = [row for row in self.rows if row["epilogue"] == "plain"]
        self.assertEqual(len(plain), 13 + 10 + 64)
        self.standard, self.held_out, self.workloads = plain[:13], plain[13:23], plain[23:]
        self.text = prose(LESSON_16)

    @staticmethod
    def summary(rows):
        """(geometric mean, the lowest ratio, its shape) of `rows`."""
        lowest = min(rows, key=lambda row: float(row["ratio"]))
        return (f"{geometric_mean(row['ratio'] for row in rows):.3f}",
                rounded(lowest["ratio"], 3), shape_label(lowest))

    def test_standard_and_held_out(self):
        mean, low, at = self.summary(self.standard)
        self.assertIn(f"Geometric mean over the 13 standard shapes: **{mean}** of cuBLAS, lowest "
                      f"{low} at {at} ", self.text)
        large = [row for row in self.standard if int(row["m"]) >= 2048 and int(row["n"]) >= 2048]
        self.assertIn(f"the {len(large)} with M and N of at least 2048: "
                      f"**{self.summary(large)[0]}**", self.text)
        long_k = next(row for row in self.standard if shape_label(row) == "1024 x 1024 x 16384")
        self.assertIn(f"runs **{rounded(long_k['ratio'], 3)}** of cuBLAS", self.text)
        mean, low, at = self.summary(self.held_out)
        below = sum(float(row["ratio"]) < 0.90 for row in self.held_out)
        self.assertIn(f"The held-out shapes: **{mean}**, lowest {low} at {at}; "
                      f"{self.COUNTS[below]} below 0.90.", self.text)
        now = next(row for row in self.held_out if shape_label(row) == "1792^3")
        before = next(row for row in read_rows(SWEEPS / "bench_16_h200_37ecb1b.csv")
                      if row["epilogue"] == "plain" and shape_label(row) == "1792^3")
        self.assertIn(f"1792^3, {rounded(before['ratio'], 3)} of cuBLAS with "
                      f"`{before['configuration']}` at {before['commit']} ", self.text)
        self.assertIn(f"runs {rounded(now['ratio'], 3)} with the 128 x 224 tile the model now picks "
                      f"there.", self.text)
        self.assertEqual(now["configuration"], "128x224_c2_sk8_s32")
        now = next(row for row in self.held_out if shape_label(row) == "2560^3")
        before = next(row for row in read_rows(SWEEPS / "bench_16_h200_2e98245.csv")
                      if row["epilogue"] == "plain" and shape_label(row) == "2560^3")
        self.assertIn(f"2560^3, {rounded(before['ratio'], 3)} with `{before['configuration']}` "
                      f"at {before['commit']} ", self.text)
        self.assertIn(f"runs {rounded(now['ratio'], 3)} with the same 128 x 224 tile",
                      self.text)
        self.assertEqual(now["configuration"], "128x224_c2_sk8_s32")

    def test_workloads_and_fused(self):
        decode = [row for row in self.workloads if int(row["m"]) <= 64]
        mean, low, at = self.summary(decode)
        self.assertIn(f"Geometric mean **{self.summary(self.workloads)[0]}** over the "
                      f"{len(self.workloads)} workload shapes; **{mean}** over the {len(decode)} "
                      f"decode rows of 16-64 tokens, lowest {low} at {at};", self.text)
        fused = {}
        for epilogue in ("D = A*B^T + 1 * C", "D = gelu(A*B^T + bias)"):
            fused[epilogue] = self.summary([row for row in self.rows
                                            if row["epilogue"] == epilogue])
        with_c, gelu = fused["D = A*B^T + 1 * C"], fused["D = gelu(A*B^T + bias)"]
        self.assertIn(f"+ C **{with_c[0]}** (lowest {with_c[1]} at {with_c[2]},", self.text)
        self.assertIn(f"gelu(+ bias) **{gelu[0]}** (lowest {gelu[1]} at {gelu[2]})", self.text)

    def test_decode_dram_rates(self):
        decode = [row for row in self.workloads if int(row["m"]) <= 64]

        def rate(row, column):  # TB/s: A, B and D once, over the median time
            m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
            return (m * k + n * k + m * n) * 2 / (float(row[column]) * 1e-3) / 1e12

        def span(layers, column):
            rates = [rate(row, column) for row in decode
                     if (int(row["n"]), int(row["k"])) in layers]
            return f"{min(rates):.2f}-{max(rates):.2f}"

        groups = ({(4096, 4096), (6144, 4096)}, {(8192, 8192), (10240, 8192), (4096, 14336)},
                  {(28672, 4096)}, {(57344, 8192), (8192, 28672)})
        lesson = [span(group, "lesson_median_ms") for group in groups]
        cublas = [span(group, "reference_median_ms") for group in groups]
        self.assertIn(f"at {lesson[0]} TB/s, the 8192-wide and the 4096 x 14336 ones (118-170 MB) "
                      f"at {lesson[1]}, 16-64 x 28672 x 4096 at {lesson[2]}, and the two largest "
                      f"(471-948 MB) at {lesson[3]} TB/s; cuBLAS at {cublas[0]}, {cublas[1]}, "
                      f"{cublas[2]} and {cublas[3]}.", self.text)

        def share(column):
            rates = [rate(row, column) / self.COPY_TB_PER_S * 100 for row in decode]
            return f"{min(rates):.0f}-{max(rates):.0f}%"

        self.assertIn(f"that is {share('lesson_median_ms')} for the lesson and "
                      f"{share('reference_median_ms')} for cuBLAS", self.text)


class Lesson16ProfileTable(unittest.TestCase):
    """Lesson 16's "Profile it": the model's picks against cuBLAS's kernels, each row the medians of
    one side's launches in profiles/reference/h200/lesson16_vs_cublas.csv (one row per launch, as
    ncu printed it), and the figures of the sentences under it."""

    HEADER = ("| shape | kernel | duration | DRAM read | DRAM, % of peak | L2 bytes "
              "| tensor pipe, % of active | grid |")
    DATA = REPOSITORY / "profiles" / "reference" / "h200" / "lesson16_vs_cublas.csv"
    DRAM = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
    TENSOR = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"

    def setUp(self):
        needs(LESSON_16, self.DATA)
        self.sides = launches_by_side(self.DATA)

    def median(self, shape, side, metric):
        return launch_median(self.sides[(shape, side)], metric)

    def test_rows(self):
        lines = table_after(LESSON_16, self.HEADER)[2:]
        self.assertEqual(len(lines), len(self.sides))
        for line in lines:
            shape = cells_of(line)[0]
            side = "lesson16" if cells_of(line)[1].startswith("lesson 16") else "cuBLAS"
            launches = self.sides[(shape, side)]
            first = launches[0]
            kernel = first["kernel"].removeprefix("nvjet_sm90_tst_").removesuffix("_TNT")
            cluster = int(first["launch__cluster_dim_x"]) * int(first["launch__cluster_dim_y"])
            grid = first["launch__grid_size"] + (f" (clusters of {cluster})" if cluster else "")

            def shown(metric, scale, unit):
                return f"{self.median(shape, side, metric) / scale:.1f}{unit}"

            self.assertEqual(line, table_line([
                shape, f"{'lesson 16' if side == 'lesson16' else 'cuBLAS'} `{kernel}`",
                shown("gpu__time_duration.sum", 1000, " us"),
                shown("dram__bytes_read.sum", 1e6, " MB"), shown(self.DRAM, 1, "%"),
                shown("lts__t_bytes.sum", 1e6, " MB"), shown(self.TENSOR, 1, "%"), grid]))

    def test_sentences(self):
        text = prose(LESSON_16)
        shape = "1024^3"
        slower = (self.median(shape, "lesson16", "gpu__time_duration.sum")
                  - self.median(shape, "cuBLAS", "gpu__time_duration.sum")) / 1000
        more_l2 = (self.median(shape, "lesson16", "lts__t_bytes.sum")
                   / self.median(shape, "cuBLAS", "lts__t_bytes.sum") - 1)
        self.assertIn(f"take {slower:.1f} us longer and move {more_l2 * 100:.0f}% more bytes "
                      f"through L2, and the tensor pipe is busy "
                      f"{self.median(shape, 'lesson16', self.TENSOR):.0f}% of the active cycles "
                      f"against {self.median(shape, 'cuBLAS', self.TENSOR):.0f}%", text)
        decode = ("32 x 4096 x 4096", "64 x 4096 x 4096")

        def span(side, metric, scale, decimals):
            values = sorted(self.median(shape, side, metric) / scale for shape in decode)
            return f"{values[0]:.{decimals}f}-{values[1]:.{decimals}f}"

        threads = {side: {row["launch__block_size"] for (_, kind), rows in self.sides.items()
                          if kind == side for row in rows} for side in ("cuBLAS", "lesson16")}
        self.assertEqual(len(threads["cuBLAS"]), 1)
        self.assertEqual(len(threads["lesson16"]), 1)
        self.assertIn(f"Every cuBLAS kernel here runs blocks of {threads['cuBLAS'].pop()} threads, "
                      f"lesson 16's 64-row tiles {threads['lesson16'].pop()}", text)
        lesson_dram = {f"{self.median(shape, 'lesson16', self.DRAM):.0f}" for shape in decode}
        self.assertEqual(len(lesson_dram), 1)
        self.assertIn(f"cuBLAS keeps DRAM {span('cuBLAS', self.DRAM, 1, 0)}% busy and lesson 16 "
                      f"{lesson_dram.pop()}%: {span('cuBLAS', 'gpu__time_duration.sum', 1000, 1)} "
                      f"us against {span('lesson16', 'gpu__time_duration.sum', 1000, 1)}.", text)


class RoleTimelineTable(unittest.TestCase):
    """Lesson 16's "Where the time goes": each row the median block's events of the model's pick
    at one shape, from roles_16_h200.csv (what `make roles` wrote), and the sentences' sums."""

    HEADER = ("| shape, the model's pick | set up | item posted | received | first slice in "
              "| MMAs complete | stored | finished |")
    DATA = SWEEPS / "roles_16_h200.csv"
    EVENTS = (("producer", "", "set up"), ("producer", "", "first posted"),
              ("math 0", "0", "received"), ("math 0", "0", "first slice"),
              ("math 0", "0", "MMAs complete"), ("math 0", "0", "stored"), ("math 0", "", "finished"))
    FIRST_LOAD = ("producer", "", "first load")  # the schedule made: the first item begins

    def medians(self, events=EVENTS):
        return role_medians(self.DATA, events)

    def test_rows(self):
        needs(LESSON_16, self.DATA)
        medians = self.medians()
        expected = [table_line([f"{shape}, `{configuration}`"] + [f"{t:.2f}" for t in times])
                    for (shape, configuration), times in medians.items()]
        self.assertEqual(table_after(LESSON_16, self.HEADER)[2:], expected)

    def test_sentences(self):
        needs(LESSON_16, self.DATA)
        medians = self.medians()
        begun = {key: times[0] for key, times in self.medians((self.FIRST_LOAD,)).items()}
        first_slice = [times[3] for times in medians.values()]
        set_up = [times[0] for times in medians.values()]
        item = [times[1] - begun[key] for key, times in medians.items()]
        latency = [times[3] - times[1] for times in medians.values()]
        receipt = [times[2] - times[1] for times in medians.values()]
        text = prose(LESSON_16).replace("**", "")
        self.assertIn(f"spends {min(first_slice):.1f}-{max(first_slice):.1f} us before its first "
                      f"wgmma: until {max(set_up):.1f} us the producer sets up", text)
        self.assertIn(f"then {statistics.median(item):.1f} us to work out its first item and post "
                      f"it, and {statistics.median(latency):.1f} us for the item's first slice to "
                      "arrive", text)
        self.assertIn(f"receives the item {statistics.median(receipt):.1f} us after it is posted",
                      text)
        cube = medians[("1024^3", "64x128_c2_sk8")]
        self.assertGreater(cube[3] / cube[6], 1 / 3)  # "over a third of the block's time"
        deep = medians[("1024 x 1024 x 8192", "64x128_c2_sk8")]
        block_bytes = 64 * 1024 * 2 + 128 * 1024 * 2 // 2  # A's 64 rows, half of B's 128 columns
        mmas = cube[4] - cube[3]
        self.assertIn(f"16 slices in {mmas:.1f} us", text)
        self.assertIn(f"{128 * block_bytes / 1e6:.1f} MB to the SMs in {mmas:.1f} us, "
                      f"{128 * block_bytes / mmas / 1e6:.1f} TB/s", text)
        self.assertIn(f"takes {deep[4] - deep[3]:.1f} us for 128 slices (8 times the bytes at "
                      f"{8 * 128 * block_bytes / (deep[4] - deep[3]) / 1e6:.1f} TB/s)", text)
        # The yardstick: what L2 delivered in lesson 18's profile before its descriptor change.
        profile = SWEEPS / "profile_18_8192_h200.csv"
        needs(profile)
        before = {row["metric"]: float(row["before"]) for row in read_rows(profile)}
        delivered = (before["lts__t_sectors_srcunit_tex_op_read.sum"] * 32
                     / before["gpu__time_duration.sum"] / 1e3)
        self.assertIn(f"saw L2 deliver {delivered:.1f} TB/s to the SMs at "
                      f"{before['lts__throughput.avg.pct_of_peak_sustained_elapsed']:.0f}% of its "
                      "peak throughput", text)


class Fp8DecodeRows(unittest.TestCase):
    """Lesson 18's decode rows and their row of the goals table, from fp8_18_decode_h200.csv (what
    `lesson18 sweep` wrote)."""

    DATA = SWEEPS / "fp8_18_decode_h200.csv"

    def test_sentences(self):
        needs(LESSON_18, self.DATA)
        rows = read_rows(self.DATA)
        ahead = [row for row in rows if float(row["vs_block_scaled"]) >= 1]
        behind = [row for row in rows if float(row["vs_block_scaled"]) < 1]
        self.assertEqual(len(behind), 1)
        low = behind[0]

        def span(selected):
            values = [float(row["vs_block_scaled"]) for row in selected]
            return f"{min(values):.3f}-{max(values):.3f}"

        narrow = [row for row in ahead if row["n"] == "4096"]
        wide = [row for row in ahead if row["n"] == "14336"]
        self.assertEqual({row["configuration"] for row in ahead}, {"64x128_c1"})
        tiles = -(-int(low["m"]) // 128) * -(-int(low["n"]) // 128)
        text = prose(LESSON_18).replace("**", "")
        words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight")
        self.assertIn(f"ahead of cuBLASLt block-scaled on {words[len(ahead)]} of the "
                      f"{words[len(rows)]}, {span(narrow)} with N = 4096", text)
        self.assertIn(f"and {span(wide)} with N = 14336", text)
        self.assertIn(f"behind at {shape_label(low)}, {float(low['vs_block_scaled']):.3f}, "
                      f"where the model takes 128 x 128 tiles ({tiles} of them: {tiles / 132:.1f} waves of "
                      f"132) and 64 x 128 alone gave {float(low['alone_64x128_c1']):.3f}", text)
        self.assertEqual(low["configuration"], "128x128_c1")
        versus = [float(row["vs_lesson16"]) for row in rows]
        self.assertIn(f"{min(versus):.3f}-{max(versus):.3f} x; err/allow at most "
                      f"{max(float(row['error_over_allowed']) for row in rows):.3f}", text)
        self.assertIn(f"| {span(ahead)} on {len(ahead)} of {len(rows)}; "
                      f"{float(low['vs_block_scaled']):.3f} at {shape_label(low)} | missed |",
                      LESSON_18.read_text())


class QuantizedOutputTable(unittest.TestCase):
    """Lesson 18's README, "D quantized in the epilogue": each row from the two runs of
    `lesson18 sweep` (fp8_18_quantized_output_h200.csv, fp8_18_quantized_parts_h200.csv), the
    ranges under it, and the plain launch's ratios against the standard table's."""

    HEADER = ("| shape | configuration | both (98b954d) | both (d41e7c7) | e4m3 D alone "
              "| amax alone | SM clock (d41e7c7) |")
    BOTH = SWEEPS / "fp8_18_quantized_output_h200.csv"
    PARTS = SWEEPS / "fp8_18_quantized_parts_h200.csv"
    STANDARD = SWEEPS / "fp8_18_standard_h200.csv"

    def test_rows(self):
        needs(LESSON_18, self.BOTH, self.PARTS)
        both = {shape_label(row): row for row in checked_rows(self, LESSON_18, self.BOTH)}
        expected = [table_line([shape_label(row), row["configuration"],
                                rounded(both[shape_label(row)]["with_quantized_d"], 3),
                                rounded(row["with_quantized_d"], 3),
                                rounded(row["with_e4m3_d_only"], 3),
                                rounded(row["with_amax_only"], 3), f"{row['sm_mhz_median']} MHz"])
                    for row in read_rows(self.PARTS)]
        self.assertEqual(table_after(LESSON_18, self.HEADER)[2:], expected)

    def test_sentences(self):
        needs(LESSON_18, self.BOTH, self.PARTS, self.STANDARD)
        parts = read_rows(self.PARTS)
        percents = lambda column: [round((float(row[column]) - 1) * 100) for row in parts]
        text = prose(LESSON_18)
        self.assertIn(f"the amax costs {min(percents('with_amax_only'))}-"
                      f"{max(percents('with_amax_only'))}%, the e4m3 D "
                      f"{min(percents('with_e4m3_d_only'))}-{max(percents('with_e4m3_d_only'))}%",
                      text)
        both = {shape_label(row): row for row in read_rows(self.BOTH)}
        earlier = {shape_label(row): row for row in read_rows(self.STANDARD)}
        self.assertIn(f"0.892 of cuBLASLt block-scaled at 4096^3 and 0.863 at 8192^3 "
                      f"({rounded(earlier['4096^3']['vs_block_scaled'], 3)} and "
                      f"{rounded(earlier['8192^3']['vs_block_scaled'], 3)} at "
                      f"{earlier['4096^3']['commit']}", text)
        self.assertEqual([rounded(both[shape]["vs_block_scaled"], 3) for shape in
                          ("4096^3", "8192^3")], ["0.892", "0.863"])

    def test_reciprocal_rows_and_ranges(self):
        reciprocal = SWEEPS / "fp8_18_quantized_reciprocal_h200.csv"
        needs(LESSON_18, reciprocal, self.PARTS)
        before = {shape_label(row): row for row in read_rows(self.PARTS)}
        rows = checked_rows(self, LESSON_18, reciprocal)
        expected = [table_line([shape_label(row), row["configuration"],
                                rounded(row["with_quantized_d"], 3),
                                rounded(row["with_e4m3_d_only"], 3),
                                rounded(row["with_amax_only"], 3), f"{row['sm_mhz_median']} MHz",
                                f"{rounded(before[shape_label(row)]['quantize_ms'], 3)}, "
                                f"{rounded(row['quantize_ms'], 3)}"])
                    for row in rows]
        header = ("| shape | configuration | both | e4m3 D alone | amax alone | SM clock "
                  "| inputs' quantizer, ms (d41e7c7, 0d8b836) |")
        self.assertEqual(table_after(LESSON_18, header)[2:], expected)
        percents = lambda column: [round((float(row[column]) - 1) * 100) for row in rows]
        faster = [round((1 - float(row["quantize_ms"]) /
                         float(before[shape_label(row)]["quantize_ms"])) * 100) for row in rows]
        self.assertIn(f"The e4m3 D now costs {min(percents('with_e4m3_d_only'))}-"
                      f"{max(percents('with_e4m3_d_only'))}% and both outputs "
                      f"{min(percents('with_quantized_d'))}-{max(percents('with_quantized_d'))}%; "
                      f"the inputs' quantizer is {min(faster)}-{max(faster)}% faster.",
                      prose(LESSON_18))


class FirstItemEarlyTable(unittest.TestCase):
    """Lesson 16's measurements.md, "The first item before the cluster barrier": each row the two
    rounds of each kernel from first_item_early_16_h200.csv, the timeline's figures of the variant
    from roles_first_item_early_16_h200.csv, and the README's summary of both."""

    HEADER = ("| shape, the model's pick | after the barrier (rounds 1, 2) "
              "| between arrive and wait (rounds 1, 2) |")
    DATA = SWEEPS / "first_item_early_16_h200.csv"
    ROLES = SWEEPS / "roles_first_item_early_16_h200.csv"
    AFTER, EARLY = "first item after the cluster barrier", "first item between arrive and wait"

    def ratios(self):
        shapes = {}
        for row in read_rows(self.DATA):
            key = (shape_label(row), row["configuration"])
            shapes.setdefault(key, {}).setdefault(row["variant"], []).append(row["ratio"])
        return shapes

    def test_rows(self):
        needs(LESSON_16_MEASURED, self.DATA)
        expected = [table_line([f"{shape}, `{configuration}`", ", ".join(kinds[self.AFTER]),
                                ", ".join(kinds[self.EARLY])])
                    for (shape, configuration), kinds in self.ratios().items()]
        self.assertEqual(table_after(LESSON_16_MEASURED, self.HEADER)[2:], expected)

    def test_summaries(self):
        needs(LESSON_16, LESSON_16_MEASURED, self.DATA, self.ROLES)
        losses, unchanged = [], []
        for (shape, _), kinds in self.ratios().items():
            change = (statistics.mean(map(float, kinds[self.EARLY]))
                      - statistics.mean(map(float, kinds[self.AFTER])))
            (unchanged if shape in ("2560^3", "4096^3") else losses).append(change)
        text = prose(LESSON_16).replace("**", "")
        self.assertIn(f"every shape below 2560^3 lost {-max(losses):.2f}-{-min(losses):.2f} of "
                      f"cuBLAS, 2560^3 and 4096^3 within {max(map(abs, unchanged)):.3f}", text)
        events = [("producer", "", event)
                  for event in ("barriers initialized", "first posted", "first load")]
        (begun, posted, loads), = role_medians(self.ROLES, events).values()
        self.assertIn(f"it took {posted - begun:.2f} us from the barriers' set-up and ended at the "
                      f"same {posted:.2f} us, the first loads left later (at {loads:.2f} us)", text)
        measured = prose(LESSON_16_MEASURED)
        rows = read_rows(self.DATA)
        small = [int(row["sm_mhz_median"]) for row in rows if shape_label(row) != "4096^3"]
        large = {row["sm_mhz_median"] for row in rows if shape_label(row) == "4096^3"}
        self.assertEqual(len(large), 1)
        self.assertIn(f"SM clocks {min(small)}-{max(small)} MHz, {large.pop()} at 4096^3", measured)
        self.assertIn(f"The item, begun at {begun:.2f} us, was posted at {posted:.2f} us", measured)
        self.assertIn(f"the first loads left at {loads:.2f} us", measured)


class StartupTable(unittest.TestCase):
    """Lesson 16's measurements.md, "What the first item's 0.6 us are": the table and sentences
    from the medians over the blocks in roles_startup_16_h200.csv, and the 32-bit division's table
    from division_16_h200.csv."""

    HEADER = "| event | L2 flushed | L2 kept | flushed, operands read back |"
    ROLES = SWEEPS / "roles_startup_16_h200.csv"
    DIVISION = SWEEPS / "division_16_h200.csv"
    L2_VARIANTS = ("L2 flushed", "L2 kept", "L2 flushed, operands read back")
    STEPS, SET_UP = "first item stamped step by step", "first item worked out in the set-up"
    ROWS = (("first item begun (the schedule made)", "producer", "first load"),
            ("first item posted", "producer", "first posted"),
            ("received by the math warpgroup", "math 0", "received"),
            ("its first slice in shared memory", "math 0", "first slice"),
            ("its MMAs complete", "math 0", "MMAs complete"))

    def medians(self):
        """{variant: {(role, event): the median over the blocks}}, and {variant: its ratio}."""
        stamps, ratios = {}, {}
        for row in read_rows(self.ROLES):
            stamps.setdefault(row["variant"], {}).setdefault(
                (row["role"], row["event"]), []).append(float(row["t_us"]))
            ratios[row["variant"]] = float(row["ratio"])
        return ({variant: {key: statistics.median(times) for key, times in events.items()}
                 for variant, events in stamps.items()}, ratios)

    def test_table(self):
        needs(LESSON_16_MEASURED, self.ROLES)
        medians, _ = self.medians()
        expected = [table_line([label] + [f"{medians[variant][(role, event)]:.2f}"
                                          for variant in self.L2_VARIANTS])
                    for label, role, event in self.ROWS]
        self.assertEqual(table_after(LESSON_16_MEASURED, self.HEADER)[2:], expected)

    def test_sentences(self):
        needs(LESSON_16_MEASURED, self.ROLES)
        medians, ratios = self.medians()
        text = prose(LESSON_16_MEASURED)
        steps = medians[self.STEPS]
        made, count, item, post = [steps[("producer", event)] for event in
                                   ("first load", "counted", "item made", "queue posted")]
        self.assertIn(f"the schedule made at {made:.2f} us, the item count done at {count:.2f}, "
                      f"the item at {item:.2f}, its post at {post:.2f}", text)
        set_up = medians[self.SET_UP]
        pairs = [("math 0", "received"), ("producer", "first posted"),
                 ("producer", "cluster synced"), ("math 0", "first slice")]
        (held, held_before), (posted, posted_before), (synced, synced_before), \
            (first, first_before) = [(set_up[key], steps[key]) for key in pairs]
        self.assertIn(f"holds its item at {held:.2f} us instead of {held_before:.2f} and the "
                      f"producer posts it at {posted:.2f} instead of {posted_before:.2f}", text)
        self.assertIn(f"the cluster barrier passes at {synced:.2f} instead of {synced_before:.2f}",
                      text)
        self.assertIn(f"the first slice lands at {first:.2f} instead of {first_before:.2f}", text)
        rounds = [ratios[self.SET_UP], ratios[self.SET_UP + ", round 2"]]
        as_is = [ratios[variant] for variant in self.L2_VARIANTS + (self.STEPS,)]
        self.assertIn(f"Ratio to cuBLAS {rounds[0]:.3f} and {rounds[1]:.3f} in two rounds, against "
                      f"{min(as_is):.3f}-{max(as_is):.3f} for the kernel as it is", text)

    def test_division(self):
        needs(LESSON_16_MEASURED, self.DIVISION)
        shapes = {}
        for row in read_rows(self.DIVISION):
            self.assertEqual(row["check"], "pass")
            shapes.setdefault((shape_label(row), row["configuration"]), {}).setdefault(
                row["variant"], []).append(rounded(row["ratio"], 3))
        header = "| shape, the model's pick | as on main (rounds 1, 2) | 32-bit division |"
        expected = [table_line([f"{shape}, `{configuration}`", ", ".join(kinds["as on main"]),
                                ", ".join(kinds["32-bit division where the operands fit"])])
                    for (shape, configuration), kinds in shapes.items()]
        lines = [line.strip() for line in LESSON_16_MEASURED.read_text().splitlines()]
        start = lines.index(header)
        end = start
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        self.assertEqual(lines[start + 2:end], expected)


class L2SectorsTable(unittest.TestCase):
    """Lesson 16's measurements.md, "L2's sectors against cuBLAS's kernel of the same tile": each
    row the medians of one side's launches in l2_sectors_16_h200.csv (ncu's raw page), and the
    sentences' ratios and the tile's own count."""

    HEADER = ("| shape | kernel | duration | sectors read | of them L2 hits | misses "
              "| from the other L2 partition |")
    DATA = SWEEPS / "l2_sectors_16_h200.csv"
    READ = "lts__t_sectors_srcunit_tex_op_read.sum"

    def sides(self):
        """{(shape label, side): {metric: its median over the side's launches}}."""
        return {key: {metric: launch_median(launches, metric)
                      for metric in launches[0] if metric.endswith((".sum", ".avg"))}
                for key, launches in launches_by_side(self.DATA).items()}

    def test_rows(self):
        needs(LESSON_16_MEASURED, self.DATA)
        expected = []
        for (shape, side), median in self.sides().items():
            expected.append(table_line([
                shape, "lesson 16" if side == "lesson16" else "cuBLAS",
                f"{median['gpu__time_duration.sum'] / 1e3:.1f} us",
                f"{median[self.READ] / 1e3:,.0f}",
                f"{median['lts__t_sectors_srcunit_tex_lookup_hit.sum'] / 1e3:,.0f}",
                f"{median['lts__t_sectors_srcunit_tex_lookup_miss.sum'] / 1e3:,.0f}",
                f"{median['lts__t_sectors_srcunit_ltcfabric.sum'] / 1e3:,.0f}"]))
        self.assertEqual(table_after(LESSON_16_MEASURED, self.HEADER)[2:], expected)

    def test_sentences(self):
        needs(LESSON_16_MEASURED, self.DATA)
        sides = self.sides()
        text = prose(LESSON_16_MEASURED)
        small, large = (sides[(shape, "lesson16")]["dram__bytes_read.sum"] / 1e6
                        for shape in ("1024^3", "128 x 8192 x 8192"))
        self.assertIn(f"The same bytes from DRAM ({small:.1f} and {large:.0f} MB", text)
        fewer = [1 - sides[(shape, "cuBLAS")][self.READ] / sides[(shape, "lesson16")][self.READ]
                 for shape in ("1024^3", "128 x 8192 x 8192")]
        self.assertIn(f"{fewer[0]:.0%} fewer at 1024^3, {fewer[1]:.0%} at 128 x 8192 x 8192", text)
        sectors_per_slice = (64 + 128 // 2) * 128 // 32  # 16 KB a block and slice
        own = {"1024^3": 128 * (1024 // 64) * sectors_per_slice,
               "128 x 8192 x 8192": 128 * (8192 // 64) * sectors_per_slice}
        self.assertIn(f"{own['1024^3'] / 1e3:,.0f} thousand sectors at 1024^3 and "
                      f"{own['128 x 8192 x 8192'] / 1e3:,.0f} thousand at 128 x 8192 x 8192", text)
        share = {side: [sides[(shape, side)][self.READ] / own[shape] for shape in own]
                 for side in ("lesson16", "cuBLAS")}
        self.assertIn(f"lesson 16 reads {share['lesson16'][0]:.0%} and {share['lesson16'][1]:.0%} "
                      f"of that, cuBLAS {share['cuBLAS'][0]:.0%} and {share['cuBLAS'][1]:.0%}", text)


class L2PromotionTable(unittest.TestCase):
    """Lesson 16's measurements.md, "TMA's L2 promotion": each row the two rounds of each setting
    from l2_promotion_16_h200.csv."""

    HEADER = "| shape, the model's pick | 256 bytes (rounds 1, 2) | 128 bytes | none |"
    DATA = SWEEPS / "l2_promotion_16_h200.csv"

    def test_rows(self):
        needs(LESSON_16_MEASURED, self.DATA)
        shapes = {}
        for row in read_rows(self.DATA):
            key = (shape_label(row), row["configuration"])
            shapes.setdefault(key, {}).setdefault(row["l2_promotion"], []).append(
                f"{float(row['ratio']):.3f}")
        expected = [table_line([f"{shape}, `{configuration}`"]
                               + [", ".join(kinds[p]) for p in ("L2_256B", "L2_128B", "NONE")])
                    for (shape, configuration), kinds in shapes.items()]
        self.assertEqual(table_after(LESSON_16_MEASURED, self.HEADER)[2:], expected)


class ForcedConfigurationsTable:
    """A table of lesson 16's measurements.md with configurations built and forced in the oracle:
    each row's best of the other configurations and the new ones' ratios, from DATA (per shape the
    run's best of the others, then the new ones), and the sentence that says none was the best."""

    HEADER = DATA = None
    NEW = ()
    COUNTED = ""  # "three", "four": how the sentence counts the new configurations

    def setUp(self):
        rows = checked_rows(self, LESSON_16_MEASURED, self.DATA)
        self.shapes = {}
        for row in rows:
            self.shapes.setdefault(shape_label(row), {})[row["configuration"]] = row
        for configurations in self.shapes.values():
            self.assertEqual(len(configurations), 1 + len(self.NEW))

    def best_other(self, shape):
        return next(row for name, row in self.shapes[shape].items() if name not in self.NEW)

    def relative(self):
        return {(shape, name): float(self.shapes[shape][name]["ratio"])
                / float(self.best_other(shape)["ratio"])
                for shape in self.shapes for name in self.NEW}

    def test_rows(self):
        lines = table_after(LESSON_16_MEASURED, self.HEADER)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            shape = cells_of(line)[0]
            best = self.best_other(shape)
            self.assertEqual(line, table_line(
                [shape, f"`{best['configuration']}` {float(best['ratio']):.3f}"]
                + [f"{float(self.shapes[shape][name]['ratio']):.3f}" for name in self.NEW]))

    def test_none_was_best(self):
        relative = self.relative()
        nearest = max(relative, key=relative.get)
        self.assertLess(relative[nearest], 1.0)
        self.assertIn(f"None of the {self.COUNTED} was the best on any of the {len(self.shapes)} "
                      f"shapes; the nearest came within {(1 - relative[nearest]) * 100:.1f}% "
                      f"({nearest[1].split('_')[0].replace('x', ' x ')} at {nearest[0]})",
                      prose(LESSON_16_MEASURED))


class NarrowTilesTable(ForcedConfigurationsTable, unittest.TestCase):
    """Lesson 16's narrow tiles (narrow_tiles_16_h200.csv), and the decode rows' sentence of the
    README's profile."""

    HEADER = "| shape | best of the others | `128x64_c2_dp` | `64x32_c1_dp` | `64x32_c1_sk2` |"
    DATA = SWEEPS / "narrow_tiles_16_h200.csv"
    NEW = ("128x64_c2_dp", "64x32_c1_dp", "64x32_c1_sk2")
    COUNTED = "three"

    def test_decode_sentence(self):
        relative = self.relative()
        decode = [relative[(f"{tokens} x 4096 x 4096", "64x32_c1_dp")] for tokens in (16, 32, 64)]
        self.assertIn(f"were {(1 - max(decode)) * 100:.0f}-{(1 - min(decode)) * 100:.0f}% slower "
                      f"than its split-K picks", prose(LESSON_16))  # the README's profile


class ClustersOfFourTable(ForcedConfigurationsTable, unittest.TestCase):
    """Lesson 16's clusters of four and 64-row ping-pong (clusters_of_four_16_h200.csv)."""

    HEADER = ("| shape | best of the others | `64x128_c4_sk8` | `64x128_c4_split8` | "
              "`128x128_c4_sk8` | `64x128_c2_pp` |")
    DATA = SWEEPS / "clusters_of_four_16_h200.csv"
    NEW = ("64x128_c4_sk8", "64x128_c4_split8", "128x128_c4_sk8", "64x128_c2_pp")
    COUNTED = "four"


class ClusterAlongNTable(ForcedConfigurationsTable, unittest.TestCase):
    """Lesson 16's 128 x 64 tiles in clusters along N (cluster_along_n_16_h200.csv)."""

    HEADER = ("| shape | best of the others | `128x64_n2_sk8` | `128x64_n2_split8` | "
              "`128x64_n2_dp` |")
    DATA = SWEEPS / "cluster_along_n_16_h200.csv"
    NEW = ("128x64_n2_sk8", "128x64_n2_split8", "128x64_n2_dp")
    COUNTED = "three"


class DeeperRingTable(unittest.TestCase):
    """Lesson 16's deeper ring for 64 x 64: each row the mean of the two rounds' ratios of
    64x64_c1_split8, forced, with 8 and with 13 stages, from stages_64x64_16_h200.csv, and the
    range the sentence under the table gives."""

    HEADER = "| shape | 8 stages | 13 stages | change |"
    DATA = SWEEPS / "stages_64x64_16_h200.csv"

    def setUp(self):
        rows = checked_rows(self, LESSON_16_MEASURED, self.DATA)
        self.ratios = {}
        for row in rows:
            if row["forced"] == "yes" and row["configuration"] == "64x64_c1_split8":
                key = (f"{row['m']} x {row['n']} x {row['k']}", row["stages_64x64"])
                self.ratios.setdefault(key, []).append(float(row["ratio"]))
        self.assertTrue(all(len(rounds) == 2 for rounds in self.ratios.values()))

    def mean(self, shape, stages):
        rounds = self.ratios[(shape, stages)]
        return sum(rounds) / len(rounds)

    def test_rows(self):
        lines = table_after(LESSON_16_MEASURED, self.HEADER)[2:]
        self.assertEqual(len(lines), len(self.ratios) // 2)
        changes = []
        for line in lines:
            shape = cells_of(line)[0]
            shallow, deep = self.mean(shape, "8"), self.mean(shape, "13")
            changes.append(deep / shallow - 1)
            self.assertEqual(line, table_line([shape, f"{shallow:.3f}", f"{deep:.3f}",
                                               f"{changes[-1] * 100:+.1f}%"]))
        self.assertIn(f"From {min(changes) * 100:+.1f}% to {max(changes) * 100:+.1f}%: level",
                      prose(LESSON_16_MEASURED))


class Lesson19ProfileTable(unittest.TestCase):
    """Lesson 19's "Profile it": each variant's kernels on one GPU, from ncu's rows in
    profiles/reference/h200/lesson19_one_gpu_1024.csv (a variant's run: the kernels after the
    poison before it, up to the comparison after it), and the sums the sentences give."""

    HEADER = "| variant | its kernels, us | in all, us |"
    DATA = REPOSITORY / "profiles" / "reference" / "h200" / "lesson19_one_gpu_1024.csv"
    VARIANTS = ("stream order (NCCL + lesson 17)", "one-shot (peer memory + lesson 17)",
                "overlapped (copy engines + lesson 17)", "cuBLASLt + NCCL")
    NAMES = {"lesson19::one_shot_gather_kernel": "gather", "lesson19::one_shot_push_kernel": "push",
             "lesson19::sum_slots_kernel": "sum of the slots", "lesson19::barrier_kernel": "barrier"}
    CHECK_KERNELS = ("poison_kernel", "sum_squares_kernel")

    def setUp(self):
        needs(LESSON_19, self.DATA)
        rows = read_rows(self.DATA)
        first_poison = next(i for i, row in enumerate(rows) if "poison_kernel" in row["kernel"])
        self.runs = [[]]
        for row in rows[first_poison:]:
            if "compare_kernel" in row["kernel"]:
                self.runs.append([])
            elif not any(name in row["kernel"] for name in self.CHECK_KERNELS):
                self.runs[-1].append(row)
        self.runs = [run for run in self.runs if run]
        self.assertEqual(len(self.runs), len(self.VARIANTS))

    @staticmethod
    def us(rows):
        return sum(int(row["gpu__time_duration.sum"]) for row in rows) / 1000

    def test_rows(self):
        lines = table_after(LESSON_19, self.HEADER)[2:]
        self.assertEqual(len(lines), len(self.VARIANTS))
        for line, variant, run in zip(lines, self.VARIANTS, self.runs):
            kernels = ", ".join(f"{self.NAMES.get(row['kernel'], 'GEMM')} {self.us([row]):.1f}"
                                for row in run)
            self.assertEqual(line, table_line([variant, kernels, f"{self.us(run):.1f}"]))

    def test_sentences(self):
        text = prose(LESSON_19)
        one_shot, overlapped, stream = self.runs[1], self.runs[2], self.runs[0]
        exchange = [row for row in one_shot if row["kernel"] in self.NAMES]
        overlapped_exchange = [row for row in overlapped if row["kernel"] in self.NAMES]
        self.assertEqual([row["kernel"] for row in overlapped_exchange],
                         ["lesson19::sum_slots_kernel"])
        self.assertIn(f"{rounded(Decimal(str(self.us(exchange))), 0)} us for the one-shot variant's "
                      f"three, {rounded(Decimal(str(self.us(overlapped_exchange))), 0)} us for the "
                      "overlapped variant's sum", text)
        gemms = [row for row in overlapped if row["kernel"] not in self.NAMES]
        self.assertTrue(gemms[0]["kernel"].startswith("lesson 19's arriving-rows GEMM"))
        self.assertIn(f"takes {self.us(gemms[:1]):.1f} us against {self.us(stream[:1]):.1f} for "
                      f"stream order's; the second, in two launches of 512 rows whose halves run "
                      f"128 x 128 tiles, {self.us(gemms[1:]):.1f} against "
                      f"{self.us(stream[1:]):.1f}", text)


class KernelLineCounts(unittest.TestCase):
    """The line counts the READMEs give of a lesson's kernel.cuh, against the file."""

    CASES = ((REPOSITORY / "lessons" / "01_naive", "[`kernel.cuh`](kernel.cuh) top to bottom ({} lines)"),
             (REPOSITORY / "lessons" / "15_tma_store_epilogue", "400 that day, {} now)"))

    def test_counts(self):
        for folder, words in self.CASES:
            with self.subTest(folder=folder.name):
                needs(folder / "kernel.cuh")
                text = (folder / "kernel.cuh").read_text()
                if "gemm::exercise::unwritten();" in text:
                    self.skipTest("a hand-out's kernel, its regions cut")
                lines = len(text.splitlines())
                self.assertIn(words.format(lines), prose(folder / "README.md"))



LESSONS = REPOSITORY / "lessons"


class TileArithmeticTables(unittest.TestCase):
    """The tables that lessons 10, 11 and 13 compute by hand from a tile's shape, computed again:
    they have no run for a source, only arithmetic, which a slip of the pen gets wrong."""

    SLICE_K = 64        # bf16 values of K per slice (128-byte rows)
    BF16 = 2            # bytes
    PEAK_FLOPS_PER_CLOCK = 4096  # one SM's dense bf16 tensor cores (lesson 10's footnote)

    def test_lesson_10_bytes_and_flops_per_slice(self):
        readme = LESSONS / "10_cooperative" / "README.md"
        header = ("| tile BM x BN | bytes per slice | FLOPs per slice | FLOPs per byte "
                  "| bytes per clock * |")
        expected = []
        for rows, columns, name in ((128, 128, "lesson 09"), (128, 256, "this lesson")):
            slice_bytes = (rows + columns) * self.SLICE_K * self.BF16
            flops = 2 * rows * columns * self.SLICE_K
            per_byte = flops / slice_bytes
            expected.append(table_line([
                f"{rows} x {columns} ({name})",
                f"({rows} + {columns}) x {self.SLICE_K} x {self.BF16} = {slice_bytes // 1024} KB",
                f"{flops / 1e6:.1f} M", f"**{per_byte:.0f}**",
                f"{self.PEAK_FLOPS_PER_CLOCK / per_byte:.0f}"]))
        self.assertEqual(table_after(readme, header)[2:], expected)

    def test_lesson_11_tiles_of_half_the_accumulators(self):
        readme = LESSONS / "11_pingpong" / "README.md"
        header = ("| tile | wgmmas per k-step | FLOPs per byte from L2 "
                  "| shared bytes read per 1000 FLOPs | stage |")
        lines = table_after(readme, header)[2:]
        mma_k = 16  # K of one wgmma
        for line, (rows, columns, wgmma_n) in zip(lines, ((128, 128, 128), (64, 256, 256))):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            wgmmas = rows // 64  # each m64nNk16 covers 64 rows and all of the tile's columns
            read = wgmmas * (64 + wgmma_n) * mma_k * self.BF16
            flops = 2 * rows * columns * mma_k
            per_byte = rows * columns / (rows + columns)
            self.assertIn(f"{rows} x {columns}", cells[0])
            self.assertTrue(cells[1].startswith(f"{wgmmas} x `m64n{wgmma_n}k16`"), cells[1])
            self.assertEqual(cells[2], f"{per_byte:g}" if per_byte == int(per_byte)
                             else f"{per_byte:.1f}")
            self.assertEqual(cells[3], f"{read / flops * 1000:.1f}")
            self.assertEqual(cells[4],
                             f"{(rows + columns) * self.SLICE_K * self.BF16 // 1024} KB")
        self.assertEqual(len(lines), 2)

    def test_lesson_13_tiles_per_cluster(self):
        readme = LESSONS / "13_persistent_raster" / "README.md"
        header = "| shape | cluster tiles | = rounds of 66 | tiles per cluster |"
        clusters = 132 // 2  # clusters of two blocks on 132 SMs
        cluster_tile = (256, 256)  # two 128 x 256 tiles along M
        expected = []
        for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096),
                        (2048, 2048, 2048)):
            down, across = -(-m // cluster_tile[0]), -(-n // cluster_tile[1])
            tiles = down * across
            label = shape_label({"m": m, "n": n, "k": k})
            if tiles < clusters:
                expected.append(table_line([label, f"{down} x {across} = {tiles}",
                                            f"{tiles} clusters launched", "1 each"]))
                continue
            rounds, rest = divmod(tiles, clusters)
            expected.append(table_line([
                label, f"{down} x {across} = {tiles}", f"{rounds} x {clusters} + {rest}",
                f"clusters 0-{rest - 1}: {rounds + 1}, clusters {rest}-{clusters - 1}: {rounds}"]))
        self.assertEqual(table_after(readme, header)[2:], expected)


class HardwareArithmeticTables(unittest.TestCase):
    """docs/hardware.md's two tables of intensity, computed again from their formulas: the
    device-level intensity of the bench's shapes, and a tile's intensity with what it asks of L2."""

    HARDWARE = REPOSITORY / "docs" / "hardware.md"
    PEAK = 989.4e12  # dense bf16 FLOP/s, the table's
    RIDGES = {"H100": 295, "H200": 206}

    def test_shapes_of_the_bench(self):
        header = "| M x N x K | Intensity (flops/byte) | Bound at the device level |"
        lines = table_after(self.HARDWARE, header)[2:]
        shapes = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (6144, 6144, 6144),
                  (8192, 8192, 8192), (8192, 8192, 1024), (1024, 1024, 8192), (4096, 14336, 4096),
                  (3000, 5000, 4000))
        self.assertEqual(len(lines), len(shapes))
        for line, (m, n, k) in zip(lines, shapes):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            intensity = 2 * m * n * k / ((m * k + n * k + m * n) * 2)
            self.assertEqual(cells[0], shape_label({"m": m, "n": n, "k": k}))
            self.assertEqual(cells[1], f"{intensity:.0f}")
            self.assertTrue(cells[2].startswith("compute"), cells[2])
            self.assertGreater(intensity, max(self.RIDGES.values()))

    def test_tiles(self):
        lines = table_after(self.HARDWARE, "| Tile BM x BN | Intensity | L2-to-SM traffic at 989.4 "
                            "TFLOP/s | L2-to-SM bytes per clock, per SM |")[2:]
        tiles = ((64, 64), (128, 64), (128, 128), (128, 256), (256, 256))
        self.assertEqual(len(lines), len(tiles))
        for line, (rows, columns) in zip(lines, tiles):
            cells = [cell.strip().strip("*") for cell in line.strip("|").split("|")]
            intensity = rows * columns / (rows + columns)
            self.assertTrue(cells[0].startswith(f"{rows} x {columns}"), cells[0])
            self.assertEqual(cells[1], f"{intensity:.0f}")
            self.assertEqual(cells[2], f"{self.PEAK / intensity / 1e12:.1f} TB/s")
            self.assertEqual(cells[3], f"{4096 / intensity:.0f}")

if __name__ == "__main__":
    unittest.main()
