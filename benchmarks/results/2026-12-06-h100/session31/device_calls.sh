# The device calls of session 31, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results). Two asks (nvidia-h200, then nvidia-h100-x1) found no machine first.
# call 1 (aaecf73; an H100 came; membound-norms was to be added only on an H200)
P="info tests-core tests-demo demo"; nvidia-smi -L | grep -q H200 && P="$P membound-norms"
KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite $P
# call 2 (same bundle, the warm H100)
KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite info tests-gemm
