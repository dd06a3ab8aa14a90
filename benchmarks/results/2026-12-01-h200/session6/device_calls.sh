# Session 6 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; PART=J was refused for lack of device time).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
G="--template=gemm_mma,gemm_wgmma"
if [ $PART = A ]; then
  s t_wgmma 200 $B/tests/ktune_tests "[gpu][wgmma]" -d yes
  s t_ln 120 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s odd_kheavy 150 $B/benchmarks/gpu_gemm $R/odd_kheavy.json --dtypes=f16,bf16 \
    --groups=odd,kheavy $G --budget=2 --variants="CLUSTER_K=2,SPLIT_K=1;CLUSTER_K=8,SPLIT_K=1"
  s mma 80 $B/benchmarks/gpu_gemm $R/mma.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 \
    --variants="BK=128,STAGES=2;BM=256,BN=128,BK=128,STAGES=2;BM=256,BN=128"
  s ln_stats 90 $B/benchmarks/gpu_memory_bound $R --families=layernorm --norms=layernorm \
    --shapes=4096x65536 --dtypes=f32,f16 --trials=1 --variants="STATS=1"
  s copycheck 120 $B/benchmarks/gpu_memory_bound $R --families=layernorm \
    --shapes=32768x1024 --dtypes=f16 --trials=1 --copy-kernel-trials=16
fi
if [ $PART = B ]; then
  s mma2 100 $B/benchmarks/gpu_gemm $R/mma2.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 \
    --variants="BM=256,BN=128;STAGES=4;BM=256,BN=128,STAGES=4;BK=32,STAGES=6;BM=256,BN=128,BK=32,STAGES=6;BM=256,BN=128,BK=32,STAGES=8;BM=256,BN=128,GROUP_M=16"
  s kheavy 60 $B/benchmarks/gpu_gemm $R/kheavy.json --dtypes=f16 --groups=kheavy \
    --template=gemm_wgmma --budget=1 \
    --variants="BN=64,CLUSTER_K=4,SPLIT_K=1;BM=64,CLUSTER_K=4,SPLIT_K=1;BN=64,CLUSTER_K=2,SPLIT_K=1;SPLIT_K=8"
  s llm16 130 $B/benchmarks/gpu_gemm $R/llm16.json --dtypes=f16 --groups=llm $G --budget=1 \
    --shapes=8192x14336x11008,8192x14336x14336
  s llmb16 230 $B/benchmarks/gpu_gemm $R/llmb16.json --dtypes=bf16 --groups=llm $G \
    --budget=1 --shapes=8192x11008x14336,8192x14336x4096,8192x14336x11008,8192x14336x14336
fi
if [ $PART = C ]; then
  s conv 300 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma \
    --budget=16 --variants="PRODUCER=1;PRODUCER=2;CLUSTER_K=2,SPLIT_K=1;BN=128,CLUSTER_K=2,SPLIT_K=1"
  s torch 110 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
  s t_conv 130 $B/tests/ktune_tests "[gpu][conv]~[wgmma]" -d yes
fi
if [ $PART = D ]; then
  s mma3 90 $B/benchmarks/gpu_gemm $R/mma3.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 \
    --variants="BN=128,WN=64;BN=128,WN=64,BK=32,STAGES=5;BN=128,WN=64,BK=32,STAGES=4;STAGES=4"
  NCU=/usr/local/cuda/bin/ncu
  SEC="--section WarpStateStats --section SourceCounters --section SpeedOfLight --section SchedulerStats"
  s ncu_mma 120 $NCU --clock-control none --target-processes all -k regex:gemm_mma -c 1 $SEC -o $R/prof_mma \
    $B/benchmarks/gpu_gemm $R/ncu_mma.json --template=gemm_mma --dtypes=f16 --groups=square --shapes=4096x4096x4096 --budget=1
  s ncu_ln 90 $NCU --clock-control none --target-processes all -k regex:layernorm_fwd -c 1 $SEC -o $R/prof_ln \
    $B/benchmarks/gpu_memory_bound $R/mb_ln --families=layernorm --norms=layernorm --dtypes=f16 --shapes=4096x65536 --trials=1 --seconds=2
  for p in prof_mma prof_ln; do
    $NCU -i $R/$p.ncu-rep --page source --csv --print-source sass > $R/${p}_sass.csv 2> $R/${p}_sass.err
    $NCU -i $R/$p.ncu-rep --page details > $R/${p}_details.txt 2>&1
  done; pack
fi
if [ $PART = E ]; then
  s membound 330 $B/benchmarks/gpu_memory_bound $R --trials=24 --seconds=8
  s torch_mb 110 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R
