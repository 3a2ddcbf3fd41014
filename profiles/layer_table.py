#!/usr/bin/env python3
"""Lesson 19's results table, from what `lesson19 --csv` writes: one row per token count with one
rank's figures (default rank 0), and every rank's median SM clock.

Usage: layer_table.py LAYER.csv [--rank R]

Times are the medians of the pairs in us, ratios the medians of the per-pair ratios; "layer" is the
variant the layer chose. The tables of lesson 19's README are this tool's output for
profiles/sweeps/layer_19_h200.csv and layer_19_h200x4.csv (tests/tools/test_figure_sources.py
checks that they still are). Standard library only.
"""
import argparse
import sys

from svg_picture import csv_rows

HEADER = ("| tokens | layer | stream order | one-shot | overlapped | cuBLASLt + NCCL | GEMMs alone "
          "| one-shot / stream | overlapped / stream | **layer / stream** "
          "| **layer / cuBLASLt + NCCL** | layer / GEMMs alone | SM clock |")
ALIGNMENT = "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
TIMES = ("stream_us", "one_shot_us", "overlapped_us", "cublaslt_nccl_us", "gemms_alone_us")
RATIOS = ("one_shot_over_stream", "overlapped_over_stream", "layer_over_stream",
          "layer_over_cublaslt", "layer_over_gemms_alone")
BOLD = {"layer_over_stream", "layer_over_cublaslt"}
VARIANTS = {"stream": "stream order", "one-shot": "one-shot", "overlapped": "overlapped"}
NEEDED = {"tokens", "rank", "layer", "sm_mhz_median"} | set(TIMES) | set(RATIOS)


class LayerTableError(Exception):
    """A file this tool cannot read; one line."""


def clocks_cell(clocks):
    """Every rank's median SM clock: 'X MHz (all)' where more than two ranks agree, else the list."""
    if len(clocks) > 2 and len(set(clocks)) == 1:
        return f"{clocks[0]} MHz (all)"
    return ", ".join(clocks) + " MHz"


def table(text, rank=0, origin="layer"):
    """The Markdown table of one rank's rows of the CSV `text`, as a list of lines."""
    rows = csv_rows(text, NEEDED, LayerTableError, origin, "lesson19 --csv")
    clocks = {}
    for _, row in rows:
        clocks.setdefault(row["tokens"], []).append(row["sm_mhz_median"])
    lines = [HEADER, ALIGNMENT]
    mine = [(number, row) for number, row in rows if row["rank"] == str(rank)]
    if not mine:
        raise LayerTableError(f"{origin}: no rows of rank {rank}")
    for number, row in sorted(mine, key=lambda item: int(item[1]["tokens"])):
        if row["layer"] not in VARIANTS:
            raise LayerTableError(f"{origin}:{number}: no variant called {row['layer']!r}")
        try:
            times = [f"{float(row[column]):.1f}" for column in TIMES]
            ratios = [f"**{float(row[column]):.3f}**" if column in BOLD
                      else f"{float(row[column]):.3f}" for column in RATIOS]
        except ValueError:
            raise LayerTableError(f"{origin}:{number}: a time or ratio that is not a number") from None
        cells = [row["tokens"], VARIANTS[row["layer"]]] + times + ratios
        cells.append(clocks_cell(clocks[row["tokens"]]))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv):
    parser = argparse.ArgumentParser(description="Lesson 19's results table from lesson19 --csv.")
    parser.add_argument("csv", help="what lesson19 --csv wrote")
    parser.add_argument("--rank", type=int, default=0, help="whose figures (default 0)")
    args = parser.parse_args(argv)
    try:
        with open(args.csv) as file:
            text = file.read()
        print("\n".join(table(text, args.rank, args.csv)))
    except (OSError, LayerTableError) as error:
        print(f"layer_table: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
