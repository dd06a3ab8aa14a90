#!/usr/bin/env python3
"""Chart and table of the conv benchmark (issue 9): per ResNet-50 layer, ktune's tuned
TFLOP/s next to cuDNN's from the same run (top) and the ratio cuDNN time / ktune time with the
issue's 0.9 target (bottom), one panel column per dtype; the Markdown table lists TFLOP/s,
ratio, rel-L2 to cuDNN and the winning config, then the geometric mean per dtype.

Usage: python3 benchmarks/plot_conv.py OUT.png CONV.json [CONV2.json ...]
CONV*.json come from benchmarks/gpu_conv (several when the run was split by --dtypes or
--layers; a layer and dtype measured twice keeps the last file's row). Without matplotlib
only the table is printed.
"""
import json
import math
import sys

TARGET = 0.9


def merged_rows(paths):
    """Rows with a ratio, last file winning per (dtype, layer), in the files' layer order."""
    rows, order = {}, []
    for path in paths:
        with open(path) as f:
            for row in json.load(f)["results"]:
                if "ratio" not in row:
                    continue
                key = (row["dtype"], row["layer"])
                if key not in rows:
                    order.append(key)
                rows[key] = row
    return [rows[k] for k in order]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def print_table(rows):
    print("| dtype | layer | ktune TFLOP/s | cuDNN TFLOP/s | ratio | rel-L2 vs cuDNN | best config |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['dtype']} | {r['layer']} | {r['ktune_tflops']:.1f} | {r['cudnn_tflops']:.1f} "
              f"| {r['ratio']:.3f} | {r['rel_l2_vs_cudnn']:.1e} | `{r['best_config']}` |")
    for dtype in sorted({r["dtype"] for r in rows}):
        ratios = [r["ratio"] for r in rows if r["dtype"] == dtype]
        ahead = sum(1 for x in ratios if x > 1)
        print(f"\n{dtype}: geometric mean ratio {geomean(ratios):.3f} over {len(ratios)} layers "
              f"({ahead} ahead of cuDNN; target >= {TARGET})")


def plot(rows, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = sorted({r["dtype"] for r in rows})
    fig, axes = plt.subplots(2, len(dtypes), figsize=(9 * len(dtypes), 9), squeeze=False)
    for col, dtype in enumerate(dtypes):
        sel = [r for r in rows if r["dtype"] == dtype]
        x = range(len(sel))
        top, bottom = axes[0][col], axes[1][col]
        top.bar([i - 0.2 for i in x], [r["ktune_tflops"] for r in sel], 0.4, label="ktune (tuned)")
        top.bar([i + 0.2 for i in x], [r["cudnn_tflops"] for r in sel], 0.4, label="cuDNN")
        top.set_ylabel("TFLOP/s")
        top.set_title(f"ResNet-50 conv layers, batch 32, {dtype}")
        top.legend()
        ratios = [r["ratio"] for r in sel]
        bottom.bar(list(x), ratios, color=["tab:green" if v >= 1 else "tab:orange" for v in ratios])
        bottom.axhline(TARGET, color="red", linestyle="--", label=f"target geomean {TARGET}")
        bottom.axhline(geomean(ratios), color="black", linestyle=":", label="geomean")
        bottom.set_ylabel("cuDNN time / ktune time")
        bottom.legend()
        for ax in (top, bottom):
            ax.set_xticks(list(x))
            ax.set_xticklabels([r["layer"] for r in sel], rotation=70, fontsize=7)
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = merged_rows(sys.argv[2:])
    print_table(rows)
    try:
        plot(rows, sys.argv[1])
    except ImportError:
        print("matplotlib not available: no chart written", file=sys.stderr)


if __name__ == "__main__":
    main()
