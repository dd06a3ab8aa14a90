# Session 12 device calls, verbatim (run as `PART=A bash gpu-call.sh` from the repository root on the GPU machine; the call carried build/gpu without its examples folder).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = A ]; then
  W="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CLUSTER=1,PARAMS=2,MIN_WARPS=24,RPG=2,PREFETCH=1"
  Q="THREADS=64,TPR=64,VEC=4,ROW_MODE=0,STATS=0,CLUSTER=1,PARAMS=1,MIN_WARPS=16,RPG=2,PREFETCH=1"
  V="$W,CACHE_HINT=1;$W,CACHE_HINT=2;$W,CACHE_HINT=3;$W,CACHE_HINT=0"
  V="$V;$W,CACHE_HINT=1;$W,CACHE_HINT=2;$W,CACHE_HINT=3;$W,CACHE_HINT=0;$W,CACHE_HINT=1"
  V="$V;$Q,CACHE_HINT=1;$Q,CACHE_HINT=2;$Q,CACHE_HINT=3;$Q,CACHE_HINT=1"
  s hints 240 $B/benchmarks/gpu_memory_bound $R/hints --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=0 --variants="$V" --copy-kernel-trials=1
  s t_ln 300 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
fi

# ---- call 2 (PART=B), same header:
if [ $PART = B ]; then
  W="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,STATS=0,CLUSTER=1,PARAMS=2,MIN_WARPS=24,RPG=2,PREFETCH=1,CACHE_HINT=1"
  V="$W,L2_AHEAD=0;$W,L2_AHEAD=512;$W,L2_AHEAD=1024;$W,L2_AHEAD=2048;$W,L2_AHEAD=4096"
  V="$V;$W,L2_AHEAD=0;$W,L2_AHEAD=1024,L2_PF_LAST=1;$W,L2_AHEAD=2048,L2_PF_LAST=1;$W,L2_AHEAD=256"
  V="$V;$W,L2_AHEAD=0;$W,L2_AHEAD=1024;$W,L2_AHEAD=2048;$W,L2_AHEAD=0"
  s ahead 240 $B/benchmarks/gpu_memory_bound $R/ahead --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=0 --variants="$V" --copy-kernel-trials=1
  s ahead_big 240 $B/benchmarks/gpu_memory_bound $R/ahead_big --families=layernorm --shapes=131072x1024 \
    --dtypes=f16 --trials=0 --variants="$W,L2_AHEAD=0;$W,L2_AHEAD=1024;$W,L2_AHEAD=2048;$W,L2_AHEAD=0" --copy-kernel-trials=1
  s t_ln 300 $B/tests/ktune_tests "[gpu][layernorm]" -d yes
fi
