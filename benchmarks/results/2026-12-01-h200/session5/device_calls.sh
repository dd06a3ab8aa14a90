# The device-call scripts of session 5, verbatim (run from the repository root on the GPU
# machine with build/gpu carried). Call 1: PART=A; call 2: PART=B F32T=160; call 3: PART=C BFT=250;
# call 4 was the inline command at the end.

######## gpu-call.sh
#!/usr/bin/env bash
# scratch: session 5 device call 1 (ncu profiles; GEMM suite part 1), not committed
set -u
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs
export KTUNE_WORKER=$PWD/build/gpu/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
B=build/gpu; R=$OUT/results; mkdir -p $R
NCU=/usr/local/cuda/bin/ncu
date -u | tee $R/date.txt; echo "bundle $(cat .bundle-rev 2>/dev/null)" | tee -a $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee $R/smi.txt
pack() { tar czf $OUT/results.tgz -C $OUT results; }
s() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $R/$name.log 2>&1; echo "== $name rc=$? $(( $(date +%s) - t0 ))s"; pack; }
g() { local name=$1; shift; local t0=$(date +%s); timeout ${GT:-150} $B/benchmarks/gpu_gemm $R/$name.json "$@" > $R/$name.log 2>&1; echo "== $name rc=$? $(( $(date +%s) - t0 ))s"; pack; grep -v "^\[20" $R/$name.log | cut -c1-200; }
if [ "${PART:-A}" = A ]; then
LNSEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
s ncu_ln65536_f16 60 $NCU --target-processes all -k regex:layernorm_fwd -c 1 $LNSEC --log-file $R/ncu_ln65536_f16.txt $B/benchmarks/gpu_memory_bound $R/mb_ln --families=layernorm --norms=layernorm --dtypes=f16 --shapes=4096x65536 --trials=1 --seconds=2
s ncu_rms65536_f16 60 $NCU --target-processes all -k regex:layernorm_fwd -c 1 $LNSEC --log-file $R/ncu_rms65536_f16.txt $B/benchmarks/gpu_memory_bound $R/mb_rms --families=layernorm --norms=rmsnorm --dtypes=f16 --shapes=4096x65536 --trials=1 --seconds=2
s ncu_ln1024_f16 60 $NCU --target-processes all -k regex:layernorm_fwd -c 1 $LNSEC --log-file $R/ncu_ln1024_f16.txt $B/benchmarks/gpu_memory_bound $R/mb_ln1024 --families=layernorm --norms=layernorm --dtypes=f16 --shapes=32768x1024 --trials=1 --seconds=2
s ncu_mma4096_f16 90 $NCU --target-processes all -k regex:gemm_mma -c 1 $LNSEC --section ComputeWorkloadAnalysis --section InstructionStats --log-file $R/ncu_mma4096_f16.txt $B/benchmarks/gpu_gemm $R/ncu_mma.json --template=gemm_mma --dtypes=f16 --groups=square --shapes=4096x4096x4096 --budget=1
for f in $R/ncu_*.txt; do echo "## $f"; grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Issue Slots Busy|No Eligible|Compute \(SM\)|Block Limit" $f | head -30; done
GT=330 g sq_f16_bf16 --dtypes=f16,bf16 --groups=square,kheavy,odd --template=gemm_mma,gemm_wgmma --budget=2
GT=150 g rest_f32 --dtypes=f32 --groups=skinny,kheavy,odd --budget=2
fi
if [ "${PART:-A}" = B ]; then
GT=420 g llm_f16_bf16 --dtypes=f16,bf16 --groups=llm --template=gemm_mma,gemm_wgmma --budget=2
GT=${F32T:-150} g llm_f32 --dtypes=f32 --groups=llm --budget=2
fi
if [ "${PART:-A}" = C ]; then
GT=200 g llm_f16_rest --dtypes=f16 --groups=llm --shapes=8192x11008x11008,8192x11008x14336,8192x14336x4096,8192x14336x11008,8192x14336x14336 --template=gemm_mma,gemm_wgmma --budget=1
GT=130 g llm_f32_rest --dtypes=f32 --groups=llm --shapes=8192x4096x11008,8192x4096x14336,8192x11008x4096,8192x11008x11008,8192x11008x14336,8192x14336x4096,8192x14336x11008,8192x14336x14336 --budget=1
GT=${BFT:-240} g llm_bf16 --dtypes=bf16 --groups=llm --template=gemm_mma,gemm_wgmma --budget=1
fi
pack

######## call 4 (inline)
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs KTUNE_WORKER=$PWD/build/gpu/ktune-worker; R=$OUT/results; mkdir -p $R; date -u > $R/date.txt; timeout 235 build/gpu/benchmarks/gpu_gemm $R/llm_bf16_rest.json --dtypes=bf16 --groups=llm --shapes=4096x14336x14336,8192x4096x4096,8192x4096x11008,8192x4096x14336,8192x11008x4096,8192x11008x11008,8192x11008x14336,8192x14336x4096,8192x14336x11008,8192x14336x14336 --template=gemm_mma,gemm_wgmma --budget=1 > $R/llm_bf16_rest.log 2>&1; echo rc=$?; grep -v "^\[20" $R/llm_bf16_rest.log | cut -c1-200; grep "^\[20" $R/llm_bf16_rest.log | cut -c1-120 | head -30
