# The device calls of session 28, as run (bundle: scripts/gpu-bundle at the commit in each call's
# date.txt, carried as build/gpu with the programs the call did not use removed; outputs under
# $OUT/results). scripts/gpu-suite sets LD_LIBRARY_PATH=build/gpu/bundle-libs and
# KTUNE_WORKER=build/gpu/ktune-worker. Each call asked for kind nvidia-h200; an H100 came each time.
# call 1 (33dbf33)
KTUNE_LT_SWEEP_SECONDS=20 KTUNE_PHASE_TIMEOUT=300 timeout 570 scripts/gpu-suite info mma-peers-lt \
  mma-peers-gemm mma-peers-triton mma-peers-plot gemm-stages-ab torch
#   gemm-stages-ab = gpu_gemm R/gemm_stages_ab.json --dtypes=f16,bf16 --groups=square \
#     --shapes=4096x4096x4096 --budget=1 --rounds=1 --loop-ms=30 --calls-per-sample=10 \
#     --variants="STAGES=3;V;V;STAGES=3;STAGES=3;V;V;STAGES=3"   (V = BM=256,BN=128,BK=32,STAGES=6)
#   torch          = python3 benchmarks/peers/torch_memory_bound.py R   (then 1 call per sample)
# call 2 (3f4f932; its torch phases failed: a SyntaxError in the script, fixed in b11c317)
KTUNE_PHASE_TIMEOUT=300 timeout 570 scripts/gpu-suite info tests-demo demo deploy-readonly \
  membound-a membound-b membound-c torch-calls1
ls -la $OUT/results > $OUT/results/listing.txt
# call 3 (b11c317)
KTUNE_PHASE_TIMEOUT=300 timeout 570 scripts/gpu-suite info membound-a membound-b membound-c \
  torch-calls1 tests-core
#   membound-a = gpu_memory_bound R --families=elementwise,reduction
#                python3 benchmarks/peers/torch_memory_bound.py R --families elementwise,reduction
#   membound-b = gpu_memory_bound R --families=layernorm --dtypes=f32
#                python3 benchmarks/peers/torch_memory_bound.py R --families layernorm --dtypes f32
#   membound-c = gpu_memory_bound R --families=layernorm --dtypes=f16 --copy-kernel-trials=12
#                python3 benchmarks/peers/torch_memory_bound.py R --families layernorm --dtypes f16
#   torch-calls1 = python3 benchmarks/peers/torch_memory_bound.py R/torch_calls1 --calls-per-sample 1
# chart and table (here, from call 3's files):
python3 benchmarks/plot_memory_bound.py memory_bound.png call3/memory_bound_elementwise_reduction.json \
  call3/memory_bound_layernorm_f32.json call3/memory_bound_layernorm_f16.json --torch \
  call3/torch_memory_bound_elementwise_reduction.json call3/torch_memory_bound_layernorm_f32.json \
  call3/torch_memory_bound_layernorm_f16.json --table
# call 4 (683ac6c)
KTUNE_PHASE_TIMEOUT=300 timeout 500 scripts/gpu-suite info tests-core tests-demo
