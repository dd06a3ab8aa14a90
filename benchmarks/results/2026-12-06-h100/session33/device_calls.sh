# The device calls of session 33, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results, packed into results.tgz). Four asks found no machine before call 1.
# call 1 (bfd0fce = d5e2833's code plus gpu_launch_boundary; nvidia-h100-x1, an H100 came)
KTUNE_PHASE_TIMEOUT=300 timeout 570 scripts/gpu-suite info launch-boundary tests-core tests-demo demo dispatch runner tests-conv
# call 2 (same bundle, the warm H100)
KTUNE_PHASE_TIMEOUT=300 timeout 500 scripts/gpu-suite info tests-gemm
