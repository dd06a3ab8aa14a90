#!/usr/bin/env python3
"""Chart and table of the conv benchmark (issue 9): per ResNet-50 layer, ktune's tuned
TFLOP/s next to cuDNN's from the same run (top) and the ratio cuDNN time / ktune time with the
issue's 0.9 target (bottom), one panel column per dtype; the Markdown table lists TFLOP/s,
ratio, rel-L2 to cuDNN and the winning config, then the geometric mean per dtype.

cuDNN is measured two ways (since session 8 both, and ktune, as CUDA graphs of 10 calls): by
gpu_conv through cuDNN's legacy API (its own algorithm search),
and, with --torch, by benchmarks/peers/torch_conv.py through PyTorch (cuDNN's graph API and
engine search, which on cuDNN 9 reaches Hopper kernels the legacy API does not offer). The
ratio that counts is against the faster of the two ("best cuDNN").

Usage: python3 benchmarks/plot_conv.py OUT.png CONV.json [CONV2.json ...] [--torch T.json ...]
                                       [--cudnn-also RUN.json ...]
CONV*.json come from benchmarks/gpu_conv (several when the run was split by --dtypes or
--layers; a layer and dtype measured twice keeps the last file's row). --cudnn-also names
gpu_conv or torch_conv.py outputs of other runs: their cuDNN figures (legacy API or torch)
also count, layer by layer, and one more geometric mean compares ktune with the fastest cuDNN
figure of every run given (cuDNN's engine choice through torch varies between runs). Without
matplotlib only the table is printed.
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


def add_torch(rows, paths):
    """Adds torch_tflops and the ratio to the faster cuDNN path (best_ratio) to every row."""
    torch = {}
    for path in paths:
        with open(path) as f:
            for row in json.load(f)["results"]:
                torch[(row["dtype"], row["layer"])] = row["torch_tflops"]
    for r in rows:
        t = torch.get((r["dtype"], r["layer"]))
        r["torch_tflops"] = t
        r["best_cudnn_tflops"] = max(r["cudnn_tflops"], t or 0)
        r["best_ratio"] = r["ktune_tflops"] / r["best_cudnn_tflops"]


def add_cudnn_also(rows, paths):
    """Adds fastest_cudnn_tflops (the best cuDNN figure of this run and of every run in
    `paths`, legacy API or torch) and the ratio to it (fastest_ratio) to every row."""
    fastest = {}
    for path in paths:
        with open(path) as f:
            for row in json.load(f)["results"]:
                key = (row["dtype"], row["layer"])
                for field in ("cudnn_tflops", "torch_tflops"):
                    if row.get(field):
                        fastest[key] = max(fastest.get(key, 0), row[field])
    for r in rows:
        r["fastest_cudnn_tflops"] = max(r["best_cudnn_tflops"],
                                        fastest.get((r["dtype"], r["layer"]), 0))
        r["fastest_ratio"] = r["ktune_tflops"] / r["fastest_cudnn_tflops"]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def print_table(rows):
    print("| dtype | layer | ktune TFLOP/s | cuDNN legacy TFLOP/s | ratio | cuDNN via torch TFLOP/s "
          "| ratio to best cuDNN | rel-L2 vs cuDNN | best config |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        t = f"{r['torch_tflops']:.1f}" if r.get("torch_tflops") else "-"
        print(f"| {r['dtype']} | {r['layer']} | {r['ktune_tflops']:.1f} | {r['cudnn_tflops']:.1f} "
              f"| {r['ratio']:.3f} | {t} | {r['best_ratio']:.3f} | {r['rel_l2_vs_cudnn']:.1e} "
              f"| `{r['best_config']}` |")
    comparisons = [("ratio", "cuDNN legacy API"), ("best_ratio", "best cuDNN")]
    if rows and "fastest_ratio" in rows[0]:
        comparisons.append(("fastest_ratio", "the fastest cuDNN figure of every run given"))
    for dtype in sorted({r["dtype"] for r in rows}):
        for key, what in comparisons:
            ratios = [r[key] for r in rows if r["dtype"] == dtype]
            ahead = sum(1 for x in ratios if x > 1)
            print(f"\n{dtype} vs {what}: geometric mean ratio {geomean(ratios):.3f} over "
                  f"{len(ratios)} layers ({ahead} ahead; target >= {TARGET})")


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
        top.bar([i - 0.27 for i in x], [r["ktune_tflops"] for r in sel], 0.27, label="ktune (tuned)")
        top.bar(list(x), [r["cudnn_tflops"] for r in sel], 0.27, label="cuDNN legacy API")
        top.bar([i + 0.27 for i in x], [r.get("torch_tflops") or 0 for r in sel], 0.27,
                label="cuDNN via torch (graph API)")
        top.set_ylabel("TFLOP/s")
        top.set_title(f"ResNet-50 conv layers, batch 32, {dtype}")
        top.legend()
        # The strictest comparison available: the fastest cuDNN of every run given, if any.
        key = "fastest_ratio" if "fastest_ratio" in sel[0] else "best_ratio"
        ratios = [r[key] for r in sel]
        bottom.bar(list(x), ratios, color=["tab:green" if v >= 1 else "tab:orange" for v in ratios])
        bottom.axhline(TARGET, color="red", linestyle="--", label=f"target geomean {TARGET}")
        bottom.axhline(geomean(ratios), color="black", linestyle=":", label="geomean")
        bottom.set_ylabel("fastest cuDNN time (all runs) / ktune time" if key == "fastest_ratio"
                          else "best cuDNN time / ktune time")
        bottom.legend()
        for ax in (top, bottom):
            ax.set_xticks(list(x))
            ax.set_xticklabels([r["layer"] for r in sel], rotation=70, fontsize=7)
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    args = sys.argv[2:]
    also_paths = []
    if "--cudnn-also" in args:
        also_paths = args[args.index("--cudnn-also") + 1:]
        args = args[:args.index("--cudnn-also")]
    torch_paths = []
    if "--torch" in args:
        torch_paths = args[args.index("--torch") + 1:]
        args = args[:args.index("--torch")]
    rows = merged_rows(args)
    add_torch(rows, torch_paths)
    if also_paths:
        add_cudnn_also(rows, also_paths)
    print_table(rows)
    try:
        plot(rows, sys.argv[1])
    except ImportError:
        print("matplotlib not available: no chart written", file=sys.stderr)


if __name__ == "__main__":
    main()
