#!/usr/bin/env python3
"""Times PyTorch's cuDNN convolution on the layers of a gpu_conv result file (issue 9).

gpu_conv calls cuDNN through its legacy API (cudnnFindConvolutionForwardAlgorithmEx), which on
cuDNN 9 offers only a few old engines for some layers. PyTorch reaches cuDNN through the graph
API with its own engine search (torch.backends.cudnn.benchmark = True, every engine tried:
benchmark_limit = 0), so this script gives the second, usually faster cuDNN reference for the
same layers: NHWC (channels_last) activations and filters, no bias, fp32 without TF32. Each layer's call is captured ten times into a CUDA
graph after the engine search, and the graph is timed with CUDA events (median of samples,
per call), so host launch overhead is not counted; the same way gpu_conv times its candidates.

Usage: python3 benchmarks/peers/torch_conv.py GPU_CONV.json OUT.json [--samples 30]
Reads the "results" of GPU_CONV.json (the problems it tuned) and writes, per layer, torch's
median ms and TFLOP/s next to gpu_conv's figures. A row gpu_conv wrote for a layer that failed
before its problem was known (an "error", no "problem") is skipped with a line on stderr.
"""
import argparse
import datetime
import json
import sys

import torch
import torch.nn.functional as F

CALLS_PER_GRAPH = 10


def parse_problem(key):
    """conv2d|N=32,H=56,W=56,C=64,K=64,R=1,S=1|bias=0,...,dtype=f16,pad=0,...,stride=1 -> dict."""
    fields = {}
    for part in key.split("|")[1:]:
        for item in part.split(","):
            if "=" in item:
                name, value = item.split("=", 1)
                fields[name] = value
    return fields


def layer_rows(results):
    """The rows of gpu_conv's results that name a problem; each other row (a layer that failed
    before its problem was known) is skipped with a line on stderr naming the layer."""
    rows = []
    for r in results:
        if "problem" in r:
            rows.append(r)
        else:
            print(f"skipped {r.get('dtype', '?')} {r.get('layer', '?')}: no problem in the gpu_conv "
                  f"row ({r.get('error', 'no error given')})", file=sys.stderr, flush=True)
    return rows


def time_graph_ms(fn, samples):
    """Median per-call time of fn captured CALLS_PER_GRAPH times into one CUDA graph."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # engine search and warm-up outside the capture
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(CALLS_PER_GRAPH):
            fn()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / CALLS_PER_GRAPH)
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("gpu_conv_json")
    parser.add_argument("out_json")
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    # Every engine in the search, not torch's default first 10: in session 6 two layers' figures
    # halved between two calls (s1_1x1_64_64 122 -> 66 TFLOP/s), which a partial search that
    # stops at a different engine explains and an exhaustive one should not repeat.
    if hasattr(torch.backends.cudnn, "benchmark_limit"):
        torch.backends.cudnn.benchmark_limit = 0
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    source = json.load(open(args.gpu_conv_json))
    rows = []
    for r in layer_rows(source["results"]):
        p = parse_problem(r["problem"])
        n, h, w, c, k = (int(p[x]) for x in ("N", "H", "W", "C", "K"))
        rr, ss = int(p["R"]), int(p["S"])
        stride, pad, dil = int(p["stride"]), int(p["pad"]), int(p.get("dilation", 1))
        dt = dtypes[p["dtype"]]
        x = torch.randn(n, c, h, w, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
        wt = torch.randn(k, c, rr, ss, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
        ms = time_graph_ms(lambda: F.conv2d(x, wt, None, stride, pad, dil), args.samples)
        flops = 2.0 * n * k * c * rr * ss * ((h + 2 * pad - dil * (rr - 1) - 1) // stride + 1) * (
            (w + 2 * pad - dil * (ss - 1) - 1) // stride + 1)
        row = {"layer": r["layer"], "dtype": p["dtype"], "problem": r["problem"], "torch_ms": ms,
               "torch_tflops": flops / ms / 1e9, "ktune_ms": r.get("ktune_ms"),
               "cudnn_legacy_ms": r.get("cudnn_ms")}
        row["ktune_vs_torch"] = ms / r["ktune_ms"] if r.get("ktune_ms") else None
        rows.append(row)
        print(f"{p['dtype']:5} {r['layer']:24} torch {row['torch_tflops']:7.1f} TF/s "
              f"({ms * 1000:8.1f} us)  ktune/torch speed {row['ktune_vs_torch'] or 0:6.3f}", flush=True)
        del x, wt
    out = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "device": torch.cuda.get_device_name(0), "calls_per_graph": CALLS_PER_GRAPH,
           "cudnn_benchmark_limit": getattr(torch.backends.cudnn, "benchmark_limit", None),
           "source": args.gpu_conv_json, "results": rows}
    with open(args.out_json, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {args.out_json}")


if __name__ == "__main__":
    main()
