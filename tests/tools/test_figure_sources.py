"""The figures of a README's results tables come from the committed file the README names.

Each case below is one table: where it is (the README, and the line just above it or its header),
the file its figures come from, and how a row is made from that file. A table whose rows differ
from what the file gives fails here: measure again and write both, never one. A hand-out that
leaves a lesson out leaves its tables out too (the case is skipped).
"""
import csv
import math
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import layer_table  # noqa: E402  (after the path is set)

SWEEPS = REPOSITORY / "profiles" / "sweeps"
LESSON_16 = REPOSITORY / "lessons" / "16_shape_heuristics" / "README.md"
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


def needs(*paths):
    missing = [str(path.relative_to(REPOSITORY)) for path in paths if not path.exists()]
    if missing:
        raise unittest.SkipTest(f"not in this tree: {', '.join(missing)}")


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


class LayerTableTool(unittest.TestCase):
    """profiles/layer_table.py refuses what it cannot read, in one line."""

    HEADER = ",".join(sorted(layer_table.NEEDED))

    def test_a_file_without_the_columns(self):
        with self.assertRaisesRegex(layer_table.LayerTableError, "needs the columns"):
            layer_table.table("tokens,rank\n1,0\n")

    def test_a_variant_it_does_not_know(self):
        row = {column: "1" for column in layer_table.NEEDED}
        row.update(rank="0", layer="two-shot")
        text = self.HEADER + "\n" + ",".join(row[column] for column in sorted(row)) + "\n"
        with self.assertRaisesRegex(layer_table.LayerTableError, "no variant called 'two-shot'"):
            layer_table.table(text)

    def test_no_rows_of_the_rank(self):
        row = {column: "1" for column in layer_table.NEEDED}
        row.update(rank="1", layer="stream")
        text = self.HEADER + "\n" + ",".join(row[column] for column in sorted(row)) + "\n"
        with self.assertRaisesRegex(layer_table.LayerTableError, "no rows of rank 0"):
            layer_table.table(text)


class DecodeSwapTable(unittest.TestCase):
    """Lesson 16's swapped operands for decode: each row's best configuration of either kind, its
    time and its ratio, and cuBLAS's time, from decode_swap_16_h200.csv; and the geometric means
    the text gives."""

    HEADER = "| shape (M x N x K) | cuBLAS us | best as given | best swapped |"
    DATA = SWEEPS / "decode_swap_16_h200.csv"

    def rows_by_shape(self):
        needs(LESSON_16, self.DATA)
        with open(self.DATA, newline="") as file:
            measured = list(csv.DictReader(file))
        self.assertTrue(all(row["check"] == "pass" for row in measured))
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
        lines = table_after(LESSON_16, self.HEADER)[2:]
        self.assertGreater(len(lines), 0)
        for line in lines:
            shape = tuple(line.split("|")[1].strip().split(" x "))
            self.assertIn(shape, shapes, f"lesson 16's decode table: {line}")
            as_given, swapped = (self.best(shapes[shape], False), self.best(shapes[shape], True))
            expected = (f"| {' x '.join(shape)} | "
                        f"{float(as_given['reference_median_ms']) * 1000:.1f} | "
                        f"{self.cell(as_given)} | {self.cell(swapped)} |")
            self.assertEqual(line, expected)

    def test_geometric_means(self):
        shapes = self.rows_by_shape()
        text = " ".join(LESSON_16.read_text().split())
        for swapped, words in ((False, "the best configuration as given is"),
                               (True, "best swapped one")):
            ratios = [float(self.best(rows, swapped)["ratio"]) for rows in shapes.values()]
            mean = math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
            self.assertIn(f"Over the {len(shapes)} shapes", text)
            self.assertRegex(text, f"{words} {mean:.3f}")


class ChainTable(unittest.TestCase):
    """Lesson 17's chain on the H100: every row of its table from chain_17.csv (what
    `lesson17 chain --csv` wrote)."""

    HEADER = ("| tokens | stream order | dependent | graph | cuBLASLt | dependent / stream "
              "| graph / stream | dependent / cuBLASLt | SM clock |")
    DATA = SWEEPS / "chain_17.csv"

    def test_rows(self):
        needs(LESSON_17, self.DATA)
        with open(self.DATA, newline="") as file:
            measured = list(csv.DictReader(file))
        expected = []
        for row in measured:
            times = [f"{float(row[column]):.1f}"
                     for column in ("stream_us", "dependent_us", "graph_us", "cublaslt_us")]
            ratios = [f"{float(row[column]):.3f}" for column in
                      ("dependent_over_stream", "graph_over_stream", "dependent_over_cublaslt")]
            cells = [row["tokens"]] + times + ratios + [f"{row['sm_mhz_median']} MHz"]
            expected.append("| " + " | ".join(cells) + " |")
        self.assertEqual(table_after(LESSON_17, self.HEADER)[2:], expected)


class Fp8StandardTable(unittest.TestCase):
    """Lesson 18's standard sweep: every row of its table from fp8_18_standard_h200.csv (what
    `lesson18 sweep --shapes standard --csv` wrote)."""

    HEADER = ("| shape | TFLOP/s | / cuBLASLt block | / cuBLASLt per-tensor | / lesson 16 (bf16) "
              "| err/allow | chosen | best alone | SM MHz |")
    DATA = SWEEPS / "fp8_18_standard_h200.csv"
    ALONE = "alone_"

    @staticmethod
    def shape(row):
        m, n, k = row["m"], row["n"], row["k"]
        return f"{m}^3" if m == n == k else f"{m} x {n} x {k}"

    def expected(self, row):
        alone = {column[len(self.ALONE):]: float(value) for column, value in row.items()
                 if column.startswith(self.ALONE)}
        best = max(alone, key=alone.get)
        cells = [self.shape(row), f"{float(row['lesson18_tflops']):.0f}",
                 f"{float(row['vs_block_scaled']):.3f}", f"{float(row['vs_per_tensor']):.3f}",
                 f"{float(row['vs_lesson16']):.3f}", f"{float(row['error_over_allowed']):.3f}",
                 row["configuration"], f"{best} {alone[best]:.3f}", row["sm_mhz_median"]]
        return "| " + " | ".join(cells) + " |"

    def test_rows(self):
        needs(LESSON_18, self.DATA)
        with open(self.DATA, newline="") as file:
            measured = list(csv.DictReader(file))
        self.assertTrue(all(row["check"] == "pass" for row in measured))
        self.assertEqual(table_after(LESSON_18, self.HEADER)[2:],
                         [self.expected(row) for row in measured])

    def test_the_workload_layers(self):
        # The sentence on the Llama layers: the geometric means, the range and the largest error
        # of fp8_18_workloads_h200.csv.
        data = SWEEPS / "fp8_18_workloads_h200.csv"
        needs(LESSON_18, data)
        with open(data, newline="") as file:
            measured = list(csv.DictReader(file))

        def mean(column):
            return math.exp(sum(math.log(float(row[column])) for row in measured) / len(measured))

        block = [float(row["vs_block_scaled"]) for row in measured]
        text = " ".join(LESSON_18.read_text().split())
        self.assertIn(f"({len(measured)} shapes,", text)
        self.assertIn(f"geometric mean **{mean('vs_block_scaled'):.3f}** of cuBLASLt block-scaled "
                      f"({min(block):.3f} to {max(block):.3f}), {mean('vs_per_tensor'):.3f} of "
                      f"per-tensor, **{mean('vs_lesson16'):.3f} x lesson 16**; err/allow at most "
                      f"{max(float(row['error_over_allowed']) for row in measured):.3f}", text)


if __name__ == "__main__":
    unittest.main()
