#!/usr/bin/env python3
"""Grades one homework submission (`make grade L=NN SUBMISSION=path`, docs/grading.md).

Usage: grade.py NN SUBMISSION [--results DIR] [--build-dir DIR] [--quick] [--run-timeout S]
                [--secret-file FILE] [--keep-build] [--jobs N] [--deadline S]

SUBMISSION is a kernel.cuh (or the exercise file its lesson.json names: lesson 19's rows.hpp), or a
folder or archive (.tar, .tar.gz, .zip) that holds one.

  1. Splice: only the text inside the submission's exercise regions counts; it goes into the
     course's own kernel.cuh (launch, harness, reference and timing stay the course's). Changes
     outside the regions are listed and ignored.
  2. Validate each region (regions.validate_body): names and order, brackets, no preprocessor
     line, nothing that could reach outside the region, a size limit.
  3. Build the spliced lesson and the course's solution with the course's flags (build.py).
  4. Static checks: the lesson's instruction signature in the machine code, host checks, no
     external symbols the solution does not need, no library names in the code.
  5. Run, on the GPU, under a lock: every public and hidden shape in its own process with a time
     limit; a hang is killed with its process group, scores 0, and is followed by a run of the
     course's solution that proves the GPU healthy (if that fails, grading stops with an
     infrastructure error). Reruns must give the same bits; compute-sanitizer memcheck,
     racecheck and synccheck at a small ragged shape (sanitizers.py reads their verdicts). Then,
     if everything else passed, performance against the course's solution (report.py), alone on
     the GPU. A lesson that is a layer over GPUs (lesson 19) runs token counts on one GPU instead
     of shapes, each checking the layer and rehearsing every rank count's copies, with reruns and
     without sanitizers or timing (Grader.gpu_layer).
  6. Write results.json (Gradescope's format) and summary.txt, whatever the submission did.

The hidden shapes come from the secret: the environment variable GRADE_SECRET, or the file named
by --secret-file or GRADE_SECRET_FILE. Without one the grader runs in public mode (what a student
runs in a hand-out): public shapes, robustness and technique only.

--jobs N (or GRADE_JOBS) runs up to N correctness runs (shapes, reruns, sanitizers) at once,
under a shared lock of the GPU; performance always runs alone, under the exclusive lock. 1, the
default, holds the exclusive lock for the correctness runs too (production: one job per GPU).
N runs that share the GPU each take up to N times as long as alone, so each run's time limit is
N times its limit alone (a hang takes that long to be found); the summary names the limits.
--deadline S (or GRADE_DEADLINE): the whole grade's time budget; waits, builds and runs never
pass it, and a grade that cannot finish within it ends with an infrastructure error.

Exit status: 0 graded (whatever the score); 2 bad usage (one line on stderr, no report), or, in a
hand-out, a CUDA tool missing on this machine (the report says which tests did not run);
3 infrastructure error (results.json says so; the submission must be graded again).
"""
import argparse
import fcntl
import functools
import json
import os
import shutil
import sys
import tarfile
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parent
ROOT = GRADING_DIR.parents[1]
sys.path.insert(0, str(GRADING_DIR))

import binaries  # noqa: E402  (after the path is set)
import build  # noqa: E402
import lessons  # noqa: E402
import regions  # noqa: E402
import report as scoring  # noqa: E402
import sanitizers  # noqa: E402
import shapes  # noqa: E402
import runs  # noqa: E402
from runs import InfrastructureError, flock_within, run_limited  # noqa: E402

HANDOUT_RECORD = GRADING_DIR / "handout.json"        # present in a hand-out only
HANDOUT_KERNEL = GRADING_DIR / "handout_kernel.cuh"  # the hand-out's kernel as handed out
SUBMISSION_MAX_BYTES = 1024 * 1024
BUILD_SECONDS = 900
HOST_CHECK_SECONDS = 60
DESCRIBE_SECONDS = 30
CANARY_SECONDS = 120
SANITIZER_SECONDS = 120
PERFORMANCE_SECONDS = 180
GPU_LOCK_WAIT_SECONDS = 600    # another job on this GPU (production: none, gpu_host.py picks a free one)
TREE_LOCK_WAIT_SECONDS = 1200  # another job's configure and build of the same grading tree
DEFAULT_RUN_SECONDS = 20       # per correctness run, plus the time its arithmetic could need
MAX_HANGS = 2                  # after this many killed runs the remaining runs are not started
CHECK_RUN = ["--iters", "1", "--warmup", "0"]  # a correctness run times next to nothing
# A tensor-parallel lesson (lesson 19) on one GPU: the canary checks a few tokens; the hand-out's
# probe asks whether there is a GPU (exit 2 if not: its other outcomes are not read).
TENSOR_PARALLEL_CANARY = ["--gpus", "1", "--tokens", "8", "--chunks", "2", "--check-only"]
TENSOR_PARALLEL_PROBE = ["--gpus", "1", "--tokens", "1", "--check-only"]
PERFORMANCE_PAIRS = 20
QUICK_PERFORMANCE_PAIRS = 5
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck")
EXIT_MEANINGS = {1: "the check failed", 2: "no CUDA GPU", 3: "this GPU cannot run the lesson",
                 4: "bad command line or shape", 5: "CUDA error: a trap (an unwritten region), "
                 "a crash, or the harness's own deadlock timeout"}
