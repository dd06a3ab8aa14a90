# Session 9 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; calls 1-9 ran PART=A..I in order, calls 10 and 11 PART=J, call 12 PART=K, call 13 PART=L; calls 5-13 carried build/gpu without its examples folder, over the 64 MiB carry limit otherwise).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
NCU=/usr/local/cuda/bin/ncu
W="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,PARAMS=2,MIN_WARPS=24"
W16="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,PARAMS=2,MIN_WARPS=16"
P1="$W,RPG=2,PREFETCH=1"; P2="$W,RPG=2,PREFETCH=2"
Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,PARAMS=1,MIN_WARPS=16,RPG=2"
if [ $PART = A ]; then
  $NCU --list-sections > $R/ncu_sections.txt 2>&1
  s t_ln 200 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  V="$P1;$P2;$P1;$P2;$P1;$P2;$Q,PREFETCH=1;$Q,PREFETCH=2;$Q,PREFETCH=1;$Q,PREFETCH=2"
  V="$V;$W,RPG=3,PREFETCH=2;$W,RPG=4,PREFETCH=2;$W16,RPG=4,PREFETCH=3;$W16,RPG=2,PREFETCH=2"
  s x1024 200 $B/benchmarks/gpu_memory_bound $R/x1024 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=40 --seconds=12 --variants="$V" --copy-kernel-trials=6
  SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats"
  grep -q PmSampling $R/ncu_sections.txt && SEC="$SEC --section PmSampling"
  $NCU --help > $R/ncu_help.txt 2>&1
  grep -q pm-sampling-interval $R/ncu_help.txt && SEC="$SEC --pm-sampling-interval 1000"
fi
if [ $PART = A ] || [ $PART = B ]; then
  SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section PmSampling --pm-sampling-interval 1000"
  for k in layernorm_fwd ktune_copy; do
    s ncu_$k 120 $NCU --clock-control none --cache-control none --target-processes all -k regex:$k \
      -s 20 -c 1 $SEC -o $R/prof_$k $B/benchmarks/gpu_memory_bound $R/ncu_$k --families=layernorm \
      --norms=layernorm --dtypes=f16 --shapes=32768x1024 --trials=0 --variants="$P1" --copy-kernel-trials=1
    $NCU -i $R/prof_$k.ncu-rep --page details > $R/prof_${k}_details.txt 2>&1
    $NCU -i $R/prof_$k.ncu-rep --page raw --csv --print-metric-instances values > $R/prof_${k}_raw.csv 2>&1
    pack
  done
fi
if [ $PART = C ]; then
  s t_core 200 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  for T in 10 300; do
    s mma_$T 150 $B/benchmarks/gpu_gemm $R/mma_$T.json --dtypes=f16,bf16 --groups=square \
      --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --rounds=3 --loop-ms=$T
  done
fi
if [ $PART = D ]; then
  s t_rest 560 $B/tests/ktune_tests "[gpu][gemm],[gpu][conv],[gpu][demo],[gpu][wgmma]" -d yes
fi
if [ $PART = E ]; then
  s t_convwg 240 $B/tests/ktune_tests "[gpu][conv][wgmma]" -d yes
  LY="s2_1x1_256_128,s2_3x3_128_128_s2,s2_1x1_512_128,s2_3x3_128_128,s3_1x1_512_256,s3_3x3_256_256_s2"
  LY="$LY,s3_1x1_256_1024,s3_3x3_256_256,s4_1x1_1024_512,s4_3x3_512_512_s2,s4_1x1_2048_512,s4_3x3_512_512"
  T="CLUSTER_K=1,SPLIT_K=1,PERSIST=0,PRODUCER=0"
  VT="TAIL=2,$T;TAIL=3,$T;TAIL=4,$T;TAIL=2,$T,BN=128,WGS=2,STAGES=6"
  s convt 330 $B/benchmarks/gpu_conv $R/convt.json --dtypes=f16 --template=conv2d_wgmma --budget=1 \
    --layers=$LY --variants="$VT"
fi
if [ $PART = F ]; then
  SZ="16384x1024,32768x1024,65536x1024,131072x1024,262144x1024"
  s sizes 200 $B/benchmarks/gpu_memory_bound $R/sizes --families=layernorm --dtypes=f16 --shapes=$SZ \
    --trials=0 --variants="$P1;$P1" --copy-kernel-trials=1
  for k in layernorm_fwd ktune_copy; do
    s pm_$k 100 $NCU --clock-control none --cache-control none --target-processes all -k regex:$k \
      -s 20 -c 1 --section SpeedOfLight --section PmSampling -o $R/pm_$k $B/benchmarks/gpu_memory_bound \
      $R/pm_$k --families=layernorm --norms=layernorm --dtypes=f16 --shapes=262144x1024 --trials=0 \
      --variants="$P1" --copy-kernel-trials=1
    $NCU -i $R/pm_$k.ncu-rep --page raw --csv --print-metric-instances values > $R/pm_${k}_raw.csv 2>&1
    $NCU -i $R/pm_$k.ncu-rep --page details --print-details all > $R/pm_${k}_details.txt 2>&1
    rm -f $R/pm_$k.ncu-rep; pack
  done