fi
if [ $PART = F ]; then
  V1="THREADS=1024,TPR=1024,VEC=4,ROW_MODE=3,STATS=0,CACHE_HINT=0,CLUSTER=2,RPG=12,PREFETCH=0,PARAMS=2,MIN_WARPS=32,STAGES=2"
  V3="THREADS=256,TPR=256,VEC=8,ROW_MODE=3,STATS=0,CACHE_HINT=0,CLUSTER=8,RPG=24,PREFETCH=0,PARAMS=2,MIN_WARPS=16,STAGES=4"
  V5="THREADS=512,TPR=512,VEC=4,ROW_MODE=3,STATS=0,CACHE_HINT=0,CLUSTER=8,RPG=32,PREFETCH=0,PARAMS=1,MIN_WARPS=16,STAGES=6"
  V7="THREADS=512,TPR=512,VEC=8,ROW_MODE=3,STATS=0,CACHE_HINT=0,CLUSTER=4,RPG=24,PREFETCH=0,PARAMS=2,MIN_WARPS=16,STAGES=3"
  VV="$V1;${V1/STATS=0/STATS=1};$V3;${V3/STATS=0/STATS=1};$V5;${V5/STATS=0/STATS=1};$V7;${V7/STATS=0/STATS=1}"
  s ln65536 200 $B/benchmarks/gpu_memory_bound $R/x65536 --families=layernorm --norms=layernorm \
    --shapes=4096x65536 --dtypes=f16,f32 --trials=60 --seconds=25 --seed=2 --variants="$VV"
  s ln1024 120 $B/benchmarks/gpu_memory_bound $R/x1024 --families=layernorm --norms=layernorm \
    --shapes=32768x1024 --dtypes=f32,f16 --trials=60 --seconds=20 --seed=2
fi
if [ $PART = G ]; then
  C="ROW_MODE=3,STATS=0,CACHE_HINT=0,PREFETCH=0"
  VV="THREADS=1024,TPR=1024,VEC=4,$C,CLUSTER=2,RPG=12,PARAMS=0,MIN_WARPS=32,STAGES=2"
  VV="$VV;THREADS=1024,TPR=1024,VEC=4,$C,CLUSTER=2,RPG=12,PARAMS=1,MIN_WARPS=32,STAGES=2"
  VV="$VV;THREADS=1024,TPR=1024,VEC=8,$C,CLUSTER=2,RPG=12,PARAMS=0,MIN_WARPS=32,STAGES=2"
  VV="$VV;THREADS=512,TPR=512,VEC=8,$C,CLUSTER=4,RPG=12,PARAMS=2,MIN_WARPS=16,STAGES=2"
  VV="$VV;THREADS=512,TPR=512,VEC=4,$C,CLUSTER=4,RPG=12,PARAMS=2,MIN_WARPS=16,STAGES=2"
  VV="$VV;THREADS=512,TPR=512,VEC=8,$C,CLUSTER=4,RPG=12,PARAMS=0,MIN_WARPS=16,STAGES=3"
  VV="$VV;THREADS=1024,TPR=1024,VEC=8,$C,CLUSTER=4,RPG=24,PARAMS=2,MIN_WARPS=32,STAGES=2"
  VV="$VV;THREADS=256,TPR=256,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=8,RPG=12,PREFETCH=1,PARAMS=2,MIN_WARPS=24,STAGES=2"
  VV="$VV;THREADS=512,TPR=512,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=4,RPG=8,PREFETCH=1,PARAMS=2,MIN_WARPS=16,STAGES=2"
  s g65536 100 $B/benchmarks/gpu_memory_bound $R/g --families=layernorm \
    --shapes=4096x65536 --dtypes=f16,f32 --trials=1 --variants="$VV"
fi
if [ $PART = H ]; then
  s t_ln 60 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s membound 300 $B/benchmarks/gpu_memory_bound $R --trials=40 --seconds=12 --variants="STATS=1"
  s torch_mb 60 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R
  s conv 150 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma --budget=16
  s torch 40 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
fi
if [ $PART = I ]; then
  BASE="THREADS=256,TPR=256,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=8,RPG=12,PREFETCH=1,PARAMS=2,MIN_WARPS=24,STAGES=2"
  VV="$BASE;${BASE/RPG=12/RPG=6};${BASE/RPG=12/RPG=8};${BASE/RPG=12/RPG=16};${BASE/RPG=12/RPG=24}"
  VV="$VV;${BASE/MIN_WARPS=24/MIN_WARPS=32};${BASE/PARAMS=2/PARAMS=1};${BASE/VEC=4/VEC=8}"
  VV="$VV;${BASE/STATS=0/STATS=1};${BASE/THREADS=256,TPR=256,VEC=4/THREADS=128,TPR=128,VEC=8}"
  VV="$VV;${BASE/CLUSTER=8,RPG=12/CLUSTER=4,RPG=8};${BASE/MIN_WARPS=24/MIN_WARPS=16}"
  s sweep 90 $B/benchmarks/gpu_memory_bound $R/sweep --families=layernorm --norms=layernorm \
    --shapes=4096x65536 --dtypes=f16 --trials=1 --variants="$VV"
fi
if [ $PART = J ]; then
  s t_ln 60 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s norms16 100 $B/benchmarks/gpu_memory_bound $R --families=layernorm --dtypes=f16 --trials=40 --seconds=12
  s norms32 100 $B/benchmarks/gpu_memory_bound $R --families=layernorm --dtypes=f32 --trials=40 --seconds=12
  s torch_norms 40 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R --families layernorm
fi
pack
