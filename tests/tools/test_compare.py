"""Tests of profiles/compare.py on synthetic ncu exports (tests/tools/fixtures/fake_*.csv) and
on excerpts of two real exports from our H100 (fixtures/real_h100_*_excerpt.csv).

The fake fixtures are made-up numbers in the layout of `ncu --import ... --csv --page raw`, not
measurements: lesson 03 has 1,000,000 shared-load bank conflicts and lesson 04 has 0. The real
excerpts are a few columns of real exports made without --print-units base, copied unchanged
(fixtures/README.md): their units differ between the two files.

Also: the folder names of GPU models, the choice of the reference folder (with a stand-in for
nvidia-smi), and the namespace of a lesson's kernel, read from the real lessons and from the
synthetic sources of fixtures/kernel_sources/.
"""
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
KERNEL_SOURCES = FIXTURES / "kernel_sources"
LESSONS = REPOSITORY / "lessons"
COMPARE = REPOSITORY / "profiles" / "compare.py"
sys.path.insert(0, str(REPOSITORY / "profiles"))

import compare  # noqa: E402  (after the path is set)

BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


class OneLineErrors:
    """assert_one_line_error for the test cases that run compare.py."""

    def assert_one_line_error(self, result, *fragments):
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("compare.py: "), result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)


def temporary_reports(test):
    """A temporary folder, removed after the test, with a reports folder holding the local exports
    of lessons 03 and 04: (the folder, the reports folder)."""
    work = Path(tempfile.mkdtemp())
    test.addCleanup(shutil.rmtree, work)
    reports = work / "reports"
    reports.mkdir()
    shutil.copy(FIXTURES / "fake_lesson03.csv", reports / "lesson03.csv")
    shutil.copy(FIXTURES / "fake_lesson04.csv", reports / "lesson04.csv")
    return work, reports


class CompareTestCase(OneLineErrors, unittest.TestCase):
    """A temporary reports folder (lessons 03, 04) and reference folder (lesson 05)."""

    def setUp(self):
        self.work, self.reports = temporary_reports(self)
        self.reference = self.work / "reference"
        self.reference.mkdir()
        shutil.copy(FIXTURES / "fake_lesson03.json", self.reports / "lesson03.json")
        shutil.copy(FIXTURES / "fake_reference_lesson05.csv", self.reference / "lesson05.csv")

    def run_compare(self, *args, metrics_csv=FIXTURES / "fake_metrics.csv"):
        command = [sys.executable, str(COMPARE), *args,
                   "--reports-dir", str(self.reports), "--reference-dir", str(self.reference),
                   "--metrics-csv", str(metrics_csv),
                   "--focus-csv", str(FIXTURES / "fake_focus.csv")]
        return subprocess.run(command, capture_output=True, text=True)

    def table_line(self, output, label):
        lines = [line for line in output.splitlines() if label in line]
        self.assertEqual(len(lines), 1, output)
        return lines[0]



class KnownDeltas(CompareTestCase):
    def test_bank_conflicts_to_zero_is_minus_100_percent_and_better(self):
        result = self.run_compare("03", "04")
        self.assertEqual(result.returncode, 0, result.stderr)
        line = self.table_line(result.stdout, "Shared-memory load bank conflicts")
        self.assertIn("1,000,000", line)
        self.assertTrue(line.endswith("-1,000,000 (-100.0%) better"), line)

    def test_higher_is_better_metric_rising_is_better(self):
        line = self.table_line(self.run_compare("03", "04").stdout, "Tensor pipe busy")
        self.assertTrue(line.endswith("+14.75 (+36.4%) better"), line)

    def test_lower_is_better_metric_rising_is_worse(self):
        line = self.table_line(self.run_compare("04", "03").stdout, "Kernel duration")
        self.assertTrue(line.endswith("+500,000 (+33.3%) worse"), line)

    def test_unchanged_metric_is_same(self):
        line = self.table_line(self.run_compare("03", "04").stdout, "Bytes read from DRAM")
        self.assertTrue(line.endswith("same"), line)

    def test_metric_with_no_better_direction_is_only_higher_or_lower(self):
        # A rate such as the share of DRAM bandwidth in use: neither direction is an improvement.
        metrics = self.work / "metrics.csv"
        metrics.write_text((FIXTURES / "fake_metrics.csv").read_text() +
                           "sm__cycles_active.avg,Active cycles,neither,full-set,cycles,"
                           "Synthetic test list: a metric with no better direction.\n")
        falling = self.run_compare("03", "04", metrics_csv=metrics)
        self.assertEqual(falling.returncode, 0, falling.stderr)
        line = self.table_line(falling.stdout, "Active cycles")
        self.assertTrue(line.endswith("-500,000 (-26.3%) lower"), line)
        self.assertIn("higher / lower: a metric with no better direction", falling.stdout)
        line = self.table_line(self.run_compare("04", "03", metrics_csv=metrics).stdout,
                               "Active cycles")
        self.assertTrue(line.endswith("+500,000 (+35.7%) higher"), line)

    def test_each_later_lesson_is_compared_with_the_first(self):
        output = self.run_compare("03", "04", "05").stdout
        header = self.table_line(output, "04 vs 03")
        self.assertIn("05 vs 03", header)
        line = self.table_line(output, "Kernel duration")
        self.assertIn("-500,000 (-25.0%) better", line)
        self.assertTrue(line.endswith("-1,000,000 (-50.0%) better"), line)