TEST_OUTPUT_MAX_CHARS = 2500
EXIT_GRADED, EXIT_USAGE, EXIT_INFRASTRUCTURE = 0, 2, 3


class SubmissionError(Exception):
    """The submission cannot be read as a kernel.cuh; the message is for the student."""


class NoGpu(Exception):
    """The grading machine has no CUDA GPU: everything after the static checks is skipped."""


class OutOfTime(InfrastructureError):
    """The grade's time budget (--deadline) ran out: a busy host, not the submission."""


class UsageError(Exception):
    """The command line asks for something that does not exist: one line, exit 2, no report."""


def read_submission(path, lesson):
    """(text, name) of the submission's exercise file (kernel.cuh; lesson 19's rows.hpp): the
    file itself, or the one inside a folder or archive (the one at the lesson's own path if there
    are several)."""
    path = Path(path)
    exercise = lesson.exercise
    hand_in = f"hand in {lesson.kernel} (the file, or a folder or archive that holds it)"

    def pick(candidates, where):
        if not candidates:
            raise SubmissionError(f"no {exercise} in {where}: {hand_in}")
        exact = [name for name in candidates if name.endswith(lesson.kernel)]
        if len(exact) == 1 or len(candidates) == 1:
            return (exact or candidates)[0]
        raise SubmissionError(f"{where} holds several {exercise} and none at {lesson.kernel}: "
                              + ", ".join(sorted(candidates)))

    try:
        if path.is_dir():
            found = {str(file.relative_to(path)): file for file in path.rglob(exercise)
                     if file.is_file() and not file.is_symlink()}
            name = pick(list(found), path.name)
            data = found[name].read_bytes()[:SUBMISSION_MAX_BYTES + 1]
        elif not path.is_file():
            raise SubmissionError(f"{path} does not exist")
        elif tarfile.is_tarfile(path):
            with tarfile.open(path) as archive:
                members = {member.name: member for member in archive.getmembers()
                           if member.isfile() and member.name.endswith(exercise)}
                name = pick(list(members), path.name)
                data = archive.extractfile(members[name]).read(SUBMISSION_MAX_BYTES + 1)
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                members = [info.filename for info in archive.infolist()
                           if not info.is_dir() and info.filename.endswith(exercise)]
                name = pick(members, path.name)
                with archive.open(name) as file:
                    data = file.read(SUBMISSION_MAX_BYTES + 1)
        else:
            name, data = path.name, path.read_bytes()[:SUBMISSION_MAX_BYTES + 1]
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as error:
        raise SubmissionError(f"{path.name} is a damaged archive ({error}): {hand_in}") from None
    if len(data) > SUBMISSION_MAX_BYTES:
        raise SubmissionError(f"{name} is larger than {SUBMISSION_MAX_BYTES} bytes")
    if b"\0" in data:
        raise SubmissionError(f"{name} is not a text file: {hand_in}")
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as error:
        raise SubmissionError(f"{name} is not UTF-8 text ({error}): {hand_in}") from None


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


def describe_exit(code):
    """How a lesson run ended, with what its exit code means (runs.describe_exit)."""
    return runs.describe_exit(code, EXIT_MEANINGS)


def gpu_lock_path():
    """One lock per device (CUDA_VISIBLE_DEVICES names the one this job uses)."""
    device = os.environ.get("CUDA_VISIBLE_DEVICES", "0").replace(",", "_") or "0"
    return Path(os.environ.get("GRADE_LOCK_DIR", "/tmp")) / f"gemm-grading-gpu-{device}.lock"


class gpu_lock:
    """The GPU, shared or to ourselves. Correctness runs of grades with --jobs above 1 share it
    (timing does not matter there); performance, and every run of a grade with --jobs 1, hold it
    exclusively. A turnstile lock, taken briefly by everyone before the GPU's lock and held by an
    exclusive job while it waits, stops new shared holders from starving a waiting exclusive one."""

    def __init__(self, exclusive=True, wait_seconds=GPU_LOCK_WAIT_SECONDS):
        self.mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        self.wait_seconds = wait_seconds

    def __enter__(self):
        path = gpu_lock_path()
        what, announce = f"the GPU (lock {path})", f"grade: waiting for the GPU (another job holds {path})"
        deadline = None if self.wait_seconds is None else time.monotonic() + self.wait_seconds
        with open(f"{path}.turnstile", "a") as turnstile:
            flock_within(turnstile, fcntl.LOCK_EX, self.wait_seconds, what, announce)
            self.lock = open(path, "a")
            try:
                flock_within(self.lock, self.mode, None if deadline is None else
                             max(0.0, deadline - time.monotonic()), what, announce)
            except BaseException:
                self.lock.close()
                raise
        return self

    def __exit__(self, *exc):
        self.lock.close()


def gemm_check_details(check):
    """What a GEMM lesson's report says of its check, in one line for the student."""
    error = check.get("max_normalized_error")
    details = (f"max normalized error {error if error is not None else 'n/a'} (passes <= 1), "
               f"{check.get('mismatches', '?')} mismatches, {check.get('nan_or_inf', '?')} NaN/Inf, "
               f"{check.get('unwritten', '?')} unwritten, "
               f"{check.get('guard_overwritten', '?')} written past the end of D")
    if check.get("flag_bytes_left_set"):
        details = (f"it left {check.get('flag_bytes_left_set')} bytes of its workspace's flags "
                   "set, which the next launch on a workspace zeroed once takes for parts "
                   "already counted; " + details)
    early = check.get("early_writes") if isinstance(check.get("early_writes"), dict) else {}
    if early.get("d_elements") or early.get("workspace_words"):
        details = (f"it wrote {early.get('d_elements')} elements of D and "
                   f"{early.get('workspace_words')} 2-byte words of its workspace before the "
                   "kernel ahead of it had finished (which may still read them); " + details)
    return details


