"""The grader's verdicts and exit statuses without a GPU (tests/grading/grade.py, sanitizers.py):
compute-sanitizer's verdicts read from what each tool prints (fixtures/grading/sanitizer/),
failing tests that say what failed, usage errors (one line, exit 2, no report) against a
submission that is the student's problem (graded 0, exit 0), and a CUDA tool missing in a
hand-out (the tests that need it not run, exit 2)."""
import contextlib
import io
import os
import sys
import tempfile
import unittest
import unittest.mock
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import binaries  # noqa: E402  (after the path is set)
import grade  # noqa: E402
import runs  # noqa: E402
import sanitizers  # noqa: E402
import shapes  # noqa: E402
from test_grading_runs import Environment, FakeTree  # noqa: E402

FIXTURES = REPOSITORY / "tests" / "tools" / "fixtures" / "grading" / "sanitizer"
# A stand-in lesson executable; the grader asks it --describe (lesson 01's facts).
FAKE_LESSON = REPOSITORY / "tests" / "tools" / "fixtures" / "grading" / "fake_lesson.py"


def fixture(name):
    return (FIXTURES / f"{name}.txt").read_text()


class SanitizerVerdicts(unittest.TestCase):
    def test_clean_memcheck(self):
        self.assertEqual(sanitizers.verdict("memcheck", 0, fixture("memcheck_clean")),
                         (True, "clean: ERROR SUMMARY: 0 errors"))

    def test_clean_racecheck_has_no_error_summary(self):
        output = fixture("racecheck_clean")
        self.assertNotIn("ERROR SUMMARY", output)
        self.assertEqual(sanitizers.verdict("racecheck", 0, output),
                         (True, "clean: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"))

    def test_racecheck_with_hazards(self):
        clean, message = sanitizers.verdict("racecheck", 99, fixture("racecheck_hazards"))
        self.assertFalse(clean)
        lines = message.split("\n")
        self.assertEqual(lines[0], "RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warnings) "
                                   "(exit code 99 (the tool found errors))")
        self.assertEqual(lines[1], "first report:")
        self.assertTrue(lines[2].startswith("========= Error: Race reported between Write access at "
                                            "void lesson05::gemm_kernel"))
        self.assertTrue(lines[3].startswith("=========     and Read access at"))
        self.assertEqual(len(lines), 2 + 1 + sanitizers.REPORT_DETAIL_LINES)
        self.assertTrue(all(len(line) <= sanitizers.LINE_MAX_CHARS + 6 for line in lines))

    def test_memcheck_with_errors(self):
        clean, message = sanitizers.verdict("memcheck", 99, fixture("memcheck_errors"))
        self.assertFalse(clean)
        self.assertIn("ERROR SUMMARY: 2 errors (exit code 99", message)
        self.assertIn("========= Invalid __shared__ write of size 4 bytes\n=========     at void lesson02::", message)
        self.assertIn("by thread (15,3,0) in block (1,0,0)", message)

    def test_synccheck_with_a_barrier_error(self):
        clean, message = sanitizers.verdict("synccheck", 99, fixture("synccheck_barrier"))
        self.assertFalse(clean)
        self.assertIn("ERROR SUMMARY: 1 error (exit code 99", message)
        self.assertIn("========= Barrier error detected. Divergent thread(s) in warp", message)

    def test_a_crash_without_a_summary_is_not_clean(self):
        for tool in ("memcheck", "racecheck", "synccheck"):
            with self.subTest(tool):
                clean, message = sanitizers.verdict(tool, 0, fixture("crash_no_summary"))
                self.assertFalse(clean)
                self.assertIn("printed no", message)
                self.assertIn("process didn't terminate successfully", message)
        self.assertFalse(sanitizers.verdict("memcheck", None, "")[0])

    def test_a_clean_summary_with_a_failing_lesson_is_not_clean(self):
        clean, message = sanitizers.verdict("memcheck", 1, fixture("memcheck_clean") + "check: FAIL\n")
        self.assertFalse(clean)
        self.assertIn("ERROR SUMMARY: 0 errors, but the lesson failed under compute-sanitizer memcheck "
                      "(exit code 1)", message)

    def test_each_tool_is_judged_by_its_own_summary(self):
        # A memcheck summary in racecheck's output (or the reverse) proves nothing.
        self.assertFalse(sanitizers.verdict("racecheck", 0, fixture("memcheck_clean"))[0])
        self.assertFalse(sanitizers.verdict("memcheck", 0, fixture("racecheck_clean"))[0])
        with self.assertRaises(ValueError):
            sanitizers.verdict("leakcheck", 0, "")


