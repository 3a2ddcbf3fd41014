"""Tests of profiles/results_table.py on a synthetic results file (fixtures/fake_results.csv).

The fixture has the columns `make bench` writes (csv_header() in common/runner.cu, then date
and commit): lessons 01 and 02 at 4096^3 and 8192^3, lesson 02 failing its check at 8192^3, and
lesson 01 alone at 3000 x 5000 x 4000.
"""
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
    """The table lines under a '## title' heading."""
    lines = markdown.splitlines()
    start = lines.index(f"## {title}") + 2
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def cells(line):
    return [cell.strip() for cell in line.strip("|").split("|")]


class ResultsTable(unittest.TestCase):
    def setUp(self):
        self.markdown = results_table.render(results_table.load(FIXTURE))

    def test_header_names_gpu_date_commit_and_the_failure(self):
        self.assertIn("on Synthetic GPU (test fixture), 2000-01-01, commit `fixture`",
                      self.markdown)
        self.assertIn("FAIL marks a lesson that failed the check", self.markdown)

    def test_percent_of_cublas_table(self):
        table = section(self.markdown, "% of cuBLAS")
        self.assertEqual(cells(table[0]), ["lesson", "4096 x 4096 x 4096", "8192 x 8192 x 8192",
                                           "3000 x 5000 x 4000"])
        self.assertEqual(cells(table[2]), ["01 naive", "0.2%", "0.2%", "0.4%"])
        self.assertEqual(cells(table[3]), ["02 smem_tiling", "4.9%", "FAIL", "-"])

    def test_tflops_table_and_cublas_range(self):
        table = section(self.markdown, "TFLOP/s")
        self.assertEqual(cells(table[2]), ["01 naive", "1.37", "1.20", "2.40"])
        self.assertEqual(cells(table[3]), ["02 smem_tiling", "35.00", "FAIL", "-"])
        self.assertEqual(cells(table[4]), ["cuBLAS (range over the lessons' runs)", "700-710",
                                           "760-760", "600-600"])

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


if __name__ == "__main__":
    unittest.main()
