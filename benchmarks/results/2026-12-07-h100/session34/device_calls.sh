#!/usr/bin/env bash
# Session 34's device calls (2026-12-07, NVIDIA H100 80GB HBM3), in order. Bundle:
# `KTUNE_JOBS=2 scripts/gpu-bundle` at 5a9466e, trimmed to the programs below, carried as
# build/gpu. Each call ran in the repository root on the device machine.
prep='rm -rf $OUT/results; mkdir -p $OUT/results'
pack='ls -la $OUT/results > $OUT/listing.txt; cd $OUT && tar czf results.tgz results && rm -rf results'
# call 1
eval "$prep"; KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite info tests-core membound-norms-pdl membound-norms-graph membound-norms dispatch; eval "$pack"
# call 2
eval "$prep"; KTUNE_PHASE_TIMEOUT=450 timeout 580 scripts/gpu-suite info tests-demo demo tests-conv tests-gemm; eval "$pack"
# call 3
eval "$prep"; KTUNE_PHASE_TIMEOUT=430 timeout 440 scripts/gpu-suite info membound-pdl-c; eval "$pack"
# call 4
eval "$prep"; KTUNE_PHASE_TIMEOUT=300 timeout 330 scripts/gpu-suite info membound-c; eval "$pack"
