#!/usr/bin/env python3
"""Grades one homework submission (`make grade L=NN SUBMISSION=path`, docs/grading.md).

Usage: grade.py NN SUBMISSION [--results DIR] [--build-dir DIR] [--quick] [--run-timeout S]
                [--secret-file FILE] [--keep-build]

SUBMISSION is a kernel.cuh, or a folder or archive (.tar, .tar.gz, .zip) that holds one.

  1. Splice: only the text inside the submission's exercise regions counts; it goes into the
     course's own kernel.cuh (launch, harness, reference and timing stay the course's). Changes
     outside the regions are listed and ignored.
  2. Validate each region (regions.validate_body): names and order, brackets, no preprocessor
     line, nothing that could reach outside the region, a size limit.
  3. Build the spliced lesson and the course's solution with the course's flags (build.py).
  4. Static checks: the lesson's instruction signature in the machine code, host checks, no
     external symbols the solution does not need, no library names in the code.
  5. Run, on the GPU, under a lock (one grading job per GPU): every public and hidden shape in its
     own process with a time limit; a hang is killed with its process group, scores 0, and is
     followed by a run of the course's solution that proves the GPU healthy (if that fails,
     grading stops with an infrastructure error). Reruns must give the same bits;
     compute-sanitizer memcheck, racecheck and synccheck at a small ragged shape. Then, if
     everything else passed, performance against the course's solution (report.py).
  6. Write results.json (Gradescope's format) and summary.txt, whatever the submission did.

The hidden shapes come from the secret: the environment variable GRADE_SECRET, or the file named
by --secret-file or GRADE_SECRET_FILE. Without one the grader runs in public mode (what a student
runs in a hand-out): public shapes, robustness and technique only.

Exit status: 0 graded (whatever the score); 2 bad usage; 3 infrastructure error (results.json
says so; the submission must be graded again).
"""
import argparse
import contextlib
import fcntl
import json
import os
import sys
import tarfile
import time
import zipfile
from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parent
ROOT = GRADING_DIR.parents[1]
sys.path.insert(0, str(GRADING_DIR))

import binaries  # noqa: E402  (after the path is set)
import build  # noqa: E402
import lessons  # noqa: E402
import regions  # noqa: E402
import report as scoring  # noqa: E402
import shapes  # noqa: E402
from runs import InfrastructureError, run_limited  # noqa: E402

HANDOUT_RECORD = GRADING_DIR / "handout.json"        # present in a hand-out only
HANDOUT_KERNEL = GRADING_DIR / "handout_kernel.cuh"  # the hand-out's kernel as handed out
SUBMISSION_MAX_BYTES = 1024 * 1024
BUILD_SECONDS = 900
HOST_CHECK_SECONDS = 60
CANARY_SECONDS = 120
SANITIZER_SECONDS = 120
PERFORMANCE_SECONDS = 180
GPU_LOCK_WAIT_SECONDS = 1800
DEFAULT_RUN_SECONDS = 20       # per correctness run, plus the time its arithmetic could need
MAX_HANGS = 2                  # after this many killed runs the remaining runs are not started
CHECK_RUN = ["--iters", "1", "--warmup", "0"]  # a correctness run times next to nothing
PERFORMANCE_PAIRS = 20
QUICK_PERFORMANCE_PAIRS = 5
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck")
EXIT_MEANINGS = {1: "the check failed", 2: "no CUDA GPU", 3: "this GPU cannot run the lesson",
                 4: "bad command line or shape", 5: "CUDA error: a trap (an unwritten region), "
                 "a crash, or the harness's own deadlock timeout"}
TEST_OUTPUT_MAX_CHARS = 2500


class SubmissionError(Exception):
    """The submission cannot be read as a kernel.cuh; the message is for the student."""


class NoGpu(Exception):
    """The grading machine has no CUDA GPU: everything after the static checks is skipped."""


