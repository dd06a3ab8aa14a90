#!/usr/bin/env bash
# Session 41's device calls (2026-12-07, NVIDIA H100 80GB HBM3; the default kind asked for an
# H200 or an H100, an H100 came), in order. Bundle: `KTUNE_JOBS=2 scripts/gpu-bundle` at
# 3b13411, trimmed to gpu_memory_bound, gpu_launch_boundary, gpu_runner, gpu_dispatch_overhead
# and example_deploy_lookup, carried as build/gpu. Each call ran in the repository root on the
# device machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1: the norm rows first only on an H200 (an H100 came)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; first=""; case "$name" in *H200*) first="membound-norms-pdl membound-norms";; esac; KTUNE_PHASE_TIMEOUT=240 timeout 580 scripts/gpu-suite info $first demo tests-gemm tests-core; eval "$pack"
# call 2, on the same warm machine
eval "$prep"; cat build/gpu/REVISION; KTUNE_PHASE_TIMEOUT=300 timeout 400 scripts/gpu-suite tests-conv; eval "$pack"
# call 3, a fresh machine, bundle 2d4103f (the audit's [gpu] test changes), cut by the device time left
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; first=""; case "$name" in *H200*) first="membound-norms-pdl membound-norms";; esac; KTUNE_PHASE_TIMEOUT=240 timeout 430 scripts/gpu-suite info $first tests-layernorm tests-reduction tests-elementwise tests-copy tests-gemm; eval "$pack"
