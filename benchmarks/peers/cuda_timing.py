"""The CUDA-event timing loop the peer scripts share (torch_memory_bound.py, triton_gemm.py):
median per-call time of a callable, as benchmarks/gpu_bench_support.h times ktune's kernels."""
import torch


def event_median_ms(fn, calls=1, warmup=3, min_samples=10, min_total_ms=0.0):
    """Median per-call time (ms) of fn() after `warmup` calls: each sample times `calls`
    back-to-back calls between two CUDA events (their mean), and sampling goes on until there
    are `min_samples` samples and `min_total_ms` of GPU time (the upper middle for an even
    count)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times, total = [], 0.0
    while len(times) < min_samples or total < min_total_ms:
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop)
        times.append(ms / calls)
        total += ms
    times.sort()
    return times[len(times) // 2]
