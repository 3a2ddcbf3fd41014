#!/usr/bin/env python3
"""Registers, shared memory and spills per lesson kernel, from the compiler's own report.

`make resources` builds every lesson with `-Xptxas -v` into one log per lesson and runs this
script on the logs (`--csv FILE` also writes the table as CSV). ptxas prints, for every kernel it compiles:

    ptxas info    : Compiling entry function '_ZN8lesson0211gemm_kernel...' for 'sm_90a'
    ptxas info    : Function properties for _ZN8lesson0211gemm_kernel...
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 128 registers, used 1 barriers, 32768 bytes smem, 400 bytes cmem[0]

Shared memory here is the static part; memory a kernel asks for at launch (dynamic shared
memory) is not known to the compiler and is given in each lesson's README.
"""
import argparse
import csv
import datetime
import os
import re
import shutil
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


def demangle(names):
    """Readable names through c++filt when it is installed, the mangled ones otherwise."""
    if not names or shutil.which("c++filt") is None:
        return names
    result = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    lines = result.stdout.splitlines()
    return lines if len(lines) == len(names) else names


def parse(text):
    """One dict per kernel compiled in the log: name, arch, registers, smem, stack, spills."""
    kernels, current = [], None
    for line in text.splitlines():
        if match := ENTRY.search(line):
            current = {"name": match.group(1), "arch": match.group(2), "registers": 0, "smem": 0,
                       "stack": 0, "spill_stores": 0, "spill_loads": 0}
            kernels.append(current)
        elif current and (match := SPILLS.search(line)):
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, match.groups())
        elif current and (match := USED.search(line)):
            current["registers"] = int(match.group(1))
            current["smem"] = int(match.group(2) or 0)
    return kernels


def compiler_version():
    """What `nvcc --version` prints (NVCC, or nvcc on the PATH), or "" without one."""
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc")
    if not nvcc:
        return ""
    try:
        return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def write_csv(path, names, rows, commit):
    """The table as CSV: one row per kernel, with the compiler's version, the date and `commit`
    (make's COMMIT)."""
    release = re.search(r"release ([\d.]+)", compiler_version())
    with open(path, "w", newline="") as file:
        out = csv.writer(file, lineterminator="\n")
        out.writerow(["kernel", "arch", "registers", "static_smem_bytes", "stack_bytes",
                      "spill_store_bytes", "spill_load_bytes", "nvcc", "date", "commit"])
        for name, kernel in zip(names, rows):
            out.writerow([name.split("(")[0].removeprefix("void "), kernel["arch"],
                          kernel["registers"], kernel["smem"], kernel["stack"],
                          kernel["spill_stores"], kernel["spill_loads"],
                          release.group(1) if release else "unknown",
                          datetime.date.today().isoformat(), commit])


def main(argv):
    parser = argparse.ArgumentParser(description="Registers, shared memory and spills per lesson "
                                                 "kernel, from ptxas -v logs.")
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--csv", help="also write the table to this CSV file")
    parser.add_argument("--commit", default="unknown", help="the commit, for the CSV")
    args = parser.parse_args(argv)
    paths = args.logs
    rows = []
    for path in paths:
        with open(path) as log:
            # Only the lessons' own kernels (namespace lessonNN), not the harness's.
            rows += [k for k in parse(log.read()) if re.match(r"_ZN\d+lesson\d\d", k["name"])]
    if not rows:
        sys.exit("resources.py: no lesson kernels found in the logs (was -Xptxas -v on?)")
    names = demangle([k["name"] for k in rows])
    header = ("kernel", "arch", "registers", "static smem B", "stack B", "spill st B", "spill ld B")
    table = [header] + [
        (name.split("(")[0].removeprefix("void "), k["arch"], k["registers"], k["smem"], k["stack"], k["spill_stores"],
         k["spill_loads"]) for name, k in zip(names, rows)]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(cell).ljust(width) if i < 2 else str(cell).rjust(width)
                        for i, (cell, width) in enumerate(zip(row, widths))))
    if args.csv:
        write_csv(args.csv, names, rows, args.commit)


if __name__ == "__main__":
    main(sys.argv[1:])
