#!/usr/bin/env python3
"""Bar chart of the memory-bound benchmark: % of device-to-device copy bandwidth per shape for
the tuned ktune kernel, its untuned default config and PyTorch (issue 6).

Usage: python3 benchmarks/plot_memory_bound.py OUT.png KTUNE.json [KTUNE2.json ...] [--torch TORCH.json]
KTUNE*.json come from gpu_memory_bound (several when it ran per family); TORCH.json from
benchmarks/peers/torch_memory_bound.py. Each side is normalized by its own copy bandwidth.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def key(row):
    attrs = row["attrs"]
    op = attrs.get("fn") or attrs.get("norm")
    return (row["family"], op, row["shape"], attrs["dtype"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_png")
    parser.add_argument("ktune_json", nargs="+")
    parser.add_argument("--torch", dest="torch_json")
    args = parser.parse_args()

    rows, copy = [], []
    for path in args.ktune_json:
        with open(path) as f:
            doc = json.load(f)
        rows += doc["results"]
        copy.append(doc["copy_gbps"])
    torch_pct = {}
    if args.torch_json:
        with open(args.torch_json) as f:
            for r in json.load(f)["results"]:
                torch_pct[key(r)] = r["torch_pct_of_copy"]

    labels = ["{}\n{} {}".format(*key(r)[1:]) for r in rows]
    tuned = [r["tuned_pct_of_copy"] for r in rows]
    default = [r["default_pct_of_copy"] for r in rows]
    torch_vals = [torch_pct.get(key(r), 0.0) for r in rows]

    width = 0.27
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(10, 0.75 * len(rows)), 5.5))
    ax.bar([x - width for x in xs], tuned, width, label="ktune tuned")
    ax.bar(list(xs), default, width, label="ktune default config")
    if torch_pct:
        ax.bar([x + width for x in xs], torch_vals, width, label="torch")
    ax.axhline(100, color="black", linewidth=0.8)
    ax.axhline(95, color="gray", linestyle="--", linewidth=0.8)
    ax.axhline(90, color="gray", linestyle=":", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_ylabel("% of device-to-device copy bandwidth")
    ax.set_title("Memory-bound templates on {} (copy {:.0f} GB/s)".format(
        doc.get("device", "GPU"), sum(copy) / len(copy)))
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out_png, dpi=130)
    print("wrote", args.out_png)


if __name__ == "__main__":
    main()
