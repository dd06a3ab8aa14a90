# Session 10 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; calls 1-8 ran PART=A..H in order; every call carried build/gpu without its examples folder, over the 64 MiB carry limit otherwise).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
SW="s2_3x3_128_128_s2,s2_1x1_512_128,s2_3x3_128_128,s3_1x1_512_256,s3_1x1_256_1024,s3_down_512_1024_s2,s4_1x1_1024_512"
CTL="s2_1x1_256_128,s3_3x3_256_256_s2,s3_3x3_256_256"
if [ $PART = A ]; then
  V="BM=128,WGS=2;BM=128,BN=256,WGS=2;BM=128,WGS=1;BM=192,WGS=3,PERSIST=1;BM=192,WGS=3,CLUSTER_K=2"
  V="$V;BM=192,WGS=3,STAGES=4;BM=192,WGS=3,LOOP=0;BM=192,WGS=3,BN=256,STAGES=4;BM=192,WGS=3,PRODUCER=1,BN=128"
  V="$V;BM=192,WGS=3,BN=128,EPI=1;BM=192,WGS=3,BN=128,EPI=0"
  s conv192 300 $B/benchmarks/gpu_conv $R/conv192.json --dtypes=f16 --template=conv2d_wgmma --budget=1 \
    --layers=$SW,$CTL --variants="$V"
  s t_convwg 240 $B/tests/ktune_tests "[gpu][conv][wgmma]" -d yes
fi
if [ $PART = B ]; then
  s conv 360 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma --budget=16
  s torch 220 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
fi
if [ $PART = C ]; then
  LY="s3_3x3_256_256_s2,s3_3x3_256_256,s1_3x3_64_64,s4_1x1_2048_512,s4_3x3_512_512,s2_1x1_256_128"
  V="BM=192,WGS=3,CLUSTER_K=2,STAGES=5;BM=192,WGS=3,CLUSTER_K=2,STAGES=4;BM=192,WGS=3,CLUSTER_K=2,STAGES=5,EPI=1"
  V="$V;BM=192,WGS=3,STAGES=5,EPI=1;BM=192,WGS=3,PERSIST=1,STAGES=4;BM=128,BN=256,WGS=2,CLUSTER_K=4,STAGES=4"
  V="$V;BM=192,WGS=3,BN=64,STAGES=5;BM=192,WGS=3,BN=64,STAGES=5,EPI=1;BM=192,WGS=3,BN=64,PERSIST=1,STAGES=5,EPI=1"
  V="$V;BM=128,BN=128,WGS=2,CLUSTER_K=2,STAGES=6,EPI=1;BM=128,BN=128,WGS=1,STAGES=6,EPI=1"
  s convc 300 $B/benchmarks/gpu_conv $R/convc.json --dtypes=f16 --template=conv2d_wgmma --budget=1 \
    --layers=$LY --variants="$V"
  s t_wg 300 $B/tests/ktune_tests "[gpu][wgmma]" -d yes
fi
if [ $PART = D ]; then
  s conv 360 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma --budget=16
  s torch 220 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
  s t_conv 300 $B/tests/ktune_tests "[gpu][conv]" -d yes
fi
if [ $PART = E ]; then
  W="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CLUSTER=1,PARAMS=2,MIN_WARPS=24,RPG=2,PREFETCH=1"
  Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CLUSTER=1,PARAMS=1,MIN_WARPS=16,RPG=2,PREFETCH=1"
  V="$W,CACHE_HINT=1;$W,CACHE_HINT=4;$W,CACHE_HINT=3;$W,CACHE_HINT=0;$W,CACHE_HINT=1;$W,CACHE_HINT=4"
  V="$V;$Q,CACHE_HINT=0;$Q,CACHE_HINT=3;$Q,CACHE_HINT=4"
  s l2hint 200 $B/benchmarks/gpu_memory_bound $R/l2hint --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=0 --variants="$V" --copy-kernel-trials=1
fi
if [ $PART = F ]; then
  T="TPR=128,VEC=8,ROW_MODE=0,CLUSTER=1,RPG=1,PREFETCH=0,PARAMS=0"
  V="$T,THREADS=128,STATS=1,CACHE_HINT=0,MIN_WARPS=64;$T,THREADS=256,STATS=1,CACHE_HINT=0,MIN_WARPS=64"
  V="$V;$T,THREADS=256,STATS=1,CACHE_HINT=1,MIN_WARPS=64;$T,THREADS=512,STATS=1,CACHE_HINT=0,MIN_WARPS=64"
  V="$V;$T,THREADS=1024,STATS=1,CACHE_HINT=0,MIN_WARPS=64;$T,THREADS=256,STATS=1,CACHE_HINT=0,MIN_WARPS=48"
  V="$V;$T,THREADS=256,STATS=0,CACHE_HINT=0,MIN_WARPS=64;$T,THREADS=128,STATS=0,CACHE_HINT=1,MIN_WARPS=64"
  V="$V;THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,PARAMS=2,MIN_WARPS=24,RPG=2,PREFETCH=1"
  s tpr128 200 $B/benchmarks/gpu_memory_bound $R/tpr128 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=0 --variants="$V" --copy-kernel-trials=1
  s conv 360 $B/benchmarks/gpu_conv $R/conv.json --dtypes=f16 --template=conv2d_wgmma --budget=16
  s torch 220 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv.json $R/torch_conv.json
fi
if [ $PART = G ]; then
  s t_core 300 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_conv 200 $B/tests/ktune_tests "[gpu][conv]" -d yes
fi
if [ $PART = H ]; then
  s t_gemm_demo 420 $B/tests/ktune_tests "[gpu][gemm]~[wgmma],[gpu][demo]" -d yes
fi
