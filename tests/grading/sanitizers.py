"""What compute-sanitizer's tools found, read from what each of them prints.

Each tool ends its output with its own summary line, and only that line says whether it found
something:

    memcheck, synccheck, initcheck:  ========= ERROR SUMMARY: 0 errors
    racecheck:                       ========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)

racecheck prints no ERROR SUMMARY line, so a verdict that looked for one would fail every clean
racecheck run. Before the summary come the reports, each a line right after the prefix followed by
indented lines, e.g.

    ========= Invalid __shared__ write of size 4 bytes
    =========     at lesson05::gemm_kernel(...)+0x1c40
    =========     by thread (3,0,0) in block (1,1,0)
    ========= Error: Race reported between Write access at ... in lesson05::gemm_kernel(...)
    =========     and Read access at ... [248 hazards]
    ========= Barrier error detected. Divergent thread(s) in warp

Everything here is text processing, so the tests can feed it the tools' output without a GPU.
"""
import re

import runs

# The exit code compute-sanitizer is asked to return when its tool found something
# (--error-exitcode); any other non-zero code comes from the program under the tool.
ERROR_EXIT_CODE = 99
PREFIX = "========="

ERROR_SUMMARY = re.compile(r"^=+ ERROR SUMMARY: (?P<errors>\d+) errors?\b.*$", re.MULTILINE)
RACECHECK_SUMMARY = re.compile(r"^=+ RACECHECK SUMMARY: (?P<hazards>\d+) hazards? displayed "
                               r"\((?P<errors>\d+) errors?, (?P<warnings>\d+) warnings?\).*$",
                               re.MULTILINE)
# The summary line each tool prints, and the count in it that must be zero.
SUMMARIES = {"memcheck": (ERROR_SUMMARY, "errors"), "synccheck": (ERROR_SUMMARY, "errors"),
             "initcheck": (ERROR_SUMMARY, "errors"), "racecheck": (RACECHECK_SUMMARY, "hazards")}
SUMMARY_NAMES = {ERROR_SUMMARY: "ERROR SUMMARY", RACECHECK_SUMMARY: "RACECHECK SUMMARY"}

# A report starts right after the prefix and one space; its details are indented further.
REPORT_START = re.compile(r"^=+ (?P<text>\S.*)$")
REPORT_DETAIL = re.compile(r"^=+ {2,}(?P<text>\S.*)$")
# Lines of the frame that are not reports.
NOT_A_REPORT = re.compile(r"^(COMPUTE-SANITIZER|.*SUMMARY:|Target application returned an error)")

REPORT_DETAIL_LINES = 3      # the details shown after the first report's own line
LINE_MAX_CHARS = 300
TAIL_LINES = 12


def clip_line(line):
    return line if len(line) <= LINE_MAX_CHARS else line[:LINE_MAX_CHARS] + " [...]"


def first_report(output):
    """The first report's line and its first details, with the prefix ([] if there is none)."""
    lines = output.split("\n")
    for index, line in enumerate(lines):
        start = REPORT_START.match(line)
        if start and not NOT_A_REPORT.match(start["text"]):
            details = []
            for following in lines[index + 1:]:
                if not REPORT_DETAIL.match(following) or len(details) == REPORT_DETAIL_LINES:
                    break
                details.append(clip_line(following.strip()))
            return [clip_line(line.strip())] + details
    return []


def summary_line(tool, output):
    """(the tool's last summary line without the prefix, or None; the count that must be 0)."""
    pattern, count = SUMMARIES[tool]
    matches = list(pattern.finditer(output))
    if not matches:
        return None, None
    last = matches[-1]
    return last[0].lstrip("= ").strip(), int(last[count])


def describe_exit(exit_code):
    return runs.describe_exit(exit_code, {ERROR_EXIT_CODE: "the tool found errors"})


def verdict(tool, exit_code, output):
    """(clean, message) of one compute-sanitizer run of `tool`.

    Clean only when the exit code is 0 and the tool's own summary line is there and counts zero:
    a run that ended before its summary (a crash, a kill) proves nothing. The message of a run
    that is not clean says what the tool reported: its summary line and the first lines of its
    first report; or, when the tool found nothing but the program failed, the program's last
    lines."""
    if tool not in SUMMARIES:
        raise ValueError(f"unknown compute-sanitizer tool '{tool}' (known: {', '.join(SUMMARIES)})")
    summary, count = summary_line(tool, output)
    report = first_report(output)
    tail = "\n".join(clip_line(line) for line in output.rstrip().split("\n")[-TAIL_LINES:])
    if summary is None:
        expected = SUMMARY_NAMES[SUMMARIES[tool][0]]
        text = (f"compute-sanitizer {tool} printed no {expected} line ({describe_exit(exit_code)}): "
                "it did not finish its report, so the run proves nothing (a crash of the program "
                "or of the tool?)")
        if report:
            return False, text + "\nfirst report:\n" + "\n".join(report)
        return False, text + ("\nlast lines of its output:\n" + tail if tail.strip() else "")
    if count == 0 and exit_code == 0:
        return True, f"clean: {summary}"
    if count == 0:
        return False, (f"{summary}, but the lesson failed under compute-sanitizer {tool} "
                       f"({describe_exit(exit_code)}); last lines of its output:\n{tail}")
    text = f"{summary} ({describe_exit(exit_code)})"
    return False, text + ("\nfirst report:\n" + "\n".join(report) if report else "")
