#!/usr/bin/env python3
"""Times PyTorch on the shapes of benchmarks/gpu_memory_bound.cc (issue 6) on the GPU machine.

Same shapes, dtypes and byte counts as the ktune benchmark: gelu (tanh form) and sum over 2^28
elements and [32768, 4096] (sum in fp32 accumulation and output), LayerNorm (gamma, beta) and
RMSNorm (gamma) at [32768, 1024], [32768, 4096], [8192, 16384], [4096, 65536], f32 and f16,
plus the device-to-device copy of 2 GiB. Median of CUDA-event timings after warm-up; each
sample times --calls-per-sample back-to-back calls between its two events (10 by default, as
gpu_memory_bound's --runs-per-sample times ktune's kernels: with one call per sample, Python's
launch of each call lands inside the sample of a 30-60 us kernel, and torch would be charged a
cost ktune's figures do not carry).

Usage: python3 benchmarks/peers/torch_memory_bound.py OUT_DIR [--reps 30] [--calls-per-sample 10]
           [--families elementwise,reduction,layernorm] [--norms layernorm,rmsnorm] [--dtypes f32,f16]
Writes OUT_DIR/torch_memory_bound.json, or torch_memory_bound_<selection>.json when a
selection is given (the same suffix as gpu_memory_bound's file for the same selection).
"""
import argparse
import datetime
import json
import os

import torch
import torch.nn.functional as F

from cuda_timing import event_median_ms


DEFAULT_CALLS_PER_SAMPLE = 10  # gpu_memory_bound's default runs per sample
CALLS_PER_SAMPLE = DEFAULT_CALLS_PER_SAMPLE  # set from --calls-per-sample


def median_ms(fn, reps):
    """Median time of fn() in ms over `reps` CUDA-event timed samples of CALLS_PER_SAMPLE calls
    each (their mean) after 5 warm-up calls."""
    return event_median_ms(fn, calls=CALLS_PER_SAMPLE, warmup=5, min_samples=reps)


def parse_shape(text):
    return [int(v) for v in text.split("x")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--families", default=None)
    parser.add_argument("--norms", default=None)
    parser.add_argument("--dtypes", default=None)
    parser.add_argument("--calls-per-sample", type=int, default=DEFAULT_CALLS_PER_SAMPLE)
    args = parser.parse_args()
    global CALLS_PER_SAMPLE
    CALLS_PER_SAMPLE = max(1, args.calls_per_sample)
    dev = torch.device("cuda")
    families = (args.families or "elementwise,reduction,layernorm").split(",")
    norms = (args.norms or "layernorm,rmsnorm").split(",")
    all_dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    dtypes = {k: all_dtypes[k] for k in (args.dtypes or "f32,f16").split(",")}
    selection = "".join("_" + v.replace(",", "_") for v in (args.families, args.norms, args.dtypes) if v)

    copy_bytes = 2 << 30
    src = torch.empty(copy_bytes, dtype=torch.uint8, device=dev).fill_(60)
    dst = torch.empty_like(src)
    copy_ms = median_ms(lambda: dst.copy_(src), args.reps)
    copy_gbps = 2 * copy_bytes / (copy_ms * 1e-3) / 1e9
    del src, dst
    print(f"{torch.cuda.get_device_name()}: device-to-device copy {copy_gbps:.0f} GB/s")

    results = []

    def record(family, shape, attrs, nbytes, ms):
        gbps = nbytes / (ms * 1e-3) / 1e9
        results.append({"family": family, "shape": shape, "attrs": attrs, "bytes": nbytes,
                        "torch_ms": ms, "torch_gbps": gbps,
                        "torch_pct_of_copy": 100.0 * gbps / copy_gbps})
        print(f"{family:12s} {shape:12s} {json.dumps(attrs):40s} {gbps:7.0f} GB/s "
              f"({100.0 * gbps / copy_gbps:5.1f}%)")

    for name, dt in dtypes.items():
        size = torch.tensor([], dtype=dt).element_size()
        for shape in ["1x268435456", "32768x4096"] if {"elementwise", "reduction"} & set(families) else []:
            rows, cols = parse_shape(shape)
            x = torch.randn(rows, cols, device=dev, dtype=dt)
            n = rows * cols
            if "elementwise" in families:
                ms = median_ms(lambda: F.gelu(x, approximate="tanh"), args.reps)
                record("elementwise", shape, {"dtype": name, "fn": "gelu_tanh"}, 2 * n * size, ms)
            if "reduction" in families:
                if rows == 1:
                    ms = median_ms(lambda: torch.sum(x, dtype=torch.float32), args.reps)
                else:
                    ms = median_ms(lambda: torch.sum(x, dim=-1, dtype=torch.float32), args.reps)
                record("reduction", shape, {"dtype": name, "fn": "sum"}, n * size + 4 * rows, ms)
            del x
        for norm in norms if "layernorm" in families else []:
            for shape in ["32768x1024", "32768x4096", "8192x16384", "4096x65536"]:
                rows, hidden = parse_shape(shape)
                x = torch.randn(rows, hidden, device=dev, dtype=dt)
                gamma = torch.rand(hidden, device=dev, dtype=dt) + 0.5
                beta = torch.randn(hidden, device=dev, dtype=dt)
                params = 1 if norm == "rmsnorm" else 2
                nbytes = 2 * rows * hidden * size + params * hidden * size + params * 4 * rows
                if norm == "layernorm":
                    fn = lambda: F.layer_norm(x, (hidden,), gamma, beta, eps=1e-5)
                else:
                    fn = lambda: F.rms_norm(x, (hidden,), gamma, eps=1e-5)
                with torch.no_grad():
                    ms = median_ms(fn, args.reps)
                record("layernorm", shape, {"dtype": name, "norm": norm}, nbytes, ms)
                del x

    doc = {"benchmark": "torch_memory_bound", "date": datetime.datetime.now().isoformat(timespec="minutes"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "copy_gbps": copy_gbps, "reps": args.reps, "calls_per_sample": CALLS_PER_SAMPLE,
           "results": results}
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "torch_memory_bound" + selection + ".json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