def layer_check_details(check):
    """What a tensor-parallel lesson's report says of its check (the layer's variants, and the
    rehearsal of every rank count's copies), in one line for the student."""
    rehearsal = check.get("rehearsal") if isinstance(check.get("rehearsal"), dict) else {}
    rehearsed = (f"the copies of {', '.join(map(str, rehearsal.get('rank_counts') or [])) or 'no'} "
                 "rank(s) rehearsed on the GPU: ")
    if rehearsal.get("passed") is True:
        return (f"the layer's four variants: max normalized error "
                f"{check.get('max_normalized_error', 'n/a')} (passes <= 1), "
                f"{check.get('mismatches', '?')} mismatches; {rehearsed}every row where it belongs")
    return (f"{rehearsed}{rehearsal.get('first_failure') or 'no verdict'} (the layer itself does "
            "not run where its copies would misplace rows)")


class Grader:
    def __init__(self, lesson_id, submission, results, build_dir, quick=False, secret=None,
                 run_seconds=DEFAULT_RUN_SECONDS, keep_build=False, jobs=1, deadline_seconds=None):
        self.start = time.monotonic()
        self.lesson_id = lesson_id
        self.submission_path = Path(submission)
        self.results = Path(results)
        self.runs_dir = self.results / "runs"
        self.quick = quick
        self.secret = secret
        self.run_seconds = run_seconds
        self.keep_build = keep_build
        self.jobs = max(1, int(jobs))
        self.deadline_seconds = deadline_seconds
        self.in_handout = HANDOUT_RECORD.is_file()
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.report = scoring.Report(lesson_id, public_mode=secret is None, quick=quick)
        self.tree = build.GradeTree(ROOT, build_dir)
        self.folder = self.baseline_folder = None
        self.hangs = 0
        self.counting = threading.Lock()  # hangs and run names, from the runs' threads
        self.canaries = 0
        self.bound_seconds = None  # set before the GPU runs
        self.facts = None  # what the course's build of the lesson says it is (describe)
        self.first_reports = {}  # shape name -> the report of its first correctness run
        self.performance_ratios = {}  # performance shape ("4096 x 4096 x 4096") -> speed ratio

    # ---- time and tools --------------------------------------------------------------------

    def time_for(self, seconds, what):
        """The time `what` may take: its own limit, or less where the grade's deadline is nearer.
        OutOfTime when the deadline has passed."""
        if self.deadline_seconds is None:
            return seconds
        left = self.start + self.deadline_seconds - time.monotonic()
        if left < 1:
            raise OutOfTime(self.out_of_time(what))
        return min(seconds, left)

    def out_of_time(self, what):
        return (f"the grade did not finish within its time budget of {self.deadline_seconds:.0f} s "
                f"({what}): the grading host was too busy. Grade it again.")

    def tool(self, name):
        """The path of a CUDA tool. Missing on the grading host: an infrastructure error. Missing
        in a hand-out: recorded (the student can install it) and None, so that the tests that
        need it say they did not run."""
        try:
            return binaries.tool(name)
        except binaries.MissingTool:
            if not self.in_handout:
                raise
            with self.counting:
                if name not in self.report.missing_tools:
                    self.report.missing_tools.append(name)
            return None

    def not_run_for(self, name):
        return f"not run: {binaries.MissingTool(name)}; then grade again"

    def cuda_compiler_found(self):
        """Whether CMake can find nvcc: on PATH, named by CUDACXX, or already in the tree's cache."""
        if shutil.which("nvcc") or os.environ.get("CUDACXX"):
            return True
        cache = self.tree.tree / "CMakeCache.txt"
        if cache.is_file():
            for line in cache.read_text(errors="replace").split("\n"):
                if line.startswith("CMAKE_CUDA_COMPILER:") and Path(line.split("=", 1)[-1]).is_file():
                    return True
        return False

    def missing_tool_lines(self):
        """For the student, one line per CUDA tool this hand-out's grader did not find."""
        return [f"grade: {binaries.MissingTool(name)}. The tests that need it did not run: grade "
                "again once it is there." for name in self.report.missing_tools]

    def exit_status(self):
        if self.report.infrastructure_error:
            return EXIT_INFRASTRUCTURE
        return EXIT_USAGE if self.report.missing_tools else EXIT_GRADED

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
        self.host_checks = regions.host_checks(course_regions)
        return splice.text

    # ---- 3: build --------------------------------------------------------------------------

    def build(self, spliced_text):
        """Builds the submission and its baseline (the course's solution, or in a hand-out the
        hand-out itself); False when the submission does not build (a test says why)."""
        if self.in_handout and not self.cuda_compiler_found():
            self.report.missing_tools.append("nvcc")
            for part in scoring.POINTS:
                self.report.not_run[part] = self.not_run_for("nvcc")
            return False
        with self.tree.locked(self.time_for(TREE_LOCK_WAIT_SECONDS, "waiting for the build tree")):
            self.folder = self.tree.add(self.lesson, spliced_text, self.host_checks,
                                        with_pair=not self.in_handout)
            targets = [self.folder.target("lesson")]
            targets += [self.folder.target(f"check_{check}") for check in self.host_checks]
            if self.in_handout:
                self.baseline_folder = self.tree.add(self.lesson, self.handout_text, [], with_pair=False)
                baseline = self.baseline_folder.target("lesson")
            else:
                baseline = f"lesson{self.lesson_id:02d}"
            folders = [self.folder] + ([self.baseline_folder] if self.baseline_folder else [])
            if any(folder.created for folder in folders) or \
                    not all(self.tree.knows(target) for target in targets + [baseline]):
                self.tree.configure()
            outcomes = self.timed_build(targets + [baseline])
        if not outcomes[baseline].ok:
            raise InfrastructureError(f"the course's own lesson {self.lesson_id:02d} did not build:\n"
                                      + outcomes[baseline].log)
        self.executable = self.tree.executable(self.folder.target("lesson"))
        self.baseline = self.tree.executable(baseline)
        failed = [target for target in targets if not outcomes[target].ok]
        seconds = max(outcome.seconds for outcome in outcomes.values())
        if failed:
            self.report.add("build with the course's flags", "info", False, clipped(
                "\n\n".join(outcomes[target].log or "(the compiler printed no message)"
                            for target in failed)), seconds)
            for part in scoring.POINTS:
                self.report.not_run[part] = "the submission did not build"
            return False
        self.report.add("build with the course's flags", "info", True,
                        "built without warnings, spills or serialized wgmma", seconds)
        return True

    def timed_build(self, targets):
        """tree.build within the grade's budget; OutOfTime when the deadline, not the build's own
        limit, stopped it."""
        allowed = self.time_for(BUILD_SECONDS, "building")
        outcomes = self.tree.build(targets, allowed)
        if allowed < BUILD_SECONDS and any(outcome.timed_out for outcome in outcomes.values()):
            raise OutOfTime(self.out_of_time("the build was stopped at the deadline"))
        return outcomes

    # ---- 4: static checks ------------------------------------------------------------------

    def static_checks(self):
        namespace = build.submission_namespace(self.lesson)
        signature = self.lesson.signature
        cuobjdump = self.tool("cuobjdump")
        if signature and not cuobjdump:
            self.report.add("instruction signature", "technique", False, self.not_run_for("cuobjdump"))
        elif signature:
            mnemonics = binaries.kernel_mnemonics(self.executable, namespace)
            missing = binaries.missing_from_signature(signature, mnemonics)
            counts = {word: sum(count for mnemonic, count in mnemonics.items()
                                if mnemonic == word or mnemonic.startswith(word + "."))
                      for word in signature}
            self.report.add("instruction signature", "technique", not missing,
                            f"missing from the kernel's machine code: {', '.join(missing)} (the "
                            f"signature is {' '.join(signature)}; found: "
                            + ", ".join(f"{word} ({counts[word]})" for word in signature) + ")"
                            if missing else "the kernel's machine code has " +
                            ", ".join(f"{word} ({counts[word]})" for word in signature))
        for check in self.host_checks:
            self.host_check(check)
        if not signature and not self.host_checks:
            self.report.add("technique", "technique", True,
                            "this lesson has no instruction signature or host check: the points "
                            "follow from one correct public shape")
        if not cuobjdump:
            self.report.add("external symbols", "info", False, self.not_run_for("cuobjdump"))
            return
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

    def host_check(self, check):
        allowed = self.time_for(HOST_CHECK_SECONDS, f"the host check {check}")
        run = run_limited([self.tree.executable(self.folder.target(f"check_{check}"))], allowed,
                          self.results)
        output = clipped(run.output.strip())
        if run.timed_out:
            text = f"did not finish within {allowed:.0f} s: killed"
        elif run.exit_code == 0:
            text = output or "passed"
        elif output:
            # The first line is what a summary shows: the first failure the check printed.
            lines = output.split("\n")
            first = next((line for line in lines if line.startswith("FAIL")), lines[0])
            text = f"failed ({describe_exit(run.exit_code)}): {first}\n{output}"
        else:
            text = f"failed ({describe_exit(run.exit_code)}), without printing why"
        self.report.add(f"host check {check}", "technique", run.exit_code == 0, text, run.seconds)

    # ---- 5: runs ---------------------------------------------------------------------------

    def run_timeout(self, shape):
        """A correctness run's limit: --run-timeout plus what its arithmetic could need, alone on
        the GPU, times the runs that share the GPU (--jobs): N runs at once each run up to N
        times as long, and a slow run is not a hang."""
        return (self.run_seconds + shape.flops / 2e11) * self.jobs

    def sanitizer_timeout(self):
        return SANITIZER_SECONDS * self.jobs

    def run(self, executable, arguments, timeout, name, result_file=True):
        """One run of an executable within its limit and the grade's budget; its log (and report
        file) kept under runs/."""
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        allowed = self.time_for(timeout, f"before the run {name}")
        report = self.runs_dir / f"{name}.json" if result_file else None
        command = [executable, *arguments] + (["--result-file", report] if report else [])
        result = run_limited(command, allowed, self.runs_dir, result_file=report)
        (self.runs_dir / f"{name}.log").write_text(
            " ".join(map(str, result.command)) + f"\n{describe_exit(result.exit_code)}, "
            f"{result.seconds:.1f} s{', killed at the time limit' if result.timed_out else ''}\n\n"
            + result.output)
        if result.timed_out and allowed < timeout:
            raise OutOfTime(self.out_of_time(f"the run {name} was stopped at the deadline"))
        return result

    def describe(self):
        """What the course's own build of the lesson says it is (`lessonNN --describe`, no GPU
        needed): its kind of operands, the K multiple of their shape contract (the shapes are
        drawn in it) and their dense tensor FLOP per clock per SM (the physical limit)."""
        if self.facts is None:
            result = self.run(self.baseline, ["--describe"], DESCRIBE_SECONDS, "describe",
                              result_file=False)
            try:
                facts = json.loads(result.output.strip().splitlines()[-1])
            except (ValueError, IndexError):
                facts = None
            described = (result.exit_code == 0 and isinstance(facts, dict)
                         and isinstance(facts.get("operands"), str)
                         and all(isinstance(facts.get(key), int) and facts[key] > 0
                                 for key in ("k_multiple", "dense_flop_per_clock_per_sm")))
            if not described:
                raise InfrastructureError(f"the course's lesson {self.lesson_id:02d} did not "
                                          f"describe itself (--describe):\n{clipped(result.output)}")
            self.facts = facts
        return self.facts

    def canary(self, why):
        """The course's solution on a small shape: proves the GPU healthy, or stops grading."""
        if self.in_handout:
            # No solution to run in a hand-out: only find out whether there is a GPU at all.
            if why == "start":
                probe_arguments = (TENSOR_PARALLEL_PROBE if self.lesson.tensor_parallel else
                                   ["--m", "8", "--n", "8", "--k", "8", "--no-check", *CHECK_RUN])
                probe = self.run(self.executable, probe_arguments, CANARY_SECONDS, "gpu_probe",
                                 result_file=not self.lesson.tensor_parallel)
                if probe.exit_code == 2:
                    raise NoGpu(probe.last_lines(2))
            return
        with self.counting:
            self.canaries += 1
            name = f"canary_{self.canaries}"
        result = self.run(self.baseline, TENSOR_PARALLEL_CANARY if self.lesson.tensor_parallel else
                          ["--m", "128", "--n", "128", "--k", "128", *CHECK_RUN], CANARY_SECONDS, name)
        if result.exit_code == 2:
            # The grading host must have a GPU: a missing one (or one lost during grading, as a
            # process that survives its kill can leave it) is the host's fault, never a score.
            raise InfrastructureError(f"the grading host has no usable CUDA GPU ({why}): "
                                      f"{result.last_lines(2)}")
        report = result.result or {}
        if result.exit_code != 0 or not (report.get("check") or {}).get("passed"):
            raise InfrastructureError(f"the course's own solution failed on a small shape ({why}): "
                                      f"{describe_exit(result.exit_code)}\n{result.last_lines()}")

    def hung(self, what):
        """Counts a killed run and proves the GPU healthy after it."""
        with self.counting:
            self.hangs += 1
        self.canary(f"after {what} was killed")

    def correctness_run(self, shape, label):
        """Runs one shape: (passed, text, seconds, report), or None when hangs stopped the runs."""
        if self.hangs >= MAX_HANGS:
            return None
        timing_off = [] if self.lesson.tensor_parallel else CHECK_RUN  # its runs: --check-only
        result = self.run(self.executable, shape.arguments() + timing_off, self.run_timeout(shape),
                          f"{label}_{shape.name}")
        if result.timed_out:
            self.hung(f"the run of {shape.name}")
            shared = (f", {self.jobs} runs sharing the GPU (--jobs)" if self.jobs > 1 else "")
            return False, (f"did not finish within {self.run_timeout(shape):.0f} s{shared} (a "
                           "hang?): killed with its process group"), result.seconds, None
        passed, text = self.judge(result, shape)
        return passed, text, result.seconds, result.result

    def judge(self, result, shape):
        report = result.result
        code = result.exit_code
        if code in (2, 3, 4):
            raise InfrastructureError(f"the run of {shape.name} exited with {code} "
                                      f"({EXIT_MEANINGS[code]})\n{result.last_lines()}")
        tail = "\nlast lines of its output:\n" + clipped(result.last_lines()) if result.output.strip() else ""
        if report is None:
            return False, f"no result: {result.result_problem} ({describe_exit(code)}){tail}"
        check = report.get("check") if isinstance(report.get("check"), dict) else {}
        expected, wrong = shape.described_by(report, self.lesson_id)
        if wrong:
            return False, (f"the report does not describe this run (expected {expected}, it says "
                           f"{wrong}): {clipped(str(report), 400)}")
        details = layer_check_details(check) if self.lesson.tensor_parallel else gemm_check_details(check)
        if code == 0 and check.get("passed") is True:
            return True, details
        if check.get("passed") is True:
            return False, f"the check passed, but then the run failed ({describe_exit(code)}): {details}{tail}"
        verdict = "wrong result" if check.get("passed") is False else "the report has no check verdict"
        return False, f"{verdict} ({describe_exit(code)}): {details}{tail}"

    def shape_test(self, part, shape):
        """(name, part, passed, text, seconds) of one shape's correctness test."""
        name = f"{shape.name} ({shape.describe()})"
        outcome = self.correctness_run(shape, part)
        if outcome is None:
            return name, part, False, f"not run: {MAX_HANGS} runs hung before it", 0.0
        passed, text, seconds, report = outcome
        if passed:
            self.first_reports[shape.name] = report
        return name, part, passed, text, seconds

    def rerun_test(self, shape):
        name = f"bit-identical rerun of {shape.name}"
        first = self.first_reports.get(shape.name)
        if first is None:
            return name, "robustness", False, "not run: its first run did not pass", 0.0
        outcome = self.correctness_run(shape, "rerun")
        if outcome is None:
            return name, "robustness", False, f"not run: {MAX_HANGS} runs hung before it", 0.0
        passed, text, seconds, second = outcome
        if not passed:
            return name, "robustness", False, "the second run failed: " + text, seconds
        first_check, second_check = first["check"], second["check"]
        if "output_hash" in first_check and "output_hash" in second_check:
            same = first_check["output_hash"] == second_check["output_hash"]
            text = f"output hashes {first_check['output_hash']} and {second_check['output_hash']}"
        else:
            keys = ("max_normalized_error", "mismatches")
            same = all(first_check.get(key) == second_check.get(key) for key in keys)
            text = "same error statistics (the report has no output_hash: a weak comparison)"
        return name, "robustness", same, text if same else "different outputs: " + text, seconds

    def sanitizer_test(self, tool, epilogue=shapes.PLAIN):
        """compute-sanitizer at the small ragged shape, plain or with a fused epilogue (whose C and
        bias loads and buffer hand-offs are more to race on)."""
        m, n, k = shapes.sanitizer_shape(self.describe()["k_multiple"])
        fused = epilogue != shapes.PLAIN
        name = f"compute-sanitizer {tool} at {m} x {n} x {k}" + (
            f", D = {epilogue.formula}" if fused else "")
        sanitizer = self.tool("compute-sanitizer")
        if sanitizer is None:
            return name, "robustness", False, self.not_run_for("compute-sanitizer"), 0.0
        if self.hangs >= MAX_HANGS:
            return name, "robustness", False, f"not run: {MAX_HANGS} runs hung before it", 0.0
        result = self.run(sanitizer, ["--tool", tool, "--error-exitcode", str(sanitizers.ERROR_EXIT_CODE),
                                      "--print-limit", "20", self.executable, "--m", m, "--n", n,
                                      "--k", k, "--seed", "7", "--profile",
                                      *(epilogue.arguments() if fused else [])],
                          self.sanitizer_timeout(), f"sanitizer_{tool}" + ("_fused" if fused else ""),
                          result_file=False)
        if result.timed_out:
            self.hung(f"compute-sanitizer {tool}")
            return name, "robustness", False, \
                f"did not finish within {self.sanitizer_timeout()} s: killed", result.seconds
        clean, text = sanitizers.verdict(tool, result.exit_code, result.output)
        return name, "robustness", clean, clipped(text), result.seconds

    def in_parallel(self, tasks):
        """The tasks' results, in order, with up to self.jobs of them running at once. The first
        exception cancels the tasks not yet started and is raised once the running ones end (each
        within its own time limit)."""
        if self.jobs == 1 or len(tasks) < 2:
            return [task() for task in tasks]
        pool = ThreadPoolExecutor(self.jobs)
        try:
            futures = [pool.submit(task) for task in tasks]
            return [future.result() for future in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def performance_blocked(self):
        """Why performance is not graded, or None."""
        if self.report.public_mode:
            return "public mode"
        if self.report.flags:
            return "the submission is flagged for review"
        if not self.report.everything_but_performance_full():
            return "performance counts only when everything else earned full points"
        return None

    def performance(self):
        """Times the submission against the solution; the caller holds the GPU exclusively."""
        pairs = QUICK_PERFORMANCE_PAIRS if self.quick else PERFORMANCE_PAIRS
        chosen = shapes.PERFORMANCE_SHAPES[:1] if self.quick else shapes.PERFORMANCE_SHAPES
        ratios, tests = [], []
        for m, n, k in chosen:
            shape = shapes.Shape(f"performance_{m}x{n}x{k}", m, n, k, seed=1)
            result = self.run(self.tree.executable(self.folder.target("pair")), shape.arguments() +
                              ["--iters", str(pairs), "--warmup", "5"], PERFORMANCE_SECONDS, shape.name)
            report = result.result or {}
            ratio = report.get("ratio")
            minimum = (report.get("lesson_ms") or {}).get("min")
            if result.exit_code != 0 or not isinstance(ratio, (int, float)) or not minimum:
                missing = result.result_problem or ("no speed ratio in the report" if not isinstance(
                    ratio, (int, float)) else "no minimum time in the report")
                text = (f"no timing: the pair program (submission against solution) "
                        f"{'was killed at its time limit' if result.timed_out else 'ended with ' + describe_exit(result.exit_code)}"
                        f"; {missing}\n{clipped(result.last_lines())}")
                tests.append((shape.size, False, text, result.seconds))
                ratios.append(0.0)
                continue
            fastest = shape.flops / (minimum * 1e-3)
            facts = self.describe()
            peak = scoring.peak_flops(facts["dense_flop_per_clock_per_sm"], report.get("sm_count"))
            if fastest > peak:
                self.report.flags.append(f"{shape.size}: a run took {minimum} ms, "
                                         f"{fastest / 1e12:.0f} TFLOP/s, faster than the GPU can "
                                         f"compute with {facts['operands']} operands "
                                         f"({peak / 1e12:.0f} TFLOP/s at its highest clock: the "
                                         "product cannot have been computed)")
                tests.append((shape.size, False, "faster than the physical limit: 0 points, flagged",
                               result.seconds))
                ratios.append(0.0)
                continue
            clock = report.get("clock") or {}
            clock_text = (f"; SM clock {clock.get('sm_mhz_min')}-{clock.get('sm_mhz_max')} MHz, "
                          f"throttle: {clock.get('throttle') or 'none'}" if clock.get("available") else "")
            ratios.append(float(ratio))
            self.performance_ratios[shape.size] = float(ratio)
            tests.append((shape.size, True, f"{ratio:.3f} x the solution's speed (median of "
                          f"{report.get('pairs')} pairs), {report.get('lesson_tflops', 0):.1f} "
                          f"TFLOP/s against {report.get('reference_tflops', 0):.1f}{clock_text}",
                          result.seconds))
        fraction, mean = scoring.performance_fraction(ratios)
        for size, passed, text, seconds in tests:
            if passed and fraction == 0:
                text += "\n(No points: the other shape gave no timing, so the geometric mean is 0.)"
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

    def correctness_on_gpu(self, public, hidden, rerun, sanitizer_runs=(), what="run",
                           performance_seconds=0):
        """The correctness part of the GPU's work, the same for every kind of lesson: the public
        and hidden runs and the sanitizer runs, up to self.jobs at once, then the bit-identical
        reruns, all inside one hold of the GPU that starts with the canary. Sets bound_seconds,
        the most this part (and the performance part's `performance_seconds`) can take with every
        run at its limit: a hang cannot make grading longer. The runs go on self.jobs threads,
        each taking the next run when it is free, so the last one ends at most the longest run
        after the average thread's share of them all. `what` names a run in the notes. Returns
        why performance is not graded, or None."""
        if self.report.public_mode:
            self.report.notes.append(f"Public mode (no GRADE_SECRET): hidden {what}s and "
                                     "performance were not graded.")
        run_limits = [self.run_timeout(run) for run in public + hidden + rerun]
        limits = run_limits + [self.sanitizer_timeout()] * len(sanitizer_runs)
        self.bound_seconds = (CANARY_SECONDS * (1 + MAX_HANGS) + sum(limits) / self.jobs
                              + (max(limits) if self.jobs > 1 else 0) + performance_seconds)
        lock_wait = self.time_for(GPU_LOCK_WAIT_SECONDS, "waiting for the GPU")
        with gpu_lock(exclusive=self.jobs == 1, wait_seconds=lock_wait):
            self.canary("start")
            sanitizer_text = (f", a sanitizer run {self.sanitizer_timeout()} s" if sanitizer_runs
                              else "")
            self.report.notes.append(
                f"Time limits: {self.jobs} correctness run(s) at once on the GPU (--jobs "
                f"{self.jobs}); each {what} may take {min(run_limits):.0f}-{max(run_limits):.0f} s "
                f"({self.run_seconds:g} s plus its arithmetic" + (f", times {self.jobs} for the "
                "runs that share the GPU" if self.jobs > 1 else "") + f"){sanitizer_text}; the "
                f"runs on the GPU, every one at its limit, {self.bound_seconds:.0f} s.")
            first = [functools.partial(self.shape_test, "public", run) for run in public]
            first += [functools.partial(self.shape_test, "hidden", run) for run in hidden]
            first += list(sanitizer_runs)
            for test in self.in_parallel(first):
                self.report.add(*test)
            for test in self.in_parallel([functools.partial(self.rerun_test, run) for run in rerun]):
                self.report.add(*test)
        blocked = self.performance_blocked()
        if blocked and blocked != "public mode":
            self.report.not_run["performance"] = blocked
        return blocked

    def gpu_layer(self):
        """Everything that needs the GPU, for a lesson that is a layer over GPUs (lesson 19): its
        token runs on one GPU, each checking the layer and rehearsing every rank count's copies,
        and bit-identical reruns. No sanitizer runs (its ranks are processes that NCCL joins, which
        compute-sanitizer does not follow), and performance is not timed: its regions are host
        arithmetic that aims the copies, so its points follow from everything else passing."""
        public = shapes.public_token_runs()
        hidden = shapes.hidden_token_runs(self.secret, self.lesson_id) if self.secret else []
        if self.quick:
            public, hidden = public[:2], hidden[:1]
            self.report.notes.append(f"Quick grade: {len(public)} public and {len(hidden)} hidden "
                                     "token runs, one rerun.")
        rerun = (public[-1:] + hidden[-1:])[:1 if self.quick else 2]
        if self.correctness_on_gpu(public, hidden, rerun, what="token run"):
            return
        self.report.add("performance", "performance", True,
                        "not timed: this lesson's regions are host arithmetic that decides where "
                        "rows go, not how fast they move; the points follow from everything else "
                        "passing (docs/grading.md)")

    def gpu(self):
        """Everything that needs the GPU (step 5)."""
        if self.lesson.tensor_parallel:
            return self.gpu_layer()
        k_multiple = self.describe()["k_multiple"]
        public = shapes.public_shapes(ROOT, k_multiple)
        hidden = (shapes.hidden_shapes(self.secret, self.lesson_id, public, k_multiple)
                  if self.secret else [])
        fused_public = shapes.fused_public(ROOT, public) if self.lesson.fused_epilogue else []
        fused_hidden = (shapes.fused_hidden(self.secret, self.lesson_id, hidden)
                        if self.lesson.fused_epilogue and self.secret else [])
        if self.quick:
            public = shapes.quick_public(public)
            hidden = shapes.quick_hidden(hidden)
            fused_public = fused_public[:shapes.QUICK_FUSED]
            fused_hidden = fused_hidden[:1]
            self.report.notes.append("Quick grade: " + str(len(public)) + " public and "
                                     + str(len(hidden)) + " hidden shapes, one rerun, no sanitizers, "
                                     "one performance shape with fewer pairs.")
        if fused_public or fused_hidden:
            self.report.notes.append(f"Fused epilogue: {len(fused_public)} public and "
                                     f"{len(fused_hidden)} hidden runs compute D = act(alpha * A * "
                                     "B^T + beta * C + bias), each with its own cases.")
        public += fused_public
        hidden += fused_hidden
        rerun = ([shape for shape in public if shape.name in shapes.RERUN_SHAPES][:1] + hidden[:1]
                 + fused_public[:1])
        if self.quick:
            rerun = rerun[:1]
        sanitizers_run = [functools.partial(self.sanitizer_test, tool)
                          for tool in (() if self.quick else SANITIZER_TOOLS)]
        if fused_public and not self.quick:
            epilogue = fused_public[0].epilogue
            sanitizers_run += [functools.partial(self.sanitizer_test, tool, epilogue)
                               for tool in ("memcheck", "racecheck")]
        blocked = self.correctness_on_gpu(public, hidden, rerun, sanitizers_run, what="shape",
                                          performance_seconds=PERFORMANCE_SECONDS
                                          * len(shapes.PERFORMANCE_SHAPES))
        self.report_cublas()
        if blocked:
            return
        with self.tree.locked(self.time_for(TREE_LOCK_WAIT_SECONDS, "waiting for the build tree")):
            pair = self.folder.target("pair")
            outcome = self.timed_build([pair])[pair]
        if not outcome.ok:
            raise InfrastructureError("the pair program (submission against solution) did not "
                                      "build:\n" + outcome.log)
        # Timing alone on the GPU: no other job's run may overlap it.
        with gpu_lock(exclusive=True, wait_seconds=self.time_for(GPU_LOCK_WAIT_SECONDS, "waiting "
                                                                 "for the GPU, to time")):
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


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2): `make grade` prints it as is."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (--help for the usage)\n")


