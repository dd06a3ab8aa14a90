# Session 7 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; PART=E ran twice: its first run named a variable R and clobbered the results folder; PART=I was refused for lack of device time).
# Session 7 device calls (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = A ]; then
  s t_ln 60 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s norms16 130 $B/benchmarks/gpu_memory_bound $R/norms --families=layernorm --dtypes=f16 \
    --trials=40 --seconds=12 --variants="STATS=1;STATS=1,ROW_MODE=3,PREFETCH=0,STAGES=2"
  s copy1024 90 $B/benchmarks/gpu_memory_bound $R/copy --families=layernorm --dtypes=f16 \
    --shapes=32768x1024 --trials=1 --copy-kernel-trials=40
  s norms32 130 $B/benchmarks/gpu_memory_bound $R/norms --families=layernorm --dtypes=f32 \
    --trials=40 --seconds=12
  s torch_norms 40 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R \
    --families layernorm
fi
if [ $PART = B ]; then
  F="THREADS=256,TPR=256,VEC=8,ROW_MODE=3,STATS=1,CACHE_HINT=0,CLUSTER=8,RPG=12,PREFETCH=0,PARAMS=2,MIN_WARPS=24,STAGES=2"
  VV="$F;${F/PARAMS=2/PARAMS=0};${F/PARAMS=2/PARAMS=1};${F/RPG=12/RPG=4};${F/STATS=1/STATS=0};${F/MIN_WARPS=24/MIN_WARPS=0}"
  VV="$VV;${F/STAGES=2/STAGES=3};${F/VEC=8/VEC=4};${F/CLUSTER=8/CLUSTER=4};${F/ROW_MODE=3/ROW_MODE=0}"
  VV="$VV;${F/THREADS=256,TPR=256/THREADS=512,TPR=512};${F/CLUSTER=8,RPG=12/CLUSTER=1,RPG=12}"
  s lnbug 120 $B/benchmarks/gpu_memory_bound $R/lnbug --families=layernorm --norms=layernorm \
    --shapes=4096x65536,8192x16384 --dtypes=f16 --trials=1 --variants="$VV"
  s mma 150 $B/benchmarks/gpu_gemm $R/mma.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=24 --rounds=5
  s llm32 240 $B/benchmarks/gpu_gemm $R/llm32.json --dtypes=f32 --groups=llm --budget=1 \
    --shapes=8192x14336x4096,8192x14336x11008,8192x14336x14336
fi
if [ $PART = C ]; then
  s t_ln 150 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  F="THREADS=256,TPR=256,VEC=8,ROW_MODE=3,STATS=1,CACHE_HINT=0,CLUSTER=8,RPG=12,PREFETCH=0,PARAMS=2,MIN_WARPS=24,STAGES=2"
  VV="$F;${F/PARAMS=2/PARAMS=0};${F/RPG=12/RPG=4};${F/STATS=1/STATS=0};${F/STAGES=2/STAGES=3};${F/VEC=8/VEC=4}"
  s lnbug 60 $B/benchmarks/gpu_memory_bound $R/lnbug --families=layernorm --norms=layernorm \
    --shapes=4096x65536 --dtypes=f16 --trials=1 --variants="$VV"
  s membound 330 $B/benchmarks/gpu_memory_bound $R --trials=40 --seconds=12 --variants="STATS=1"
  s torch_mb 90 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R
fi
if [ $PART = D ]; then
  s sweep 150 $B/benchmarks/gpu_memory_bound $R/sweep --copy-sweep --copy-kernel-trials=24
  s conv 200 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma --budget=16
  s torch 150 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
