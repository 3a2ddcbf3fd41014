#!/usr/bin/env python3
"""The grading command of the GPU host (docs/grading.md, "Gradescope"). gpu_host_command.sh, the
one command the Gradescope key may run there, starts it.

Request: SSH_ORIGINAL_COMMAND is `grade NN [budget=SECONDS] [commit=HASH]`; standard input is the
submission (a .tar.gz from run_autograder), at most 20 MB; standard output gets results.json.

  1. Pin: with commit=HASH (the hand-out's commit, from the autograder's grading.env), this
     checkout must be at that commit, without changes to tracked files: otherwise the grader and
     the hand-out could disagree on the lesson, so nothing is graded (an infrastructure error).
  2. A GPU: the first of GRADE_GPUS whose slot lock (GRADE_LOCK_DIR/gemm-grading-slot-K.lock) is
     free; while all are taken it waits, at most GRADE_SLOT_WAIT seconds and never past what the
     budget leaves for grading (GRADE_MIN_GRADE_SECONDS).
  3. Grade: tests/grading/grade.py with CUDA_VISIBLE_DEVICES=K, its own build tree
     build-grading-gpuK (no job waits for another's build) and --deadline, the budget that is
     left: grade.py ends within it, with a score or an infrastructure error.
  4. Keep: build-grading/gradescope/<time>-lessonNN-<pid>/ holds the submission, the request,
     results.json, summary.txt and the log; `gpu_host.py --regrade FOLDER` grades it again.

Anything that goes wrong on the way still prints a results.json that says so (an infrastructure
error, not a score). Settings (environment, or ~/.config/gemm-grading/host.env, which
gpu_host_command.sh reads): GRADE_SECRET_FILE (default ~/.config/gemm-grading/secret),
GRADE_GPUS (default: the GPUs nvidia-smi lists), GRADE_SLOT_WAIT (600), GRADE_LOCK_DIR (/tmp),
GRADE_DEFAULT_BUDGET (1440, for a request without budget=), GRADE_MAX_BUDGET (3600).
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parents[1]
COURSE = GRADING_DIR.parents[1]
sys.path.insert(0, str(GRADING_DIR))

from runs import InfrastructureError, run_limited  # noqa: E402  (after the path is set)

MAX_SUBMISSION_BYTES = 20 * 1024 * 1024
REQUEST = re.compile(r"grade (?P<lesson>\d{1,2})(?: budget=(?P<budget>\d{1,5}))?(?: commit=(?P<commit>[0-9a-f]{7,40}))?")
DEFAULTS = {"GRADE_SLOT_WAIT": 600, "GRADE_DEFAULT_BUDGET": 1440, "GRADE_MAX_BUDGET": 3600,
            "GRADE_MIN_GRADE_SECONDS": 600}
# How much later than grade.py's own deadline this program kills it: it never should have to.
KILL_MARGIN_SECONDS = 30
# Less than this left for grade.py is no grade at all.
MIN_DEADLINE_SECONDS = 60


def use_secret():
    """Points grade.py at this host's secret (GRADE_SECRET_FILE, default
    ~/.config/gemm-grading/secret); without a readable one there are no hidden shapes to grade."""
    secret = Path(os.environ.get("GRADE_SECRET_FILE") or Path.home() / ".config/gemm-grading/secret")
    if not secret.is_file() or not os.access(secret, os.R_OK):
        raise InfrastructureError(f"no secret at {secret}")
    os.environ["GRADE_SECRET_FILE"] = str(secret)


def archive_dir():
    """Where the submissions and their reports are kept (GRADE_ARCHIVE_DIR, for the tests)."""
    return Path(os.environ.get("GRADE_ARCHIVE_DIR") or COURSE / "build-grading" / "gradescope")


def setting(name):
    return int(os.environ.get(name) or DEFAULTS[name])


def failure_results(message):
    """A results.json that reports an infrastructure error (no score: the staff grades again)."""
    return {"output": "GRADING INFRASTRUCTURE ERROR on the GPU host: " + message,
            "visibility": "visible", "stdout_visibility": "hidden",
            "tests": [{"name": "grading did not finish", "score": 0, "max_score": 0,
                       "status": "failed", "visibility": "visible", "output": message}]}


def parse_request(text):
    """(lesson, budget seconds, commit or None) of `grade NN [budget=S] [commit=HASH]`."""
    match = REQUEST.fullmatch(text or "")
    if not match:
        raise InfrastructureError(f"expected 'grade NN [budget=SECONDS] [commit=HASH]', got '{text}'")
    budget = int(match["budget"] or setting("GRADE_DEFAULT_BUDGET"))
    return int(match["lesson"]), min(budget, setting("GRADE_MAX_BUDGET")), match["commit"]


def check_pinned(course, commit):
    """InfrastructureError unless the checkout is at `commit` (a full or abbreviated hash) with no
    change to its tracked files."""
    def git(*arguments):
        completed = subprocess.run(["git", *arguments], cwd=course, capture_output=True, text=True)
        if completed.returncode != 0:
            raise InfrastructureError(f"git {' '.join(arguments)} failed in {course}: "
                                      + completed.stderr.strip()[-500:])
        return completed.stdout.strip()

    head = git("rev-parse", "HEAD")
    if not head.startswith(commit):
        raise InfrastructureError(
            f"the grading host's course checkout {course} is at {head[:12]}, but the hand-out was "
            f"built from {commit[:12]}: pin it with `git -C {course} fetch && git -C {course} "
            f"checkout {commit}` and grade again")
    changed = git("status", "--porcelain", "--untracked-files=no")
    if changed:
        raise InfrastructureError(f"the grading host's course checkout {course} has uncommitted "
                                  f"changes to tracked files ({changed.splitlines()[0].strip()}, ...): "
                                  "restore them and grade again")


def gpu_list():
    """GRADE_GPUS ("0 1 2 3" or "0,1"), else the GPUs nvidia-smi lists, else GPU 0."""
    listed = os.environ.get("GRADE_GPUS")
    if listed:
        return listed.replace(",", " ").split()
    try:
        completed = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                                   capture_output=True, text=True, timeout=30)
        found = completed.stdout.split() if completed.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired):
        found = []
    return found or ["0"]


def pick_gpu(gpus, lock_dir, wait_seconds, poll_seconds=1.0):
    """(GPU, its slot lock held open): the first GPU no other grading job holds. One job per GPU:
    the lock is held until the returned file is closed (or this process ends)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        for gpu in gpus:
            lock = open(Path(lock_dir) / f"gemm-grading-slot-{gpu}.lock", "a")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return gpu, lock
            except BlockingIOError:
                lock.close()
        if time.monotonic() >= deadline:
            raise InfrastructureError(f"all {len(gpus)} GPU(s) of the grading host ({' '.join(gpus)}) "
                                      f"stayed busy for {wait_seconds:.0f} s: the submission will be "
                                      "graded again when they are free")
        time.sleep(poll_seconds)


