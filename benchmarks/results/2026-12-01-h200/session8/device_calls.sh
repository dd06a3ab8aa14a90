# Session 8 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; calls 1-8 ran PART=A..H in order).
# Session 8 device calls (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
M="ROW_MODE=0,CLUSTER=1,CACHE_HINT=0,STATS=0"
V1024="THREADS=32,TPR=32,VEC=8,$M,RPG=1,PREFETCH=0,PARAMS=0,MIN_WARPS=0"
V1024="$V1024;THREADS=256,TPR=32,VEC=8,$M,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
V1024="$V1024;THREADS=128,TPR=32,VEC=8,$M,RPG=1,PREFETCH=0,PARAMS=0,MIN_WARPS=0"
if [ $PART = A ]; then
  s sweep1 150 $B/benchmarks/gpu_memory_bound $R/sweep1 --copy-sweep --copy-kernel-trials=12 --memcpy-placement
  s x1024_r1 100 $B/benchmarks/gpu_memory_bound $R/x1024_r1 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=40 --seconds=12 --variants="$V1024" --copy-kernel-trials=12
  s x1024_r10 100 $B/benchmarks/gpu_memory_bound $R/x1024_r10 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=40 --seconds=12 --variants="$V1024" --copy-kernel-trials=12 --runs-per-sample=10
  s sweep10 150 $B/benchmarks/gpu_memory_bound $R/sweep10 --copy-sweep --copy-kernel-trials=8 --runs-per-sample=10
fi
if [ $PART = B ]; then
  W="CLUSTER=1,CACHE_HINT=0,ROW_MODE=0,PREFETCH=0,PARAMS=0,MIN_WARPS=0,RPG=1,VEC=8"
  V2="THREADS=256,TPR=128,$W,STATS=0;THREADS=256,TPR=128,$W,STATS=1;THREADS=128,TPR=128,$W,STATS=1"
  V2="$V2;THREADS=256,TPR=64,$W,STATS=0;THREADS=512,TPR=64,$W,STATS=1;THREADS=128,TPR=16,$W,STATS=0"
  V2="$V2;THREADS=64,TPR=32,$W,STATS=0;THREADS=256,TPR=32,$W,STATS=0"
  V2="$V2;THREADS=256,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,RPG=1,PREFETCH=0,PARAMS=0,MIN_WARPS=64"
  BEST="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=1,CACHE_HINT=1,CLUSTER=1,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=24,STAGES=2"
  s x1024_big 200 $B/benchmarks/gpu_memory_bound $R/x1024_big --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=200 --seconds=45 --seed=5 --variants="$V2;$BEST" --copy-kernel-trials=12 --runs-per-sample=10
  for c in 2101248 8392704; do
    s x1024_c$c 60 $B/benchmarks/gpu_memory_bound $R/x1024_c$c --families=layernorm --shapes=32768x1024 \
      --dtypes=f16 --trials=1 --variants="$BEST;$BEST" --copy-kernel-trials=6 --runs-per-sample=10 --canary-bytes=$c
  done
fi
if [ $PART = C ]; then
  L="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=0,STAGES=2"
  Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,RPG=2,PREFETCH=1,PARAMS=1,MIN_WARPS=0,STAGES=2"
  W="THREADS=256,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,RPG=1,PREFETCH=0,PARAMS=0,MIN_WARPS=0,STAGES=2"
  V3="$L,MAX_WARPS=0;$L,MAX_WARPS=8;$L,MAX_WARPS=16;$L,MAX_WARPS=24"
  V3="$V3;$Q,MAX_WARPS=0;$Q,MAX_WARPS=8;$Q,MAX_WARPS=16;$Q,MAX_WARPS=24"
  V3="$V3;$W,MAX_WARPS=0;$W,MAX_WARPS=8;$W,MAX_WARPS=16;$W,MAX_WARPS=24;$W,MAX_WARPS=32"
  s x1024_cap 200 $B/benchmarks/gpu_memory_bound $R/x1024_cap --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=200 --seconds=45 --seed=7 --variants="$V3" --runs-per-sample=10
fi
if [ $PART = D ]; then
  s t_core 150 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s membound 360 $B/benchmarks/gpu_memory_bound $R --trials=40 --seconds=12 --variants="STATS=1"
  s torch_mb 90 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R --calls-per-sample 10
fi
if [ $PART = E ]; then
  s conv 330 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma --budget=16
  s torch 200 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
fi
if [ $PART = F ]; then
  s t_mma 240 $B/tests/ktune_tests "gemm_mma is correct with large tiles*" -d yes
  VM="FRAGS=2;FRAGS=1;BM=256,BN=128,FRAGS=1"
  VM="$VM;BN=128,BK=32,STAGES=3,FRAGS=1,MIN_BLOCKS=3;BN=128,BK=64,STAGES=2,FRAGS=1,MIN_BLOCKS=3"
  VM="$VM;BN=128,BK=64,STAGES=3,FRAGS=1,MIN_BLOCKS=2;BN=128,BK=32,STAGES=4,FRAGS=1,MIN_BLOCKS=2"
  VM="$VM;BN=128,BK=64,STAGES=3,FRAGS=2,MIN_BLOCKS=2;FRAGS=2"
  s mma 200 $B/benchmarks/gpu_gemm $R/mma.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --rounds=3 --variants="$VM"
fi
if [ $PART = G ]; then
  LY="s1_3x3_64_64,s2_3x3_128_128_s2,s2_3x3_128_128,s3_3x3_256_256_s2,s3_3x3_256_256,s4_3x3_512_512_s2,s4_3x3_512_512"
  LY="$LY,s3_1x1_512_256,s3_1x1_256_1024,s4_1x1_2048_512,s2_1x1_512_128,s4_1x1_1024_512"
  VC="CLUSTER_K=2;CLUSTER_K=4;BN=128,CLUSTER_K=2,WGS=2;BN=128,CLUSTER_K=4,WGS=2;BN=64,CLUSTER_K=2"
  VC="$VC;BM=64,WGS=1;BM=64,WGS=1,CLUSTER_K=2;BN=256;BN=128,STAGES=4,CLUSTER_K=2;BN=64,CLUSTER_K=4"
  s convv 400 $B/benchmarks/gpu_conv $R/convv.json --dtypes=f16 --template=conv2d_wgmma --budget=16 \
    --layers=$LY --variants="$VC"
fi
if [ $PART = H ]; then
  s t_rest 560 $B/tests/ktune_tests "[gpu][gemm],[gpu][conv],[gpu][demo],[gpu][wgmma]" -d yes
fi
pack
