#!/usr/bin/env bash
# Session 42's device calls (2026-12-07; the call named nvidia-h200, an NVIDIA H100 80GB HBM3
# came). Bundle: `KTUNE_JOBS=2 scripts/gpu-bundle` at a270415, trimmed to gpu_memory_bound,
# gpu_launch_boundary, gpu_runner, gpu_dispatch_overhead and example_deploy_lookup, carried as
# build/gpu. Run in the repository root on the device machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1: the norm rows first only on an H200 (an H100 came)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; first=""; case "$name" in *H200*) first="membound-norms-pdl membound-norms";; esac; KTUNE_PHASE_TIMEOUT=240 timeout 560 scripts/gpu-suite info $first tests-wgmma tests-conv; eval "$pack"
