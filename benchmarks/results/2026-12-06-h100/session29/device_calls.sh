# The device calls of session 29, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results). scripts/gpu-suite sets LD_LIBRARY_PATH=build/gpu/bundle-libs and
# KTUNE_WORKER=build/gpu/ktune-worker. Asks that found no machine are not listed.
# call 1 (c5cf3cb; asked for nvidia-h200, an H100 came)
KTUNE_PHASE_TIMEOUT=300 timeout 570 scripts/gpu-suite info tests-core tests-demo demo membound-norms
#   membound-norms = gpu_memory_bound R --families=layernorm --norms=layernorm,rmsnorm --dtypes=f16 \
#                    --shapes=32768x1024 --trials=40 --copy-kernel-trials=12
