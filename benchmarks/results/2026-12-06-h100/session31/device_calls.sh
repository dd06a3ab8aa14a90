# The device calls of session 31, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results). Two asks (nvidia-h200, then nvidia-h100-x1) found no machine first.
# call 1 (aaecf73; an H100 came; membound-norms was to be added only on an H200)
P="info tests-core tests-demo demo"; nvidia-smi -L | grep -q H200 && P="$P membound-norms"
KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite $P
# call 2 (same bundle, the warm H100)
KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite info tests-gemm
# call 3 (same bundle; an H100 came after two more asks found none)
G=build/gpu/benchmarks/gpu_memory_bound; R=$OUT/results; M0="ROW_MODE=0,STATS=0,PREFETCH=1"
timeout 170 $G $R/ring_uneven --families=layernorm --norms=layernorm --dtypes=f16 --shapes=4096x36864,4096x40960,4096x45056 --trials=0 --variants="CACHE_HINT=0;$M0;CACHE_HINT=0;$M0" > $R/ring_uneven.log 2>&1
timeout 170 $G $R/ln15 --families=layernorm --norms=layernorm --dtypes=f16,bf16 --shapes=4096x29704,4096x30696 --trials=0 --variants="CACHE_HINT=0;MIN_WARPS=0;CACHE_HINT=0;MIN_WARPS=0" > $R/ln15.log 2>&1
timeout 170 $G $R/rms13 --families=layernorm --norms=rmsnorm --dtypes=f16,bf16 --shapes=4096x25000,4096x26624 --trials=0 --variants="CACHE_HINT=0;MIN_WARPS=0;CACHE_HINT=0;MIN_WARPS=0" > $R/rms13.log 2>&1
