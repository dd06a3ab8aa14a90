#!/usr/bin/env python3
"""Times a Triton GEMM on gpu_gemm's problem against torch (cuBLAS) on the GPU machine (issue 8:
what another compiler's mma.sync kernels reach on this GPU).

The problem is gpu_gemm's: row-major C = 1.5 * A @ op(B) + 0.5 * C, layout NT (A is M x K, B is
N x K), C in the input dtype, fp32 accumulation, random inputs. Run once with DISABLE_MMA_V3=1
in the environment (Triton then lowers tl.dot to mma.sync on Hopper) and once without (wgmma);
each compiled kernel's PTX is checked for which instruction it holds ("instruction" in the
JSON: mma.sync, wgmma or both), so a Triton that ignores the variable cannot pass for mma.sync.
Every tile config of the grid below is compiled, checked against torch on fresh C, and timed in
alternation with torch's addmm_ (CUDA events, each side sampling --loop-ms of GPU time, median;
each sample times --calls-per-sample back-to-back calls, default 10, so that the host's launch
cost, larger through Triton's Python launcher than through torch's, hides behind the GPU's work
instead of being charged to one side).

Usage: python3 benchmarks/peers/triton_gemm.py OUT_DIR [--shape 4096x4096x4096]
           [--dtypes f16,bf16] [--loop-ms 10] [--calls-per-sample 10]
Writes OUT_DIR/triton_gemm_<mma_sync|default>.json.
"""
import argparse
import datetime
import json
import os

import torch
import triton
import triton.language as tl

from cuda_timing import event_median_ms

# BLOCK_M, BLOCK_N, BLOCK_K, stages, warps: the tiles the usual Triton GEMM configs span.
CONFIGS = [
    (128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 4, 8),
    (128, 256, 32, 4, 8), (256, 128, 32, 4, 8), (128, 128, 64, 4, 4), (128, 128, 64, 3, 8),
]
GROUP_M = 8


@triton.jit
def gemm_nt(a_ptr, b_ptr, c_ptr, M, N, K, alpha, beta,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            GROUP: tl.constexpr):
    # Tiles visited in groups of GROUP rows of tiles, so that neighbours share operands in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    rows_in_group = min(tiles_m - first_m, GROUP)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group
    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rm[:, None] * K + rk[None, :]   # A: M x K, k contiguous
    b_tile = b_ptr + rn[None, :] * K + rk[:, None]   # B: N x K, read as K x BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        b = tl.load(b_tile, mask=(rn[None, :] < N) & (rk[:, None] + k0 < K), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K
        b_tile += BLOCK_K
    c_tile = c_ptr + rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    c = tl.load(c_tile, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_tile, (alpha * acc + beta * c).to(c_ptr.dtype.element_ty), mask=mask)


def median_ms(fn, loop_ms, calls):
    """Median per-call time (ms) from CUDA events around `calls` back-to-back calls per sample,
    sampling at least 10 samples and until `loop_ms` of GPU time (3 warm-up calls first)."""
    return event_median_ms(fn, calls=calls, warmup=3, min_samples=10, min_total_ms=loop_ms)


def instruction(compiled):
    """Which tensor-core instruction the kernel's PTX holds."""
    ptx = compiled.asm.get("ptx", "")
    found = [name for name, mark in (("mma.sync", "mma.sync"), ("wgmma", "wgmma.mma_async")) if mark in ptx]
    return "+".join(found) or "none"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--shape", default="4096x4096x4096")
    parser.add_argument("--dtypes", default="f16,bf16")
    parser.add_argument("--loop-ms", type=float, default=10.0)
    parser.add_argument("--calls-per-sample", type=int, default=10)
    args = parser.parse_args()
    M, N, K = (int(v) for v in args.shape.split("x"))
    mode = "mma_sync" if os.environ.get("DISABLE_MMA_V3", "0").lower() in ("1", "true", "on") else "default"
    flops = 2.0 * M * N * K
    doc = {"program": "triton_gemm.py", "mode": mode, "shape": [M, N, K], "layout": "NT",
           "loop_ms": args.loop_ms, "calls_per_sample": args.calls_per_sample, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "triton": triton.__version__, "dtypes": []}
    torch.manual_seed(27)
    for dtype_name in args.dtypes.split(","):
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
        a = torch.empty(M, K, device="cuda", dtype=dtype).uniform_(-1, 1)
        b = torch.empty(N, K, device="cuda", dtype=dtype).uniform_(-1, 1)
        c_start = torch.empty(M, N, device="cuda", dtype=dtype).uniform_(-1, 1)
        c = c_start.clone()
        reference = c_start.clone().addmm_(a, b.t(), beta=0.5, alpha=1.5)
        rows = []
        for bm, bn, bk, stages, warps in CONFIGS:
            row = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "stages": stages, "warps": warps}
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

            def run():
                return gemm_nt[grid](a, b, c, M, N, K, 1.5, 0.5, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                     GROUP=GROUP_M, num_stages=stages, num_warps=warps)
            try:
                c.copy_(c_start)
                compiled = run()
                torch.cuda.synchronize()
                row["instruction"] = instruction(compiled)
                row["rel_l2_vs_torch"] = float((c.float() - reference.float()).norm() / reference.float().norm())
                torch_ms = median_ms(lambda: c.addmm_(a, b.t(), beta=0.5, alpha=1.5), args.loop_ms,
                                     args.calls_per_sample)
                triton_ms = median_ms(run, args.loop_ms, args.calls_per_sample)
                row.update(ms=triton_ms, tflops=flops / (triton_ms * 1e-3) / 1e12, torch_ms=torch_ms,
                           torch_tflops=flops / (torch_ms * 1e-3) / 1e12, ratio_to_torch=torch_ms / triton_ms)
                print(f"{mode} {dtype_name} {bm}x{bn}x{bk} s{stages} w{warps}: {row['instruction']}, "
                      f"{row['tflops']:.0f} vs torch {row['torch_tflops']:.0f} TFLOP/s = "
                      f"{row['ratio_to_torch']:.3f}x, rel_l2 {row['rel_l2_vs_torch']:.1e}", flush=True)
            except Exception as e:  # out of shared memory and the like: recorded, not fatal
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                print(f"{mode} {dtype_name} {bm}x{bn}x{bk} s{stages} w{warps}: {row['error']}", flush=True)
            rows.append(row)
        timed = [r for r in rows if "ratio_to_torch" in r and r["rel_l2_vs_torch"] < 1e-2]
        best = max(timed, key=lambda r: r["ratio_to_torch"]) if timed else None
        doc["dtypes"].append({"dtype": dtype_name, "configs": rows, "best": best})
        if best:
            print(f"== {mode} {dtype_name} best: {best['BLOCK_M']}x{best['BLOCK_N']}x{best['BLOCK_K']} "
                  f"s{best['stages']} w{best['warps']} {best['instruction']} {best['ratio_to_torch']:.3f}x torch")
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, f"triton_gemm_{mode}.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
