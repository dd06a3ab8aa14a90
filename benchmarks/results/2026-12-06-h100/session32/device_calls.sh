# The device calls of session 32, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt or README, carried as build/gpu with the programs the call did not use removed;
# outputs under $OUT/results). Six asks (nvidia-h200 and nvidia-h100-x1) found no machine first.
# call 1 (54e5948 = b9c1035's code; an H100 came). The ring measurement at its end did not start:
# gpu_memory_bound needs the bundle's libraries on LD_LIBRARY_PATH outside gpu-suite.
R=$OUT/results
KTUNE_PHASE_TIMEOUT=300 timeout 380 scripts/gpu-suite info tests-core tests-demo demo
# call 2 (same bundle, the warm H100)
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs; G=build/gpu/benchmarks/gpu_memory_bound
timeout 170 $G $R/ring_f16 --families=layernorm --norms=layernorm --dtypes=f16 --shapes=4096x36864,4096x53248,4096x57344,4096x61440 --trials=0 --variants="CACHE_HINT=0;ROW_MODE=3,STATS=1,PREFETCH=0;CACHE_HINT=0;ROW_MODE=3,STATS=1,PREFETCH=0" > $R/ring_f16.log 2>&1
KTUNE_PHASE_TIMEOUT=300 timeout 330 scripts/gpu-suite tests-gemm
# call 3 (d1c3fc8: the default takes the ring at 3.25-4 vectors per thread; an H100 came after
# four more asks found none; tests-core was dropped to fit the device time left)
KTUNE_PHASE_TIMEOUT=60 scripts/gpu-suite info
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs; G=build/gpu/benchmarks/gpu_memory_bound
timeout 200 $G $R/ring_8cta --families=layernorm --norms=layernorm --dtypes=f16,bf16 --shapes=4096x53248,4096x57344,4096x61440 --trials=0 --variants="CACHE_HINT=0;ROW_MODE=0,STATS=0,PREFETCH=1;CACHE_HINT=0;ROW_MODE=0,STATS=0,PREFETCH=1" > $R/ring_8cta.log 2>&1
