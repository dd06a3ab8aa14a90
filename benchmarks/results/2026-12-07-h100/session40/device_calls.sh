#!/usr/bin/env bash
# Session 40's device calls (2026-12-07, NVIDIA H100 80GB HBM3; the default kind asked for an
# H200 or an H100, an H100 came), in order. Bundle: `KTUNE_JOBS=2 scripts/gpu-bundle` at
# b466803, trimmed to gpu_memory_bound, gpu_launch_boundary, gpu_runner, gpu_dispatch_overhead
# and example_deploy_lookup, carried as build/gpu. Each call ran in the repository root on the
# device machine. About ten earlier asks from 12:50 to 14:20 UTC found no machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1: the norm rows first and last only on an H200 (an H100 came, so only the tests ran)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; first=""; last=""; case "$name" in *H200*) first="membound-norms-pdl membound-norms"; last="membound-pdl-c membound-c";; esac; KTUNE_PHASE_TIMEOUT=240 timeout 540 scripts/gpu-suite info $first tests-core tests-demo $last; eval "$pack"
# call 2, on the same warm machine: the conv and GEMM cases, cut at 400 s by the device time left
eval "$prep"; cat build/gpu/REVISION; KTUNE_PHASE_TIMEOUT=260 timeout 400 scripts/gpu-suite tests-conv tests-gemm; eval "$pack"
