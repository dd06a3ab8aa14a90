# The device calls of session 30, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results). scripts/gpu-suite sets LD_LIBRARY_PATH=build/gpu/bundle-libs and
# KTUNE_WORKER=build/gpu/ktune-worker. Asks that found no machine are not listed.
# call 1 (65ea507; an H100 came)
C4M0="CLUSTER=4,RPG=6,PARAMS=2,MIN_WARPS=24,ROW_MODE=0,PREFETCH=1,CACHE_HINT=0"
C4M3="CLUSTER=4,RPG=6,PARAMS=2,MIN_WARPS=24,ROW_MODE=3,STATS=1,PREFETCH=0,CACHE_HINT=0"
C8M3="CLUSTER=8,RPG=6,PARAMS=2,MIN_WARPS=32,ROW_MODE=3,STATS=1,PREFETCH=0,CACHE_HINT=0"
LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs timeout 150 build/gpu/benchmarks/gpu_memory_bound $OUT/results/lnvar \
  --families=layernorm --norms=layernorm --dtypes=f16,bf16 --shapes=4096x28672,4096x30720,4096x32768 \
  --trials=0 --variants="$C4M0;$C4M3;$C8M3;MIN_WARPS=0;$C4M0;$C4M3" > $OUT/results/layernorm_long_rows.log 2>&1
KTUNE_PHASE_TIMEOUT=300 timeout 400 scripts/gpu-suite info tests-gemm tests-demo demo
# call 2 (6483dcc; an H100 came); CACHE_HINT=0 is the new default unchanged
OLD16="CLUSTER=1,RPG=1,PARAMS=0,MIN_WARPS=16,ROW_MODE=0,STATS=0"
OLD0="CLUSTER=1,RPG=1,PARAMS=0,MIN_WARPS=0,ROW_MODE=0,STATS=0"
timeout 150 build/gpu/benchmarks/gpu_memory_bound $OUT/results/lnvar --families=layernorm --norms=layernorm \
  --dtypes=f16,bf16 --shapes=4096x28672,4096x30720,4096x32768 --trials=0 \
  --variants="CACHE_HINT=0;$OLD16;$OLD0;CACHE_HINT=0" > $OUT/results/layernorm_new_default.log 2>&1
KTUNE_PHASE_TIMEOUT=200 timeout 230 scripts/gpu-suite info tests-core
# (the same call also ran the gemm_wgmma case by its full name, which Catch read as two names
# split at the comma: "No tests ran"; rerun on the warm machine:)
timeout 200 build/gpu/tests/ktune_tests "gemm_wgmma is correct on interior tiles*" -d yes
# call 3 (6818cf1; an H100 came)
KTUNE_PHASE_TIMEOUT=120 timeout 250 scripts/gpu-suite info tests-demo demo
