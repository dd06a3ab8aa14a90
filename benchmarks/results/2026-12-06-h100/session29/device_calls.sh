# The device calls of session 29, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results). scripts/gpu-suite sets LD_LIBRARY_PATH=build/gpu/bundle-libs and
# KTUNE_WORKER=build/gpu/ktune-worker. Asks that found no machine are not listed.
# call 1 (c5cf3cb; asked for nvidia-h200, an H100 came)
KTUNE_PHASE_TIMEOUT=300 timeout 570 scripts/gpu-suite info tests-core tests-demo demo membound-norms
#   membound-norms = gpu_memory_bound R --families=layernorm --norms=layernorm,rmsnorm --dtypes=f16 \
#                    --shapes=32768x1024 --trials=40 --copy-kernel-trials=12
# call 2 (351c208; no kind named, an H100 came, after about 15 asks that found no machine)
mkdir -p $OUT/results/lnvar
LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs timeout 80 build/gpu/benchmarks/gpu_memory_bound $OUT/results/lnvar \
  --families=layernorm --dtypes=f16,bf16 --shapes=4096x28672,4096x32768 --trials=0 \
  --variants="MIN_WARPS=0;MIN_WARPS=16;MIN_WARPS=0"     # (the default is the MIN_WARPS=16 variant)
KTUNE_PHASE_TIMEOUT=110 timeout 115 scripts/gpu-suite info tests-core