def read_submission(path, lesson):
    """(text, name) of the submission's kernel.cuh: the file itself, or the one inside a folder
    or archive (the one at the lesson's own path if there are several)."""
    path = Path(path)

    def pick(candidates, where):
        if not candidates:
            raise SubmissionError(f"no kernel.cuh in {where}")
        exact = [name for name in candidates if name.endswith(lesson.kernel)]
        if len(exact) == 1 or len(candidates) == 1:
            return (exact or candidates)[0]
        raise SubmissionError(f"{where} holds several kernel.cuh and none at {lesson.kernel}: "
                              + ", ".join(sorted(candidates)))

    if path.is_dir():
        found = {str(file.relative_to(path)): file for file in path.rglob("kernel.cuh")
                 if file.is_file() and not file.is_symlink()}
        name = pick(list(found), path.name)
        data = found[name].read_bytes()[:SUBMISSION_MAX_BYTES + 1]
    elif not path.is_file():
        raise SubmissionError(f"{path} does not exist")
    elif tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            members = {member.name: member for member in archive.getmembers()
                       if member.isfile() and member.name.endswith("kernel.cuh")}
            name = pick(list(members), path.name)
            data = archive.extractfile(members[name]).read(SUBMISSION_MAX_BYTES + 1)
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = [info.filename for info in archive.infolist()
                       if not info.is_dir() and info.filename.endswith("kernel.cuh")]
            name = pick(members, path.name)
            with archive.open(name) as file:
                data = file.read(SUBMISSION_MAX_BYTES + 1)
    else:
        name, data = path.name, path.read_bytes()[:SUBMISSION_MAX_BYTES + 1]
    if len(data) > SUBMISSION_MAX_BYTES:
        raise SubmissionError(f"{name} is larger than {SUBMISSION_MAX_BYTES} bytes")
    if b"\0" in data:
        raise SubmissionError(f"{name} is not a text file")
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as error:
        raise SubmissionError(f"{name} is not UTF-8 text ({error})") from None


def read_secret(secret_file):
    if os.environ.get("GRADE_SECRET"):
        return os.environ["GRADE_SECRET"].encode()
    secret_file = secret_file or os.environ.get("GRADE_SECRET_FILE")
    if secret_file:
        secret = Path(secret_file).read_bytes().strip()
        if not secret:
            raise InfrastructureError(f"the secret file {secret_file} is empty")
        return secret
    return None


def clipped(text, limit=TEST_OUTPUT_MAX_CHARS):
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


@contextlib.contextmanager
def gpu_lock():
    """One grading job per GPU: a lock per device (CUDA_VISIBLE_DEVICES names the one we use)."""
    device = os.environ.get("CUDA_VISIBLE_DEVICES", "0").replace(",", "_") or "0"
    path = Path(os.environ.get("GRADE_LOCK_DIR", "/tmp")) / f"gemm-grading-gpu-{device}.lock"
    with open(path, "a") as lock:
        deadline = time.monotonic() + GPU_LOCK_WAIT_SECONDS
        announced = False
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InfrastructureError(f"the GPU stayed busy (lock {path}) for "
                                              f"{GPU_LOCK_WAIT_SECONDS} s") from None
                if not announced:
                    print(f"grade: waiting for the GPU (another grading job holds {path})", flush=True)
                    announced = True
                time.sleep(1)
        yield


