"""The grader's arithmetic and outputs (tests/grading/report.py), its shapes (shapes.py) and the
lessons' instruction signatures (lessons.py)."""
import json
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import lessons  # noqa: E402  (after the path is set)
import report  # noqa: E402
import shapes  # noqa: E402

TEST_KEYS = {"name", "score", "max_score", "status", "visibility", "output"}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


def full_report(public=16, hidden=8, failing=(), public_mode=False, performance=1.0):
    """A report in which every test passes, except the (part, index) pairs in `failing`."""
    graded = report.Report(8, public_mode=public_mode, quick=False)
    counts = {"public": public, "hidden": 0 if public_mode else hidden, "robustness": 5, "technique": 1}
    for part, count in counts.items():
        for index in range(count):
            graded.add(f"{part} {index}", part, (part, index) not in failing, seconds=1.5)
    if not public_mode:
        for index in range(2):
            graded.add(f"performance {index}", "performance", True, fraction=performance)
    return graded


def check_schema(case, results):
    """Gradescope's autograder results: the keys the course writes, with their types."""
    case.assertIsInstance(results["execution_time"], (int, float))
    case.assertIsInstance(results["output"], str)
    case.assertIn(results["visibility"], VISIBILITIES)
    case.assertIn(results["stdout_visibility"], VISIBILITIES)
    case.assertIsInstance(results["leaderboard"], list)
    for test in results["tests"]:
        case.assertTrue(TEST_KEYS <= set(test), test)
        case.assertIn(test["status"], {"passed", "failed"})
        case.assertIn(test["visibility"], VISIBILITIES)
        case.assertLessEqual(test["score"], test["max_score"] + 1e-9)
    json.dumps(results)  # serializable as it is


class Points(unittest.TestCase):
    def test_everything_passed_is_100_split_evenly(self):
        graded = full_report()
        graded.finalize()
        self.assertAlmostEqual(graded.score, 100)
        self.assertAlmostEqual(graded.tests_of("public")[0].max_score, 20 / 16)
        self.assertAlmostEqual(graded.tests_of("hidden")[0].max_score, 5)
        self.assertAlmostEqual(graded.tests_of("robustness")[0].max_score, 2)

    def test_one_failure_costs_its_share(self):
        graded = full_report(failing=[("hidden", 3)])
        graded.finalize()
        self.assertAlmostEqual(graded.score, 95)

    def test_no_correct_public_shape_means_no_technique_or_robustness(self):
        graded = full_report(failing=[("public", index) for index in range(16)])
        graded.finalize()
        self.assertEqual(sum(test.score for test in graded.tests_of("technique")), 0)
        self.assertEqual(sum(test.score for test in graded.tests_of("robustness")), 0)

    def test_performance_is_linear_below_nine_tenths(self):
        self.assertEqual(report.performance_fraction([1.0, 0.95]), (1.0, (1.0 * 0.95) ** 0.5))
        fraction, mean = report.performance_fraction([0.45, 0.45])
        self.assertAlmostEqual(fraction, 0.5)
        self.assertAlmostEqual(mean, 0.45)
        self.assertEqual(report.performance_fraction([0.8, 0.0])[0], 0.0)
        self.assertEqual(report.performance_fraction([])[0], 0.0)
        graded = full_report(performance=0.5)
        graded.finalize()
        self.assertAlmostEqual(graded.score, 90)

    def test_the_physical_limit_is_a_hopper_sxm_peak(self):
        # bf16: 4096 FLOP per clock per SM (what `lessonNN --describe` says of the kind).
        self.assertAlmostEqual(report.peak_flops(4096) / 1e12, 1070.5, places=0)
        self.assertAlmostEqual(report.peak_flops(4096, 114) / 1e12, 924.5, places=0)
        # e4m3 (lesson 18) runs at twice the bf16 rate: cuBLASLt's block-scaled fp8 reaches
        # 1158-1294 TFLOP/s on an H200, which must not be flagged.
        self.assertAlmostEqual(report.peak_flops(8192, 132) / 1e12, 2141.0, places=0)

    def test_public_mode_counts_forty_points(self):
        graded = full_report(public_mode=True)
        graded.finalize()
        self.assertEqual((graded.score, graded.max_score), (40, 40))
        self.assertFalse(graded.tests_of("hidden"))

    def test_a_part_that_did_not_run_still_shows_its_points(self):
        graded = report.Report(3, public_mode=False, quick=False)
        graded.not_run["public"] = "the submission did not build"
        graded.finalize()
        self.assertEqual(graded.score, 0)
        self.assertEqual(sum(test.max_score for test in graded.tests), 100)
        self.assertIn("did not build", graded.tests_of("public")[0].output)


