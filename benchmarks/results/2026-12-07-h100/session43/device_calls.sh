#!/usr/bin/env bash
# Session 43's device calls (2026-12-07, NVIDIA H100 80GB HBM3; the first call named no kind,
# an H100 came), back to back on one machine. Bundle: `KTUNE_JOBS=2 nice scripts/gpu-bundle` at
# d8ab93f, trimmed:
#   cd build/gpu && find benchmarks -type f ! -name gpu_memory_bound ! -name gpu_launch_boundary \
#     ! -name gpu_runner ! -name gpu_dispatch_overhead -delete && find examples -type f ! -name example_deploy_lookup -delete
# carried as build/gpu; each call ran in the repository root on the device machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1 (the norm phases run only if an H200 comes)
eval "$prep"; cat build/gpu/REVISION; name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; first=""; case "$name" in *H200*) first="membound-norms-pdl membound-norms";; esac; KTUNE_PHASE_TIMEOUT=240 timeout 560 scripts/gpu-suite info $first tests-core tests-demo; eval "$pack"
# call 2
eval "$prep"; cat build/gpu/REVISION; nvidia-smi --query-gpu=name --format=csv,noheader; KTUNE_PHASE_TIMEOUT=300 timeout 480 scripts/gpu-suite tests-gemm tests-conv; eval "$pack"
# call 3 (asked for nvidia-h200; an H100 came and it ran nothing; a repeat at 22:41 found no machine)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$name"; cat build/gpu/REVISION; case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0;; esac; eval "$prep"; KTUNE_PHASE_TIMEOUT=240 timeout 500 scripts/gpu-suite info membound-norms-pdl membound-norms; eval "$pack"
