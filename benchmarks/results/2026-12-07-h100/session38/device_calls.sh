#!/usr/bin/env bash
# Session 38's device call (2026-12-07, NVIDIA H100 80GB HBM3; asked for an H200, an H100 came).
# Bundle: `KTUNE_JOBS=2 scripts/gpu-bundle` at ebf102a, trimmed to gpu_memory_bound,
# gpu_launch_boundary, gpu_runner, gpu_dispatch_overhead and example_deploy_lookup, carried as
# build/gpu. The call ran in the repository root on the device machine. Four asks before it got
# no machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1
eval "$prep"; cat build/gpu/REVISION; nvidia-smi --query-gpu=name --format=csv,noheader; KTUNE_PHASE_TIMEOUT=300 timeout 360 scripts/gpu-suite info membound-norms-pdl membound-norms membound-pdl-c membound-c tests-demo; eval "$pack"
