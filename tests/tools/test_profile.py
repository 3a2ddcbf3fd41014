"""Tests of profiles/profile.py without a GPU: the ncu command lines it builds (with --set full,
and with --curated-only), its error messages, and whole runs against a stand-in for ncu that
replays a synthetic export."""
import importlib.util
import json
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROFILE = REPOSITORY / "profiles" / "profile.py"
MULTICAST = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum"
FAKE_CURATED = ["gpu__time_duration.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                "dram__bytes_read.sum",
                "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                "launch__registers_per_thread", MULTICAST]
sys.path.insert(0, str(REPOSITORY / "profiles"))

# Loaded under another name: "profile" is also a module of Python's standard library.
_spec = importlib.util.spec_from_file_location("profile_script", PROFILE)
profile_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(profile_script)

# A stand-in for ncu: --version prints a version, --import prints the synthetic export, and
# a profiling run creates the report file it was given (or exits with fail_with, or, without
# write_report, writes nothing: what ncu does when no kernel matched its filter).
FAKE_NCU = """#!{python}
import sys
arguments = sys.argv[1:]
if arguments == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 0.0 (synthetic stand-in)")
elif "--import" in arguments:
    print(open({export!r}).read(), end="")
elif {fail_with}:
    sys.exit({fail_with})
elif {write_report}:
    open(arguments[arguments.index("--export") + 1], "w").write("synthetic report")
"""


def pairs(command):
    """Every (option, value) neighbour pair of a command line."""
    return set(zip(command, command[1:]))


class Commands(unittest.TestCase):
    def test_profile_command(self):
        command = profile_script.profile_command(
            "/usr/bin/ncu", Path("build/lessons/lesson07"), "^(void )?lesson07::",
            (4096, 2048, 1024), Path("profiles/reports/lesson07.ncu-rep"),
            ["gpu__time_duration.sum", "dram__bytes_read.sum"])
        self.assertEqual(command[0], "/usr/bin/ncu")
        for option in [("--set", "full"), ("--import-source", "yes"), ("--clock-control", "none"),
                       ("--kernel-name-base", "demangled"),
                       ("--kernel-name", "regex:^(void )?lesson07::"),
                       ("--launch-skip", "1"), ("--launch-count", "1"),
                       ("--metrics", "gpu__time_duration.sum,dram__bytes_read.sum"),
                       ("--export", "profiles/reports/lesson07.ncu-rep")]:
            self.assertIn(option, pairs(command))
        self.assertIn("--force-overwrite", command)
        self.assertEqual(command[-8:], ["build/lessons/lesson07", "--profile", "--m", "4096",
                                        "--n", "2048", "--k", "1024"])

    def test_no_metrics_option_without_explicit_metrics(self):
        command = profile_script.profile_command(
            "ncu", Path("build/lessons/lesson07"), "^(void )?lesson07::", (4096, 4096, 4096),
            Path("r/lesson07.ncu-rep"), [])
        self.assertNotIn("--metrics", command)
        self.assertIn(("--set", "full"), pairs(command))
        self.assertIn(("--export", "r/lesson07.ncu-rep"), pairs(command))

    def test_curated_only_command(self):
        curated = profile_script.load_curated_metrics(FIXTURES / "fake_metrics.csv")
        metrics = profile_script.curated_only_metrics(curated)
        self.assertEqual(metrics, FAKE_CURATED + ["device__attribute_display_name"])
        command = profile_script.profile_command(
            "ncu", Path("build/lessons/lesson16"), "^(void )?gemm::hopper::", (4096, 4096, 4096),
            Path("r/lesson16.ncu-rep"), metrics, full_set=False)
        # Only the curated metrics: no section set, no sources in the report.
        self.assertNotIn("--set", command)
        self.assertNotIn("--section", command)
        self.assertNotIn("--import-source", command)
        for option in [("--metrics", ",".join(metrics)), ("--clock-control", "none"),
                       ("--kernel-name-base", "demangled"),
                       ("--kernel-name", "regex:^(void )?gemm::hopper::"),
                       ("--launch-skip", "1"), ("--launch-count", "1"),
                       ("--export", "r/lesson16.ncu-rep")]:
            self.assertIn(option, pairs(command))
        self.assertEqual(command[-8:], ["build/lessons/lesson16", "--profile", "--m", "4096",
                                        "--n", "4096", "--k", "4096"])

    def test_curated_only_asks_for_every_metric_of_the_course(self):
        course = profile_script.load_curated_metrics()
        metrics = profile_script.curated_only_metrics(course)
        self.assertEqual(metrics[:-1], [metric.name for metric in course])
        self.assertEqual(metrics[-1], "device__attribute_display_name")

    def test_only_the_explicit_metrics_go_to_the_command_line(self):
        curated = profile_script.load_curated_metrics(FIXTURES / "fake_metrics.csv")
        self.assertEqual(profile_script.explicit_metrics(curated), [MULTICAST])
        # The course's list: every explicit metric is one that --set full does not export.
        course = profile_script.load_curated_metrics()
        explicit = profile_script.explicit_metrics(course)
        self.assertIn(MULTICAST, explicit)
        self.assertNotIn("gpu__time_duration.sum", explicit)

    def test_export_command(self):
        command = profile_script.export_command("ncu", Path("r/lesson07.ncu-rep"))
        self.assertEqual(command[:3], ["ncu", "--import", "r/lesson07.ncu-rep"])
        self.assertIn("--csv", command)
        for option in [("--page", "raw"), ("--print-units", "base"),
                       ("--print-kernel-base", "demangled")]:
            self.assertIn(option, pairs(command))

    def test_the_kernel_filter_matches_only_the_lesson(self):
        pattern = profile_script.kernel_name_regex(profile_script.kernel_namespace("07"))
        self.assertRegex("void lesson07::gemm_kernel<128, 256>(gemm::GemmArgs)", pattern)
        self.assertRegex("lesson07::gemm_kernel(int)", pattern)
        self.assertNotRegex("gemm::poison_kernel(__nv_bfloat16 *, long)", pattern)
        self.assertNotRegex("void lesson08::gemm_kernel<1>(int)", pattern)


class Runs(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.work)
        self.build = self.work / "build"
        (self.build / "lessons").mkdir(parents=True)
        (self.build / "lessons" / "lesson03").write_text("stands in for the lesson executable")
        self.reports = self.work / "reports"

    def fake_ncu(self, fail_with=0, write_report=True, export=FIXTURES / "fake_lesson03.csv"):
        path = self.work / "ncu"
        path.write_text(FAKE_NCU.format(python=sys.executable, fail_with=fail_with,
                                        write_report=write_report, export=str(export)))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        return path

    def run_profile(self, *args, lessons_dir=None):
        command = [sys.executable, str(PROFILE), *args, "--build", str(self.build),
                   "--reports-dir", str(self.reports),
                   "--metrics-csv", str(FIXTURES / "fake_metrics.csv")]
        command += ["--lessons-dir", str(lessons_dir)] if lessons_dir else []
        return subprocess.run(command, capture_output=True, text=True)

    def assert_one_line_error(self, result, *fragments):
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertTrue(result.stderr.startswith("profile.py: "), result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)

    def test_ncu_not_installed(self):
        result = self.run_profile("03", "--ncu", str(self.work / "no-such-ncu"))
        self.assert_one_line_error(result, "not found", "Nsight Compute")

    def test_executable_missing(self):
        result = self.run_profile("04", "--ncu", str(self.fake_ncu()))
        self.assert_one_line_error(result, "lesson04 not found", "make lesson04")

    def test_ncu_failing(self):
        result = self.run_profile("03", "--ncu", str(self.fake_ncu(fail_with=3)))
        self.assert_one_line_error(result, "ncu failed with exit code 3", MULTICAST,
                                   "--no-explicit-metrics")
        self.assertFalse((self.reports / "lesson03.csv").exists())
        result = self.run_profile("03", "--no-explicit-metrics",
                                  "--ncu", str(self.fake_ncu(fail_with=3)))
        self.assert_one_line_error(result, "ncu failed with exit code 3")
        self.assertNotIn("--metrics", result.stderr)

    def test_no_kernel_profiled(self):
        result = self.run_profile("03", "--ncu", str(self.fake_ncu(write_report=False)))
        self.assert_one_line_error(result, "ncu wrote no report", "namespace lesson03")

    def test_a_lesson_that_runs_another_lessons_kernel(self):
        # Lesson 02 of fixtures/kernel_sources runs lesson 01's kernel: its namespace is profiled.
        (self.build / "lessons" / "lesson02").write_text("stands in for the lesson executable")
        export = self.work / "export.csv"
        export.write_text((FIXTURES / "fake_lesson03.csv").read_text()
                          .replace("lesson03::", "lesson01::"))
        result = self.run_profile("02", "--ncu", str(self.fake_ncu(export=export)),
                                  lessons_dir=FIXTURES / "kernel_sources")
        self.assertEqual(result.returncode, 0, result.stderr)
        record = json.loads((self.reports / "lesson02.json").read_text())
        self.assertIn(("--kernel-name", "regex:^(void )?lesson01::"), pairs(record["command"]))
        self.assertEqual(record["kernel_namespace"], "lesson01")
        result = self.run_profile("02", "--ncu", str(self.fake_ncu(write_report=False)),
                                  lessons_dir=FIXTURES / "kernel_sources")
        self.assert_one_line_error(result, "ncu wrote no report", "lesson 02's kernel in "
                                   "namespace lesson01")

    @unittest.skipUnless(any((REPOSITORY / "lessons").glob("16_*/kernel.cuh")),
                         "a hand-out without lesson 16")
    def test_lesson_16_is_profiled_as_the_final_kernel(self):
        (self.build / "lessons" / "lesson16").write_text("stands in for the lesson executable")
        export = self.work / "export.csv"
        export.write_text((FIXTURES / "fake_lesson03.csv").read_text()
                          .replace("lesson03::gemm_kernel(", "void gemm::hopper::gemm_kernel<1>("))
        result = self.run_profile("16", "--ncu", str(self.fake_ncu(export=export)))
        self.assertEqual(result.returncode, 0, result.stderr)
        record = json.loads((self.reports / "lesson16.json").read_text())
        self.assertIn(("--kernel-name", "regex:^(void )?gemm::hopper::"), pairs(record["command"]))

    def test_a_curated_only_run(self):
        export = FIXTURES / "fake_lesson03_curated_only.csv"
        result = self.run_profile("03", "--curated-only",
                                  "--ncu", str(self.fake_ncu(export=export)))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("make_reference.py 03", result.stdout)
        record = json.loads((self.reports / "lesson03.json").read_text())
        self.assertEqual(record["collection"], "curated-only")
        self.assertIn(("--metrics", ",".join(FAKE_CURATED + ["device__attribute_display_name"])),
                      pairs(record["command"]))
        self.assertNotIn("--set", record["command"])
        self.assertNotIn("--import-source", record["command"])

    def test_a_curated_only_export_without_a_curated_metric(self):
        # The --set full fixture lacks the GPU's name, which a curated-only run asks for.
        result = self.run_profile("03", "--curated-only", "--ncu", str(self.fake_ncu()))
        self.assert_one_line_error(result, "no value for device__attribute_display_name",
                                   "make_reference.py")
        export = self.work / "export.csv"
        export.write_text((FIXTURES / "fake_lesson03_curated_only.csv").read_text()
                          .replace("dram__bytes_read.sum", "dram__other.sum"))
        result = self.run_profile("03", "--curated-only",
                                  "--ncu", str(self.fake_ncu(export=export)))
        self.assert_one_line_error(result, "no value for dram__bytes_read.sum")

    def test_curated_only_and_no_explicit_metrics_exclude_each_other(self):
        result = self.run_profile("03", "--curated-only", "--no-explicit-metrics",
                                  "--ncu", str(self.fake_ncu()))
        self.assertEqual(result.returncode, 2)
        self.assertIn("not allowed with argument", result.stderr)

    def test_ncu_failing_in_a_curated_only_run(self):
        result = self.run_profile("03", "--curated-only", "--ncu", str(self.fake_ncu(fail_with=3)))
        self.assert_one_line_error(result, "ncu failed with exit code 3", "check_metrics.py")

    def test_a_whole_run(self):
        result = self.run_profile("3", "--m", "512", "--n", "256", "--k", "128",
                                  "--ncu", str(self.fake_ncu()))
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("lesson03.ncu-rep", "lesson03.csv", "lesson03.json"):
            self.assertIn(str(self.reports / name), result.stdout)
        self.assertEqual((self.reports / "lesson03.csv").read_text(),
                         (FIXTURES / "fake_lesson03.csv").read_text())
        record = json.loads((self.reports / "lesson03.json").read_text())
        self.assertEqual((record["lesson"], record["m"], record["n"], record["k"]),
                         ("03", 512, 256, 128))
        self.assertEqual(record["ncu"], "Version 0.0 (synthetic stand-in)")
        self.assertEqual(record["collection"], "full")
        self.assertIn("--profile", record["command"])
        self.assertIn(("--set", "full"), pairs(record["command"]))
        self.assertIn(("--metrics", MULTICAST), pairs(record["command"]))

    def test_a_run_without_the_explicit_metrics(self):
        result = self.run_profile("03", "--no-explicit-metrics", "--ncu", str(self.fake_ncu()))
        self.assertEqual(result.returncode, 0, result.stderr)
        record = json.loads((self.reports / "lesson03.json").read_text())
        self.assertNotIn("--metrics", record["command"])

    def test_bad_size_is_a_usage_error(self):
        result = self.run_profile("03", "--m", "0", "--ncu", str(self.fake_ncu()))
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a positive size", result.stderr)


if __name__ == "__main__":
    unittest.main()
