#!/usr/bin/env bash
# Session 38's device calls (2026-12-07, NVIDIA H100 80GB HBM3; asked for an H200, H100s came),
# in order. Bundles: `KTUNE_JOBS=2 scripts/gpu-bundle` at ebf102a (call 1), at 5015d36 (calls
# 2-3) and at cdc3884 (call 4), each trimmed to gpu_memory_bound, gpu_launch_boundary,
# gpu_runner, gpu_dispatch_overhead and example_deploy_lookup, carried as build/gpu. Each call ran in the repository root on the
# device machine; calls 2 and 3 back to back on one machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1
eval "$prep"; cat build/gpu/REVISION; nvidia-smi --query-gpu=name --format=csv,noheader; KTUNE_PHASE_TIMEOUT=300 timeout 360 scripts/gpu-suite info membound-norms-pdl membound-norms membound-pdl-c membound-c tests-demo; eval "$pack"
# call 2 (the norm phases run only if an H200 comes; an H100 came)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; extra=""; case "$name" in *H200*) extra="membound-norms-pdl membound-norms";; esac; KTUNE_PHASE_TIMEOUT=300 timeout 420 scripts/gpu-suite info $extra tests-core tests-demo; eval "$pack"
# call 3
eval "$prep"; cat build/gpu/REVISION; KTUNE_PHASE_TIMEOUT=450 timeout 470 scripts/gpu-suite tests-conv tests-gemm; eval "$pack"
# three asks that got H100s ran only this check and nothing else
name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; cat build/gpu/REVISION; case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0;; esac; eval "$prep"; KTUNE_PHASE_TIMEOUT=200 timeout 300 scripts/gpu-suite info membound-norms-pdl membound-norms membound-pdl-c; eval "$pack"
# call 4 (the norm phases run only if an H200 comes; an H100 came)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; extra=""; case "$name" in *H200*) extra="membound-norms-pdl membound-norms";; esac; KTUNE_PHASE_TIMEOUT=250 timeout 330 scripts/gpu-suite info $extra tests-core tests-demo; eval "$pack"
# one more check-only ask after call 4 (09:42 UTC) got an H100 and ran nothing
