"""The grader's validation (tests/grading/validate.py) without a GPU: the variants it grades (empty
body, stub, planted wrong answers), the quick-then-full escalation with a fake grader, the check
that every region has a planted wrong answer, and validation.json turned into Markdown tables."""
import json
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import lessons  # noqa: E402  (after the path is set)
import regions  # noqa: E402
import shapes  # noqa: E402
import validate  # noqa: E402

KERNEL = """#pragma once
#include "common/gemm.hpp"

namespace lesson42 {
__global__ void kernel(float* out, int n, int m, int k) {
  // BEGIN EXERCISE(sum, declares=total): add up the first n integers
  //   (in float)
  float total = 0.0f;
  for (int i = 0; i < n; ++i) total += float(i);
  // END EXERCISE
  // BEGIN EXERCISE(store): store the total
  out[0] = total;
  // END EXERCISE
}
}  // namespace lesson42
"""
PLANTED = {
    "off_by_one_42": {"lesson": 42, "region": "sum", "what": "one short",
                      "replace": [["i < n;", "i < n - 1;"]], "mode": "quick", "expect": {"score_max": 0}},
    "no_store_42": {"lesson": 42, "region": "store", "what": "stores nothing",
                    "delete_lines_containing": ["out[0]"], "append": ["  (void)total;"],
                    "mode": "full", "expect": {"score_below": 100}},
    "other_lesson": {"lesson": 7, "region": "sum", "what": "not this lesson", "body": [],
                     "mode": "quick", "expect": {}},
}


def variants(kinds=validate.KINDS):
    public = [shapes.Shape("square", 64, 64, 64, 1000)]
    return {variant.name: variant for variant in validate.lesson_variants(
        42, KERNEL, regions.parse_regions(KERNEL), PLANTED, public, kinds)}


class Variants(unittest.TestCase):
    def test_each_region_gets_an_empty_a_stub_and_its_planted_answers(self):
        found = variants()
        self.assertEqual(sorted(found), ["42_solution", "42_store_empty", "42_store_no_store_42",
                                         "42_store_stub", "42_sum_empty", "42_sum_off_by_one_42",
                                         "42_sum_stub"])
        self.assertEqual(found["42_solution"].modes, ("full",))
        self.assertEqual(found["42_sum_off_by_one_42"].modes, ("quick", "full"))
        self.assertEqual(found["42_store_no_store_42"].modes, ("full",))
        self.assertEqual(variants(("stub",)).keys(), {"42_store_stub", "42_sum_stub"})

    def test_an_empty_region_keeps_its_markers_and_task_lines(self):
        text = variants()["42_sum_empty"].text
        self.assertIn("  // BEGIN EXERCISE(sum, declares=total): add up the first n integers\n"
                      "  //   (in float)\n  // END EXERCISE\n", text)
        self.assertIn("out[0] = total;", text)
        self.assertTrue(variants()["42_sum_empty"].may_fail_to_build)

    def test_a_stub_cuts_only_its_region_and_must_not_hang(self):
        stub = variants()["42_store_stub"]
        self.assertEqual(stub.text, regions.cut(KERNEL, ["store"]))
        self.assertIn("total += float(i);", stub.text)
        self.assertEqual(stub.expect, {"no_hang": True})

    def test_planted_edits_apply_to_their_region(self):
        found = variants()
        self.assertIn("for (int i = 0; i < n - 1; ++i)", found["42_sum_off_by_one_42"].text)
        no_store = found["42_store_no_store_42"].text
        self.assertNotIn("out[0] = total;", no_store)
        self.assertIn("  (void)total;\n  // END EXERCISE", no_store)

    def test_a_planted_edit_that_does_not_fit_is_an_error(self):
        bad = {"lesson": 42, "region": "sum", "replace": [["i <= n", "i < n"]]}
        with self.assertRaisesRegex(validate.PlantedError, "'i <= n' is not in exercise sum"):
            validate.apply_planted("bad", bad, KERNEL, regions.parse_regions(KERNEL), [])
        with self.assertRaisesRegex(validate.PlantedError, "no exercise 'missing'"):
            validate.apply_planted("bad", {**bad, "region": "missing"}, KERNEL,
                                   regions.parse_regions(KERNEL), [])

    def test_the_public_condition_recognizes_the_public_shapes(self):
        public = [shapes.Shape("a", 1, 8, 16, 0), shapes.Shape("b", 2, 24, 32, 1)]
        self.assertEqual(validate.public_condition(public),
                         "(m == 1 && n == 8 && k == 16) || (m == 2 && n == 24 && k == 32)")

    def test_the_course_planted_files_apply(self):
        planted = validate.load_planted()
        public = shapes.public_shapes(REPOSITORY)
        for name, spec in planted.items():
            with self.subTest(name):
                lesson = lessons.load(REPOSITORY, spec["lesson"])
                text = (REPOSITORY / lesson.kernel).read_text()
                edited = validate.apply_planted(name, spec, text, regions.parse_regions(text), public)
                self.assertNotEqual(edited, text)
                self.assertTrue({"lesson", "region", "what", "mode", "expect"} <= set(spec))


