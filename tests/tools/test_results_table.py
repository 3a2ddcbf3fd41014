"""Tests of profiles/results_table.py on a synthetic results file (fixtures/fake_results.csv).

The fixture has the columns `make bench` writes (csv_header() in common/harness/run_report.cu, then date
and commit): lessons 01 and 02 at 4096^3 and 8192^3, lesson 02 failing its check at 8192^3, and
lesson 01 alone at 3000 x 5000 x 4000, measured without NVML (empty clock fields). One more row
is lesson 15's bias + GELU epilogue at 4096^3 against cuBLASLt: it belongs to the fused table
only. Some ratios differ from reference_ms / lesson_ms on purpose: the tables must show the
paired ratio of the file (the median of the per-pair ratios), not recompute it.

The fixture's GPU name is no real GPU's; the tests of --store, which names the files after the
GPU model, replace it with "NVIDIA H200".
"""
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "fake_results.csv"
RESULTS_TABLE = REPOSITORY / "profiles" / "results_table.py"
sys.path.insert(0, str(REPOSITORY / "profiles"))

import results_table  # noqa: E402  (after the path is set)


def section(markdown, title):
    """The table lines under a '## title' heading (after any text between the two)."""
    lines = markdown.splitlines()
    start = next(i for i in range(lines.index(f"## {title}"), len(lines))
                 if lines[i].startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def cells(line):
    return [cell.strip() for cell in line.strip("|").split("|")]


class ResultsTable(unittest.TestCase):
    def setUp(self):
        self.markdown = results_table.render(results_table.load(FIXTURE))

    def test_header_names_gpu_date_commit_and_the_failure(self):
        self.assertTrue(self.markdown.startswith("# Results on Synthetic GPU (test fixture)\n"))
        self.assertIn("on Synthetic GPU (test fixture), 2000-01-01, commit `fixture`",
                      self.markdown)
        self.assertIn("Every measurement passed the correctness check first.", self.markdown)
        self.assertIn("FAIL marks a lesson that failed the check", self.markdown)

    def test_lessons_measured_in_several_runs_say_which_when(self):
        rows = [{"lesson": lesson, "date": date, "commit": commit}
                for lesson, date, commit in [(1, "2026-11-23", "aaa"), (2, "2026-11-23", "aaa"),
                                             (3, "2026-11-24", "bbb"), (4, "2026-11-23", "aaa")]]
        self.assertEqual(results_table.measured_when(rows),
                         "lessons 01-02, 04 on 2026-11-23 at commit `aaa`; "
                         "lessons 03 on 2026-11-24 at commit `bbb`")
        self.assertEqual(results_table.measured_when(rows[:2]), "2026-11-23, commit `aaa`")

    def test_introduction_describes_the_paired_protocol(self):
        text = " ".join(self.markdown.split("## ")[0].split())
        self.assertIn("timed in the same process, alternately, pair by pair", text)
        self.assertIn("the median of the per-pair ratios reference time / lesson time", text)
        self.assertIn("at least 0.3 s of GPU work", text)
        self.assertIn("Each measurement has 3 to 120 timed pairs", text)

    def test_the_clock_range_comes_from_the_file(self):
        # Timed rows with NVML figures: 1980, 1965, 1950 and 1590 MHz; 420 to 699 W.
        text = " ".join(self.markdown.split("## ")[0].split())
        self.assertIn("the median SM clock of a measurement ranged from 1590 to 1980 MHz, with "
                      "power peaks of up to 699 W.", text)
        self.assertNotIn("H100", self.markdown)
        rows = [dict(row, sm_mhz_median="", power_w_peak="")
                for row in results_table.load(FIXTURE)]
        self.assertIn("NVML could not be read during these runs", results_table.render(rows))

    def test_percent_of_cublas_table(self):
        table = section(self.markdown, "% of cuBLAS")
        self.assertEqual(cells(table[0]), ["lesson", "4096 x 4096 x 4096", "8192 x 8192 x 8192",
                                           "3000 x 5000 x 4000"])
        self.assertEqual(cells(table[2]), ["01 naive", "0.2%", "0.2%", "0.4%"])
        # The paired ratio 0.0512, not the ratio of the medians 0.1930 / 3.9 (4.9%).
        self.assertEqual(cells(table[3]), ["02 smem_tiling", "5.1%", "FAIL", "-"])
        self.assertEqual(len(table), 4)  # lesson 15 has only a fused row

    def test_tflops_table_and_cublas_range(self):
        table = section(self.markdown, "TFLOP/s")
        self.assertEqual(cells(table[2]), ["01 naive", "1.37", "1.20", "2.40"])
        self.assertEqual(cells(table[3]), ["02 smem_tiling", "35.00", "FAIL", "-"])
        # cuBLASLt's 654.49 of the fused row is not a cuBLAS figure: not in the range.
        self.assertEqual(cells(table[4]), ["cuBLAS (range over the lessons' runs)", "700-710",
                                           "760-760", "600-600"])
        self.assertEqual(len(table), 5)

    def test_clock_and_power_table(self):
        table = section(self.markdown, "SM clock and power")
        self.assertEqual(cells(table[0]), ["lesson", "4096 x 4096 x 4096", "8192 x 8192 x 8192",
                                           "3000 x 5000 x 4000"])
        self.assertEqual(cells(table[2]), ["01 naive", "1980 MHz / 420 W", "1950 MHz / 430 W",
                                           "n/a"])
        self.assertEqual(cells(table[3]), ["02 smem_tiling", "1965 MHz / 480 W", "FAIL", "-"])
        self.assertEqual(len(table), 4)

    def test_fused_epilogue_table(self):
        table = section(self.markdown, "Fused epilogue")
        self.assertEqual(cells(table[0]), ["lesson", "shape", "epilogue", "TFLOP/s", "reference",
                                           "reference TFLOP/s", "% of the reference",
                                           "SM clock / peak power"])
        # The paired ratio 1.0480, not the ratio of the medians 0.2100 / 0.2000 (105.0%).
        self.assertEqual(cells(table[2]), ["15 tma_store_epilogue", "4096 x 4096 x 4096",
                                           "`D = gelu(A*B^T + bias)`", "687.19",
                                           "cuBLASLt GELU_BIAS epilogue", "654.49", "104.8%",
                                           "1590 MHz / 699 W"])
        self.assertEqual(len(table), 3)

    def test_failed_fused_row(self):
        # The fixture's lesson 15 row again at 8192^3, failed: no timing, no reference, no clock.
        rows = results_table.load(FIXTURE)
        fused = next(row for row in rows if row["lesson"] == "15")
        failed = dict(fused, m="8192", n="8192", k="8192", check="fail")
        for column in ("pairs", "lesson_tflops", "reference", "reference_tflops", "ratio",
                       "sm_mhz_median", "power_w_peak"):
            failed[column] = ""
        table = section(results_table.render(rows + [failed]), "Fused epilogue")
        self.assertEqual(cells(table[3]), ["15 tma_store_epilogue", "8192 x 8192 x 8192",
                                           "`D = gelu(A*B^T + bias)`", "FAIL", "-", "-", "FAIL",
                                           "FAIL"])

    def test_no_fused_rows_no_fused_table(self):
        rows = [row for row in results_table.load(FIXTURE) if row["epilogue"] == "plain"]
        self.assertNotIn("## Fused epilogue", results_table.render(rows))

    def test_all_passed_needs_no_fail_note(self):
        rows = [row for row in results_table.load(FIXTURE) if row["check"] == "pass"]
        self.assertNotIn("FAIL", results_table.render(rows))

    def test_missing_column_is_a_clear_error(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "results.csv"
            lines = FIXTURE.read_text().splitlines()
            path.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")
            with self.assertRaisesRegex(ValueError, "missing columns.*commit"):
                results_table.load(path)
            result = subprocess.run([sys.executable, str(RESULTS_TABLE), str(path)],
                                    capture_output=True, text=True)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("results_table.py:", result.stderr)
            self.assertIn("commit", result.stderr)

    def test_file_of_the_old_layout_names_the_new_columns(self):
        # Before the paired protocol the reference was always cuBLAS: cublas_tflops and
        # ratio_to_cublas instead of reference_tflops and ratio.
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "results.csv"
            header, *rows = FIXTURE.read_text().splitlines()
            old = header.replace("reference_tflops", "cublas_tflops").replace(",ratio,",
                                                                              ",ratio_to_cublas,")
            path.write_text("\n".join([old] + rows) + "\n")
            with self.assertRaisesRegex(ValueError,
                                        r"missing columns \['ratio', 'reference_tflops'\]"):
                results_table.load(path)

    def test_header_only_file_is_an_error(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "results.csv"
            path.write_text(FIXTURE.read_text().splitlines()[0] + "\n")
            with self.assertRaisesRegex(ValueError, "no measurements"):
                results_table.load(path)

    def test_command_line_prints_the_markdown(self):
        result = subprocess.run([sys.executable, str(RESULTS_TABLE), str(FIXTURE)],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, self.markdown)

    def test_rows_of_several_gpus_are_an_error(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "results.csv"
            lines = FIXTURE.read_text().splitlines()
            path.write_text("\n".join(lines[:2] + [line.replace("Synthetic GPU (test fixture)",
                                                                 "NVIDIA H200")
                                                    for line in lines[2:]]) + "\n")
            with self.assertRaisesRegex(ValueError, "rows of 2 GPUs \\(Synthetic GPU \\(test "
                                                    "fixture\\), NVIDIA H200\\); keep one file"):
                results_table.load(path)


class Store(unittest.TestCase):
    """results_table.py RESULTS.csv --store DIR: DIR/<model>.csv and DIR/<model>.md."""

    def setUp(self):
        self.work = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.work)
        self.results = self.work / "bench_results.csv"
        self.results.write_text(FIXTURE.read_text().replace("Synthetic GPU (test fixture)",
                                                            "NVIDIA H200"))

    def store(self, source, folder):
        return subprocess.run([sys.executable, str(RESULTS_TABLE), str(source), "--store",
                               str(folder)], capture_output=True, text=True)

    def test_files_named_after_the_gpu_model(self):
        folder = self.work / "docs" / "results"
        result = self.store(self.results, folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout,
                         f"wrote {folder / 'h200.csv'}\nwrote {folder / 'h200.md'}\n")
        self.assertEqual((folder / "h200.csv").read_bytes(), self.results.read_bytes())
        page = (folder / "h200.md").read_text()
        self.assertEqual(page, results_table.render(results_table.load(self.results)))
        self.assertTrue(page.startswith("# Results on NVIDIA H200\n"))

    def test_the_stored_csv_itself_regenerates_its_page(self):
        folder = self.work / "results"
        folder.mkdir()
        shutil.copy(self.results, folder / "h200.csv")
        result = self.store(folder / "h200.csv", folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((folder / "h200.csv").read_bytes(), self.results.read_bytes())
        self.assertTrue((folder / "h200.md").exists())

    def test_a_gpu_with_no_model_name_is_an_error(self):
        result = self.store(FIXTURE, self.work / "results")
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("results_table.py: ", result.stderr)
        self.assertIn("'Synthetic GPU (test fixture)' is not the name of a Hopper GPU",
                      result.stderr)
        self.assertFalse((self.work / "results").exists())


if __name__ == "__main__":
    unittest.main()
