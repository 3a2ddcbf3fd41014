"""Tests of profiles/check_metrics.py against a synthetic excerpt in the layout of
`ncu --query-metrics` (fixtures/fake_query_metrics.txt), and against exports: the synthetic
fixtures/fake_lesson03.csv and an excerpt of a real --set full export from our H100
(fixtures/real_h100_lesson03_excerpt.csv, see fixtures/README.md)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHECK_METRICS = REPOSITORY / "profiles" / "check_metrics.py"
QUERY = FIXTURES / "fake_query_metrics.txt"
REAL_EXPORT = FIXTURES / "real_h100_lesson03_excerpt.csv"
MULTICAST = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum"
sys.path.insert(0, str(REPOSITORY / "profiles"))

import check_metrics  # noqa: E402  (after the path is set)

HEADER = "metric,label,better,collected,unit_note,why\n"


class CheckMetrics(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)

    def metrics_csv(self, *names, explicit=()):
        """A metrics.csv of `names` (collected=full-set) and `explicit` (collected=explicit)."""
        path = Path(self.folder.name) / "metrics.csv"
        rows = [f"{name},a label,lower,full-set,unit,why\n" for name in names]
        rows += [f"{name},a label,lower,explicit,unit,why\n" for name in explicit]
        path.write_text(HEADER + "".join(rows))
        return path

    def run_check(self, metrics_csv, *args):
        return subprocess.run([sys.executable, str(CHECK_METRICS), str(metrics_csv), str(QUERY),
                               *args], capture_output=True, text=True)

    def test_reads_the_query_output(self):
        known = check_metrics.read_query_metrics(QUERY)
        self.assertEqual(known["dram__bytes_read"], "Counter")
        self.assertEqual(known["sm__throughput"], "Throughput")
        self.assertEqual(known["smsp__average_warp_latency_issue_stalled_long_scoreboard"], "Ratio")
        self.assertEqual(
            known["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active"], "Ratio")
        self.assertEqual(known["gpu__dram_throughput"], "Throughput")
        self.assertEqual(known[MULTICAST.split(".")[0]], "Counter")
        self.assertEqual(known["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld"], "Counter")
        self.assertNotIn("generated", known)  # a continued description is no metric
        self.assertNotIn("Metric", known)
        self.assertNotIn("==PROF==", known)

    def test_the_test_list_passes(self):
        result = self.run_check(FIXTURES / "fake_metrics.csv")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("is valid", result.stdout)

    def test_misspelled_metric_is_caught_with_a_suggestion(self):
        result = self.run_check(self.metrics_csv(
            "dram__bytes_read.sum", "l1tex__data_bank_conflict_pipe_lsu_mem_shared_op_ld.sum"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("l1tex__data_bank_conflict_pipe_lsu_mem_shared_op_ld is not in the query "
                      "output (did you mean l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld?)",
                      result.stdout)
        self.assertNotIn("dram__bytes_read.sum:", result.stdout)
        self.assertIn("1 problem(s)", result.stderr)

    def test_the_gmma_cycles_metric_that_gh100_lacks(self):
        name = "sm__pipe_tensor_op_gmma_cycles_active"
        problems = check_metrics.check(
            self.metrics_csv(f"{name}.avg.pct_of_peak_sustained_active"), QUERY)
        self.assertEqual(len(problems), 1)
        self.assertIn(f"{name} is not in the query output", problems[0])

    def test_suffixes_must_fit_the_type(self):
        known = check_metrics.read_query_metrics(QUERY)
        good = ["dram__bytes_read.sum", "dram__bytes_read.sum.per_second",
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                "smsp__average_warp_latency_issue_stalled_long_scoreboard",
                "smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio",
                "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", MULTICAST]
        bad = ["dram__bytes_read", "dram__bytes_read.ratio", "dram__bytes_read.sum.per_year",
               "sm__throughput.avg", "sm__throughput.sum.per_second",
               "smsp__average_warp_latency_issue_stalled_long_scoreboard.sum"]
        for name in good:
            self.assertIsNone(check_metrics.problem_with(name, known), name)
        for name in bad:
            self.assertIn("is not a valid suffix", check_metrics.problem_with(name, known), name)

    def test_launch_statistics(self):
        known = check_metrics.read_query_metrics(QUERY)
        self.assertIsNone(check_metrics.problem_with("launch__registers_per_thread", known))
        self.assertIn("not one of ncu's launch statistics",
                      check_metrics.problem_with("launch__register_per_thread", known))
        self.assertIn("no suffix", check_metrics.problem_with("launch__registers_per_thread.sum",
                                                              known))

    def test_raw_export_must_have_every_metric(self):
        result = self.run_check(FIXTURES / "fake_metrics.csv", "--raw-csv",
                                str(FIXTURES / "fake_lesson03.csv"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        result = self.run_check(self.metrics_csv("dram__bytes_read.avg"), "--raw-csv",
                                str(FIXTURES / "fake_lesson03.csv"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("dram__bytes_read.avg: not a column of", result.stdout)
        self.assertIn("columns with that base name: dram__bytes_read.sum", result.stdout)

    def test_explicit_metrics_need_not_be_columns_of_a_full_set_export(self):
        # The real --set full export has no TMA multicast column: marked explicit, that is fine.
        names = ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "dram__bytes_read.sum",
                 "gpu__time_duration.sum"]
        result = self.run_check(self.metrics_csv(*names, explicit=[MULTICAST]),
                                "--raw-csv", str(REAL_EXPORT))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"note: {MULTICAST} is collected explicitly", result.stdout)
        self.assertNotIn("mark it full-set", result.stdout)
        # Marked full-set, the same name is a problem.
        result = self.run_check(self.metrics_csv(*names, MULTICAST), "--raw-csv", str(REAL_EXPORT))
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{MULTICAST}: not a column of {REAL_EXPORT}", result.stdout)
        self.assertIn("1 problem(s)", result.stderr)

    def test_a_valid_name_can_still_be_missing_from_a_real_export(self):
        # Both are valid metrics, but --set full exports the DRAM throughput as gpu__dram_...
        good, bad = ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                     "dram__throughput.avg.pct_of_peak_sustained_elapsed")
        self.assertEqual(check_metrics.check(self.metrics_csv(good, bad), QUERY), [])
        problems = check_metrics.check(self.metrics_csv(good, bad), QUERY, [REAL_EXPORT])
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith(f"{bad}: not a column of"), problems[0])

    def test_explicit_metric_found_in_an_export_gets_a_hint(self):
        # profile.py's exports hold the explicit metrics too (it asked for them with --metrics).
        notes = check_metrics.explicit_notes(FIXTURES / "fake_metrics.csv",
                                             [FIXTURES / "fake_lesson03.csv"])
        self.assertEqual(len(notes), 1, notes)
        self.assertIn(MULTICAST, notes[0])
        self.assertIn("mark it full-set", notes[0])

    def test_unreadable_query_file_is_a_one_line_error(self):
        result = subprocess.run([sys.executable, str(CHECK_METRICS),
                                 str(FIXTURES / "fake_metrics.csv"), "/nonexistent/query.txt"],
                                capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("cannot read /nonexistent/query.txt", result.stderr)


if __name__ == "__main__":
    unittest.main()