class Messages(unittest.TestCase):
    """A failing test's output says what failed."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.grader = grade.Grader(1, self.dir / "kernel.cuh", self.dir / "results", self.dir / "tree",
                                   secret=b"s")
        self.grader.lesson = grade.lessons.load(REPOSITORY, 1)
        self.grader.baseline = FAKE_LESSON
        self.shape = grade.shapes.Shape("tiny", 1, 8, 8, 1007)

    def tearDown(self):
        self.folder.cleanup()

    def result(self, code, report=None, problem="", output=""):
        return runs.RunResult(["lesson01"], code, False, 0.1, output, len(output), report, problem)

    def test_a_run_without_a_report(self):
        passed, text = self.grader.judge(self.result(0, problem="the run wrote no report"), self.shape)
        self.assertFalse(passed)
        self.assertEqual(text, "no result: the run wrote no report (exit code 0)")
        passed, text = self.grader.judge(self.result(-11, problem="the run wrote no report"), self.shape)
        self.assertIn("ended by signal 11", text)

    def test_a_report_that_fails_its_check(self):
        report = {"lesson": 1, "m": 1, "n": 8, "k": 8, "seed": 1007,
                  "check": {"passed": False, "max_normalized_error": 3.5, "mismatches": 4}}
        passed, text = self.grader.judge(self.result(1, report, output="check: FAIL"), self.shape)
        self.assertFalse(passed)
        self.assertTrue(text.startswith("wrong result (exit code 1 (the check failed)): max normalized error 3.5"))
        report["check"]["passed"] = True
        passed, text = self.grader.judge(self.result(5, report), self.shape)
        self.assertTrue(text.startswith("the check passed, but then the run failed (exit code 5"))

    def test_a_report_that_wrote_before_its_prerequisite_finished(self):
        report = {"lesson": 1, "m": 1, "n": 8, "k": 8, "seed": 1007,
                  "check": {"passed": False, "max_normalized_error": 0.2, "mismatches": 0,
                            "early_writes": {"d_elements": 8, "workspace_words": 0}}}
        passed, text = self.grader.judge(self.result(1, report), self.shape)
        self.assertFalse(passed)
        self.assertIn("it wrote 8 elements of D and 0 2-byte words of its workspace before the "
                      "kernel ahead of it had finished", text)
        report["check"]["early_writes"]["d_elements"] = 0
        passed, text = self.grader.judge(self.result(1, report), self.shape)
        self.assertNotIn("kernel ahead", text)

    def test_a_report_that_left_its_flags_set(self):
        report = {"lesson": 1, "m": 1, "n": 8, "k": 8, "seed": 1007,
                  "check": {"passed": False, "max_normalized_error": 0.3, "mismatches": 0,
                            "flag_bytes_left_set": 12}}
        passed, text = self.grader.judge(self.result(1, report), self.shape)
        self.assertFalse(passed)
        self.assertIn("it left 12 bytes of its workspace's flags set", text)

    def test_a_report_of_another_run(self):
        report = {"lesson": 1, "m": 2, "n": 8, "k": 8, "seed": 1007, "check": {"passed": True}}
        passed, text = self.grader.judge(self.result(0, report), self.shape)
        self.assertFalse(passed)
        self.assertIn("it says {'m': 2}", text)

    def test_a_fused_run_must_report_its_epilogue(self):
        epilogue = grade.shapes.Epilogue("all_gelu", 1.5, 0.5, True, "gelu")
        shape = grade.shapes.Shape("tiny_all_gelu", 1, 8, 8, 2003, epilogue=epilogue)
        self.assertEqual(shape.arguments()[-7:], ["--alpha", "1.5", "--beta", "0.5", "--act", "gelu", "--bias"])
        report = {"lesson": 1, "m": 1, "n": 8, "k": 8, "seed": 2003, "check": {"passed": True},
                  "epilogue": {"alpha": 1.5, "beta": 0.5, "bias": True, "activation": "gelu"}}
        passed, _ = self.grader.judge(self.result(0, report), shape)
        self.assertTrue(passed)
        # A run that computed the plain product (the flags ignored) did not do what was graded.
        report["epilogue"] = {"alpha": 1.0, "beta": 0.0, "bias": False, "activation": "none"}
        passed, text = self.grader.judge(self.result(0, report), shape)
        self.assertFalse(passed)
        self.assertIn("gelu(1.5 * A * B^T + 0.5 * C + bias)", text)

    def test_run_limits_grow_with_the_runs_that_share_the_gpu(self):
        alone = self.grader.run_timeout(self.shape)
        self.assertAlmostEqual(alone, grade.DEFAULT_RUN_SECONDS, places=3)
        shared = grade.Grader(1, self.dir / "kernel.cuh", self.dir / "results", self.dir / "tree",
                              secret=b"s", jobs=16)
        self.assertAlmostEqual(shared.run_timeout(self.shape), 16 * alone)
        self.assertEqual(shared.sanitizer_timeout(), 16 * grade.SANITIZER_SECONDS)

    def test_a_sanitizer_run_through_the_grader(self):
        tools = self.dir / "bin"
        tools.mkdir()
        sanitizer = tools / "compute-sanitizer"
        sanitizer.write_text(f"#!/bin/sh\ncat {FIXTURES / 'racecheck_clean.txt'}\n")
        sanitizer.chmod(0o755)
        self.grader.executable = "lesson01"
        with Environment(PATH=f"{tools}:{os.environ['PATH']}"):
            name, part, passed, text, _ = self.grader.sanitizer_test("racecheck")
        self.assertEqual((name, part, passed), ("compute-sanitizer racecheck at 200 x 136 x 264", "robustness", True))
        self.assertEqual(text, "clean: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)")

    def test_no_gpu_on_the_grading_host_is_an_infrastructure_error(self):
        lesson = self.dir / "lesson"
        lesson.write_text("#!/bin/sh\necho 'lesson01: error: no CUDA GPU found'\nexit 2\n")
        lesson.chmod(0o755)
        self.grader.baseline = lesson
        self.grader.in_handout = False
        with self.assertRaisesRegex(runs.InfrastructureError, "no usable CUDA GPU"):
            self.grader.canary("start")
        with self.assertRaisesRegex(runs.InfrastructureError, "no usable CUDA GPU"):
            self.grader.canary("after the run of large_4096 was killed")

    def host_check_test(self, script, name):
        """The report's test of host check `name`, run as the shell script `script`."""
        check = self.dir / "check"
        check.write_text("#!/bin/sh\n" + script)
        check.chmod(0o755)
        self.grader.tree = FakeTree()
        self.grader.tree.executable = lambda target: check
        self.grader.folder = grade.build.Folder("fake", self.dir, ["lesson"])
        self.grader.host_check(name)
        return self.grader.report.tests[-1]

    def test_a_host_check_that_fails_silently(self):
        test = self.host_check_test("exit 1\n", "swizzle_bank_conflicts")
        self.assertFalse(test.passed)
        self.assertEqual(test.output, "failed (exit code 1 (the check failed)), without printing why")

    def test_a_failed_host_check_leads_with_its_first_failure(self):
        test = self.host_check_test(
            "echo 'checking 12 cases'\n"
            "echo 'FAIL iteration_ns: tile 128 x 256, cluster 2: 10 ns, expected 20 ns'\n"
            "echo 'FAIL iteration_ns: tile 128 x 64, cluster 1: 3 ns, expected 5 ns'\n"
            "exit 1\n", "shape_model")
        self.assertFalse(test.passed)
        first, *rest = test.output.split("\n")
        self.assertEqual(first, "failed (exit code 1 (the check failed)): FAIL iteration_ns: tile "
                                "128 x 256, cluster 2: 10 ns, expected 20 ns")
        self.assertIn("FAIL iteration_ns: tile 128 x 64, cluster 1: 3 ns, expected 5 ns", rest)