class FocusFirst(CompareTestCase):
    def test_focus_metrics_of_the_last_lesson_come_first_and_are_marked(self):
        output = self.run_compare("03", "05").stdout
        lines = output.splitlines()
        first_row = next(i for i, line in enumerate(lines) if "what" in line and "unit" in line) + 1
        rows = lines[first_row:first_row + 6]
        self.assertTrue(rows[0].startswith("*") and "Stall: long scoreboard" in rows[0], output)
        self.assertTrue(rows[1].startswith("*") and "Registers per thread" in rows[1], output)
        self.assertFalse(any(row.startswith("*") for row in rows[2:]), output)
        self.assertIn("* what lesson 05 is meant to move", output)

    def test_focus_follows_the_last_lesson_not_the_first(self):
        output = self.run_compare("05", "04").stdout
        self.assertTrue(self.table_line(output, "bank conflicts").startswith("*"), output)
        self.assertFalse(self.table_line(output, "long scoreboard").startswith("*"), output)


class Sources(CompareTestCase):
    def test_says_which_file_each_lesson_comes_from(self):
        output = self.run_compare("03", "05").stdout
        self.assertIn(f"lesson 03: {self.reports / 'lesson03.csv'} (local export", output)
        self.assertIn(f"lesson 05: {self.reference / 'lesson05.csv'} (reference", output)
        self.assertIn("measured 2000-01-01 at commit 0123abc", output)
        self.assertIn("shape 4096 x 4096 x 4096", output)

    def test_local_export_wins_over_reference(self):
        shutil.copy(FIXTURES / "fake_reference_lesson05.csv", self.reference / "lesson04.csv")
        # That reference claims lesson 05: were it read, the run would fail.
        output = self.run_compare("03", "04").stdout
        self.assertIn(f"{self.reports / 'lesson04.csv'} (local export", output)

    def test_reference_format_values(self):
        profile = compare.read_profile(FIXTURES / "fake_reference_lesson05.csv", "05")
        self.assertEqual(profile.kind, "reference")
        self.assertEqual(profile.info["commit"], "0123abc")
        self.assertEqual(profile.info["shape"], "4096 x 4096 x 4096")
        self.assertEqual(profile.number("sm__pipe_tensor_op_hmma_cycles_active"
                                        ".avg.pct_of_peak_sustained_active"), 70.5)
        self.assertEqual(profile.units["dram__bytes_read.sum"], "byte")

    def test_reference_of_another_lesson_is_an_error(self):
        with self.assertRaises(compare.ProfileError):
            compare.read_profile(FIXTURES / "fake_reference_lesson05.csv", "06")