class Grader:
    def __init__(self, lesson_id, submission, results, build_dir, quick=False, secret=None,
                 run_seconds=DEFAULT_RUN_SECONDS, keep_build=False):
        self.start = time.monotonic()
        self.lesson_id = lesson_id
        self.submission_path = Path(submission)
        self.results = Path(results)
        self.runs_dir = self.results / "runs"
        self.quick = quick
        self.secret = secret
        self.run_seconds = run_seconds
        self.keep_build = keep_build
        self.in_handout = HANDOUT_RECORD.is_file()
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.report = scoring.Report(lesson_id, public_mode=secret is None, quick=quick)
        self.tree = build.GradeTree(ROOT, build_dir)
        self.folder = self.baseline_folder = None
        self.hangs = 0
        self.bound_seconds = None  # set before the GPU runs
        self.first_reports = {}  # shape name -> the report of its correctness run

    # ---- 1-2: the submission ---------------------------------------------------------------

    def splice(self):
        """The spliced kernel text, or None when the submission is rejected (tests say why)."""
        self.lesson = lessons.load(ROOT, self.lesson_id)
        if self.in_handout:
            # The hand-out's kernel as it was handed out (the student edits lessons/NN/ in place),
            # and what the course's solution allows in each region.
            self.course_text = self.handout_text = HANDOUT_KERNEL.read_text()
            limits = json.loads(HANDOUT_RECORD.read_text())["limits"]
        else:
            self.course_text = (ROOT / self.lesson.kernel).read_text()
            self.handout_text = regions.cut(self.course_text)
            course_lines = self.course_text.split("\n")
            limits = {region.name: regions.region_limits(region.body(course_lines))
                      for region in regions.parse_regions(self.course_text)}
        course_regions = regions.parse_regions(self.course_text, self.lesson.kernel)
        try:
            text, name = read_submission(self.submission_path, self.lesson)
            splice = regions.splice(self.course_text, text, self.handout_text, name)
            problems = [problem for region in course_regions for problem in regions.validate_body(
                region.name, splice.bodies[region.name], limits[region.name])]
        except (SubmissionError, regions.RegionError) as error:
            problems = [str(error)]
        if problems:
            self.report.add("the submission's exercise regions", "info", False, "\n".join(problems))
            return None
        self.report.add("the submission's exercise regions", "info", True,
                        f"{len(course_regions)} region(s) found and valid: "
                        + ", ".join(region.name for region in course_regions))
        if splice.outside_changes:
            changed = sum(1 for line in splice.outside_changes
                          if line[:1] in "+-" and not line.startswith(("+++", "---")))
            self.report.add("changes outside the exercise regions (ignored)", "info", True,
                            f"{changed} line(s) differ from the hand-out outside the regions; the "
                            "course's version of them was used:\n"
                            + clipped("\n".join(splice.outside_changes)))
        words = sorted({word for body in splice.bodies.values() for word in regions.flagged_words(body)})
        if words:
            self.report.flags.append("the regions name " + ", ".join(words))
        self.host_checks = sorted({region.attributes["host-check"] for region in course_regions
                                   if "host-check" in region.attributes})
        return splice.text

    # ---- 3: build --------------------------------------------------------------------------

    def build(self, spliced_text):
        """Builds the submission and its baseline (the course's solution, or in a hand-out the
        hand-out itself); False when the submission does not build (a test says why)."""
        with self.tree.locked():
            self.folder = self.tree.add(self.lesson, spliced_text, self.host_checks,
                                        with_pair=not self.in_handout)
            targets = [self.folder.target("lesson")]
            targets += [self.folder.target(f"check_{check}") for check in self.host_checks]
            if self.in_handout:
                self.baseline_folder = self.tree.add(self.lesson, self.handout_text, [], with_pair=False)
                baseline = self.baseline_folder.target("lesson")
            else:
                baseline = f"lesson{self.lesson_id:02d}"
            self.tree.configure()
            outcomes = self.tree.build(targets + [baseline], BUILD_SECONDS)
        if not outcomes[baseline].ok:
            raise InfrastructureError(f"the course's own lesson {self.lesson_id:02d} did not build:\n"
                                      + outcomes[baseline].log)
        self.executable = self.tree.executable(self.folder.target("lesson"))
        self.baseline = self.tree.executable(baseline)
        failed = [target for target in targets if not outcomes[target].ok]
        seconds = max(outcome.seconds for outcome in outcomes.values())
        if failed:
            self.report.add("build with the course's flags", "info", False, clipped(
                "\n\n".join(outcomes[target].log or "(no message)" for target in failed)), seconds)
            for part in scoring.POINTS:
                self.report.not_run[part] = "the submission did not build"
            return False
        self.report.add("build with the course's flags", "info", True,
                        "built without warnings, spills or serialized wgmma", seconds)
        return True

    # ---- 4: static checks ------------------------------------------------------------------

    def static_checks(self):
        namespace = build.submission_namespace(self.lesson)
        signature = self.lesson.signature
        if signature:
            mnemonics = binaries.kernel_mnemonics(self.executable, namespace)
            missing = binaries.missing_from_signature(signature, mnemonics)
            counts = {word: sum(count for mnemonic, count in mnemonics.items()
                                if mnemonic == word or mnemonic.startswith(word + "."))
                      for word in signature}
            self.report.add("instruction signature", "technique", not missing,
                            f"missing from the kernel's machine code: {', '.join(missing)}" if missing
                            else "the kernel's machine code has " +
                            ", ".join(f"{word} ({counts[word]})" for word in signature))
        for check in self.host_checks:
            run = run_limited([self.tree.executable(self.folder.target(f"check_{check}"))],
                              HOST_CHECK_SECONDS, self.results)
            self.report.add(f"host check {check}", "technique", run.exit_code == 0,
                            clipped(run.output.strip()) or f"exit code {run.exit_code}", run.seconds)
        if not signature and not self.host_checks:
            self.report.add("technique", "technique", True,
                            "this lesson has no instruction signature or host check: the points "
                            "follow from one correct public shape")

        extra_device = sorted(binaries.device_undefined_functions(self.executable)
                              - binaries.device_undefined_functions(self.baseline))
        host_submission = binaries.host_undefined_symbols(self.executable)
        host_baseline = binaries.host_undefined_symbols(self.baseline)
        extra_host = sorted(host_submission - host_baseline) if host_submission is not None else []
        extra = extra_device + extra_host
        if extra:
            self.report.flags.append("the kernel needs external functions the solution does not: "
                                     + ", ".join(extra))
        self.report.add("external symbols", "info", not extra,
                        "only what the course's solution needs" if not extra else
                        "needs what the solution does not: " + ", ".join(extra))

    # ---- 5: runs ---------------------------------------------------------------------------

    def run_timeout(self, shape):
        return self.run_seconds + shape.flops / 2e11

    def run(self, executable, arguments, timeout, name):
        """One run of an executable; its report file and its log kept under runs/."""
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        result_file = self.runs_dir / f"{name}.json"
        result = run_limited([executable, *arguments, "--result-file", result_file], timeout,
                             self.runs_dir, result_file=result_file)
        (self.runs_dir / f"{name}.log").write_text(
            " ".join(map(str, result.command)) + f"\nexit code {result.exit_code}, "
            f"{result.seconds:.1f} s{', killed at the time limit' if result.timed_out else ''}\n\n"
            + result.output)
        return result

    def canary(self, why):
        """The course's solution on a small shape: proves the GPU healthy, or stops grading."""
        if self.in_handout:
            # No solution to run in a hand-out: only find out whether there is a GPU at all.
            if why == "start":
                probe = self.run(self.executable, ["--m", "8", "--n", "8", "--k", "8", "--no-check",
                                                   *CHECK_RUN], CANARY_SECONDS, "gpu_probe")
                if probe.exit_code == 2:
                    raise NoGpu(probe.last_lines(2))
            return
        result = self.run(self.baseline, ["--m", "128", "--n", "128", "--k", "128", *CHECK_RUN],
                          CANARY_SECONDS, f"canary_{int(time.monotonic() - self.start)}")
        if result.exit_code == 2 and why == "start":
            raise NoGpu(result.last_lines(2))
        report = result.result or {}
        if result.exit_code != 0 or not (report.get("check") or {}).get("passed"):
            raise InfrastructureError(f"the course's own solution failed on a small shape ({why}): "
                                      f"exit code {result.exit_code}\n{result.last_lines()}")

    def correctness_run(self, shape):
        """Runs one shape: (passed, text, seconds), or None when hangs stopped the runs."""
        if self.hangs >= MAX_HANGS:
            return None
        result = self.run(self.executable, shape.arguments() + CHECK_RUN, self.run_timeout(shape),
                          ("hidden_" if shape.hidden else "public_") + shape.name)
        if result.timed_out:
            self.hangs += 1
            self.canary(f"after the run of {shape.name} was killed")
            return False, (f"did not finish within {self.run_timeout(shape):.0f} s (a hang?): "
                           "killed with its process group"), result.seconds
        passed, text = self.judge(result, shape)
        if passed:
            self.first_reports[shape.name] = result.result
        return passed, text, result.seconds

    def judge(self, result, shape):
        report = result.result
        code = result.exit_code
        if code in (2, 3, 4):
            raise InfrastructureError(f"the run of {shape.name} exited with {code} "
                                      f"({EXIT_MEANINGS[code]})\n{result.last_lines()}")
        meaning = EXIT_MEANINGS.get(code, f"ended by signal {-code}" if code and code < 0 else "")
        tail = "\n" + clipped(result.last_lines()) if result.output.strip() else ""
        if report is None:
            return False, f"exit code {code} ({meaning}); {result.result_problem}{tail}"
        check = report.get("check") if isinstance(report.get("check"), dict) else {}
        expected = {"lesson": self.lesson_id, "m": shape.m, "n": shape.n, "k": shape.k, "seed": shape.seed}
        if any(report.get(key) != value for key, value in expected.items()):
            return False, f"the report does not describe this run: {clipped(str(report), 400)}"
        error = check.get("max_normalized_error")
        details = (f"max normalized error {error if error is not None else 'n/a'} (passes <= 1), "
                   f"{check.get('mismatches', '?')} mismatches, {check.get('nan_or_inf', '?')} NaN/Inf, "
                   f"{check.get('unwritten', '?')} unwritten, "
                   f"{check.get('guard_overwritten', '?')} written past the end of D")
        if code == 0 and check.get("passed") is True:
            return True, details
        return False, f"exit code {code} ({meaning}): {details}{tail}"

    def correctness(self, part, shape_list):
        for shape in shape_list:
            outcome = self.correctness_run(shape)
            name = f"{shape.name} ({shape.size}, seed {shape.seed})"
            if outcome is None:
                self.report.add(name, part, False, f"not run: {MAX_HANGS} runs hung before it")
            else:
                self.report.add(name, part, *outcome)

    def reruns(self, rerun_shapes):
        for shape in rerun_shapes:
            name = f"bit-identical rerun of {shape.name}"
            first = self.first_reports.get(shape.name)
            if first is None:
                self.report.add(name, "robustness", False, "its first run did not pass")
                continue
            outcome = self.correctness_run(shape)
            if outcome is None or not outcome[0]:
                self.report.add(name, "robustness", False, outcome[1] if outcome else "not run")
                continue
            second = self.first_reports[shape.name]
            first_check, second_check = first["check"], second["check"]
            if "output_hash" in first_check and "output_hash" in second_check:
                same = first_check["output_hash"] == second_check["output_hash"]
                text = f"output hashes {first_check['output_hash']} and {second_check['output_hash']}"
            else:
                keys = ("max_normalized_error", "mismatches")
                same = all(first_check.get(key) == second_check.get(key) for key in keys)
                text = "same error statistics (the report has no output_hash: a weak comparison)"
            self.report.add(name, "robustness", same, text if same else "different outputs: " + text,
                            outcome[2])

    def sanitizers(self):
        sanitizer = binaries.tool("compute-sanitizer")
        m, n, k = shapes.SANITIZER_SHAPE
        for tool in SANITIZER_TOOLS:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            result = run_limited([sanitizer, "--tool", tool, "--error-exitcode", "99", "--print-limit",
                                  "20", self.executable, "--m", m, "--n", n, "--k", k, "--seed", "7",
                                  "--profile"], SANITIZER_SECONDS, self.runs_dir)
            (self.runs_dir / f"sanitizer_{tool}.log").write_text(result.output)
            clean = result.exit_code == 0 and "ERROR SUMMARY: 0 errors" in result.output
            if result.timed_out:
                self.hangs += 1
                self.canary(f"after compute-sanitizer {tool} was killed")
                text = f"did not finish within {SANITIZER_SECONDS} s: killed"
            elif clean:
                text = "0 errors"
            else:
                text = f"exit code {result.exit_code}\n" + clipped(result.last_lines(25))
            self.report.add(f"compute-sanitizer {tool} at {m} x {n} x {k}", "robustness", clean,
                            text, result.seconds)

    def performance(self):
        if self.report.public_mode:
            return
        if self.report.flags:
            self.report.not_run["performance"] = "the submission is flagged for review"
            return
        if not self.report.everything_but_performance_full():
            self.report.not_run["performance"] = ("performance counts only when everything "
                                                  "else earned full points")
            return
        with self.tree.locked():
            pair = self.folder.target("pair")
            outcome = self.tree.build([pair], BUILD_SECONDS)[pair]
        if not outcome.ok:
            raise InfrastructureError("the pair program (submission against solution) did not "
                                      "build:\n" + outcome.log)
        pairs = QUICK_PERFORMANCE_PAIRS if self.quick else PERFORMANCE_PAIRS
        chosen = shapes.PERFORMANCE_SHAPES[:1] if self.quick else shapes.PERFORMANCE_SHAPES
        ratios, tests = [], []
        for m, n, k in chosen:
            shape = shapes.Shape(f"performance_{m}x{n}x{k}", m, n, k, seed=1)
            result = self.run(self.tree.executable(pair), shape.arguments() +
                              ["--iters", str(pairs), "--warmup", "5"], PERFORMANCE_SECONDS, shape.name)
            report = result.result or {}
            ratio = report.get("ratio")
            minimum = (report.get("lesson_ms") or {}).get("min")
            if result.exit_code != 0 or not isinstance(ratio, (int, float)) or not minimum:
                text = (f"no timing: exit code {result.exit_code} "
                        f"({EXIT_MEANINGS.get(result.exit_code, 'killed' if result.timed_out else '')})"
                        f"\n{clipped(result.last_lines())}")
                tests.append((shape.size, False, text, result.seconds))
                ratios.append(0.0)
                continue
            fastest = shape.flops / (minimum * 1e-3)
            if fastest > scoring.peak_flops(report.get("sm_count")):
                self.report.flags.append(f"{shape.size}: a run took {minimum} ms, "
                                         f"{fastest / 1e12:.0f} TFLOP/s, faster than the GPU can "
                                         "compute (the product cannot have been computed)")
                tests.append((shape.size, False, "faster than the physical limit: 0 points, flagged",
                               result.seconds))
                ratios.append(0.0)
                continue
            clock = report.get("clock") or {}
            clock_text = (f"; SM clock {clock.get('sm_mhz_min')}-{clock.get('sm_mhz_max')} MHz, "
                          f"throttle: {clock.get('throttle') or 'none'}" if clock.get("available") else "")
            ratios.append(float(ratio))
            tests.append((shape.size, True, f"{ratio:.3f} x the solution's speed (median of "
                          f"{report.get('pairs')} pairs), {report.get('lesson_tflops', 0):.1f} "
                          f"TFLOP/s against {report.get('reference_tflops', 0):.1f}{clock_text}",
                          result.seconds))
        fraction, mean = scoring.performance_fraction(ratios)
        for size, passed, text, seconds in tests:
            self.report.add(size, "performance", passed and fraction > 0, text, seconds, fraction)
        self.report.notes.append(f"Performance: geometric mean {mean:.3f} x the course's solution "
                                 f"(full points from {scoring.FULL_POINTS_RATIO}).")
        self.report.leaderboard.append({"name": "speed vs. the course's solution", "value": round(mean, 4)})

    def report_cublas(self):
        """cuBLAS is reported, not scored: the ratio that the largest public run measured."""
        large = max(self.first_reports.items(), key=lambda item: item[1].get("m", 0) *
                    item[1].get("n", 0) * item[1].get("k", 0), default=None)
        if large and isinstance(large[1].get("ratio"), (int, float)):
            report = large[1]
            self.report.notes.append(
                f"For reference (not scored): at {report['m']} x {report['n']} x {report['k']} the "
                f"kernel ran at {report['ratio']:.3f} x the speed of {report.get('reference', 'cuBLAS')} "
                f"({report.get('lesson_tflops', 0):.1f} TFLOP/s; a short correctness run, not the "
                "performance protocol).")

    def gpu(self):
        """Everything that needs the GPU (step 5)."""
        public = shapes.public_shapes(ROOT)
        hidden = shapes.hidden_shapes(self.secret, self.lesson_id, public) if self.secret else []
        if self.quick:
            public = [shape for shape in public if shape.name in shapes.QUICK_PUBLIC]
            hidden = shapes.quick_hidden(hidden)
            self.report.notes.append("Quick grade: " + str(len(public)) + " public and "
                                     + str(len(hidden)) + " hidden shapes, one rerun, no sanitizers, "
                                     "one performance shape with fewer pairs.")
        if self.report.public_mode:
            self.report.notes.append("Public mode (no GRADE_SECRET): hidden shapes and performance "
                                     "were not graded.")
        rerun = [shape for shape in public if shape.name == "ragged_all"] + hidden[:1]
        if self.quick:
            rerun = rerun[:1]
        # The most this part can take, every run at its limit: a hang cannot make grading longer.
        self.bound_seconds = (CANARY_SECONDS * (1 + MAX_HANGS)
                              + sum(self.run_timeout(shape) for shape in public + hidden + rerun)
                              + (0 if self.quick else SANITIZER_SECONDS * len(SANITIZER_TOOLS))
                              + PERFORMANCE_SECONDS * len(shapes.PERFORMANCE_SHAPES))
        with gpu_lock():
            self.canary("start")
            self.report.notes.append(f"Time limit of the runs on the GPU: {self.bound_seconds:.0f} s "
                                     "(every run at its own limit).")
            self.correctness("public", public)
            self.correctness("hidden", hidden)
            self.reruns(rerun)
            if not self.quick:
                self.sanitizers()
            self.report_cublas()
            self.performance()

    # ---- the whole job ---------------------------------------------------------------------

    def grade(self):
        try:
            spliced = self.splice()
            if spliced is None:
                for part in scoring.POINTS:
                    self.report.not_run[part] = "the submission's regions were rejected"
            elif self.build(spliced):
                self.static_checks()
                try:
                    self.gpu()
                except NoGpu as missing:
                    self.report.notes.append("This machine has no CUDA GPU: the build and the static "
                                             "checks ran; the shapes, the sanitizers and performance "
                                             f"need a GPU ({missing}).")
                    for part in ("public", "hidden", "robustness", "performance"):
                        self.report.not_run[part] = "no GPU on the grading machine"
        except InfrastructureError as error:
            self.report.infrastructure_error = str(error)
        except lessons.LessonError as error:
            self.report.infrastructure_error = f"the course's lesson is malformed: {error}"
        finally:
            if self.folder and not self.keep_build:
                with self.tree.locked():
                    self.tree.remove(self.folder)
        return scoring.write_outputs(self.report, self.results, time.monotonic() - self.start)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Grade one homework submission.")
    parser.add_argument("lesson", help="lesson number, e.g. 08")
    parser.add_argument("submission", help="a kernel.cuh, or a folder or archive holding one")
    parser.add_argument("--results", type=Path, help="where to write results.json and summary.txt "
                        "(default: build-grading/results/lessonNN-<time>)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build-grading",
                        help="the grading build tree (default: build-grading)")
    parser.add_argument("--quick", action="store_true",
                        help="fewer shapes and runs, no sanitizers (the GPU validation)")
    parser.add_argument("--run-timeout", type=float, default=DEFAULT_RUN_SECONDS,
                        help=f"seconds per correctness run before it counts as a hang, plus the "
                             f"time its arithmetic needs (default {DEFAULT_RUN_SECONDS})")
    parser.add_argument("--secret-file", help="file holding the secret (or GRADE_SECRET)")
    parser.add_argument("--keep-build", action="store_true",
                        help="keep the submission's build in the grading tree afterwards")
    args = parser.parse_args(argv)
    if not args.lesson.strip().isdigit() or not 1 <= int(args.lesson) <= 99:
        print(f"grade: L must be a lesson number such as 08, not '{args.lesson}'", file=sys.stderr)
        return 2
    lesson_id = int(args.lesson)
    results = args.results or (args.build_dir / "results" /
                               f"lesson{lesson_id:02d}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        secret = read_secret(args.secret_file)
    except (OSError, InfrastructureError) as error:
        print(f"grade: cannot read the secret: {error}", file=sys.stderr)
        return 2
    grader = Grader(lesson_id, args.submission, results, args.build_dir.resolve(), args.quick,
                    secret, args.run_timeout, args.keep_build)
    summary = grader.grade()
    print(summary, end="")
    print(f"grade: wrote {results / 'results.json'} and {results / 'summary.txt'}")
    return 3 if grader.report.infrastructure_error else 0


if __name__ == "__main__":
    sys.exit(main())