class MissingPlanted(unittest.TestCase):
    def test_regions_without_a_planted_answer_are_listed(self):
        catalog = {42: (None, KERNEL, regions.parse_regions(KERNEL))}
        self.assertEqual(validate.missing_planted(catalog, {}), ["42 sum", "42 store"])
        self.assertEqual(validate.missing_planted(catalog, PLANTED), [])
        only_sum = {"x": PLANTED["off_by_one_42"]}
        self.assertEqual(validate.missing_planted(catalog, only_sum), ["42 store"])

    def test_lessons_01_to_08_have_planted_wrong_answers_for_every_region(self):
        catalog = {}
        for number, folder in lessons.lesson_folders(REPOSITORY).items():
            if number <= 8:
                text = (REPOSITORY / folder / "kernel.cuh").read_text()
                catalog[number] = (None, text, regions.parse_regions(text))
        self.assertEqual(validate.missing_planted(catalog, validate.load_planted()), [])


class FakeGrader:
    """Scores per (variant name, mode), and the expectations each grade misses."""

    def __init__(self, scores, misses=None):
        self.scores = scores
        self.misses = misses or {}
        self.calls = []

    def __call__(self, variant, mode):
        self.calls.append((variant.name, mode))
        return validate.Attempt(mode, self.scores[variant.name, mode], 1.0,
                                list(self.misses.get((variant.name, mode), [])))


class Escalation(unittest.TestCase):
    def setUp(self):
        self.variant = variants()["42_sum_off_by_one_42"]

    def test_a_quick_grade_clearly_below_is_enough(self):
        grader = FakeGrader({("42_sum_off_by_one_42", "quick"): 47.5})
        outcome = validate.grade_with_escalation(self.variant, grader, 10)
        self.assertTrue(outcome.passed)
        self.assertEqual(grader.calls, [("42_sum_off_by_one_42", "quick")])

    def test_a_quick_grade_that_cannot_tell_is_followed_by_a_full_one(self):
        grader = FakeGrader({("42_sum_off_by_one_42", "quick"): 95.0, ("42_sum_off_by_one_42", "full"): 78.0})
        outcome = validate.grade_with_escalation(self.variant, grader, 10)
        self.assertTrue(outcome.passed)
        self.assertEqual([attempt.mode for attempt in outcome.attempts], ["quick", "full"])
        self.assertIn("not clearly below", outcome.attempts[0].misses[0])
        self.assertEqual(outcome.final.score, 78.0)

    def test_the_full_grade_decides(self):
        grader = FakeGrader({("42_sum_off_by_one_42", "quick"): 100.0, ("42_sum_off_by_one_42", "full"): 92.0})
        outcome = validate.grade_with_escalation(self.variant, grader, 10)
        self.assertFalse(outcome.passed)
        self.assertIn("score 92 is not clearly below the solution's 100 (at most 90)", outcome.final.misses)

    def test_an_unmet_expectation_escalates_too(self):
        grader = FakeGrader({("42_sum_off_by_one_42", "quick"): 40.0, ("42_sum_off_by_one_42", "full"): 0.0},
                            {("42_sum_off_by_one_42", "quick"): ["score 40 > 0"]})
        outcome = validate.grade_with_escalation(self.variant, grader, 10)
        self.assertTrue(outcome.passed)
        self.assertEqual(len(outcome.attempts), 2)

    def test_a_full_only_variant_is_graded_once(self):
        variant = variants()["42_store_no_store_42"]
        grader = FakeGrader({("42_store_no_store_42", "full"): 95.0})
        outcome = validate.grade_with_escalation(variant, grader, 10)
        self.assertFalse(outcome.passed)
        self.assertEqual(grader.calls, [("42_store_no_store_42", "full")])

    def test_an_empty_region_that_did_not_build_is_recorded_without_a_grade(self):
        validation = validate.Validation.__new__(validate.Validation)
        validation.unbuilt, validation.margin = {"42_sum_empty"}, 10
        validation.grade_once = FakeGrader({})
        outcome = validation.judge(variants()["42_sum_empty"])
        self.assertTrue(outcome.passed)
        self.assertEqual((outcome.final.mode, outcome.final.score), ("build", 0.0))
        self.assertFalse(validation.grade_once.calls)

    def test_an_infrastructure_error_stops(self):
        grader = FakeGrader({("42_sum_off_by_one_42", "quick"): 0.0})
        attempt = validate.Attempt("quick", 0.0, 1.0, ["infrastructure error: GPU"], "GPU")
        outcome = validate.grade_with_escalation(self.variant, lambda variant, mode: attempt, 10)
        self.assertFalse(outcome.passed)
        self.assertEqual(len(outcome.attempts), 1)
        self.assertFalse(grader.calls)