def environment_number(name, default, kind=int):
    value = os.environ.get(name)
    try:
        return kind(value) if value else default
    except ValueError:
        raise UsageError(f"{name} must be a number, not '{value}'") from None


def check_usage(lesson_text, submission):
    """The lesson number, or UsageError: the lesson must exist here (in a hand-out: be the
    hand-out's), and the submission path must exist."""
    if not lesson_text.strip().isdigit() or not 1 <= int(lesson_text) <= 99:
        raise UsageError(f"L must be a lesson number such as 08, not '{lesson_text}'")
    lesson_id = int(lesson_text)
    folders = lessons.lesson_folders(ROOT)
    if lesson_id not in folders:
        raise UsageError(lessons.not_gradeable(ROOT, lesson_id))
    if HANDOUT_RECORD.is_file():
        handed_out = json.loads(HANDOUT_RECORD.read_text())["lesson"]
        if handed_out != lesson_id:
            raise UsageError(f"this hand-out is the homework of lesson {handed_out:02d}: grade it "
                             f"with L={handed_out:02d}")
    if not Path(submission).exists():
        raise UsageError(f"the submission {submission} does not exist")
    return lesson_id


def main(argv=None):
    parser = OneLineParser(prog="grade", description="Grade one homework submission.")
    parser.add_argument("lesson", help="lesson number, e.g. 08")
    parser.add_argument("submission", help="a kernel.cuh (lesson 19: rows.hpp), or a folder or "
                        "archive holding one")
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
    parser.add_argument("--jobs", type=int, default=None,
                        help="correctness runs at once, sharing the GPU (default GRADE_JOBS or 1)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds the whole grade may take (default GRADE_DEADLINE or none)")
    args = parser.parse_args(argv)
    try:
        lesson_id = check_usage(args.lesson, args.submission)
        jobs = args.jobs if args.jobs is not None else environment_number("GRADE_JOBS", 1)
        deadline = args.deadline if args.deadline is not None else \
            environment_number("GRADE_DEADLINE", None, float)
        if jobs < 1 or (deadline is not None and deadline <= 0):
            raise UsageError("--jobs and --deadline must be positive")
        try:
            secret = read_secret(args.secret_file)
        except (OSError, InfrastructureError) as error:
            raise UsageError(f"cannot read the secret: {error}") from None
    except UsageError as error:
        print(f"grade: {error}", file=sys.stderr)
        return EXIT_USAGE
    results = args.results or (args.build_dir / "results" /
                               f"lesson{lesson_id:02d}-{time.strftime('%Y%m%d-%H%M%S')}")
    grader = Grader(lesson_id, args.submission, results, args.build_dir.resolve(), args.quick,
                    secret, args.run_timeout, args.keep_build, jobs, deadline)
    summary = grader.grade()
    print(summary, end="")
    print(f"grade: wrote {results / 'results.json'} and {results / 'summary.txt'}")
    for line in grader.missing_tool_lines():
        print(line, file=sys.stderr)
    return grader.exit_status()


if __name__ == "__main__":
    sys.exit(main())
