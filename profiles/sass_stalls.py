#!/usr/bin/env python3
"""Where a kernel's warps wait, instruction by instruction: Nsight Compute's source page reduced to
what a reader needs, and the hottest loop summed by kind of instruction.

Usage:
  sass_stalls.py reduce EXPORT.csv --out STALLS.csv   # ncu's source page -> one row per instruction
  sass_stalls.py loop STALLS.csv                       # the hottest loop, as a Markdown table

EXPORT.csv is what `ncu --import REPORT.ncu-rep --page source --csv --print-source sass` prints for
one kernel (make profile L=NN writes REPORT). Its first line names the kernel, its second the
columns. `reduce` keeps, per instruction: its offset from the kernel's first instruction, the
instruction, how many times a warp executed it, and the warp-state samples that found a warp on it,
in all and for the reasons that matter most in a GEMM's loop.

`loop` finds the kernel's hottest loop: of the runs of consecutive instructions that were each
executed the same number of times and hold a tensor-core instruction (HGMMA, QGMMA, HMMA), the one
executed most often (the longest, between equals). It sums its instructions and samples by kind (the opcode without its modifiers): how many of each one
pass of the loop issues, and what share of the loop's samples each kind took, with the stall
reasons of that kind's samples. Lesson 18's README quotes its output for the e4m3 kernel at 8192^3
(profiles/reference/h200/lesson18_sass_8192.csv; tests/tools/test_figure_sources.py checks the
table). Standard library only.
"""
import argparse
import csv
import io
import re
import sys
from collections import Counter

from svg_picture import csv_rows

# The reasons a reduced file keeps, as ncu names them, and as the table names them.
REASONS = (("stall_dispatch", "dispatch"), ("stall_selected", "selected"),
           ("stall_wait", "fixed-latency wait"), ("stall_long_sb", "long scoreboard"),
           ("stall_not_selected", "not selected"), ("stall_math", "math pipe throttle"),
           ("stall_misc", "misc"), ("stall_barrier", "barrier"),
           ("stall_branch_resolving", "branch resolving"))
COLUMNS = ("offset", "instruction", "executed", "samples") + tuple(name for name, _ in REASONS)
TENSOR_CORE = ("HGMMA", "QGMMA", "HMMA")


class StallsError(Exception):
    """A file this tool cannot read; one line."""


def reduce_export(text, origin="export"):
    """Rows of COLUMNS from ncu's source-page CSV (the kernel's name line, then the table)."""
    lines = text.splitlines()
    if len(lines) < 3 or not lines[0].startswith('"Kernel Name"'):
        raise StallsError(f"{origin}: not an ncu source-page export (its first line names the "
                          "kernel: ncu --import R --page source --csv --print-source sass)")
    table = list(csv.DictReader(io.StringIO("\n".join(lines[1:]))))
    needed = {"Address", "Source", "Instructions Executed", "Warp Stall Sampling (All Samples)"}
    needed |= {name for name, _ in REASONS}
    missing = sorted(needed - set(table[0]) if table else needed)
    if missing:
        raise StallsError(f"{origin}: the export has no column {missing[0]!r}")
    first = int(table[0]["Address"], 16)
    rows = []
    for row in table:
        rows.append({"offset": f"{int(row['Address'], 16) - first:#x}",
                     "instruction": " ".join(row["Source"].split()),
                     "executed": int(row["Instructions Executed"] or 0),
                     "samples": int(row["Warp Stall Sampling (All Samples)"] or 0),
                     **{name: int(row[name] or 0) for name, _ in REASONS}})
    return rows


def write_rows(rows, out):
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def read_rows(text, origin="stalls"):
    rows = [row for _, row in csv_rows(text, COLUMNS, StallsError, origin,
                                       "sass_stalls.py reduce writes them")]
    for row in rows:
        for name in COLUMNS[2:]:
            row[name] = int(row[name])
    return rows


def opcode(instruction):
    """The instruction's kind: its opcode without predicate or modifiers ('@!P0 FFMA.FTZ R1' ->
    'FFMA')."""
    words = re.sub(r"^@!?U?P[T0-9]+\s+", "", instruction).split()
    return words[0].split(".")[0] if words else ""


def hottest_loop(rows):
    """The longest run of consecutive rows executed the largest number of times among runs that
    hold a tensor-core instruction."""
    runs, start = [], 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i]["executed"] != rows[start]["executed"]:
            runs.append(rows[start:i])
            start = i
    loops = [run for run in runs if run[0]["executed"] > 0
             and any(opcode(r["instruction"]) in TENSOR_CORE for r in run)]
    if not loops:
        raise StallsError("no run of instructions with a tensor-core instruction was executed")
    return max(loops, key=lambda run: (run[0]["executed"], len(run)))


def loop_table(rows):
    """The hottest loop by kind of instruction, as Markdown lines, and the loop's totals."""
    loop = hottest_loop(rows)
    total = sum(r["samples"] for r in loop)
    kinds, counts, reasons = Counter(), Counter(), {}
    for r in loop:
        kind = opcode(r["instruction"])
        kinds[kind] += r["samples"]
        counts[kind] += 1
        reasons.setdefault(kind, Counter()).update({label: r[name] for name, label in REASONS})
    lines = ["| instruction | per pass of the loop | share of the loop's samples "
             "| its samples' main reasons |",
             "|---|---:|---:|---|"]
    for kind, samples in kinds.most_common():
        if samples < total / 100:
            continue
        top = [f"{label} {count / samples:.0%}" for label, count in reasons[kind].most_common(2)
               if count]
        lines.append(f"| {kind} | {counts[kind]} | {samples / total:.1%} | {', '.join(top)} |")
    summary = {"instructions": len(loop), "passes": loop[0]["executed"], "samples": total,
               "kernel_samples": sum(r["samples"] for r in rows)}
    return lines, summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    reduce = commands.add_parser("reduce", help="ncu's source-page CSV -> one row per instruction")
    reduce.add_argument("export")
    reduce.add_argument("--out", required=True)
    loop = commands.add_parser("loop", help="the hottest loop, summed by kind of instruction")
    loop.add_argument("stalls")
    args = parser.parse_args(argv)
    try:
        if args.command == "reduce":
            with open(args.export, encoding="utf-8") as f:
                rows = reduce_export(f.read(), args.export)
            with open(args.out, "w", encoding="utf-8") as f:
                write_rows(rows, f)
            print(f"sass_stalls: wrote {args.out} ({len(rows)} instructions)")
        else:
            with open(args.stalls, encoding="utf-8") as f:
                lines, summary = loop_table(read_rows(f.read(), args.stalls))
            print(f"the hottest loop: {summary['instructions']} instructions, "
                  f"{summary['passes']} passes by the kernel's warps, {summary['samples']} of the "
                  f"kernel's {summary['kernel_samples']} samples")
            print("\n".join(lines))
    except (OSError, StallsError) as error:
        print(f"sass_stalls: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
