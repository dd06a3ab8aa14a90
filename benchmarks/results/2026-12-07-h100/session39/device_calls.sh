#!/usr/bin/env bash
# Session 39's device calls (2026-12-07, NVIDIA H100 80GB HBM3; asked for an H200, H100s came),
# in order. Bundles: `KTUNE_JOBS=2 scripts/gpu-bundle` at 72457b5 (call 1) and at 0ae8e29
# (call 2), each trimmed to gpu_memory_bound, gpu_launch_boundary, gpu_runner,
# gpu_dispatch_overhead and example_deploy_lookup, carried as build/gpu. Each call ran in the
# repository root on the device machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1: runs the norm phases only on an H200; an H100 came and it ran nothing
name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; cat build/gpu/REVISION; case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0;; esac; eval "$prep"; KTUNE_PHASE_TIMEOUT=200 timeout 330 scripts/gpu-suite info membound-norms-pdl membound-norms membound-pdl-c membound-c; eval "$pack"
# call 2 (the norm phases run only if an H200 comes; an H100 came)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; extra=""; case "$name" in *H200*) extra="membound-norms-pdl membound-norms membound-pdl-c membound-c";; esac; KTUNE_PHASE_TIMEOUT=300 timeout 540 scripts/gpu-suite info $extra tests-core tests-demo; eval "$pack"
# call 3 (bundle f72376e, tests-core and tests-demo on any card) was asked for about fifteen times
# and never started: no machine came, and the refused asks used the device time left
