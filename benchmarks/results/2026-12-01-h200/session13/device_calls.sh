# Session 13 device calls, verbatim (run as `PART=A bash gpu-call.sh` from the repository root on the GPU machine; each call carried build/gpu without its examples folder).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = A ]; then
  s t_core 330 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 200 $B/tests/ktune_tests "[gpu][demo]" -d yes
  s runner 150 $B/benchmarks/gpu_runner $R/gpu_runner.json
  s t_conv 240 $B/tests/ktune_tests "[gpu][conv]" -d yes
fi
if [ $PART = B ]; then
  s t_gemm 400 $B/tests/ktune_tests "[gpu][gemm]" -d yes
  s ln1024 120 $B/benchmarks/gpu_memory_bound $R/ln1024 --families=layernorm --shapes=32768x1024 \
    --dtypes=f16 --trials=40 --seconds=12 --copy-kernel-trials=12
  s mma4096 120 $B/benchmarks/gpu_gemm $R/mma4096.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=24 --rounds=3
fi
if [ $PART = C ]; then
  s membound 420 $B/benchmarks/gpu_memory_bound $R --trials=40 --seconds=12 --variants="STATS=1"
  s torch_mb 120 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_memory_bound.py $R --calls-per-sample 10
fi