fi
if [ $PART = E ]; then
  C="CLUSTER=1,CACHE_HINT=0,STATS=0"
  RG="ROW_MODE=3,PREFETCH=0,$C"
  VV="THREADS=256,TPR=32,VEC=8,$RG,RPG=8,STAGES=4,PARAMS=2,MIN_WARPS=0"
  VV="$VV;THREADS=256,TPR=32,VEC=8,$RG,RPG=16,STAGES=3,PARAMS=2,MIN_WARPS=0"
  VV="$VV;THREADS=128,TPR=16,VEC=8,$RG,RPG=8,STAGES=4,PARAMS=2,MIN_WARPS=0"
  VV="$VV;THREADS=512,TPR=64,VEC=8,$RG,RPG=8,STAGES=3,PARAMS=2,MIN_WARPS=0"
  VV="$VV;THREADS=256,TPR=32,VEC=8,$RG,RPG=4,STAGES=2,PARAMS=0,MIN_WARPS=0"
  VV="$VV;THREADS=1024,TPR=32,VEC=8,$RG,RPG=4,STAGES=2,PARAMS=2,MIN_WARPS=0"
  VV="$VV;THREADS=256,TPR=32,VEC=8,$RG,RPG=32,STAGES=6,PARAMS=2,MIN_WARPS=0"
  M="ROW_MODE=0,$C"
  VV="$VV;THREADS=32,TPR=32,VEC=8,$M,RPG=4,PREFETCH=1,PARAMS=2,MIN_WARPS=24"
  VV="$VV;THREADS=32,TPR=32,VEC=8,$M,RPG=1,PREFETCH=0,PARAMS=0,MIN_WARPS=0"
  VV="$VV;THREADS=64,TPR=32,VEC=8,$M,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
  VV="$VV;THREADS=32,TPR=16,VEC=8,$M,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=24"
  VV="$VV;THREADS=32,TPR=32,VEC=8,ROW_MODE=0,CLUSTER=1,CACHE_HINT=1,STATS=0,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=24"
  s x1024 150 $B/benchmarks/gpu_memory_bound $R/x1024 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=80 --seconds=20 --seed=3 --variants="$VV" --copy-kernel-trials=24
fi
if [ $PART = F ]; then
  s t_ln 150 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  F="THREADS=256,TPR=256,VEC=8,ROW_MODE=3,STATS=1,CACHE_HINT=0,CLUSTER=8,RPG=12,PREFETCH=0,PARAMS=2,MIN_WARPS=24,STAGES=2"
  VV="$F;${F/PARAMS=2/PARAMS=0};${F/RPG=12/RPG=4};${F/STATS=1/STATS=0};${F/STAGES=2/STAGES=3};${F/VEC=8/VEC=4}"
  s lnbug 60 $B/benchmarks/gpu_memory_bound $R/lnbug --families=layernorm --norms=layernorm \
    --shapes=4096x65536 --dtypes=f16 --trials=1 --variants="$VV"
  s x65536 120 $B/benchmarks/gpu_memory_bound $R/x65536 --families=layernorm --shapes=4096x65536 \
    --trials=40 --seconds=12
fi
if [ $PART = G ]; then
  s membound 330 $B/benchmarks/gpu_memory_bound $R --trials=40 --seconds=12 --variants="STATS=1"
  s torch_mb 90 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R
  s sweep 150 $B/benchmarks/gpu_memory_bound $R/sweep --copy-sweep --copy-kernel-trials=24
fi
if [ $PART = H ]; then
  s t_ln 150 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  OLD="THREADS=256,TPR=256,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=8,RPG=12,PREFETCH=1,PARAMS=2,MIN_WARPS=24,STAGES=2"
  s x65536 100 $B/benchmarks/gpu_memory_bound $R/x65536 --families=layernorm --norms=layernorm \
    --shapes=4096x65536 --dtypes=f16 --trials=40 --seconds=12 --variants="$OLD;${OLD/STATS=0/STATS=1}"
fi
if [ $PART = I ]; then
  s mma 150 $B/benchmarks/gpu_gemm $R/mma.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --rounds=3 \
    --variants="EARLY=1;EARLY=0;EARLY=1;EARLY=0;EARLY=1;EARLY=0"
fi
pack
