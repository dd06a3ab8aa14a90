# Session 13 device calls, verbatim (run as `PART=A bash gpu-call.sh` from the repository root on the GPU machine; each call carried build/gpu without its examples folder).
set -u; B=build/gpu; R=$OUT/results; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/$B/bundle-libs KTUNE_WORKER=$PWD/$B/ktune-worker
cat $B/REVISION > $R/date.txt; date -u >> $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/date.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { n=$1 l=$2; shift 2; t0=$(date +%s); timeout $l "$@" > $R/$n.log 2>&1; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; tail -n 3 $R/$n.log; pack; }
if [ $PART = D ]; then
  V="DIAG=6;DIAG=0;DIAG=2;DIAG=7;DIAG=8;DIAG=6;DIAG=0;DIAG=2;DIAG=7;DIAG=8;DIAG=6;DIAG=0"
  s zfill10 200 $B/benchmarks/gpu_gemm $R/zfill10.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V" --loop-ms=10
  s zfill 150 $B/benchmarks/gpu_gemm $R/zfill.json --dtypes=f16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V"
fi
if [ $PART = E ]; then
  V="DIAG=9;DIAG=0;DIAG=10;DIAG=11;DIAG=9;DIAG=0;DIAG=10;DIAG=11;DIAG=9;DIAG=0;DIAG=10;DIAG=11"
  s place10 200 $B/benchmarks/gpu_gemm $R/place10.json --dtypes=f16,bf16 --groups=square \
    --shapes=4096x4096x4096 --template=gemm_mma --budget=1 --variants="$V" --loop-ms=10
fi
# ---- call 6 (PART=F), same header:
if [ $PART = F ]; then
  s residue 120 $B/benchmarks/gpu_l2_residue $R/l2_residue.json
  s runner 150 $B/benchmarks/gpu_runner $R/gpu_runner.json
  s t_runner 200 $B/tests/ktune_tests "[gpu][runner]" -d yes
  s t_demo 200 $B/tests/ktune_tests "[gpu][demo]" -d yes
fi
