# The device calls of session 26, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu; outputs under $OUT/results).
# call 1 (cd0a5ca), call 2 (929a3dd) and call 5 (8dcdfea)
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite info tests-core tests-demo demo deploy-readonly membound-norms
# call 3 (6ed92be): the demo plan, its whole export kept as benchmarks/results/2026-12-06-h100/demo-h100.jsonl
KTUNE_PHASE_TIMEOUT=200 scripts/gpu-suite info demo
# call 4 (36c8a7a)
KTUNE_PHASE_TIMEOUT=420 scripts/gpu-suite info membound-norms tests-gemm tests-conv
# call 6 (8dcdfea)
scripts/gpu-suite info membound-norms
