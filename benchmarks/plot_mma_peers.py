#!/usr/bin/env python3
"""Chart and table of the mma.sync GEMMs measured beside cuBLAS on one shape (issue 8's
mma.sync target in context): ktune's gemm_mma, NVIDIA's own mma.sync kernels run through
cuBLASLt configs (gpu_gemm --cublaslt, timed in the same rounds as gemm_mma), and Triton's
GEMM with mma.sync and with wgmma (peers/triton_gemm.py, each config timed in a pair with
torch's cuBLAS call). Every bar is a ratio to the cuBLAS time measured beside it.

Usage: python3 benchmarks/plot_mma_peers.py OUT.png GEMM_PEERS.json [TRITON.json ...]
           [--names CUBLASLT_NAMED.json]
--names (cublaslt_names.py's output) labels each cuBLASLt config with its kernel's tile. Prints a Markdown table; the PNG needs matplotlib (without it only the table is printed).
"""
import argparse
import json
import re


def kernel_labels(path):
    """{(dtype, "algo:tile:stages:swizzle:custom"): short kernel label} from cublaslt_names.py."""
    labels = {}
    if not path:
        return labels
    with open(path) as f:
        doc = json.load(f)
    for entry in doc["dtypes"]:
        for c in entry["configs"]:
            if not c.get("kernels"):
                continue
            key = c.get("config") or ":".join(str(c[k]) for k in ("algo", "tile", "stages", "swizzle", "custom"))
            tile = re.search(r"(\d+x\d+_\d+x\d+|tilesize\d+x\d+x\d+_stage\d+)", c["kernels"][0])
            kind = "CUTLASS" if "cutlass" in c["kernels"][0] else "cuBLAS"
            label = f"{kind} {tile.group(1) if tile else c['kernels'][0][:24]}"
            labels[(entry["dtype"], key)] = label
    return labels


def gemm_bars(path, labels):
    """{dtype: [(label, ratio, TFLOP/s or None, note, ktune's ratio in the same rounds or None)]}
    from a gpu_gemm JSON with peers."""
    bars = {}
    with open(path) as f:
        doc = json.load(f)
    for row in doc["results"]:
        if "ratio" not in row:
            continue
        out = bars.setdefault(row["dtype"], [])
        out.append((f"ktune {row['template']}", row["ratio"], row["ktune_tflops"], row["best_config"], None))
        for peer in row.get("cublaslt_peers", []):
            if "ratio" in peer:
                name = labels.get((row["dtype"], peer["config"]), peer["config"])  # named per dtype only
                out.append((f"mma.sync {name}", peer["ratio"], peer.get("tflops"),
                            f"ktune {peer['ktune_ratio']:.3f}x in the same rounds, "
                            f"{peer['ktune_over_peer']:.3f}x the peer's speed", peer["ktune_ratio"]))
    return bars


def triton_bars(path):
    """{dtype: [(label, ratio, TFLOP/s, note)]}: the best config of a triton_gemm.py run."""
    bars = {}
    with open(path) as f:
        doc = json.load(f)
    for entry in doc["dtypes"]:
        best = entry.get("best")
        if best:
            tile = f"{best['BLOCK_M']}x{best['BLOCK_N']}x{best['BLOCK_K']} s{best['stages']} w{best['warps']}"
            bars.setdefault(entry["dtype"], []).append(
                (f"Triton {best['instruction']}", best["ratio_to_torch"], best["tflops"], tile, None))
    return bars


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_png")
    parser.add_argument("gemm_json")
    parser.add_argument("triton_json", nargs="*")
    parser.add_argument("--names")
    args = parser.parse_args()
    bars = gemm_bars(args.gemm_json, kernel_labels(args.names))
    for path in args.triton_json:
        for dtype, rows in triton_bars(path).items():
            bars.setdefault(dtype, []).extend(rows)
    print("| dtype | kernel | ratio to cuBLAS | TFLOP/s | note |")
    print("|---|---|---|---|---|")
    for dtype, rows in bars.items():
        for label, ratio, tflops, note, _ in rows:
            print(f"| {dtype} | {label} | {ratio:.3f} | {'' if tflops is None else f'{tflops:.0f}'} | {note} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not available: no chart)")
        return
    dtypes = list(bars)
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 4.5), squeeze=False)
    for ax, dtype in zip(axes[0], dtypes):
        labels = [label.replace(" ", "\n") for label, *_ in bars[dtype]]
        ratios = [ratio for _, ratio, *_ in bars[dtype]]
        same_round = [row[4] for row in bars[dtype]]
        colors = ["tab:blue" if lab.startswith("ktune") else "tab:orange" if "wgmma" in lab
                  else "tab:gray" for lab, *_ in bars[dtype]]
        ax.bar(range(len(ratios)), ratios, color=colors)
        for i, r in enumerate(ratios):
            ax.text(i, r + 0.01, f"{r:.2f}", ha="center", fontsize=8)
        marked = [(i, k) for i, k in enumerate(same_round) if k is not None]
        if marked:  # ktune in the peer's own rounds: the like-for-like comparison
            ax.plot([i for i, _ in marked], [k for _, k in marked], "D", color="tab:blue",
                    label="ktune gemm_mma in the same rounds")
            for i, k in marked:
                ax.text(i + 0.12, k, f"{k:.2f}", va="center", fontsize=7, color="tab:blue")
        ax.axhline(0.70, color="red", linestyle="--", linewidth=1, label="issue 8 target (mma.sync)")
        ax.set_xticks(range(len(ratios)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("cuBLAS time / kernel time")
        ax.set_ylim(0, 1.0)
        ax.set_title(f"{dtype}: ratio to cuBLAS (same run)")
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out_png, dpi=120)
    print(f"wrote {args.out_png}")


if __name__ == "__main__":
    main()
