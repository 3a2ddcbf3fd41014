"""Running a program the grader does not trust: a time limit, a cap on what it prints, its whole
process group ended afterwards, and its JSON report read defensively.

A submission's kernel can hang (a barrier nobody completes), crash, print without end or write a
report that is not JSON. None of that may stop the grader: every run here ends within its limit,
leaves no process behind and comes back as a RunResult.
"""
import collections
import dataclasses
import fcntl
import json
import os
import signal
import subprocess
import threading
import time

# What the grader keeps of a run's output: its beginning and its end.
OUTPUT_HEAD_BYTES = 16 * 1024
OUTPUT_TAIL_BYTES = 16 * 1024
# The largest --result-file report that is read (a real one is under 2 KB).
RESULT_FILE_MAX_BYTES = 1024 * 1024
# How long to wait for a killed process group to be gone.
REAP_SECONDS = 10


class InfrastructureError(Exception):
    """The grading machine, not the submission, failed: a tool is missing, the GPU is unhealthy, a
    process cannot be ended. Grading stops and says so; it never scores this."""


def flock_within(file, mode, seconds, what, announce=None):
    """Takes an flock (fcntl.LOCK_EX or LOCK_SH) on an open file, waiting at most `seconds` (None:
    as long as it takes). A lock held by another grading job must not make this one wait past its
    own time budget: InfrastructureError says what stayed busy. `announce` is printed once when
    the lock is not free at once."""
    if seconds is None:
        fcntl.flock(file, mode)
        return
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(file, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise InfrastructureError(f"{what} stayed busy for {seconds:.0f} s") from None
            if announce:
                print(announce, flush=True)
                announce = None
            time.sleep(0.2)


def describe_exit(code, meanings=None):
    """How a run ended, for reports: 'exit code 5 (what 5 means)', 'exit code 0', 'ended by signal
    9', 'killed at its time limit' (no code). `meanings` maps exit codes to what they mean."""
    if code is None:
        return "killed at its time limit"
    if code < 0:
        return f"ended by signal {-code}"
    meaning = (meanings or {}).get(code)
    return f"exit code {code}" + (f" ({meaning})" if meaning else "")


@dataclasses.dataclass
class RunResult:
    command: list
    exit_code: object        # int, or None when the run was killed at its time limit
    timed_out: bool
    seconds: float
    output: str              # stdout and stderr, interleaved: head and tail if it was long
    output_bytes: int        # how much it printed in all
    result: object = None    # the --result-file report (a dict), or None
    result_problem: str = ""  # why there is no report, when there is none

    @property
    def output_truncated(self):
        return self.output_bytes > OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES

    def last_lines(self, count=12):
        return "\n".join(self.output.rstrip().split("\n")[-count:])


class _CappedReader(threading.Thread):
    """Drains a pipe to its end (so the writer never blocks), keeping only its head and tail."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.pipe = pipe
        self.head = bytearray()
        self.tail = collections.deque()
        self.tail_bytes = 0
        self.total = 0

    def run(self):
        while True:
            chunk = self.pipe.read1(64 * 1024) if hasattr(self.pipe, "read1") else self.pipe.read(65536)
            if not chunk:
                return
            self.total += len(chunk)
            room = OUTPUT_HEAD_BYTES - len(self.head)
            if room > 0:
                self.head.extend(chunk[:room])
                chunk = chunk[room:]
            if chunk:
                self.tail.append(chunk)
                self.tail_bytes += len(chunk)
                while self.tail_bytes - len(self.tail[0]) >= OUTPUT_TAIL_BYTES:
                    self.tail_bytes -= len(self.tail.popleft())

    def text(self):
        head = self.head.decode(errors="replace")
        if not self.tail:
            return head
        tail = b"".join(self.tail)[-OUTPUT_TAIL_BYTES:].decode(errors="replace")
        skipped = self.total - len(self.head) - min(self.tail_bytes, OUTPUT_TAIL_BYTES)
        if skipped <= 0:
            return head + tail
        return f"{head}\n[... {skipped} bytes of output not kept ...]\n{tail}"


def living_members(group):
    """The processes of a process group that are still running (zombies, which only wait for their
    parent to collect them, do not count). Reads /proc: the grader runs on Linux."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                stat = file.read()
        except OSError:
            continue  # it ended while we looked
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after it.
        state, _, pgrp = stat[stat.rindex(")") + 2:].split()[:3]
        if int(pgrp) == group and state not in "ZX":
            members.append(int(entry))
    return members


def end_group(process):
    """Kills the process and every other process of its group (it leads one: start_new_session),
    and waits until none is left. InfrastructureError if one survives: a process stuck in the
    driver would keep the GPU busy for the next run."""
    group = process.pid
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + REAP_SECONDS
    try:
        process.wait(timeout=REAP_SECONDS)
    except subprocess.TimeoutExpired:
        raise InfrastructureError(f"process {group} survived SIGKILL for {REAP_SECONDS} s") from None
    while living_members(group):
        if time.monotonic() > deadline:
            raise InfrastructureError(f"processes {living_members(group)} of group {group} survived "
                                      f"SIGKILL for {REAP_SECONDS} s")
        time.sleep(0.05)


def read_result_file(path):
    """(report dict, '') or (None, why not)."""
    if path is None:
        return None, ""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None, "the run wrote no report"
    if size > RESULT_FILE_MAX_BYTES:
        return None, f"the report is {size} bytes, more than any real one"
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            report = json.load(file)
    except ValueError as error:
        return None, f"the report is not JSON ({error})"
    if not isinstance(report, dict):
        return None, "the report is not a JSON object"
    return report, ""


def run_limited(command, timeout, cwd, result_file=None, env=None):
    """Runs `command` in a new process group for at most `timeout` seconds."""
    if result_file is not None and os.path.exists(result_file):
        os.unlink(result_file)
    start = time.monotonic()
    try:
        process = subprocess.Popen([str(part) for part in command], cwd=cwd, env=env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        return RunResult(list(command), 127, False, 0.0, f"cannot start: {error}", 0,
                         None, "the program could not be started")
    reader = _CappedReader(process.stdout)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    # The group goes in every case: a child the program left running would hold the pipe (and
    # perhaps the GPU) open.
    end_group(process)
    reader.join(timeout=REAP_SECONDS)
    process.stdout.close()
    seconds = time.monotonic() - start
    report, problem = read_result_file(result_file)
    return RunResult(list(command), None if timed_out else process.returncode, timed_out, seconds,
                     reader.text(), reader.total, report, problem)