class Outputs(unittest.TestCase):
    def test_results_json_has_gradescopes_shape(self):
        graded = full_report(failing=[("public", 0)])
        graded.leaderboard.append({"name": "speed", "value": 1.0})
        graded.finalize()
        results = graded.results_json(12.3)
        check_schema(self, results)
        self.assertAlmostEqual(results["score"], 100 - 20 / 16)
        hidden = [test for test in results["tests"] if test["name"].startswith("hidden")]
        self.assertTrue(hidden)
        self.assertTrue(all(test["visibility"] == "after_published" for test in hidden))
        visible = [test for test in results["tests"] if not test["name"].startswith("hidden")]
        self.assertTrue(all(test["visibility"] == "visible" for test in visible))
        self.assertTrue(all("seconds" in test["extra_data"] for test in results["tests"]))

    def test_an_infrastructure_error_is_not_a_score(self):
        graded = full_report()
        graded.infrastructure_error = "the GPU did not recover"
        graded.finalize()
        results = graded.results_json(5)
        check_schema(self, results)
        self.assertNotIn("score", results)
        self.assertEqual([test["name"] for test in results["tests"]], ["grading did not finish"])
        self.assertIn("INFRASTRUCTURE ERROR", results["output"])

    def test_the_summary_says_what_failed(self):
        graded = full_report()
        graded.add("host check shape_model", "technique", False,
                   "failed (exit code 1 (the check failed)): FAIL first\nFAIL first\n"
                   + "\n".join(f"FAIL line {i}" for i in range(10)))
        graded.finalize()
        summary = graded.summary(1.0).split("\n")
        header = next(index for index, line in enumerate(summary) if "host check shape_model" in line)
        self.assertIn("FAIL", summary[header])
        self.assertTrue(summary[header].endswith("host check shape_model: failed (exit code 1 (the "
                                                 "check failed)): FAIL first  [0.0 s]"))
        self.assertEqual(summary[header + 1].strip(), "FAIL first")
        self.assertEqual(summary[header + 2].strip(), "FAIL line 0")
        self.assertEqual(summary[header + 1 + report.SUMMARY_FAILURE_LINES].strip(),
                         "[... 5 more line(s) in results.json]")
        # A passing test keeps to one line.
        passing = next(index for index, line in enumerate(summary) if "public 0" in line)
        self.assertTrue(summary[passing + 1].startswith("  PASS"))

    def test_both_files_are_written(self):
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            graded = full_report()
            graded.flags.append("the regions name cublasCreate")
            summary = report.write_outputs(graded, Path(folder) / "out", 7)
            check_schema(self, json.loads((Path(folder) / "out" / "results.json").read_text()))
            self.assertIn("FLAGGED FOR REVIEW", summary)
            self.assertIn("hidden correctness: 40 / 40", summary)


class Shapes(unittest.TestCase):
    def setUp(self):
        self.public = shapes.public_shapes(REPOSITORY)

    def test_public_shapes_are_the_gpu_test_list(self):
        self.assertGreaterEqual(len(self.public), 16)
        self.assertEqual(len({shape.name for shape in self.public}), len(self.public))
        self.assertEqual((self.public[0].name, self.public[0].seed), ("tile_multiple", 1000))
        self.assertTrue(set(shapes.QUICK_PUBLIC) <= {shape.name for shape in self.public})

    def test_hidden_shapes_follow_the_secret_and_the_contract(self):
        first = shapes.hidden_shapes(b"secret", 8, self.public)
        self.assertEqual(first, shapes.hidden_shapes(b"secret", 8, self.public))
        self.assertNotEqual(first, shapes.hidden_shapes(b"other secret", 8, self.public))
        self.assertNotEqual(first, shapes.hidden_shapes(b"secret", 9, self.public))
        public = {(shape.m, shape.n, shape.k) for shape in self.public}
        for secret in (b"a", b"b", b"c", b"d"):
            for shape in shapes.hidden_shapes(secret, 5, self.public):
                self.assertTrue(shape.hidden)
                self.assertGreaterEqual(shape.m, 1)
                self.assertTrue(shape.n >= 8 and shape.n % 8 == 0 and shape.k >= 8 and shape.k % 8 == 0)
                self.assertLessEqual(max(shape.m, shape.n, shape.k), 4096)
                self.assertNotIn((shape.m, shape.n, shape.k), public)
                if shape.name.startswith("ragged"):
                    self.assertTrue(shape.m % 64 and shape.n % 64 and shape.k % 64)
        self.assertEqual([shape.name for shape in first],
                         ["ragged_1", "ragged_2", "tiny_1", "tiny_2", "skinny_1", "skinny_2", "large_1", "large_2"])
        self.assertEqual([shape.name for shape in shapes.quick_hidden(first)], ["ragged_1", "tiny_1", "large_1"])


