# Session 16 device calls, verbatim (run as `PART=X bash gpu-call.sh` from the repository root on the GPU machine, carrying build/gpu without its examples folder). Calls 1 and 3 ran part A, calls 2 and 4 part B, call 5 part C (a first start of call 5 at 01:48 was refused by the device, about 90 s).
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
  s t_core 240 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 120 $B/tests/ktune_tests "[gpu][demo]" -d yes
  grep -h "All tests\|test cases" $R/t_*.log
fi
