#!/usr/bin/env python3
"""Warp-stall summary of an Nsight Compute source-page export (SASS, CSV): the share of each
stall reason over the kernel and the instructions with the most samples, each with its three
largest reasons. Used to read where a kernel waits (benchmarks/NOTES.md, session 6).

The CSV comes from the GPU machine:
  ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:NAME -c 1 \
      -o prof PROGRAM ...
  ncu -i prof.ncu-rep --page source --csv --print-source sass > prof_sass.csv
Usage: python3 benchmarks/ncu_stalls.py prof_sass.csv[.gz] [TOP=25]
"""
import collections
import csv
import gzip
import sys


def main():
    path = sys.argv[1]
    top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    header = rows[1]  # row 0 names the kernel
    data = [r for r in rows[2:] if len(r) == len(header)]
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]

    def value(row, name):
        try:
            return float(row[col[name]] or 0)
        except ValueError:
            return 0.0

    totals = collections.Counter()
    for r in data:
        for h in reasons:
            totals[h] += value(r, h)
    all_samples = sum(totals.values())
    print("kernel {}: {:.0f} warp samples".format(rows[0][1] if len(rows[0]) > 1 else "?", all_samples))
    for h, v in totals.most_common(12):
        print("  {:24s} {:8.0f} {:5.1f} %".format(h[len("stall_"):], v, 100 * v / all_samples))
    print("instructions with the most samples:")
    key = "Warp Stall Sampling (All Samples)"
    for r in sorted(data, key=lambda r: -value(r, key))[:top_n]:
        worst = sorted(((value(r, h), h[len("stall_"):]) for h in reasons), reverse=True)[:3]
        print("  {:>7.0f}  {:58s} {}".format(value(r, key), r[col["Source"]].strip()[:58],
                                             " ".join("{}:{:.0f}".format(n, v) for v, n in worst)))


if __name__ == "__main__":
    main()