class RawExport(unittest.TestCase):
    def test_thousands_separators_and_plain_numbers(self):
        self.assertEqual(compare.parse_number("1,234,567"), 1234567.0)
        self.assertEqual(compare.parse_number("100663296"), 100663296.0)
        self.assertEqual(compare.parse_number("-1,000.5"), -1000.5)
        self.assertEqual(compare.parse_number(" 12.5 "), 12.5)
        self.assertIsNone(compare.parse_number("n/a"))
        self.assertIsNone(compare.parse_number("nan"))
        self.assertIsNone(compare.parse_number(""))
        self.assertIsNone(compare.parse_number("(128, 1, 1)"))

    def test_picks_the_lesson_kernel_among_several(self):
        profile = compare.read_profile(FIXTURES / "fake_lesson03.csv", "03")
        self.assertTrue(profile.info["kernel"].startswith("lesson03::gemm_kernel("))
        self.assertEqual(profile.number("gpu__time_duration.sum"), 2_000_000)
        self.assertEqual(profile.number(BANK_CONFLICTS), 1_000_000)
        self.assertEqual(profile.units["gpu__time_duration.sum"], "nsecond")
        self.assertEqual(profile.info["gpu"], "NVIDIA H100 (synthetic test fixture)")
        self.assertNotIn("Kernel Name", profile.values)

    def test_kernel_name_of_a_template_starts_with_void(self):
        profile = compare.read_profile(FIXTURES / "fake_lesson04.csv", "04")
        self.assertEqual(profile.number("launch__registers_per_thread"), 96)
        pattern = compare.kernel_name_regex("lesson04")
        self.assertRegex(profile.info["kernel"], pattern)
        self.assertRegex("lesson04::gemm_kernel(int)", pattern)
        self.assertNotRegex("gemm::lesson04::helper(int)", pattern)
        self.assertNotRegex("void lesson041::gemm_kernel(int)", pattern)

    def test_lesson_numbers(self):
        self.assertEqual(compare.lesson_id("3"), "03")
        self.assertEqual(compare.lesson_id("lesson12"), "12")
        for text in ("x", "0", "123", ""):
            with self.assertRaises(compare.ProfileError):
                compare.lesson_id(text)

    def test_units(self):
        self.assertEqual(compare.parse_unit("Mbyte"), (("byte", ""), 6))
        self.assertEqual(compare.parse_unit("byte"), (("byte", ""), 0))
        self.assertEqual(compare.parse_unit("ms"), (("second", ""), -3))
        self.assertEqual(compare.parse_unit("usecond"), (("second", ""), -6))
        self.assertEqual(compare.parse_unit("Ghz"), (("hz", ""), 9))
        self.assertEqual(compare.parse_unit("Gbyte/s"), (("byte", "second"), 9))
        self.assertEqual(compare.parse_unit("sector/ns"), (("sector", "second"), 9))
        self.assertEqual(compare.parse_unit("Kbyte/block"), (("byte", "block"), 3))
        self.assertEqual(compare.parse_unit("inst/cycle"), (("inst", "cycle"), 0))
        self.assertEqual(compare.parse_unit(""), (("", ""), 0))
        self.assertIsNone(compare.parse_unit("a/b/c"))

    def test_a_value_shifted_by_a_power_of_ten_is_exact(self):
        profile = compare.Profile("03", Path("x.csv"), "local export",
                                  values={"a__b.sum": "171.898112", "c__d.sum": "1.952672"})
        self.assertEqual(profile.number("a__b.sum", 6), 171_898_112.0)
        self.assertEqual(profile.number("c__d.sum", 3), 1952.672)
        self.assertIsNone(profile.number("e__f.sum", 3))

    def test_change_descriptions(self):
        self.assertEqual(compare.describe_change(100, 100.5, "lower"), "+0.5 (+0.5%) same")
        self.assertEqual(compare.describe_change(0, 3, "lower"), "+3 (from 0) worse")
        self.assertEqual(compare.describe_change(0, 0, "lower"), "0 same")
        self.assertEqual(compare.describe_change(50, 25, "higher"), "-25 (-50.0%) worse")
        self.assertEqual(compare.describe_change(50, 25, None), "-25 (-50.0%)")
        self.assertEqual(compare.describe_change(50, 25, "neither"), "-25 (-50.0%) lower")
        self.assertEqual(compare.describe_change(0, 3, "neither"), "+3 (from 0) higher")
        self.assertEqual(compare.describe_change(100, 100.5, "neither"), "+0.5 (+0.5%) same")
        self.assertEqual(compare.describe_change(None, 25, "higher"), "n/a")


