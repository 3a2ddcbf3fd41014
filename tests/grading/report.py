"""Points, results.json (Gradescope's autograder format) and the summary for the teaching staff.

The 100 points, each part split evenly among its tests:

    public correctness 20   hidden correctness 40   robustness 10   technique 10   performance 20

Robustness and technique count only when the submission computes at least one public shape
correctly (the code around the regions already contains the lesson's instructions, and an
untouched hand-out would otherwise collect them). Performance counts only when everything else
earned full points. Without the secret (public mode) hidden correctness and performance are not
graded, and the total is out of the 40 points that remain.
"""
import dataclasses
import json
import math

POINTS = {"public": 20.0, "hidden": 40.0, "robustness": 10.0, "technique": 10.0, "performance": 20.0}
PUBLIC_MODE_PARTS = ("public", "robustness", "technique")
PART_TITLES = {"public": "public correctness", "hidden": "hidden correctness",
               "robustness": "robustness", "technique": "technique", "performance": "performance",
               "info": "information"}

# Performance: full points from this fraction of the course's solution's speed, linear below.
FULL_POINTS_RATIO = 0.9
# The physical limit: a Hopper SXM GPU's dense tensor throughput at its highest clock (the H100
# SXM and the H200 SXM alike), for the lesson's operands: 132 SMs (the SXM parts; the JSON's
# sm_count when the report has it) x the FLOP per clock per SM of the lesson's kind of operands
# (`lessonNN --describe`: bf16 4096, 1070 TFLOP/s; lesson 18's e4m3 twice that, 2141 TFLOP/s)
# x 1.98 GHz. A run faster than that did not compute the product.
HOPPER_SXM_SM_COUNT = 132
MAX_SM_CLOCK_HZ = 1.98e9
# The summary shows a failed test's first line and up to this many more.
SUMMARY_FAILURE_LINES = 6


def peak_flops(flop_per_clock_per_sm, sm_count=None):
    """The GPU's dense tensor FLOP/s for operands whose SMs do flop_per_clock_per_sm (what the
    lesson's --describe says of its kind)."""
    return (sm_count or HOPPER_SXM_SM_COUNT) * flop_per_clock_per_sm * MAX_SM_CLOCK_HZ


def performance_fraction(ratios):
    """Share of the performance points for the per-shape speed ratios (submission vs solution):
    their geometric mean over FULL_POINTS_RATIO, at most 1. (fraction, geometric mean)."""
    if not ratios or any(not ratio > 0 for ratio in ratios):
        return 0.0, 0.0
    mean = math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
    return min(1.0, mean / FULL_POINTS_RATIO), mean


@dataclasses.dataclass
class Test:
    name: str
    part: str              # a key of POINTS, or "info" (no points)
    passed: bool
    output: str = ""
    seconds: float = 0.0
    fraction: float = 1.0  # share of the test's points when passed (performance: by speed)
    score: float = 0.0
    max_score: float = 0.0

    @property
    def hidden(self):
        return self.part == "hidden"


