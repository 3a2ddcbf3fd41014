"""Lesson 16's figures of its model against the oracles are what `shape_model_report` prints of
the committed oracle sweeps with the model of this commit: the table of the 85 shapes of the H100's
oracle, and the summary of each GPU's (fitted and held-out shapes: the pick's geometric mean, the
best's, the lowest, and how often the pick is within 3% of the best).

ctest runs this with SHAPE_MODEL_REPORT naming the built tool; without it (a tree where the tool is
not built) the cases are skipped.
"""
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_figure_sources import LESSON_16, LESSON_16_MEASURED, SWEEPS, needs, prose, table_after  # noqa: E402

HEADER = "| shape (M x N x K) | set | model's pick | best measured | loss | pick / cuBLAS | best / cuBLAS |"
SUMMARY = re.compile(r"^(fitted|held-out) shapes: (\d+); geometric mean of the pick ([\d.]+) of "
                     r"cuBLAS \(best configuration ([\d.]+)\), lowest ([\d.]+); pick within 3% of "
                     r"the best on (\d+) of (\d+)$")


def report(oracle, gpu):
    """(stdout lines, {set: summary fields}) of the tool on one oracle sweep."""
    tool = os.environ.get("SHAPE_MODEL_REPORT", "")
    if not tool or not Path(tool).exists():
        raise unittest.SkipTest("SHAPE_MODEL_REPORT names no built shape_model_report")
    needs(LESSON_16, oracle)
    run = subprocess.run([tool, "--csv", str(oracle), "--gpu", gpu], capture_output=True,
                         text=True, check=True, cwd=REPOSITORY)
    summaries = {}
    for line in run.stderr.splitlines():
        match = SUMMARY.match(line)
        if match:
            summaries[match.group(1)] = match.groups()[1:]
    return run.stdout.splitlines(), summaries


class ModelReportTables(unittest.TestCase):
    def setUp(self):
        self.text = prose(LESSON_16)

    def test_the_h100_table_and_summary(self):
        lines, summaries = report(SWEEPS / "configs_16.csv", "h100")
        table = [line for line in lines if line.startswith("|")]
        self.assertEqual(table_after(LESSON_16_MEASURED, HEADER), table)
        measured = prose(LESSON_16_MEASURED)
        count, pick, best, lowest, within, judged = summaries["fitted"]
        self.assertIn(f"**Fitted ({count} shapes):** the pick's geometric mean is **{pick}** of "
                      f"cuBLAS (the best configuration per shape: {best}), lowest {lowest}; within "
                      f"3% of the best on **{within} of {judged}**.", measured)
        count, pick, best, lowest, within, judged = summaries["held-out"]
        self.assertIn(f"**Held out ({count} shapes):** **{pick}** (best: {best}), lowest {lowest} "
                      f"at", measured)
        self.assertIn(f"within 3% of the best on **{within} of {judged}**.", measured)

    def test_the_h200_summary(self):
        _, summaries = report(SWEEPS / "configs_16_h200.csv", "h200")
        count, pick, best, lowest, within, judged = summaries["fitted"]
        self.assertIn(f"**fitted ({count} shapes):** the pick's geometric mean is **{pick}** of "
                      f"cuBLAS (the best configuration per shape: {best}), lowest {lowest} ",
                      self.text)
        self.assertIn(f"within 3% of the best on **{within} of {judged}**;", self.text)
        count, pick, best, lowest, within, judged = summaries["held-out"]
        self.assertIn(f"**held out ({count} shapes):** **{pick}** (best {best}), lowest {lowest} ",
                      self.text)


if __name__ == "__main__":
    unittest.main()