class GpuModels(unittest.TestCase):
    def test_names_as_cuda_and_ncu_print_them(self):
        for name, model in [("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H200", "h200"),
                            ("NVIDIA H100 PCIe", "h100-pcie"), ("NVIDIA H100 NVL", "h100-nvl"),
                            ("NVIDIA H800", "h800"), ("NVIDIA GH200 480GB", "gh200"),
                            ("NVIDIA H20", "h20"), ("NVIDIA H200 NVL", "h200-nvl"),
                            ("NVIDIA GH200 144G HBM3e", "gh200"),
                            (" NVIDIA  H100 80GB HBM3 ", "h100"),
                            ("H100 PCIe", "h100-pcie")]:
            self.assertEqual(compare.gpu_model(name), model, name)

    def test_empty_or_unknown_names_are_errors(self):
        for name, fragment in [("", "not a GPU name"), ("   ", "not a GPU name"),
                               ("NVIDIA", "not a GPU name"), ("0", "not the name of a Hopper GPU"),
                               ("NVIDIA A100-SXM4-80GB", "not the name of a Hopper GPU"),
                               ("Synthetic GPU (test fixture)", "not the name of a Hopper GPU"),
                               ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "unknown word 'MIG'")]:
            with self.assertRaisesRegex(compare.ProfileError, fragment, msg=name):
                compare.gpu_model(name)

    def test_command_line(self):
        result = subprocess.run([sys.executable, str(COMPARE), "--model-of", "NVIDIA H200"],
                                capture_output=True, text=True)
        self.assertEqual((result.returncode, result.stdout, result.stderr), (0, "h200\n", ""))
        result = subprocess.run([sys.executable, str(COMPARE), "--model-of", "NVIDIA A100"],
                                capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("compare.py: 'NVIDIA A100' is not"), result.stderr)


class KernelNamespaces(unittest.TestCase):
    def test_the_synthetic_sources(self):
        for lesson, namespace in [("01", "lesson01"), ("02", "lesson01"), ("03", "lesson01"),
                                  ("05", "lesson06"), ("06", "lesson06")]:
            self.assertEqual(compare.kernel_namespace(lesson, KERNEL_SOURCES), namespace, lesson)

    def test_no_kernel_anywhere_is_an_error(self):
        for lesson in ("04", "07"):  # nothing included; an include cycle
            with self.assertRaisesRegex(compare.ProfileError, "defines no __global__ kernel"):
                compare.kernel_namespace(lesson, KERNEL_SOURCES)
        with self.assertRaisesRegex(compare.ProfileError, "lesson 09: expected one"):
            compare.kernel_namespace("09", KERNEL_SOURCES)

    def test_every_lesson_of_the_course_has_a_kernel(self):
        lessons = sorted(path.parent.name[:2] for path in LESSONS.glob("[0-9][0-9]_*/kernel.cuh"))
        self.assertTrue(lessons)
        for lesson in lessons:
            namespace = compare.kernel_namespace(lesson)
            if int(lesson) <= 14:
                self.assertEqual(namespace, f"lesson{lesson}")

    def test_the_final_kernels_lessons_run_it(self):
        # Lessons 15 on plug their pieces into common/hopper/gemm_kernel.cuh's kernel.
        for path in LESSONS.glob("1[5-8]_*/kernel.cuh"):
            self.assertEqual(compare.kernel_namespace(path.parent.name[:2]), "gemm::hopper", path)

    def test_an_export_of_a_lesson_that_runs_another_lessons_kernel(self):
        # Lesson 02 of the synthetic sources runs lesson 01's kernel: its export holds the
        # harness's kernel and lesson01::gemm_kernel, and the second is lesson 02's.
        with tempfile.TemporaryDirectory() as folder:
            export = Path(folder) / "lesson02.csv"
            export.write_text((FIXTURES / "fake_lesson03.csv").read_text()
                              .replace("lesson03::", "lesson01::"))
            profile = compare.read_profile(export, "02", KERNEL_SOURCES)
            self.assertTrue(profile.info["kernel"].startswith("lesson01::gemm_kernel("))
            self.assertEqual(profile.number(BANK_CONFLICTS), 1_000_000)
            with self.assertRaisesRegex(compare.ProfileError, "0 of them named lesson06::"):
                compare.read_profile(export, "05", KERNEL_SOURCES)


# A stand-in for nvidia-smi: prints the GPU's name, or fails as it does without a driver.
FAKE_NVIDIA_SMI = """#!/bin/sh
{body}
"""


