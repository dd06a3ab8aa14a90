# Session 15 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine, carrying build/gpu without its examples folder). Calls 1 and 4 ran part A, calls 2 and 5 part B, call 3 part C. (One more call, between 3 and 4, ran a script whose header had been lost: it did nothing and took ~35 s.)
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = A ]; then
  s t_core 330 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 150 $B/tests/ktune_tests "[gpu][demo]" -d yes
  s t_conv 150 $B/tests/ktune_tests "[gpu][conv]" -d yes
  s runner 100 $B/benchmarks/gpu_runner $R/gpu_runner.json
  grep -h "All tests\|test cases" $R/t_*.log
fi
if [ $PART = B ]; then
  s t_gemm 560 $B/tests/ktune_tests "[gpu][gemm]" -d yes
  grep -h "All tests\|test cases" $R/t_*.log
fi
if [ $PART = C ]; then
  W="THREADS=32,TPR=32,VEC=8,ROW_MODE=0,CLUSTER=1,RPG=2,PREFETCH=1,PARAMS=2,MIN_WARPS=24,CACHE_HINT=1"
  C="TPR=128,VEC=8,ROW_MODE=0,CLUSTER=1"
  V="$W;$W,STATS=1;$C,THREADS=128,CACHE_HINT=1,MIN_WARPS=48,RPG=4,PREFETCH=1,PARAMS=2"
  V="$V;$C,THREADS=128,CACHE_HINT=1,MIN_WARPS=48,RPG=8,PREFETCH=1,PARAMS=2"
  V="$V;$C,THREADS=128,CACHE_HINT=1,MIN_WARPS=48,RPG=2,PREFETCH=1,PARAMS=2"
  V="$V;$C,THREADS=128,CACHE_HINT=1,MIN_WARPS=48,RPG=4,PREFETCH=1,PARAMS=2,STATS=1"
  V="$V;$C,THREADS=128,CACHE_HINT=1,MIN_WARPS=48,RPG=4,PREFETCH=0,PARAMS=1"
  V="$V;$C,THREADS=128,CACHE_HINT=0,MIN_WARPS=48,RPG=4,PREFETCH=1,PARAMS=2"
  V="$V;$C,THREADS=128,CACHE_HINT=1,MIN_WARPS=32,RPG=4,PREFETCH=1,PARAMS=2"
  V="$V;THREADS=64,TPR=64,VEC=8,ROW_MODE=0,CLUSTER=1,CACHE_HINT=1,RPG=4,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
  V="$V;$W;$W,STATS=1"
  for k in 1 2; do
    s amort$k 200 $B/benchmarks/gpu_memory_bound $R/amort$k --families=layernorm --shapes=32768x1024 \
      --dtypes=f16 --trials=0 --variants="$V" --copy-kernel-trials=1
    grep "variant\|copy" $R/amort$k.log | sed 's/ROW_MODE=0,//;s/CLUSTER=1,//' | cut -c1-150
  done
fi
