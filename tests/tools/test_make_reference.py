"""Tests of profiles/make_reference.py: an export in (synthetic, or an excerpt of a real one from
our H100: fixtures/README.md), a reference file out, read back; by default into the folder of the
export's GPU model."""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
MAKE_REFERENCE = REPOSITORY / "profiles" / "make_reference.py"
COMPARE = REPOSITORY / "profiles" / "compare.py"
sys.path.insert(0, str(REPOSITORY / "profiles"))

import compare  # noqa: E402  (after the path is set)


class MakeReference(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.work)
        self.reports = self.work / "reports"
        self.reference = self.work / "reference"
        self.reports.mkdir()
        shutil.copy(FIXTURES / "fake_lesson03.csv", self.reports / "lesson03.csv")
        shutil.copy(FIXTURES / "fake_lesson03.json", self.reports / "lesson03.json")
        self.metrics_csv = FIXTURES / "fake_metrics.csv"

    def make(self, *args, metrics_csv=None):
        command = [sys.executable, str(MAKE_REFERENCE), *args,
                   "--reports-dir", str(self.reports), "--reference-dir", str(self.reference),
                   "--metrics-csv", str(metrics_csv or self.metrics_csv)]
        return subprocess.run(command, capture_output=True, text=True)

    def assert_one_line_error(self, result, *fragments):
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("make_reference.py: "), result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)

    def test_round_trip(self):
        result = self.make("03", "--commit", "0123abc", "--date", "2000-01-02")
        self.assertEqual(result.returncode, 0, result.stderr)
        target = self.reference / "lesson03.csv"
        self.assertIn(str(target), result.stdout)

        raw = compare.read_profile(self.reports / "lesson03.csv", "03")
        made = compare.read_profile(target, "03")
        self.assertEqual(made.kind, "reference")
        self.assertEqual(made.info["lesson"], "03")
        self.assertEqual(made.info["gpu"], "NVIDIA H100 (synthetic test fixture)")
        self.assertEqual(made.info["shape"], "4096 x 4096 x 4096")
        self.assertEqual(made.info["date"], "2000-01-02")
        self.assertEqual(made.info["commit"], "0123abc")
        self.assertEqual(made.info["kernel"], raw.info["kernel"])
        self.assertEqual(made.info["ncu"], "synthetic test fixture, not a measurement")
        curated = [metric.name for metric in compare.load_curated_metrics(self.metrics_csv)]
        self.assertEqual(list(made.values), curated)  # only the curated metrics, in list order
        for name in curated:
            self.assertEqual(made.number(name), raw.number(name), name)
            self.assertEqual(made.units[name], raw.units[name], name)
        self.assertIn("gpu__time_duration.sum,nsecond,2000000\n", target.read_text())

    def test_compare_reads_the_reference_when_there_is_no_local_export(self):
        result = self.make("03", "--commit", "0123abc", "--date", "2000-01-02")
        self.assertEqual(result.returncode, 0, result.stderr)
        shutil.copy(FIXTURES / "fake_lesson04.csv", self.reports / "lesson04.csv")
        (self.reports / "lesson03.csv").unlink()
        result = subprocess.run(
            [sys.executable, str(COMPARE), "03", "04", "--reports-dir", str(self.reports),
             "--reference-dir", str(self.reference), "--metrics-csv", str(self.metrics_csv),
             "--focus-csv", str(FIXTURES / "fake_focus.csv")], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("(reference;", result.stdout)
        self.assertIn("-1,000,000 (-100.0%) better", result.stdout)

    def test_a_curated_metric_missing_from_the_export_is_an_error(self):
        metrics_csv = self.work / "metrics.csv"
        extra = "dram__bytes_write.sum,Bytes written,lower,full-set,bytes,not in the export\n"
        metrics_csv.write_text(self.metrics_csv.read_text() + extra)
        result = self.make("03", "--commit", "0123abc", "--date", "2000-01-02",
                           metrics_csv=metrics_csv)
        self.assert_one_line_error(result, "dram__bytes_write.sum", "check_metrics.py")
        self.assertFalse((self.reference / "lesson03.csv").exists())

    def test_a_real_export(self):
        # Its Device column says "0": the GPU's name is device__attribute_display_name.
        shutil.copy(FIXTURES / "real_h100_lesson03_excerpt.csv", self.reports / "lesson03.csv")
        metrics_csv = self.work / "metrics.csv"
        metrics_csv.write_text(
            "metric,label,better,collected,unit_note,why\n"
            "gpu__time_duration.sum,Kernel duration,lower,full-set,ns,a column of the excerpt\n"
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,Conflicts,lower,full-set,"
            "conflicts,a column of the excerpt\n")
        result = self.make("03", "--commit", "0123abc", "--date", "2000-01-02",
                           metrics_csv=metrics_csv)
        self.assertEqual(result.returncode, 0, result.stderr)
        text = (self.reference / "lesson03.csv").read_text()
        self.assertIn("# gpu: NVIDIA H100 80GB HBM3\n", text)
        self.assertIn("gpu__time_duration.sum,ms,1.952672\n", text)  # its unit kept as exported
        self.assertIn("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,,352326939\n", text)

    def test_bad_commit_and_date(self):
        self.assert_one_line_error(self.make("03", "--commit", "abc-dirty", "--date", "2000-01-02"),
                                   "--commit")
        self.assert_one_line_error(self.make("03", "--commit", "0123abc", "--date", "02/01/2000"),
                                   "YYYY-MM-DD")

    def make_in_model_folder(self, *args):
        """make_reference.py without --reference-dir: the folder follows the export's GPU."""
        command = [sys.executable, str(MAKE_REFERENCE), *args,
                   "--reports-dir", str(self.reports), "--references-root", str(self.reference),
                   "--metrics-csv", str(self.metrics_csv)]
        return subprocess.run(command, capture_output=True, text=True)

    def test_a_curated_only_export_goes_to_its_gpus_folder(self):
        # The export names its GPU "NVIDIA H200" in device__attribute_display_name.
        shutil.copy(FIXTURES / "fake_lesson03_curated_only.csv", self.reports / "lesson03.csv")
        result = self.make_in_model_folder("03", "--commit", "0123abc", "--date", "2000-01-02")
        self.assertEqual(result.returncode, 0, result.stderr)
        target = self.reference / "h200" / "lesson03.csv"
        self.assertIn(str(target), result.stdout)
        made = compare.read_profile(target, "03")
        self.assertEqual(made.info["gpu"], "NVIDIA H200")
        self.assertEqual(made.number("gpu__time_duration.sum"), 2_000_000)
        self.assertEqual(sorted(path.name for path in self.reference.iterdir()), ["h200"])

    def test_any_hopper_gpu(self):
        for name, model in [("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H100 PCIe", "h100-pcie"),
                            ("NVIDIA GH200 480GB", "gh200")]:
            text = (FIXTURES / "fake_lesson03_curated_only.csv").read_text()
            (self.reports / "lesson03.csv").write_text(text.replace("NVIDIA H200", name))
            result = self.make_in_model_folder("03", "--commit", "0123abc", "--date", "2000-01-02")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(f"# gpu: {name}\n",
                          (self.reference / model / "lesson03.csv").read_text())

    def test_a_gpu_without_a_model_folder_name(self):
        # The synthetic --set full export names no known GPU: --reference-dir must name the folder.
        result = self.make_in_model_folder("03", "--commit", "0123abc", "--date", "2000-01-02")
        self.assert_one_line_error(result, "NVIDIA H100 (synthetic test fixture)",
                                   "--reference-dir")
        self.assertFalse(self.reference.exists())

    def test_a_lesson_that_runs_another_lessons_kernel(self):
        # Lesson 02 of fixtures/kernel_sources runs lesson 01's kernel, as lesson 16 runs 15's.
        (self.reports / "lesson02.csv").write_text(
            (FIXTURES / "fake_lesson03_curated_only.csv").read_text()
            .replace("lesson03::", "lesson01::"))
        (self.reports / "lesson02.json").write_text(
            (FIXTURES / "fake_lesson03.json").read_text().replace('"03"', '"02"'))
        result = self.make_in_model_folder("02", "--commit", "0123abc", "--date", "2000-01-02",
                                           "--lessons-dir", str(FIXTURES / "kernel_sources"))
        self.assertEqual(result.returncode, 0, result.stderr)
        made = compare.read_profile(self.reference / "h200" / "lesson02.csv", "02")
        self.assertTrue(made.info["kernel"].startswith("lesson01::gemm_kernel("), made.info)

    def test_missing_export_or_shape_record(self):
        self.assert_one_line_error(self.make("04", "--commit", "0123abc", "--date", "2000-01-02"),
                                   "make profile L=04 CURATED=1")
        (self.reports / "lesson03.json").unlink()
        self.assert_one_line_error(self.make("03", "--commit", "0123abc", "--date", "2000-01-02"),
                                   "lesson03.json", "make profile")

    def test_shape_record_without_sizes(self):
        (self.reports / "lesson03.json").write_text(json.dumps({"lesson": "03"}))
        self.assert_one_line_error(self.make("03", "--commit", "0123abc", "--date", "2000-01-02"),
                                   "no valid m, n, k")


if __name__ == "__main__":
    unittest.main()