class ReferenceFolders(OneLineErrors, unittest.TestCase):
    """profiles/reference/<model>/: h100 holds lessons 05 and 06 (2000-01-01), h200 lesson 05 only
    (2000-02-01, the newer). Lessons 03 and 04 have local exports."""

    def setUp(self):
        self.work, self.reports = temporary_reports(self)
        self.root = self.work / "reference"
        text = (FIXTURES / "fake_reference_lesson05.csv").read_text()
        self.write_reference("h100", "05", text.replace("NVIDIA H100 (synthetic test fixture)",
                                                        "NVIDIA H100 80GB HBM3"))
        self.write_reference("h100", "06", text.replace("# lesson: 05", "# lesson: 06")
                             .replace("NVIDIA H100 (synthetic test fixture)",
                                      "NVIDIA H100 80GB HBM3"))
        self.write_reference("h200", "05", text.replace("2000-01-01", "2000-02-01")
                             .replace("NVIDIA H100 (synthetic test fixture)", "NVIDIA H200"))
        self.no_gpu = str(self.work / "no-nvidia-smi")

    def write_reference(self, model, lesson, text):
        (self.root / model).mkdir(parents=True, exist_ok=True)
        (self.root / model / f"lesson{lesson}.csv").write_text(text)

    def nvidia_smi(self, body):
        path = self.work / "nvidia-smi"
        path.write_text(FAKE_NVIDIA_SMI.format(body=body))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        return str(path)

    def run_compare(self, *args, nvidia_smi=None):
        command = [sys.executable, str(COMPARE), *args,
                   "--reports-dir", str(self.reports), "--references-root", str(self.root),
                   "--nvidia-smi", nvidia_smi or self.no_gpu,
                   "--metrics-csv", str(FIXTURES / "fake_metrics.csv"),
                   "--focus-csv", str(FIXTURES / "fake_focus.csv")]
        return subprocess.run(command, capture_output=True, text=True)

    def source_lines(self, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        return [line.strip() for line in result.stdout.splitlines()[1:4]]


    def test_gpu_option_picks_the_folder(self):
        lines = self.source_lines(self.run_compare("03", "05", "--gpu", "h100"))
        self.assertEqual(lines[0], f"references: {self.root / 'h100'}/ (GPU=h100)")
        self.assertIn(f"lesson 05: {self.root / 'h100' / 'lesson05.csv'} (reference", lines[2])

    def test_the_gpu_here_picks_the_folder(self):
        result = self.run_compare("03", "05", nvidia_smi=self.nvidia_smi('echo "NVIDIA H200"'))
        lines = self.source_lines(result)
        self.assertEqual(lines[0], f"references: {self.root / 'h200'}/ (the GPU here is "
                                   "NVIDIA H200; GPU=h100 picks another (h100))")
        self.assertIn(str(self.root / "h200" / "lesson05.csv"), lines[2])
        # The GPU here has no reference of lesson 06: say where there is one.
        result = self.run_compare("05", "06", nvidia_smi=self.nvidia_smi('echo "NVIDIA H200"'))
        self.assert_one_line_error(result, "lesson 06: no profile", "make profile L=06",
                                   str(self.root / "h200" / "lesson06.csv"),
                                   "references of lesson 06 exist for h100: GPU=h100")
        # --gpu wins over the GPU here.
        result = self.run_compare("05", "06", "--gpu", "h100",
                                  nvidia_smi=self.nvidia_smi('echo "NVIDIA H200"'))
        self.assertIn(f"references: {self.root / 'h100'}/ (GPU=h100)", result.stdout)

    def test_without_a_gpu_the_newest_folder_with_every_lesson(self):
        lines = self.source_lines(self.run_compare("03", "05"))
        self.assertEqual(lines[0], f"references: {self.root / 'h200'}/ (no GPU here; of h100, "
                                   "h200, which all have lesson 05, the newest, 2000-02-01; "
                                   "GPU=h100 picks another)")
        self.assertIn("measured 2000-02-01", lines[2])
        # Only h100 has both 05 and 06.
        lines = self.source_lines(self.run_compare("05", "06"))
        self.assertEqual(lines[0], f"references: {self.root / 'h100'}/ (no GPU here; the only "
                                   "folder with lessons 05, 06)")

    def test_nvidia_smi_without_an_answer_is_no_gpu(self):
        result = self.run_compare("03", "05", nvidia_smi=self.nvidia_smi(
            'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver"'
            ' >&2; exit 9'))
        self.assertIn("(no GPU here; of h100, h200", self.source_lines(result)[0])

    def test_a_gpu_of_another_family_is_like_no_gpu(self):
        result = self.run_compare("05", "06", nvidia_smi=self.nvidia_smi(
            'echo "NVIDIA GeForce RTX 4090"'))
        self.assertIn("(the GPU here, NVIDIA GeForce RTX 4090, is not a Hopper GPU; the only "
                      "folder with lessons 05, 06)", self.source_lines(result)[0])

    def test_no_folder_with_every_lesson(self):
        result = self.run_compare("05", "07")
        self.assert_one_line_error(result, "no GPU here", "lessons 05, 07",
                                   "lesson 05: h100, h200; lesson 07: none",
                                   "make profile L=07")

    def test_local_exports_need_no_reference(self):
        result = self.run_compare("03", "04", nvidia_smi=self.nvidia_smi("exit 99"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("references:", result.stdout)

    def test_bad_gpu_model(self):
        self.assert_one_line_error(self.run_compare("03", "05", "--gpu", "../h100"),
                                   "GPU=../h100: not a GPU model", "h100, h200")
        self.assert_one_line_error(self.run_compare("03", "05", "--gpu", "h300"),
                                   str(self.root / "h300" / "lesson05.csv"),
                                   "references of lesson 05 exist for h100, h200")

    def test_different_gpus_are_named_under_the_table(self):
        result = self.run_compare("03", "05", "--gpu", "h200")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("warning: the lessons were profiled on different GPUs (NVIDIA H100 "
                      "(synthetic test fixture): lesson 03; NVIDIA H200: lesson 05)", result.stdout)
        result = self.run_compare("05", "06", "--gpu", "h100")
        self.assertNotIn("different GPUs", result.stdout)

    def test_different_shapes_are_named_under_the_table(self):
        text = (self.root / "h100" / "lesson06.csv").read_text()
        self.write_reference("h100", "06", text.replace("4096 x 4096 x 4096",
                                                        "8192 x 8192 x 8192"))
        result = self.run_compare("05", "06", "--gpu", "h100")
        self.assertIn("warning: the lessons were profiled at different shapes (4096 x 4096 x "
                      "4096: lesson 05; 8192 x 8192 x 8192: lesson 06)", result.stdout)

    @unittest.skipUnless(any(LESSONS.glob("16_*/kernel.cuh")), "a hand-out without lesson 16")
    def test_lessons_15_and_16_from_references(self):
        text = (FIXTURES / "fake_reference_lesson05.csv").read_text()
        for lesson in ("15", "16"):
            self.write_reference("h200", lesson, text.replace("# lesson: 05",
                                                              f"# lesson: {lesson}"))
        result = self.run_compare("15", "16", nvidia_smi=self.nvidia_smi('echo "NVIDIA H200"'))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(str(self.root / "h200" / "lesson16.csv"), result.stdout)


class Errors(CompareTestCase):
    def write(self, name, text):
        (self.reports / name).write_text(text)

    def test_lesson_with_no_file_is_an_error(self):
        result = self.run_compare("03", "09")
        self.assert_one_line_error(result, "lesson 09", "make profile L=09")

    def test_unknown_metric_is_an_error(self):
        result = self.run_compare("03", "04", "--metric", "sm__no_such_metric.sum")
        self.assert_one_line_error(result, "unknown metric 'sm__no_such_metric.sum'")

    def test_metric_outside_the_list_works_when_every_file_has_it(self):
        result = self.run_compare("03", "04", "--metric", "sm__cycles_active.avg", "--names")
        self.assertEqual(result.returncode, 0, result.stderr)
        line = self.table_line(result.stdout, "sm__cycles_active.avg")
        self.assertTrue(line.endswith("-500,000 (-26.3%)"), line)
        # The reference holds only curated metrics.
        result = self.run_compare("03", "05", "--metric", "sm__cycles_active.avg")
        self.assert_one_line_error(result, "unknown metric", "lesson05.csv")

    def test_only_one_lesson_is_a_usage_error(self):
        result = self.run_compare("03")
        self.assertEqual(result.returncode, 2)
        self.assertIn("at least two lessons", result.stderr)

    def test_curated_metric_missing_from_a_file_is_na_with_a_note(self):
        lines = (FIXTURES / "fake_lesson04.csv").read_text().splitlines()
        self.write("lesson04.csv", "\n".join(line.replace("dram__bytes_read.sum", "dram__other.sum")
                                             for line in lines) + "\n")
        result = self.run_compare("03", "04")
        self.assertEqual(result.returncode, 0, result.stderr)
        line = self.table_line(result.stdout, "Bytes read from DRAM")
        self.assertTrue(line.endswith("n/a"), line)
        self.assertIn(f"note: dram__bytes_read.sum is not in {self.reports / 'lesson04.csv'}",
                      result.stdout)

    def test_empty_file(self):
        self.write("lesson04.csv", "")
        self.assert_one_line_error(self.run_compare("03", "04"), "lesson04.csv", "empty")

    def test_row_with_the_wrong_number_of_fields(self):
        lines = (FIXTURES / "fake_lesson04.csv").read_text().splitlines()
        self.write("lesson04.csv", "\n".join(lines[:2] + [lines[2] + ',"1"']) + "\n")
        self.assert_one_line_error(self.run_compare("03", "04"), "row 3", "fields")

    def test_not_an_ncu_export(self):
        self.write("lesson04.csv", "a,b\n1,2\n3,4\n")
        self.assert_one_line_error(self.run_compare("03", "04"), "not an ncu raw CSV export")

    def test_several_kernels_and_none_of_the_lesson(self):
        lines = (FIXTURES / "fake_lesson03.csv").read_text().splitlines()
        self.write("lesson04.csv", "\n".join(lines) + "\n")
        self.assert_one_line_error(self.run_compare("03", "04"), "2 kernels", "lesson04::")

    def test_reference_with_a_bad_header(self):
        self.write("lesson04.csv", "# lesson: 04\nname,value\nx,1\n")
        self.assert_one_line_error(self.run_compare("03", "04"), "metric,unit,value")

    def test_units_that_disagree_are_converted_to_the_finer_one(self):
        text = (FIXTURES / "fake_lesson04.csv").read_text()
        text = text.replace('"nsecond"', '"usecond"').replace('"1,500,000"', '"1,500"')
        self.write("lesson04.csv", text)
        result = self.run_compare("03", "04")
        self.assertEqual(result.returncode, 0, result.stderr)
        line = self.table_line(result.stdout, "Kernel duration")
        self.assertIn(" nsecond ", line)
        self.assertIn("1,500,000", line)
        self.assertTrue(line.endswith("-500,000 (-25.0%) better"), line)
        self.assertIn("note: gpu__time_duration.sum: the files use different units "
                      "(nsecond, usecond); all its values are shown in nsecond", result.stdout)

    def test_units_that_cannot_be_converted(self):
        text = (FIXTURES / "fake_lesson04.csv").read_text().replace('"nsecond"', '"cycle"')
        self.write("lesson04.csv", text)
        self.assert_one_line_error(self.run_compare("03", "04"), "gpu__time_duration.sum",
                                   "(cycle, nsecond)", "cannot convert", "--print-units base")


class RealExportExcerpt(unittest.TestCase):
    """Lessons 03 and 04 as our H100 measured them, exported without --print-units base."""

    def setUp(self):
        self.reports = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.reports)
        for lesson in ("03", "04"):
            shutil.copy(FIXTURES / f"real_h100_lesson{lesson}_excerpt.csv",
                        self.reports / f"lesson{lesson}.csv")

    def run_compare(self, *args):
        # The course's own lists: the excerpt holds a few of their metrics, the rest are n/a.
        command = [sys.executable, str(COMPARE), "03", "04", *args,
                   "--reports-dir", str(self.reports), "--reference-dir", str(self.reports)]
        result = subprocess.run(command, capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def line(self, output, fragment):
        lines = [line for line in output.splitlines() if fragment in line]
        self.assertEqual(len(lines), 1, output)
        return lines[0]

    def test_reads_the_real_layout(self):
        profile = compare.read_profile(FIXTURES / "real_h100_lesson03_excerpt.csv", "03")
        self.assertEqual(profile.kind, "local export")
        # The Device column says "0"; the name comes from device__attribute_display_name.
        self.assertEqual(profile.info["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertTrue(profile.info["kernel"].startswith("void gemm_kernel<TileShape<"))
        self.assertEqual(profile.number(BANK_CONFLICTS), 352_326_939)
        self.assertEqual(profile.units["gpu__time_duration.sum"], "ms")
        self.assertEqual(profile.number("gpu__time_duration.sum"), 1.952672)
        self.assertIsNone(profile.number(
            "FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed"))

    def test_bank_conflicts(self):
        output = self.run_compare()
        line = self.line(output, "Shared-memory load bank conflicts")
        self.assertTrue(line.startswith("*"), line)  # lesson 04's focus
        self.assertIn("352,326,939", line)
        self.assertIn("5,319", line)
        self.assertTrue(line.endswith("-352,321,620 (-100.0%) better"), line)
        self.assertIn("lesson 03: " + str(self.reports / "lesson03.csv") +
                      " (local export; NVIDIA H100 80GB HBM3)", output)
        self.assertNotIn("different GPUs", output)

    def test_milliseconds_and_microseconds(self):
        output = self.run_compare()
        line = self.line(output, "Kernel duration")
        self.assertIn(" us ", line)
        self.assertIn("1,952.7", line)  # 1.952672 ms
        self.assertIn("597.1", line)
        self.assertTrue(line.endswith("-1,355.6 (-69.4%) better"), line)
        self.assertIn("note: gpu__time_duration.sum: the files use different units (ms, us); "
                      "all its values are shown in us", output)

    def test_units_that_agree_are_left_alone(self):
        output = self.run_compare()
        self.assertIn(" Mbyte ", self.line(output, "Bytes read from DRAM"))
        self.assertIn(" Kbyte/block ", self.line(output, "Static shared memory per block"))
        self.assertNotIn("note: dram__bytes_read.sum", output)

    def test_rates_with_scaled_units(self):
        output = self.run_compare("--names",
                                  "--metric", "pcie__read_bytes.sum.per_second",
                                  "--metric", "lts__t_sectors_data_ecc.sum.per_second")
        line = self.line(output, "pcie__read_bytes.sum.per_second ")
        self.assertIn(" byte/s ", line)
        self.assertIn("262,204.8", line)  # 262.204815 Kbyte/s
        self.assertTrue(line.endswith("-262,204.8 (-100.0%)"), line)
        line = self.line(output, "lts__t_sectors_data_ecc.sum.per_second ")
        self.assertIn(" sector/ms ", line)
        self.assertIn("780.5", line)
        self.assertIn("8,346.7", line)  # 8.346731 sector/us


class CourseLists(unittest.TestCase):
    """The real profiles/metrics.csv and focus.csv load, and every lesson has its focus."""

    def test_curated_list_and_focus_list(self):
        curated = compare.load_curated_metrics()
        self.assertTrue(25 <= len(curated) <= 40, len(curated))
        focus = compare.load_focus(curated=curated)
        # Lessons 01-15, or as many of them as a homework hand-out holds; 16 and 17 have no focus.
        lessons = sorted(path.parent.name[:2] for path in LESSONS.glob("[0-9][0-9]_*/kernel.cuh"))
        self.assertEqual(sorted(focus), [lesson for lesson in lessons if int(lesson) <= 15])

    def test_focus_metric_outside_the_list_is_an_error(self):
        curated = compare.load_curated_metrics(FIXTURES / "fake_metrics.csv")
        with self.assertRaises(compare.ProfileError):
            compare.load_focus(compare.DEFAULT_FOCUS_CSV, curated)

    def test_bad_better_value_is_an_error(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "metrics.csv"
            path.write_text("metric,label,better,collected,unit_note,why\n"
                            "dram__bytes_read.sum,Bytes,smaller,full-set,bytes,why\n")
            with self.assertRaisesRegex(compare.ProfileError, "'higher', 'lower' or 'neither'"):
                compare.load_curated_metrics(path)

    def test_bad_collected_value_is_an_error(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "metrics.csv"
            path.write_text("metric,label,better,collected,unit_note,why\n"
                            "dram__bytes_read.sum,Bytes,lower,metrics,bytes,why\n")
            with self.assertRaisesRegex(compare.ProfileError, "'full-set' or 'explicit'"):
                compare.load_curated_metrics(path)

    def test_the_old_header_is_an_error(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "metrics.csv"
            path.write_text("metric,label,better,unit_note,why\n"
                            "dram__bytes_read.sum,Bytes,lower,bytes,why\n")
            with self.assertRaisesRegex(compare.ProfileError, "collected"):
                compare.load_curated_metrics(path)

    def test_dram_bandwidth_share_has_no_better_direction(self):
        # It rises when the same bytes move faster and when more bytes move than needed; the bytes
        # read from DRAM say which, and for them lower is better.
        better = {metric.name: metric.better for metric in compare.load_curated_metrics()}
        self.assertEqual(better["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"],
                         "neither")
        self.assertEqual(better["dram__bytes_read.sum"], "lower")

    def test_few_metrics_are_explicit(self):
        # Each explicit metric goes to ncu's --metrics, where one bad name fails every profile.
        explicit = [metric.name for metric in compare.load_curated_metrics()
                    if metric.collected == "explicit"]
        self.assertLessEqual(len(explicit), 3, explicit)


if __name__ == "__main__":
    unittest.main()