class Report:
    def __init__(self, lesson_id, public_mode, quick):
        self.lesson_id = lesson_id
        self.public_mode = public_mode
        self.quick = quick
        self.tests = []
        self.notes = []          # lines for everyone (what was reduced, what was not run)
        self.flags = []          # reasons for a teaching assistant to look at the submission
        self.leaderboard = []
        self.infrastructure_error = None
        self.missing_tools = []  # CUDA tools a hand-out's grader did not find: their tests did not run
        self.not_run = {}        # part -> why none of its tests ran
        self.score = 0.0
        self.max_score = 0.0

    def add(self, name, part, passed, output="", seconds=0.0, fraction=1.0):
        test = Test(name, part, bool(passed), output, seconds, fraction)
        self.tests.append(test)
        return test

    def parts(self):
        return PUBLIC_MODE_PARTS if self.public_mode else tuple(POINTS)

    def tests_of(self, part):
        return [test for test in self.tests if test.part == part]

    def finalize(self):
        """Works out every test's points and the total."""
        for part in self.parts():
            if not self.tests_of(part):
                self.add("not run", part, False, self.not_run.get(part, "it was not reached"))
        any_public = any(test.passed for test in self.tests_of("public"))
        for part in POINTS:
            tests = self.tests_of(part)
            counted = part in self.parts()
            for test in tests:
                test.max_score = POINTS[part] / len(tests) if counted else 0.0
                test.score = test.max_score * test.fraction if test.passed else 0.0
                if part in ("robustness", "technique") and not any_public and test.score:
                    test.score = 0.0
                    test.output += "\n(No points: no public shape was computed correctly.)"
        self.max_score = sum(POINTS[part] for part in self.parts())
        self.score = round(sum(test.score for test in self.tests), 4)
        for test in self.tests:
            test.score, test.max_score = round(test.score, 4), round(test.max_score, 4)

    def everything_but_performance_full(self):
        parts = [part for part in self.parts() if part != "performance"]
        return all(self.tests_of(part) and all(test.passed for test in self.tests_of(part))
                   for part in parts)

    # ---- Output ------------------------------------------------------------------------------

    def headline(self):
        if self.infrastructure_error:
            return ("INFRASTRUCTURE ERROR: grading could not finish. This is not your score; the "
                    "course staff will grade the submission again.")
        mode = " (public mode: hidden shapes and performance need the course's secret)" \
            if self.public_mode else ""
        quick = " (quick grade: fewer shapes and runs, each part still worth its points)" \
            if self.quick else ""
        incomplete = (f"INCOMPLETE GRADE: {', '.join(self.missing_tools)} not on PATH, the tests "
                      "that need it did not run. " if self.missing_tools else "")
        return (f"{incomplete}Lesson {self.lesson_id:02d}: {self.score:g} of {self.max_score:g} "
                f"points{mode}{quick}")

    def results_json(self, execution_seconds):
        """The Gradescope autograder results (https://gradescope-autograders.readthedocs.io)."""
        output = [self.headline()]
        if self.infrastructure_error:
            output.append(self.infrastructure_error)
        output += self.notes
        if self.flags:
            output.append("Flagged for review by the course staff: " + "; ".join(self.flags))
        if self.infrastructure_error:
            tests = [{"name": "grading did not finish", "score": 0, "max_score": 0,
                      "status": "failed", "visibility": "visible",
                      "output": self.infrastructure_error}]
        else:
            tests = [{"name": f"{PART_TITLES[test.part]}: {test.name}", "score": test.score,
                      "max_score": test.max_score, "status": "passed" if test.passed else "failed",
                      "visibility": "after_published" if test.hidden else "visible",
                      "output": test.output, "extra_data": {"seconds": round(test.seconds, 2)}}
                     for test in self.tests]
        results = {"execution_time": round(execution_seconds), "output": "\n".join(output),
                   "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
                   "leaderboard": self.leaderboard}
        if not self.infrastructure_error:
            results["score"] = self.score
        return results

    def summary(self, execution_seconds):
        """Plain text for the teaching assistant: everything, hidden tests included."""
        lines = [self.headline(), ""]
        if self.infrastructure_error:
            lines += [self.infrastructure_error, ""]
        for part in list(POINTS) + ["info"]:
            tests = self.tests_of(part)
            if not tests:
                continue
            earned = sum(test.score for test in tests)
            available = sum(test.max_score for test in tests)
            lines.append(f"{PART_TITLES[part]}: {earned:g} / {available:g}" if part != "info"
                         else PART_TITLES[part])
            for test in tests:
                mark = "PASS" if test.passed else "FAIL"
                output = test.output.strip().split("\n") if test.output.strip() else []
                lines.append(f"  {mark} {test.score:6.2f}/{test.max_score:<6.2f} {test.name}"
                             + (f": {output[0]}" if output else "") + f"  [{test.seconds:.1f} s]")
                # A failure says what failed: the next lines of its output, indented under it.
                if not test.passed:
                    shown = output[1:1 + SUMMARY_FAILURE_LINES]
                    lines += [f"        {line}" for line in shown]
                    if len(output) > 1 + SUMMARY_FAILURE_LINES:
                        lines.append(f"        [... {len(output) - 1 - SUMMARY_FAILURE_LINES} more "
                                     "line(s) in results.json]")
        if self.notes:
            lines += [""] + self.notes
        if self.flags:
            lines += ["", "FLAGGED FOR REVIEW:"] + [f"  - {flag}" for flag in self.flags]
        lines += ["", f"Grading took {execution_seconds:.0f} s."]
        return "\n".join(lines) + "\n"


def write_outputs(report, directory, execution_seconds):
    """results.json and summary.txt, whatever happened before."""
    report.finalize()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps(report.results_json(execution_seconds),
                                                       indent=2) + "\n")
    summary = report.summary(execution_seconds)
    (directory / "summary.txt").write_text(summary)
    return summary