class CorrectnessOnTheGpu(unittest.TestCase):
    """The GPU part that every kind of lesson shares (Grader.correctness_on_gpu), with the runs
    themselves, the canary and the GPU's lock replaced: the order of the runs, the time bound and
    whether performance may follow."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.ran = []
        self.lock = unittest.mock.patch.object(grade, "gpu_lock",
                                               lambda **_: contextlib.nullcontext())
        self.lock.start()

    def tearDown(self):
        self.lock.stop()
        self.folder.cleanup()

    def grader(self, jobs=1, secret=b"s", failing=()):
        grader = grade.Grader(1, self.dir / "kernel.cuh", self.dir / "results", self.dir / "tree",
                              secret=secret, jobs=jobs)
        grader.lesson = grade.lessons.load(REPOSITORY, 1)
        grader.canary = lambda why: self.ran.append(("canary", why))

        def shape_test(part, shape):
            self.ran.append((part, shape.name))
            return shape.name, part, shape.name not in failing, "", 0.0

        def rerun_test(shape):
            self.ran.append(("rerun", shape.name))
            return "rerun " + shape.name, "robustness", True, "", 0.0

        grader.shape_test, grader.rerun_test = shape_test, rerun_test
        return grader

    def sanitizer(self, tool):
        def run():
            self.ran.append(("sanitizer", tool))
            return tool, "robustness", True, "", 0.0
        return run

    SHAPES = [grade.shapes.Shape(name, 64, 64, 64, 1) for name in ("a", "b", "c")]

    def test_the_runs_in_order_and_the_bound(self):
        grader = self.grader()
        public, hidden = self.SHAPES[:2], self.SHAPES[2:]
        blocked = grader.correctness_on_gpu(public, hidden, public[:1], [self.sanitizer("memcheck")],
                                            performance_seconds=300)
        self.assertEqual(self.ran, [("canary", "start"), ("public", "a"), ("public", "b"),
                                    ("hidden", "c"), ("sanitizer", "memcheck"), ("rerun", "a")])
        limits = [grader.run_timeout(shape) for shape in public + hidden + public[:1]]
        self.assertAlmostEqual(grader.bound_seconds, grade.CANARY_SECONDS * (1 + grade.MAX_HANGS)
                               + sum(limits) + grader.sanitizer_timeout() + 300)
        # The static checks have not run here, so their parts are not full: no performance.
        self.assertEqual(blocked, "performance counts only when everything else earned full points")
        self.assertEqual(grader.report.not_run["performance"], blocked)

    def test_runs_that_share_the_gpu_add_the_longest_to_their_share(self):
        grader = self.grader(jobs=4)
        grader.correctness_on_gpu(self.SHAPES, [], [])
        limits = [grader.run_timeout(shape) for shape in self.SHAPES]
        self.assertAlmostEqual(grader.bound_seconds, grade.CANARY_SECONDS * (1 + grade.MAX_HANGS)
                               + sum(limits) / 4 + max(limits))
        self.assertIn("4 correctness run(s) at once", " ".join(grader.report.notes))

    def test_public_mode_says_so_and_records_no_reason(self):
        grader = self.grader(secret=None)
        self.assertEqual(grader.correctness_on_gpu(self.SHAPES, [], [], what="token run"),
                         "public mode")
        self.assertNotIn("performance", grader.report.not_run)
        self.assertIn("hidden token runs and performance were not graded",
                      " ".join(grader.report.notes))


class TensorParallelRuns(unittest.TestCase):
    """Lesson 19's runs: token counts on one GPU, drawn from the secret, judged from the report
    that `lesson19 --result-file` writes."""

    def test_hidden_runs_come_from_the_secret(self):
        first = shapes.hidden_token_runs(b"one secret", 19)
        self.assertEqual(first, shapes.hidden_token_runs(b"one secret", 19))
        self.assertNotEqual(first, shapes.hidden_token_runs(b"another secret", 19))
        self.assertEqual([run.name.split("_")[0] for run in first], ["one", "odd", "uneven", "large"])
        public = {(run.tokens, run.chunks) for run in shapes.public_token_runs()}
        for secret in (b"a", b"b", b"c", b"d"):
            for run in shapes.hidden_token_runs(secret, 19):
                self.assertTrue(run.hidden)
                self.assertNotIn((run.tokens, run.chunks), public)
                self.assertTrue(2 <= run.chunks <= 5 and 1 <= run.tokens <= 4096, run)
                self.assertEqual(run.arguments()[:2], ["--gpus", "1"])
                self.assertIn("--check-only", run.arguments())

    def judge(self, code, report):
        run = shapes.public_token_runs()[1]
        lesson = type("Lesson", (), {"tensor_parallel": True})()
        grader = type("Grader", (), {"lesson_id": 19, "lesson": lesson})()
        result = runs.RunResult(["lesson19"], code, False, 1.0, "", 0, result=report)
        return grade.Grader.judge(grader, result, run)

    def report(self, passed, rehearsal_passed=True, **changes):
        run = shapes.public_token_runs()[1]
        return {"lesson": 19, "gpus": 1, "tokens": [run.tokens], "chunks": run.chunks,
                "seed": run.seed, **changes,
                "check": {"passed": passed, "max_normalized_error": 0.33, "mismatches": 0,
                          "rehearsal": {"passed": rehearsal_passed, "rank_counts": [1, 2],
                                        "first_failure": "" if rehearsal_passed else
                                        "2 rank(s), the gather of rank 0: row 0 holds token 1"}}}

    def test_a_passing_run(self):
        passed, text = self.judge(0, self.report(True))
        self.assertTrue(passed, text)
        self.assertIn("every row where it belongs", text)

    def test_a_misplaced_row_names_the_rehearsal(self):
        passed, text = self.judge(1, self.report(False, rehearsal_passed=False))
        self.assertFalse(passed)
        self.assertIn("row 0 holds token 1", text)
        self.assertNotIn("max normalized error", text)

    def test_a_report_of_another_run(self):
        passed, text = self.judge(0, self.report(True, chunks=1))
        self.assertFalse(passed)
        self.assertIn("does not describe this run", text)


class Usage(unittest.TestCase):
    """Usage errors: one line on stderr, exit 2, no report. The student's own problems: graded."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)

    def tearDown(self):
        self.folder.cleanup()

    def main(self, *arguments):
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                status = grade.main([str(argument) for argument in arguments])
            except SystemExit as exit:
                status = exit.code
        return status, stdout.getvalue(), stderr.getvalue()

    def assert_usage_error(self, words, *arguments):
        results = self.dir / "results"
        status, _, stderr = self.main(*arguments, "--results", results)
        self.assertEqual(status, 2)
        self.assertEqual(len(stderr.strip().split("\n")), 1, stderr)
        self.assertIn(words, stderr)
        self.assertFalse(results.exists())

    def test_no_such_lesson(self):
        kernel = self.dir / "kernel.cuh"
        kernel.write_text("// nothing\n")
        self.assert_usage_error("no lesson 99 under lessons/", "99", kernel)
        self.assert_usage_error("L must be a lesson number", "eight", kernel)

    def test_no_such_submission(self):
        self.assert_usage_error(f"the submission {self.dir / 'missing'} does not exist", "01",
                                self.dir / "missing")

    def test_a_bad_flag(self):
        kernel = self.dir / "kernel.cuh"
        kernel.write_text("// nothing\n")
        self.assert_usage_error("unrecognized arguments: --fast", "01", kernel, "--fast")
        self.assert_usage_error("--jobs and --deadline must be positive", "01", kernel, "--jobs", "0")

    def test_a_submission_without_a_kernel_is_graded_zero(self):
        folder = self.dir / "upload"
        folder.mkdir()
        (folder / "notes.txt").write_text("I forgot the kernel\n")
        binary = self.dir / "kernel.pdf"
        binary.write_bytes(b"%PDF\0\1\2")
        for submission, words in ((folder, "no kernel.cuh in upload: hand in lessons/01_naive/kernel.cuh"),
                                  (binary, "kernel.pdf is not a text file")):
            with self.subTest(words):
                results = self.dir / f"results-{submission.name}"
                status, stdout, _ = self.main("01", submission, "--results", results)
                self.assertEqual(status, 0)
                self.assertIn("Lesson 01: 0 of 40 points", stdout)
                summary = (results / "summary.txt").read_text()
                self.assertIn(words, summary)


