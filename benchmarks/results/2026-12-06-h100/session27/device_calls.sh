# The device calls of session 27, as run (bundle: scripts/gpu-bundle at the commit in each call's
# info / date file, carried as build/gpu with the programs the call did not use removed; outputs
# under $OUT/results). Environment for the programs: LD_LIBRARY_PATH=build/gpu/bundle-libs,
# KTUNE_WORKER=build/gpu/ktune-worker (scripts/gpu-suite sets both).
# call 1 (718ecda), kind nvidia-h200 asked, an H100 came; membound-norms only on an H200
KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite info mma-peers-lt gemm-4096
#   mma-peers-lt = gpu_cublaslt_kernels R/cublaslt_kernels.json
#                  ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum \
#                      --log-file R/cublaslt_ncu.csv gpu_cublaslt_kernels R/cublaslt_identify.json \
#                      --identify=R/cublaslt_kernels.json
#                  python3 benchmarks/cublaslt_names.py R/cublaslt_kernels.json R/cublaslt_ncu.csv R/cublaslt_named.json
#   gemm-4096    = gpu_gemm R/gemm_4096.json --dtypes=f16,bf16 --groups=square --shapes=4096x4096x4096 \
#                      --budget=1 --rounds=3 --loop-ms=10
# call 2 (00a7442)
build/gpu/benchmarks/gpu_gemm R/gemm_peers.json --dtypes=f16,bf16 --groups=square \
  --shapes=4096x4096x4096 --budget=1 --rounds=3 --loop-ms=10 \
  --variants="BK=32,STAGES=6;BK=32,STAGES=8;BK=32,STAGES=5;BM=256,BN=128,BK=32,STAGES=6" \
  --cublaslt="21:23:12:0:0;21:24:12:0:0"
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite mma-peers-triton
#   = DISABLE_MMA_V3=1 python3 benchmarks/peers/triton_gemm.py R; python3 benchmarks/peers/triton_gemm.py R
# call 3 (0c69d5b)
build/gpu/benchmarks/gpu_gemm R/gemm_peers.json --dtypes=f16,bf16 --groups=square \
  --shapes=4096x4096x4096 --budget=1 --rounds=5 --loop-ms=10 --cublaslt="21:23:12:0:0;21:24:12:0:0"
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite mma-peers-triton
python3 benchmarks/plot_mma_peers.py R/mma_peers_h100.png R/gemm_peers.json R/triton_gemm_mma_sync.json \
  R/triton_gemm_default.json --names benchmarks/results/2026-12-06-h100/session27/call1/cublaslt_named.json
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite tests-gemm
# call 4 (7680e13), kind nvidia-h200 asked, an H100 came; membound-norms only on an H200
KTUNE_PHASE_TIMEOUT=300 timeout 560 scripts/gpu-suite info mma-peers-lt mma-peers-gemm mma-peers-triton mma-peers-plot
#   (phases as in scripts/gpu-suite at 7680e13: the sweep at --sweep-seconds=60, gemm peers from
#    cublaslt_named.json's peers_argument with --rounds=6 --loop-ms=10 --calls-per-sample=10)