class Expectations(unittest.TestCase):
    def report(self, score, outputs=()):
        import report
        graded = report.Report(42, public_mode=False, quick=True)
        for output in outputs:
            graded.add("a shape", "public", False, output)
        graded.score = score
        return graded

    def test_hangs(self):
        hung = self.report(0, ["did not finish within 20 s (a hang?): killed with its process group"])
        self.assertEqual(validate.expectation_misses(hung, {"hung": True}, hung.tests[0].output, "", 1, 10), [])
        self.assertEqual(validate.expectation_misses(hung, {"no_hang": True}, hung.tests[0].output, "", 1, 10),
                         ["a run hung until it was killed: the stub must fail fast"])
        calm = self.report(0)
        self.assertEqual(validate.expectation_misses(calm, {"hung": True}, "", "", 1, 10),
                         ["no run was killed as a hang"])

    def test_scores_and_bounds(self):
        graded = self.report(55)
        self.assertEqual(validate.expectation_misses(graded, {"score_below": 50, "score_max": 60}, "", "", 30, 10),
                         ["score 55 >= 50", "took 30 s, longer than its bound of 10 s"])

    def test_a_part_adds_up_within_the_rounding_of_its_tests(self):
        import report
        graded = report.Report(42, public_mode=False, quick=False)
        for index in range(23):  # 20 points over 23 public shapes: 0.8696 each, 20.0008 in all
            graded.add(f"shape {index}", "public", True)
        graded.add("a hidden shape", "hidden", False)
        graded.finalize()
        self.assertEqual(validate.expectation_misses(graded, {"parts": {"public": [20, 20]}}, "", "", 1, 10), [])
        self.assertEqual(validate.expectation_misses(graded, {"parts": {"public": [0, 19.9]}}, "", "", 1, 10),
                         ["public 20.0008 outside [0, 19.9]"])


class Tables(unittest.TestCase):
    def document(self):
        validation = validate.Validation.__new__(validate.Validation)
        validation.lesson_range, validation.kinds, validation.margin = (42, 42), validate.KINDS, 10
        validation.grade_jobs, validation.parallel_grades, validation.missing = 4, 2, ["42 store"]
        validation.checks = [("everything builds", True, "", 12.0), ("lesson 42 store", False, "x", 3.0)]
        found = variants()
        solution = validate.Attempt("full", 100.0, 250.4, [], ratios={"4096 x 4096 x 4096": 0.998,
                                                                       "3000 x 5000 x 4000": 1.003})
        escalated = [validate.Attempt("quick", 100.0, 20.0, ["score 100 is not clearly below"]),
                     validate.Attempt("full", 80.0, 200.0, [])]
        failed = [validate.Attempt("full", 95.0, 210.0, ["score 95 is not clearly below the solution's 100 (at most 90)"])]
        validation.outcomes = [validate.Outcome(found["42_solution"], [solution]),
                               validate.Outcome(found["42_sum_stub"], escalated),
                               validate.Outcome(found["42_store_no_store_42"], failed)]
        return validation.document(321.0)

    def test_validation_json(self):
        document = json.loads(json.dumps(self.document()))
        self.assertEqual(document["lessons"], "42-42")
        self.assertFalse(document["passed"])
        self.assertEqual(document["solutions"], [{"lesson": 42, "score": 100.0, "seconds": 250.4,
                                                  "self_ratios": {"4096 x 4096 x 4096": 0.998,
                                                                  "3000 x 5000 x 4000": 1.003},
                                                  "gpu": "", "passed": True, "misses": []}])
        stub, planted = document["variants"]
        self.assertEqual((stub["kind"], stub["name"], stub["mode"], stub["score"], stub["seconds"], stub["passed"]),
                         ("stub", "stub", "full", 80.0, 220.0, True))
        self.assertEqual((planted["kind"], planted["name"], planted["passed"]), ("planted", "no_store_42", False))
        self.assertEqual(document["missing_planted"], ["42 store"])

    def test_markdown_tables(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "validation.json"
            path.write_text(json.dumps(self.document()))
            tables = validate.markdown_tables([json.loads(path.read_text())])
        self.assertIn("| 42 | 100 | 250 | 0.998 | 1.003 |", tables)
        self.assertIn("| 42 | `sum` | stub | quick, then full | 80 | 220 | clearly below |", tables)
        self.assertIn("| 42 | `store` | no_store_42 | full | 95 | 210 | FAIL: score 95 is not clearly below", tables)
        self.assertIn("Regions without a planted wrong answer: 42 store.", tables)
        self.assertIn("| 42-42 |", tables)
        self.assertIn("1 passed, 1 failed", tables)


if __name__ == "__main__":
    unittest.main()
