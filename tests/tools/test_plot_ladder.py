"""Tests of profiles/plot_ladder.py: the chart's data from a synthetic results file, the
one-line message without matplotlib, and (only where matplotlib is installed) the drawing.

The fixture's lesson 15 row is a fused epilogue at 4096^3 timed against cuBLASLt (654.49
TFLOP/s): the chart, of the plain product against cuBLAS, must leave it out.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "fake_results.csv"
PLOT_LADDER = REPOSITORY / "profiles" / "plot_ladder.py"
sys.path.insert(0, str(REPOSITORY / "profiles"))

import plot_ladder  # noqa: E402  (after the path is set)
from results_table import load  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


class LadderData(unittest.TestCase):
    def test_bars_failures_and_cublas_medians(self):
        data = plot_ladder.ladder(load(FIXTURE))
        self.assertEqual(data.lessons, ["01 naive", "02 smem_tiling"])
        self.assertEqual(data.tflops[4096], [1.37, 35.0])
        self.assertEqual(data.tflops[8192], [1.2, None])
        self.assertEqual(data.failed[4096], [False, False])
        self.assertEqual(data.failed[8192], [False, True])
        self.assertEqual(data.cublas[4096], 705.0)  # median of 700 and 710, not of 654.49 too
        self.assertEqual(data.cublas[8192], 760.0)  # the failed run has no cuBLAS time
        self.assertIn("Synthetic GPU (test fixture)", data.title)
        self.assertIn("2000-01-01, commit fixture", data.title)

    def test_fused_epilogue_rows_are_left_out(self):
        rows = [row for row in load(FIXTURE) if row["epilogue"] != "plain"]
        self.assertEqual(len(rows), 1)
        with self.assertRaisesRegex(ValueError, "no rows for 4096"):
            plot_ladder.ladder(rows)

    def test_other_shapes_are_left_out(self):
        rows = [row for row in load(FIXTURE) if row["m"] == "3000"]
        with self.assertRaisesRegex(ValueError, "no rows for 4096"):
            plot_ladder.ladder(rows)

    def test_any_gpu_model(self):
        rows = [dict(row, gpu="NVIDIA H200") for row in load(FIXTURE)]
        self.assertIn("bf16 GEMM on NVIDIA H200:", plot_ladder.ladder(rows).title)
        self.assertEqual(plot_ladder.default_output(rows),
                         REPOSITORY / "docs" / "img" / "ladder_h200.png")
        with self.assertRaisesRegex(ValueError, "name the output file"):
            plot_ladder.default_output(load(FIXTURE))


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.work)

    def test_without_matplotlib_one_clear_line(self):
        # A matplotlib package that cannot be imported, found before any real one.
        fake = self.work / "fake_site" / "matplotlib"
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
        result = subprocess.run([sys.executable, str(PLOT_LADDER), str(FIXTURE),
                                 str(self.work / "ladder.png")], capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=str(fake.parent)))
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(result.stderr.strip().splitlines(),
                         ["plot_ladder.py: matplotlib is not installed (pip install matplotlib); "
                          "only this plot needs it"])
        self.assertFalse((self.work / "ladder.png").exists())

    def test_usage(self):
        result = subprocess.run([sys.executable, str(PLOT_LADDER)], capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("usage: plot_ladder.py RESULTS.csv [OUTPUT.png]", result.stderr)

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not installed")
    def test_draws_a_png(self):
        output = self.work / "img" / "ladder.png"
        result = subprocess.run([sys.executable, str(PLOT_LADDER), str(FIXTURE), str(output)],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(output.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
