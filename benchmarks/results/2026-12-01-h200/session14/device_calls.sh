# Session 14 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine; each call carried build/gpu without its examples folder). Calls 1-3 used parts A-C, calls 4-5 parts D-E of the second script below.
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = A ]; then
  s kscale 280 $B/benchmarks/gpu_gemm $R/kscale.json --dtypes=f16,bf16 --groups=llm \
    --shapes=4096x4096x4096,4096x4096x11008,4096x4096x14336 --template=gemm_mma --budget=1 \
    --rounds=3 --loop-ms=10
  grep -v "^\[20" $R/kscale.log | cut -c1-190
fi
# ---- calls 2-3 (PART=B, C), same header:
if [ $PART = B ]; then
  s t_core 330 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 150 $B/tests/ktune_tests "[gpu][demo]" -d yes
  s t_conv 150 $B/tests/ktune_tests "[gpu][conv]" -d yes
  s runner 100 $B/benchmarks/gpu_runner $R/gpu_runner.json
  grep -h "All tests\|test cases" $R/t_*.log
fi
if [ $PART = C ]; then
  s t_gemm 560 $B/tests/ktune_tests "[gpu][gemm]" -d yes
fi
# ---- calls 4-5: the script was rewritten with the same header:
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = D ]; then
  s t_core 330 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 150 $B/tests/ktune_tests "[gpu][demo]" -d yes
  s t_conv 150 $B/tests/ktune_tests "[gpu][conv]" -d yes
  s runner 100 $B/benchmarks/gpu_runner $R/gpu_runner.json
fi
if [ $PART = E ]; then
  s t_gemm 560 $B/tests/ktune_tests "[gpu][gemm]" -d yes
fi
