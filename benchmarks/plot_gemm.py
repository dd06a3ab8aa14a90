#!/usr/bin/env python3
"""Chart of the GEMM benchmark (issue 8): per shape, the tuned ktune kernel's TFLOP/s next to
its default config's and cuBLAS's from the same run (top), and the ratio ktune / cuBLAS with the issue's targets as
lines (bottom), one panel column per dtype.

Usage: python3 benchmarks/plot_gemm.py OUT.png GEMM.json [GEMM2.json ...] [--table]
GEMM*.json come from benchmarks/gpu_gemm (several when the suite ran in parts; a shape and
dtype measured twice in one group keeps the last file's row). --table also prints a Markdown table (TFLOP/s,
ratio, % of HBM copy, best config) and the geometric means per dtype and group for the results
README. Without matplotlib only the table is printed.
"""
import argparse
import json
import math

GROUPS = ["square", "llm", "skinny", "kheavy", "odd"]
DTYPES = ["f32", "f16", "bf16"]


def load_rows(paths):
    """Successful rows of every file, the last one winning per (dtype, group, shape); 4096^3 is
    both a square and an LLM shape and keeps a row in each group."""
    rows = {}
    for path in paths:
        with open(path) as f:
            for row in json.load(f)["results"]:
                if "ratio" in row:
                    rows[(row["dtype"], row["group"], row["shape"])] = row
    return list(rows.values())


def order(row):
    """Issue order: group, then M, N, K."""
    group = GROUPS.index(row["group"]) if row["group"] in GROUPS else len(GROUPS)
    return (group, row["M"], row["N"], row["K"])


def target(row):
    """The issue's target ratio for a row, or None."""
    if row["group"] == "square" and row["dtype"] == "f32" and row["M"] >= 4096:
        return 0.85
    if (row["group"] == "square" and row["dtype"] != "f32" and row["M"] == 4096
            and row.get("template") == "gemm_mma"):
        return 0.70  # the mma.sync target: judged only where gemm_mma ran the row
    if row["group"] == "skinny" and row["M"] <= 64:
        return 1.0
    return None


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def print_table(rows):
    print("| dtype | group | shape (MxNxK) | ktune TFLOP/s | default TFLOP/s | cuBLAS TFLOP/s | "
          "ratio | target | ktune % of HBM copy | template | best config |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for dtype in DTYPES:
        for r in sorted((r for r in rows if r["dtype"] == dtype), key=order):
            t = target(r)
            default = f"{r['default_tflops']:.1f}" if "default_tflops" in r else ""
            print(f"| {dtype} | {r['group']} | {r['shape']} | {r['ktune_tflops']:.1f} | "
                  f"{default} | {r['cublas_tflops']:.1f} | {r['ratio']:.2f} | "
                  f"{'>= %.2f' % t if t else ''} | {100 * r['ktune_hbm_fraction']:.1f} | "
                  f"{r.get('template', '')} | `{r['best_config']}` |")
    print()
    print("| dtype | group | shapes | geomean ratio |")
    print("| --- | --- | --- | --- |")
    for dtype in DTYPES:
        mine = [r for r in rows if r["dtype"] == dtype]
        for group in GROUPS + ["all"]:
            sel = [r["ratio"] for r in mine if group in ("all", r["group"])]
            if sel:
                print(f"| {dtype} | {group} | {len(sel)} | {geomean(sel):.3f} |")
    skinny = [r["ratio"] for r in rows if r["group"] == "skinny" and r["M"] <= 64]
    if skinny:
        print(f"\nskinny M <= 64, all dtypes: geomean {geomean(skinny):.3f} over {len(skinny)}")


def plot(rows, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = [d for d in DTYPES if any(r["dtype"] == d for r in rows)]
    width = max(8, 0.45 * max(sum(r["dtype"] == d for r in rows) for d in dtypes))
    fig, axes = plt.subplots(2, len(dtypes), figsize=(width * len(dtypes) * 0.6 + 2, 8),
                             squeeze=False)
    for col, dtype in enumerate(dtypes):
        mine = sorted((r for r in rows if r["dtype"] == dtype), key=order)
        labels = [f"{r['group']}\n{r['shape']}" for r in mine]
        xs = range(len(mine))
        top, bottom = axes[0][col], axes[1][col]
        top.bar([x - 0.27 for x in xs], [r["ktune_tflops"] for r in mine], 0.27, label="ktune (tuned)")
        top.bar(list(xs), [r.get("default_tflops", 0) for r in mine], 0.27,
                label="ktune (default config)")
        top.bar([x + 0.27 for x in xs], [r["cublas_tflops"] for r in mine], 0.27, label="cuBLAS")
        top.set_ylabel("TFLOP/s")
        top.set_title(f"GEMM {dtype}")
        top.set_xticks(list(xs))
        top.set_xticklabels([])
        top.legend()
        colors = []
        for r in mine:
            t = target(r)
            colors.append("tab:gray" if t is None else ("tab:green" if r["ratio"] >= t else "tab:red"))
        bottom.bar(list(xs), [r["ratio"] for r in mine], 0.6, color=colors)
        bottom.axhline(1.0, color="black", linewidth=0.8)
        for t, style in ((0.85, ":"), (0.70, "--")):
            if any(target(r) == t for r in mine):
                bottom.axhline(t, color="tab:blue", linestyle=style, linewidth=0.8,
                               label=f"target {t:.2f}")
        bottom.set_ylabel("ktune / cuBLAS (green: target met, red: missed)")
        bottom.set_xticks(list(xs))
        bottom.set_xticklabels(labels, rotation=90, fontsize=7)
        if bottom.get_legend_handles_labels()[0]:
            bottom.legend()
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    rows = load_rows(args.inputs)
    if not rows:
        raise SystemExit("plot_gemm: no successful rows in " + ", ".join(args.inputs))
    if args.table:
        print_table(rows)
    try:
        plot(rows, args.out)
    except ImportError:
        print("plot_gemm: matplotlib is not installed; table only")


if __name__ == "__main__":
    main()