class MissingTools(unittest.TestCase):
    """In a hand-out a missing CUDA tool is the student's to install: its tests do not run and the
    grader exits 2; on the grading host it is an infrastructure error."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.bin = self.dir / "bin"
        self.bin.mkdir()
        for tool in ("nm", "cmake"):  # what the grader may need besides the CUDA tools
            (self.bin / tool).symlink_to("/bin/true")
        self.path = Environment(PATH=str(self.bin), CUDACXX="")
        self.path.__enter__()

    def tearDown(self):
        self.path.__exit__()
        self.folder.cleanup()

    def grader(self, in_handout):
        grader = grade.Grader(3, self.dir / "kernel.cuh", self.dir / "results", self.dir / "tree")
        grader.in_handout = in_handout
        grader.lesson = grade.lessons.load(REPOSITORY, 3)
        grader.host_checks = []
        grader.executable = grader.baseline = self.dir / "lesson"
        return grader

    def test_cuobjdump_missing_in_a_handout(self):
        grader = self.grader(in_handout=True)
        grader.static_checks()
        signature = next(test for test in grader.report.tests if test.name == "instruction signature")
        self.assertFalse(signature.passed)
        self.assertIn("not run: cuobjdump is not on PATH", signature.output)
        self.assertIn("/usr/local/cuda/bin", signature.output)
        self.assertEqual(grader.exit_status(), 2)
        self.assertEqual(grader.report.missing_tools, ["cuobjdump"])
        line, = grader.missing_tool_lines()
        self.assertIn("grade: cuobjdump is not on PATH", line)
        grader.report.finalize()
        self.assertTrue(grader.report.headline().startswith("INCOMPLETE GRADE: cuobjdump not on PATH"))

    def test_cuobjdump_missing_on_the_grading_host(self):
        grader = self.grader(in_handout=False)
        with self.assertRaises(binaries.MissingTool) as raised:
            grader.static_checks()
        self.assertIsInstance(raised.exception, runs.InfrastructureError)

    def test_nvcc_missing_in_a_handout(self):
        grader = self.grader(in_handout=True)
        self.assertFalse(grader.build("// the spliced kernel"))
        self.assertEqual(grader.report.missing_tools, ["nvcc"])
        grader.report.finalize()
        self.assertTrue(all("not run: nvcc is not on PATH" in test.output for test in grader.report.tests))
        self.assertEqual(grader.exit_status(), 2)

    def test_compute_sanitizer_missing_in_a_handout(self):
        grader = self.grader(in_handout=True)
        # The hand-out's lesson (it answers --describe with the python3 this test runs on: PATH
        # holds only the tools above).
        grader.baseline = self.dir / "baseline"
        grader.baseline.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_LESSON} \"$@\"\n")
        grader.baseline.chmod(0o755)
        name, _, passed, text, _ = grader.sanitizer_test("memcheck")
        self.assertFalse(passed)
        self.assertIn("not run: compute-sanitizer is not on PATH", text)
        self.assertEqual(grader.exit_status(), 2)


if __name__ == "__main__":
    unittest.main()
