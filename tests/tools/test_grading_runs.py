"""Running what a submission built, on a machine without a GPU: time limits and process groups
(tests/grading/runs.py), the GPU lock, and the grader's run phase with a fake lesson executable
(grade.py), one run at a time and several at once. (The Gradescope scripts:
test_grading_gradescope.py.)"""
import contextlib
import os
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import grade  # noqa: E402  (after the path is set)
import runs  # noqa: E402

FAKE_LESSON = REPOSITORY / "tests" / "tools" / "fixtures" / "grading" / "fake_lesson.py"


class Environment(contextlib.ContextDecorator):
    """Sets environment variables for a test and puts them back afterwards."""

    def __init__(self, **values):
        self.values = values

    def __enter__(self):
        self.saved = {key: os.environ.get(key) for key in self.values}
        os.environ.update(self.values)

    def __exit__(self, *exc):
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Limits(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)

    def tearDown(self):
        self.folder.cleanup()

    def test_a_hang_is_killed_with_its_whole_group(self):
        started = time.monotonic()
        result = runs.run_limited(["bash", "-c", "sleep 300 & echo $! > child; sleep 300"], 1, self.dir)
        self.assertTrue(result.timed_out)
        self.assertIsNone(result.exit_code)
        self.assertLess(time.monotonic() - started, 8)
        child = int((self.dir / "child").read_text())
        self.assertFalse(Path(f"/proc/{child}").exists() and
                         Path(f"/proc/{child}/stat").read_text().split()[2] not in "ZX")

    def test_a_flood_of_output_is_drained_and_capped(self):
        result = runs.run_limited([sys.executable, "-c", "import sys\nfor _ in range(200000): print('x' * 99)"],
                                  60, self.dir)
        self.assertEqual(result.exit_code, 0)
        self.assertEqual(result.output_bytes, 200000 * 100)
        self.assertTrue(result.output_truncated)
        self.assertLess(len(result.output), runs.OUTPUT_HEAD_BYTES + runs.OUTPUT_TAIL_BYTES + 200)
        self.assertIn("bytes of output not kept", result.output)

    def test_reports_are_read_defensively(self):
        report = self.dir / "report.json"
        # What the program writes, as a Python expression, and what the grader must make of it.
        cases = {repr('{"check": {"passed": true}}'): None, repr("{not json"): "not JSON",
                 repr("[1, 2]"): "not a JSON object",
                 f"' ' * {runs.RESULT_FILE_MAX_BYTES + 1}": "more than any real one"}
        for content, problem in cases.items():
            with self.subTest(problem=problem):
                command = [sys.executable, "-c", f"open({str(report)!r}, 'w').write({content})"]
                result = runs.run_limited(command, 30, self.dir, result_file=report)
                if problem is None:
                    self.assertEqual(result.result, {"check": {"passed": True}})
                else:
                    self.assertIsNone(result.result)
                    self.assertIn(problem, result.result_problem)
        missing = runs.run_limited(["true"], 30, self.dir, result_file=report)
        self.assertEqual(missing.result_problem, "the run wrote no report")

    def test_a_program_that_cannot_start(self):
        result = runs.run_limited([self.dir / "missing"], 5, self.dir)
        self.assertEqual(result.exit_code, 127)