class FusedEpilogue(unittest.TestCase):
    def setUp(self):
        self.public = shapes.public_shapes(REPOSITORY)

    def test_the_lessons_with_the_fused_epilogue(self):
        fused = [number for number in lessons.lesson_folders(REPOSITORY)
                 if lessons.load(REPOSITORY, number).fused_epilogue]
        self.assertEqual(fused, [15, 16, 17])

    def test_public_runs_cover_c_the_bias_and_every_activation(self):
        runs = shapes.fused_public(REPOSITORY, self.public)
        self.assertEqual(len(runs), len(shapes.FUSED_PUBLIC))
        self.assertEqual(len({run.name for run in runs} | {shape.name for shape in self.public}),
                         len(runs) + len(self.public))
        epilogues = [run.epilogue for run in runs]
        self.assertTrue(any(e.beta > 0 for e in epilogues) and any(e.beta < 0 for e in epilogues))
        self.assertTrue(any(e.bias for e in epilogues))
        self.assertTrue({"relu", "gelu", "silu"} <= {e.activation for e in epilogues})
        # A quick grade keeps a Stream-K-cut tile with C, the bias and an activation.
        first = runs[0]
        self.assertEqual((first.m, first.n, first.k), (1024, 1024, 16384))
        self.assertTrue(first.epilogue.beta and first.epilogue.bias and first.epilogue.activation != "none")

    def test_hidden_runs_follow_the_secret_and_read_c_and_the_bias(self):
        hidden = shapes.hidden_shapes(b"secret", 15, self.public)
        runs = shapes.fused_hidden(b"secret", 15, hidden)
        self.assertEqual(runs, shapes.fused_hidden(b"secret", 15, hidden))
        self.assertEqual([run.name for run in runs], ["ragged_1_fused", "tiny_1_fused", "skinny_1_fused",
                                                      "large_1_fused"])
        for run in runs:
            self.assertTrue(run.hidden and run.epilogue.bias and run.epilogue.beta != 0)
        other = shapes.fused_hidden(b"other", 15, shapes.hidden_shapes(b"other", 15, self.public))
        self.assertNotEqual([run.seed for run in runs], [run.seed for run in other])


class QuickGrades(unittest.TestCase):
    def test_a_k16_lesson_keeps_ragged_shapes(self):
        quick = shapes.quick_public(shapes.public_shapes(REPOSITORY, 16))
        self.assertIn("ragged_all_k_16", [shape.name for shape in quick])
        self.assertTrue(any(shape.m % 64 and shape.n % 64 for shape in quick))
        self.assertEqual([shape.name for shape in shapes.quick_public(shapes.public_shapes(REPOSITORY))],
                         list(shapes.QUICK_PUBLIC))


class Signatures(unittest.TestCase):
    def test_the_line_format(self):
        self.assertEqual(lessons.read_signature("// Graded instruction signature: HGMMA SYNCS.PHASECHK\n", "x"),
                         ["HGMMA", "SYNCS.PHASECHK"])
        self.assertEqual(lessons.read_signature("// Graded instruction signature: none\n", "x"), [])
        for bad in ("", "// Graded instruction signature: hgmma\n",
                    "// Graded instruction signature: HMMA\n// Graded instruction signature: LDSM\n"):
            with self.subTest(bad), self.assertRaises(lessons.LessonError):
                lessons.read_signature(bad, "x")

    def test_lessons_01_to_09_have_their_signatures(self):
        expected = {1: [], 2: [], 3: ["HMMA", "LDSM"], 4: ["HMMA", "LDSM"], 8: ["HGMMA", "UTMALDG", "SYNCS.PHASECHK"],
                    9: ["HGMMA", "UTMALDG", "SYNCS.PHASECHK"]}
        for number, signature in expected.items():
            self.assertEqual(lessons.load(REPOSITORY, number).signature, signature)


if __name__ == "__main__":
    unittest.main()