fi
if [ $PART = G ]; then
  R3="ROW_MODE=3,STATS=0,CLUSTER=1,PREFETCH=0,VEC=8,TPR=32"
  VR="$P1;$R3,THREADS=128,STAGES=2,RPG=8,MIN_WARPS=16,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=128,STAGES=3,RPG=16,MIN_WARPS=16,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=128,STAGES=2,RPG=4,MIN_WARPS=32,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=256,STAGES=2,RPG=8,MIN_WARPS=16,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=256,STAGES=2,RPG=4,MIN_WARPS=32,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=256,STAGES=4,RPG=8,MIN_WARPS=16,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=64,STAGES=3,RPG=16,MIN_WARPS=32,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=512,STAGES=2,RPG=4,MIN_WARPS=16,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=1024,STAGES=2,RPG=2,MIN_WARPS=32,PARAMS=2,CACHE_HINT=1"
  VR="$VR;$R3,THREADS=256,STAGES=2,RPG=8,MIN_WARPS=16,PARAMS=1,CACHE_HINT=0"
  VR="$VR;ROW_MODE=2,STATS=0,CLUSTER=1,PREFETCH=0,PARAMS=0,RPG=1,VEC=8,TPR=32,THREADS=64,MIN_WARPS=0,CACHE_HINT=1"
  VR="$VR;ROW_MODE=2,STATS=0,CLUSTER=1,PREFETCH=0,PARAMS=0,RPG=1,VEC=8,TPR=32,THREADS=32,MIN_WARPS=0,CACHE_HINT=1"
  s ring 200 $B/benchmarks/gpu_memory_bound $R/ring --families=layernorm --dtypes=f16 --shapes=32768x1024 \
    --trials=0 --variants="$VR"
fi
if [ $PART = H ]; then
  CV="ITEMS=1;ITEMS=2;ITEMS=4;ITEMS=8;ITEMS=8,THREADS=64;ITEMS=4,THREADS=1024;THREADS=1024;THREADS=64;GRID_STRIDE=1"
  s cwin 200 $B/benchmarks/gpu_memory_bound $R/cwin --families=layernorm --norms=layernorm --dtypes=f16 \
    --shapes=32768x1024,131072x1024 --trials=0 --variants="$P1" --copy-kernel-trials=1 --copy-variants="$CV"
fi
if [ $PART = I ]; then
  M0="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CACHE_HINT=1,CLUSTER=1,PREFETCH=1"
  VP="$P1;$M0,RPG=16,PARAMS=2,MIN_WARPS=16;$M0,RPG=12,PARAMS=2,MIN_WARPS=24;$M0,RPG=8,PARAMS=2,MIN_WARPS=32"
  VP="$VP;$M0,RPG=24,PARAMS=2,MIN_WARPS=16;$M0,RPG=32,PARAMS=2,MIN_WARPS=16;$M0,RPG=16,PARAMS=1,MIN_WARPS=16"
  VP="$VP;$M0,RPG=12,PARAMS=1,MIN_WARPS=24;$M0,RPG=16,PARAMS=0,MIN_WARPS=16;$M0,RPG=8,PARAMS=2,MIN_WARPS=24"
  VP="$VP;${M0/PREFETCH=1/PREFETCH=0},RPG=16,PARAMS=2,MIN_WARPS=16"
  s persist 200 $B/benchmarks/gpu_memory_bound $R/persist --families=layernorm --dtypes=f16 \
    --shapes=32768x1024,131072x1024 --trials=0 --variants="$VP"
fi
if [ $PART = J ]; then
  s check 120 $B/benchmarks/gpu_memory_bound $R/check --families=layernorm --norms=rmsnorm --dtypes=f16 \
    --shapes=32768x1024 --trials=2 --variants="$P1" --copy-kernel-trials=1 --copy-variants="ITEMS=1;ITEMS=8"
fi
P3="${W/PARAMS=2/PARAMS=3},RPG=2,PREFETCH=1"
Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,PARAMS=1,MIN_WARPS=16,RPG=2"
Q3="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,PARAMS=3,MIN_WARPS=16,RPG=2"
if [ $PART = K ]; then
  s t_ln 200 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s x1024 200 $B/benchmarks/gpu_memory_bound $R/x1024 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=40 --seconds=12 --variants="$P1;$P3;$P1;$P3;$Q,PREFETCH=1;$Q3,PREFETCH=1" \
    --copy-kernel-trials=1
fi
if [ $PART = L ]; then
  s t_ln 200 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s x1024 120 $B/benchmarks/gpu_memory_bound $R/x1024 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=0 --variants="$P1;$Q,PREFETCH=1"
fi
pack
