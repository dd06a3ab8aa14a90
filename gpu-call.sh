# scratch
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
P3="${W/PARAMS=2/PARAMS=3},RPG=2,PREFETCH=1"
Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,PARAMS=1,MIN_WARPS=16,RPG=2"
Q3="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CACHE_HINT=0,CLUSTER=1,PARAMS=3,MIN_WARPS=16,RPG=2"
if [ $PART = K ]; then
  s t_ln 200 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
  s x1024 200 $B/benchmarks/gpu_memory_bound $R/x1024 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=40 --seconds=12 --variants="$P1;$P3;$P1;$P3;$Q,PREFETCH=1;$Q3,PREFETCH=1" \
    --copy-kernel-trials=1
fi
pack
