# Session 11 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; every call carried build/gpu without its examples folder).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = A ]; then
  V="PERSIST=1;PERSIST=0;PERSIST=1;PERSIST=0;PERSIST=1,BM=256,BN=128;PERSIST=1,GROUP_M=16;PERSIST=1"
  s mma4096 200 $B/benchmarks/gpu_gemm $R/mma4096.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --rounds=3 --variants="$V"
  s mma_more 200 $B/benchmarks/gpu_gemm $R/mma_more.json --dtypes=f16 --groups=square,llm \
    --shapes=8192x8192x8192,4096x11008x4096 --template=gemm_mma --budget=1 \
    --variants="PERSIST=1;PERSIST=0;PERSIST=1;PERSIST=0"
  s t_gemm 300 $B/tests/ktune_tests "[gpu][gemm]" -d yes
fi
if [ $PART = B ]; then
  W="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,PARAMS=2,MIN_WARPS=24,PREFETCH=1"
  Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,PARAMS=1,MIN_WARPS=16,PREFETCH=1"
  V="$W,RPG=2,ORDER=0;$W,RPG=12,ORDER=1;$W,RPG=16,ORDER=1;$W,RPG=12,ORDER=0;$W,RPG=2,ORDER=0"
  V="$V;$W,RPG=24,ORDER=1;$W,RPG=8,ORDER=1;$W,RPG=2,ORDER=1;$W,RPG=12,ORDER=1;$W,RPG=2,ORDER=0"
  V="$V;$Q,RPG=2,ORDER=0;$Q,RPG=12,ORDER=1;$Q,RPG=16,ORDER=1;$Q,RPG=2,ORDER=0"
  s order 240 $B/benchmarks/gpu_memory_bound $R/order --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=0 --variants="$V" --copy-kernel-trials=1
  s t_ln 300 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
fi
if [ $PART = C ]; then
  V="DIAG=1;DIAG=2;DIAG=3;DIAG=0;DIAG=1;DIAG=2;DIAG=3;DIAG=0"
  s diag 200 $B/benchmarks/gpu_gemm $R/diag.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V"
  s diag10 200 $B/benchmarks/gpu_gemm $R/diag10.json --dtypes=f16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V" --loop-ms=10
fi
if [ $PART = D ]; then
  V="STAGGER=1;STAGGER=0;STAGGER=1,STAGES=4;STAGGER=1;STAGGER=0;STAGGER=1,STAGES=4"
  s stagger 200 $B/benchmarks/gpu_gemm $R/stagger.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --rounds=3 --variants="$V"
  s stagger10 100 $B/benchmarks/gpu_gemm $R/stagger10.json --dtypes=f16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --rounds=3 --variants="$V" --loop-ms=10
  s t_gemm 420 $B/tests/ktune_tests "[gpu][gemm]~[wgmma]" -d yes
fi
if [ $PART = E ]; then
  V="DIAG=4;DIAG=2;DIAG=5;DIAG=0;DIAG=4;DIAG=2;DIAG=5;DIAG=0"
  s diag 200 $B/benchmarks/gpu_gemm $R/diag.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V" --loop-ms=10
fi
if [ $PART = F ]; then
  s t_tma 200 $B/tests/ktune_tests "[gpu][gemm][tma]" -d yes
  V="LOADER=1;LOADER=0;LOADER=1,STAGES=4;LOADER=1;LOADER=0;LOADER=1,STAGES=4"
  s tma10 150 $B/benchmarks/gpu_gemm $R/tma10.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V" --loop-ms=10
  s tma 200 $B/benchmarks/gpu_gemm $R/tma.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096,8192x8192x8192 --template=gemm_mma --budget=1 --rounds=3 --variants="$V"
fi

# ---- call 7 (PART=G), run from its own script with the same header:
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = G ]; then
  s t_tma 200 $B/tests/ktune_tests "[gpu][gemm][tma]" -d yes
  V="LOADER=1;LOADER=0;LOADER=1;LOADER=0;LOADER=1;LOADER=0"
  s tma10 150 $B/benchmarks/gpu_gemm $R/tma10.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V" --loop-ms=10
fi
