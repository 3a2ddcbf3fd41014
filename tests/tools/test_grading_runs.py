"""Running what a submission built, on a machine without a GPU: time limits and process groups
(tests/grading/runs.py), the grader's run phase with a fake lesson executable (grade.py), and the
Gradescope scripts' transport failures (tests/grading/gradescope/)."""
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))

import grade  # noqa: E402  (after the path is set)
import runs  # noqa: E402

FAKE_LESSON = REPOSITORY / "tests" / "tools" / "fixtures" / "grading" / "fake_lesson.py"
GRADESCOPE = REPOSITORY / "tests" / "grading" / "gradescope"


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


class FakeTree:
    """The grading tree, for a grader whose programs are all the fake lesson."""

    @contextlib.contextmanager
    def locked(self):
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

    def grader(self, mode, baseline_mode="pass"):
        os.environ["FAKE_MODE"] = mode
        grader = grade.Grader(1, self.dir / "kernel.cuh", self.dir / "results", self.dir / "tree",
                              quick=True, secret=b"test secret", run_seconds=2)
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

    def test_no_gpu_skips_the_runs(self):
        grader = self.grader("pass", baseline_mode="no_gpu")
        with self.assertRaises(grade.NoGpu):
            grader.gpu()

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


class Gradescope(unittest.TestCase):
    """run_autograder always leaves a results.json, whatever happens to the transport."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)
        (self.root / "submission").mkdir()
        (self.root / "submission" / "kernel.cuh").write_text("// a submission\n")
        (self.root / "source").mkdir()
        (self.root / "source" / "grading_key").write_text("not a real key\n")
        self.bin = self.root / "bin"
        self.bin.mkdir()

    def tearDown(self):
        self.folder.cleanup()

    def fake_ssh(self, script):
        ssh = self.bin / "ssh"
        ssh.write_text("#!/bin/sh\n" + script + "\n")
        ssh.chmod(0o755)

    def run_autograder(self, **settings):
        environment = {"PATH": f"{self.bin}:{os.environ['PATH']}", "AUTOGRADER_ROOT": str(self.root),
                       "GRADE_LESSON": "08", "GRADE_SSH_TARGET": "grader@gpu-host", **settings}
        completed = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], env=environment,
                                   capture_output=True, text=True, timeout=60)
        return completed.returncode, json.loads((self.root / "results" / "results.json").read_text())

    def assert_transport_failure(self, results, words):
        self.assertIn("INFRASTRUCTURE ERROR", results["output"])
        self.assertIn(words, results["output"])
        self.assertEqual(results["tests"][0]["name"], "grading did not finish")
        self.assertNotIn("score", results)

    def test_missing_settings(self):
        code, results = self.run_autograder(GRADE_SSH_TARGET="")
        self.assertNotEqual(code, 0)
        self.assert_transport_failure(results, "GRADE_SSH_TARGET")

    def test_a_host_that_sends_garbage(self):
        self.fake_ssh("cat > /dev/null; echo 'Connection closed'; exit 255")
        code, results = self.run_autograder()
        self.assert_transport_failure(results, "no valid results.json")

    def test_a_host_that_does_not_answer(self):
        self.fake_ssh("sleep 30")
        code, results = self.run_autograder(GRADE_TIMEOUT="1")
        self.assert_transport_failure(results, "did not answer within 1 s")

    def test_a_host_that_grades(self):
        answer = {"score": 87.5, "tests": [], "output": "graded"}
        self.fake_ssh(f"cat > /dev/null; echo '{json.dumps(answer)}'")
        code, results = self.run_autograder()
        self.assertEqual(code, 0)
        self.assertEqual(results, answer)

    def test_the_gpu_host_accepts_only_grade_requests(self):
        completed = subprocess.run(["bash", str(GRADESCOPE / "gpu_host_command.sh")], input="",
                                   env={**os.environ, "SSH_ORIGINAL_COMMAND": "rm -rf /"},
                                   capture_output=True, text=True, timeout=60)
        self.assertNotEqual(completed.returncode, 0)
        results = json.loads(completed.stdout)
        self.assertIn("expected 'grade NN'", results["output"])


if __name__ == "__main__":
    unittest.main()