def grade_command(lesson, submission, results, gpu, deadline_seconds):
    """The grade.py command line (GRADE_GRADER replaces grade.py: the tests use a fake one)."""
    grader = os.environ.get("GRADE_GRADER") or str(GRADING_DIR / "grade.py")
    return [sys.executable, grader, f"{lesson:02d}", str(submission), "--results", str(results),
            "--build-dir", str(COURSE / f"build-grading-gpu{gpu}"),
            "--deadline", str(int(deadline_seconds))]


def grade(folder, lesson, budget, started):
    """Picks a GPU, grades the submission in `folder` within what is left of the budget, and
    returns results.json's contents."""
    left = budget - (time.monotonic() - started)
    wait = max(0.0, min(setting("GRADE_SLOT_WAIT"), left - setting("GRADE_MIN_GRADE_SECONDS")))
    gpu, slot = pick_gpu(gpu_list(), os.environ.get("GRADE_LOCK_DIR", "/tmp"), wait)
    with slot:
        deadline = budget - (time.monotonic() - started)
        if deadline < MIN_DEADLINE_SECONDS:
            raise InfrastructureError(f"the budget of {budget} s leaves the grade {deadline:.0f} s: "
                                      "raise GRADE_TIMEOUT")
        results = folder / f"results-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        command = grade_command(lesson, folder / "submission.tar.gz", results, gpu, deadline)
        environment = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu}
        run = run_limited(command, deadline + KILL_MARGIN_SECONDS, COURSE, env=environment)
    (folder / "grade.log").write_text(" ".join(command) + f"\nCUDA_VISIBLE_DEVICES={gpu}\n\n" + run.output)
    if run.timed_out:
        raise InfrastructureError(f"grade.py did not end within its deadline of {deadline:.0f} s")
    try:
        answer = json.loads((results / "results.json").read_text())
    except (OSError, ValueError):
        raise InfrastructureError("the grader wrote no results.json: " + run.last_lines(15)) from None
    for name in ("results.json", "summary.txt"):
        if (results / name).is_file():
            shutil.copy2(results / name, folder / name)
    return answer


def serve(request, stdin, started):
    """Handles one request from Gradescope; returns results.json's contents."""
    lesson, budget, commit = parse_request(request)
    if commit:
        check_pinned(COURSE, commit)
    use_secret()
    data = stdin.read(MAX_SUBMISSION_BYTES + 1)
    if len(data) > MAX_SUBMISSION_BYTES:
        raise InfrastructureError(f"the submission is larger than {MAX_SUBMISSION_BYTES} bytes")
    folder = archive_dir() / f"{time.strftime('%Y%m%d-%H%M%S')}-lesson{lesson:02d}-{os.getpid()}"
    folder.mkdir(parents=True)
    (folder / "submission.tar.gz").write_bytes(data)
    (folder / "request.json").write_text(json.dumps({"lesson": lesson, "budget": budget,
                                                     "commit": commit}) + "\n")
    return grade(folder, lesson, budget, started)


def regrade(folder):
    """Grades a kept submission again (after an infrastructure error), as the request did."""
    folder = Path(folder).resolve()
    request = json.loads((folder / "request.json").read_text())
    if request.get("commit"):
        check_pinned(COURSE, request["commit"])
    use_secret()
    return grade(folder, request["lesson"], request["budget"], time.monotonic())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    started = time.monotonic()
    try:
        if argv[:1] == ["--regrade"] and len(argv) == 2:
            answer = regrade(argv[1])
            print(f"gpu_host: graded {argv[1]} again: results-*/summary.txt there", file=sys.stderr)
        elif argv:
            raise InfrastructureError("usage: gpu_host.py (a request in SSH_ORIGINAL_COMMAND), or "
                                      "gpu_host.py --regrade FOLDER")
        else:
            answer = serve(os.environ.get("SSH_ORIGINAL_COMMAND", ""), sys.stdin.buffer, started)
    except (InfrastructureError, OSError) as error:
        print(json.dumps(failure_results(str(error))))
        return 1
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