class GpuLock(unittest.TestCase):
    """Shared for correctness runs, exclusive for timing; a waiting exclusive job goes first."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.environment = Environment(GRADE_LOCK_DIR=self.folder.name, CUDA_VISIBLE_DEVICES="3")
        self.environment.__enter__()

    def tearDown(self):
        self.environment.__exit__()
        self.folder.cleanup()

    def test_shared_holders_share_and_exclude_an_exclusive_one(self):
        with grade.gpu_lock(exclusive=False, wait_seconds=1), grade.gpu_lock(exclusive=False, wait_seconds=1):
            with self.assertRaisesRegex(runs.InfrastructureError, "gemm-grading-gpu-3.lock"):
                with grade.gpu_lock(exclusive=True, wait_seconds=0.5):
                    pass
        with grade.gpu_lock(exclusive=True, wait_seconds=1):
            with self.assertRaises(runs.InfrastructureError):
                with grade.gpu_lock(exclusive=False, wait_seconds=0.5):
                    pass

    def test_a_waiting_exclusive_job_holds_back_new_shared_ones(self):
        order = []
        first = grade.gpu_lock(exclusive=False, wait_seconds=5).__enter__()

        def exclusive():
            with grade.gpu_lock(exclusive=True, wait_seconds=10):
                order.append("exclusive")

        def shared():
            with grade.gpu_lock(exclusive=False, wait_seconds=10):
                order.append("shared")

        writer = threading.Thread(target=exclusive)
        writer.start()
        time.sleep(0.5)  # the exclusive job now waits, holding the turnstile
        reader = threading.Thread(target=shared)
        reader.start()
        time.sleep(0.5)
        self.assertEqual(order, [])
        first.__exit__()
        writer.join(10)
        reader.join(10)
        self.assertEqual(order, ["exclusive", "shared"])


class FakeTree:
    """The grading tree, for a grader whose programs are all the fake lesson."""

    @contextlib.contextmanager
    def locked(self, wait_seconds=None):
        yield

    def build(self, targets, timeout):
        return {target: grade.build.BuildOutcome(True, "", 0.0) for target in targets}

    def executable(self, target):
        return FAKE_LESSON


class RunPhase(unittest.TestCase):
    """grade.Grader.gpu() with the fake lesson: what a real GPU run goes through, in seconds."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.environment = Environment(GRADE_LOCK_DIR=str(self.dir), FAKE_LESSON="1")
        self.environment.__enter__()

    def tearDown(self):
        self.environment.__exit__()
        self.folder.cleanup()

    def grader(self, mode, baseline_mode="pass", jobs=1, quick=True):
        os.environ["FAKE_MODE"] = mode
        grader = grade.Grader(1, self.dir / "kernel.cuh", self.dir / "results", self.dir / "tree",
                              quick=quick, secret=b"test secret", run_seconds=2, jobs=jobs)
        grader.lesson = grade.lessons.load(REPOSITORY, 1)
        grader.tree = FakeTree()
        grader.folder = grade.build.Folder("fake", self.dir, ["lesson", "pair"])
        baseline = self.dir / "baseline"
        baseline.write_text(f"#!/bin/sh\nFAKE_MODE={baseline_mode} exec {sys.executable} {FAKE_LESSON} \"$@\"\n")
        baseline.chmod(0o755)
        grader.executable, grader.baseline = FAKE_LESSON, baseline
        grader.report.add("instruction signature", "technique", True)
        return grader

    def test_a_correct_submission_gets_every_point(self):
        grader = self.grader("pass")
        grader.gpu()
        grader.report.finalize()
        self.assertAlmostEqual(grader.report.score, 100)
        self.assertTrue(any("geometric mean 1.000" in note for note in grader.report.notes))

    def test_hangs_are_killed_followed_by_the_canary_and_stop_the_runs(self):
        grader = self.grader("hang")
        started = time.monotonic()
        grader.gpu()
        self.assertLess(time.monotonic() - started, 60)
        outputs = [test.output for test in grader.report.tests]
        self.assertEqual(sum("killed with its process group" in output for output in outputs), grade.MAX_HANGS)
        self.assertTrue(any("hung before it" in output for output in outputs))
        self.assertEqual(len(list(grader.runs_dir.glob("canary_*.log"))), grade.MAX_HANGS + 1)
        self.assertFalse(grader.report.infrastructure_error)

    def test_an_unhealthy_gpu_stops_grading_with_an_infrastructure_error(self):
        grader = self.grader("hang", baseline_mode="wrong")
        with self.assertRaises(runs.InfrastructureError):
            grader.gpu()

    def test_no_gpu_on_the_grading_host_is_an_infrastructure_error(self):
        # The course's grader must have a GPU: without one, no submission gets a score.
        grader = self.grader("pass", baseline_mode="no_gpu")
        with self.assertRaises(runs.InfrastructureError):
            grader.gpu()

    def test_no_gpu_in_a_handout_skips_the_runs(self):
        # A student's machine without a GPU: the build and the static checks still count.
        grader = self.grader("no_gpu")
        grader.in_handout = True
        with self.assertRaises(grade.NoGpu):
            grader.gpu()

    def test_runs_at_once_give_the_same_grade(self):
        one = self.grader("pass")
        one.gpu()
        several = self.grader("pass", jobs=4)
        several.gpu()
        self.assertEqual([(test.name, test.passed) for test in one.report.tests],
                         [(test.name, test.passed) for test in several.report.tests])
        self.assertEqual(several.performance_ratios, {"4096 x 4096 x 4096": 1.0})

    def test_hangs_at_once_still_stop_the_runs(self):
        grader = self.grader("hang", jobs=3)
        started = time.monotonic()
        grader.gpu()
        self.assertLess(time.monotonic() - started, 60)
        outputs = [test.output for test in grader.report.tests_of("public") + grader.report.tests_of("hidden")]
        killed = sum("killed with its process group" in output for output in outputs)
        # Runs already started when the last hang was counted finish (or hang) on their own.
        self.assertTrue(grade.MAX_HANGS <= killed <= grade.MAX_HANGS + 3 - 1, outputs)
        self.assertTrue(any("hung before it" in output for output in outputs))
        self.assertFalse(grader.report.infrastructure_error)

    def test_a_deadline_that_passes_is_an_infrastructure_error(self):
        grader = self.grader("hang")
        grader.deadline_seconds = 1.0
        with self.assertRaises(grade.OutOfTime) as raised:
            grader.gpu()
        self.assertIn("time budget of 1 s", str(raised.exception))

    def test_garbage_reports_and_floods_are_failures_not_crashes(self):
        for mode, expected in (("garbage", "not JSON"), ("wrong", "the check failed")):
            with self.subTest(mode):
                grader = self.grader(mode)
                grader.gpu()
                public = grader.report.tests_of("public")
                self.assertTrue(public and not any(test.passed for test in public))
                self.assertIn(expected, public[0].output)
        grader = self.grader("flood")
        grader.gpu()
        self.assertTrue(all(test.passed for test in grader.report.tests_of("public")))
        logs = "".join(path.read_text() for path in grader.runs_dir.glob("public_*.log"))
        self.assertIn("bytes of output not kept", logs)


if __name__ == "__main__":
    unittest.main()
