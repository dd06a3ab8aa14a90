# The device-call scripts of session 4, verbatim (run from the repository root on the GPU
# machine with build/gpu carried; PART selects the part of a script). Kept as the record of the
# exact commands; scripts/gpu-suite is the maintained entry point.

######## gpu-call.sh
#!/usr/bin/env bash
# scratch: device call 1 of session 4 (not committed)
set -u
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs
export KTUNE_WORKER=$PWD/build/gpu/ktune-worker
B=build/gpu; R=$OUT/results; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee $R/smi.txt
date -u | tee $R/date.txt
if [ "${PART:-A}" = A ]; then
t0=$(date +%s)
timeout 150 $B/tests/ktune_tests "[gpu][layernorm]" -d yes > $R/t_ln.log 2>&1; echo "ln tests rc=$? $(( $(date +%s) - t0 ))s"; tail -3 $R/t_ln.log
V="ROW_MODE=3,THREADS=256,TPR=32,VEC=8,RPG=12,STAGES=4,PREFETCH=0,PARAMS=2,CLUSTER=1,MIN_WARPS=32,CACHE_HINT=0"
V="$V;ROW_MODE=3,THREADS=256,TPR=32,VEC=8,RPG=16,STAGES=3,PREFETCH=0,PARAMS=2,CLUSTER=1,MIN_WARPS=32,CACHE_HINT=0"
V="$V;ROW_MODE=3,THREADS=128,TPR=32,VEC=8,RPG=24,STAGES=6,PREFETCH=0,PARAMS=2,CLUSTER=1,MIN_WARPS=16,CACHE_HINT=0"
V="$V;ROW_MODE=3,THREADS=512,TPR=32,VEC=8,RPG=8,STAGES=2,PREFETCH=0,PARAMS=2,CLUSTER=1,MIN_WARPS=32,CACHE_HINT=0"
V="$V;ROW_MODE=3,THREADS=256,TPR=32,VEC=4,RPG=16,STAGES=3,PREFETCH=0,PARAMS=2,CLUSTER=1,MIN_WARPS=16,CACHE_HINT=0"
V="$V;ROW_MODE=3,THREADS=128,TPR=32,VEC=4,RPG=24,STAGES=4,PREFETCH=0,PARAMS=2,CLUSTER=1,MIN_WARPS=16,CACHE_HINT=0"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=256,TPR=256,VEC=8,RPG=128,STAGES=4,PREFETCH=0,PARAMS=2,MIN_WARPS=16"
V="$V;ROW_MODE=3,CLUSTER=4,THREADS=512,TPR=512,VEC=8,RPG=128,STAGES=3,PREFETCH=0,PARAMS=2,MIN_WARPS=16"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=256,TPR=256,VEC=8,RPG=64,STAGES=6,PREFETCH=0,PARAMS=0,MIN_WARPS=16"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=512,TPR=512,VEC=4,RPG=128,STAGES=3,PREFETCH=0,PARAMS=2,MIN_WARPS=16"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=256,TPR=256,VEC=4,RPG=128,STAGES=2,PREFETCH=0,PARAMS=1,MIN_WARPS=16"
V="$V;ROW_MODE=3,CLUSTER=4,THREADS=1024,TPR=1024,VEC=4,RPG=128,STAGES=2,PREFETCH=0,PARAMS=0,MIN_WARPS=32"
t0=$(date +%s)
timeout 200 $B/benchmarks/gpu_memory_bound $R --families=layernorm --dtypes=f16,f32 --shapes=32768x1024,4096x65536 --trials=6 --seconds=3 --variants="$V" > $R/ln.log 2>&1; echo "ln bench rc=$? $(( $(date +%s) - t0 ))s"
grep -v "^\[" $R/ln.log | cut -c1-230
t0=$(date +%s)
timeout 240 $B/tests/ktune_tests "[gpu][wgmma]" -d yes > $R/t_wgmma.log 2>&1; echo "wgmma tests rc=$? $(( $(date +%s) - t0 ))s"; grep -E "FAILED|passed|failed|with expansion" $R/t_wgmma.log | head -20; tail -3 $R/t_wgmma.log
fi
if [ "${PART:-A}" = B ]; then
g() { local name=$1; shift; t0=$(date +%s); timeout ${GT:-150} $B/benchmarks/gpu_gemm $R/$name.json "$@" > $R/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s) - t0 ))s"; grep -v "^\[20" $R/$name.log | cut -c1-260; }
g mma4096 --dtypes=f16,bf16 --groups=square --shapes=4096x4096x4096 --budget=1 --variants="STAGES=4;BN=128;BN=128,BK=32,STAGES=5;BM=256,BN=128;GROUP_M=16"
g simt --dtypes=f32 --groups=square --shapes=4096x4096x4096,8192x8192x8192 --budget=1 --variants="BN=128,TM=16,TN=8;BN=128,TN=8,STAGES=2;BN=128,TN=8;STAGES=2;BM=256,BN=128,TM=16,TN=8;BK=16"
g wgmma4096 --template=gemm_wgmma --dtypes=f16,bf16 --groups=square --shapes=4096x4096x4096 --budget=1 --variants="STAGES=3;BN=128,STAGES=5;BM=256,BN=128;BK=128,STAGES=3;GROUP_M=16"
g skinny --dtypes=bf16,f16 --groups=skinny --shapes=1x8192x8192,8x8192x8192,16x8192x8192,32x8192x8192,64x8192x8192 --budget=1 --variants="BN=32,WN=16,SPLIT_K=1;BN=16,WN=16,SPLIT_K=1;BN=32,WN=16,SPLIT_K=2;BK=256,STAGES=3"
fi
tar czf $OUT/results.tgz -C $OUT results

######## gpu-call2.sh
#!/usr/bin/env bash
# scratch: session 4 device call 3 (65536 layernorm variants), not committed
set -u
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs
export KTUNE_WORKER=$PWD/build/gpu/ktune-worker
B=build/gpu; R=$OUT/results; mkdir -p $R
date -u | tee $R/date.txt
V="MIN_WARPS=32;MIN_WARPS=32,RPG=16;MIN_WARPS=32,RPG=6"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=256,TPR=256,VEC=8,RPG=64,STAGES=2,PREFETCH=0,PARAMS=0,MIN_WARPS=32"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=256,TPR=256,VEC=8,RPG=64,STAGES=3,PREFETCH=0,PARAMS=0,MIN_WARPS=24"
V="$V;CLUSTER=8,THREADS=512,TPR=512,VEC=4,RPG=12,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
V="$V;CLUSTER=8,THREADS=512,TPR=512,VEC=4,RPG=6,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
V="$V;ROW_MODE=3,CLUSTER=8,THREADS=512,TPR=512,VEC=4,RPG=64,STAGES=2,PREFETCH=0,PARAMS=0,MIN_WARPS=32"
V="$V;CLUSTER=4,THREADS=512,TPR=512,VEC=8,RPG=12,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
V="$V;CLUSTER=2,THREADS=1024,TPR=1024,VEC=8,RPG=12,PREFETCH=1,PARAMS=2,MIN_WARPS=32"
t0=$(date +%s)
timeout 200 $B/benchmarks/gpu_memory_bound $R --families=layernorm --dtypes=f16,f32 --shapes=4096x65536 --trials=1 --seconds=3 --variants="$V" > $R/ln65536.log 2>&1; echo "ln bench rc=$? $(( $(date +%s) - t0 ))s"
grep -v "^\[" $R/ln65536.log | cut -c1-200
which ncu nsys 2>&1 | head -2
tar czf $OUT/results.tgz -C $OUT results

######## gpu-call3.sh
#!/usr/bin/env bash
# scratch: session 4 device call 4 (wgmma/conv correctness, conv timing, gemm tests); not committed
set -u
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs
export KTUNE_WORKER=$PWD/build/gpu/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
B=build/gpu; R=$OUT/results; mkdir -p $R
date -u | tee $R/date.txt; git_rev=$(cat .bundle-rev 2>/dev/null); echo "bundle $git_rev" | tee -a $R/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee $R/smi.txt
s() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $R/$name.log 2>&1; echo "== $name rc=$? $(( $(date +%s) - t0 ))s"; tar czf $OUT/results.tgz -C $OUT results; }
g() { local name=$1; shift; local t0=$(date +%s); timeout ${GT:-150} $B/benchmarks/gpu_gemm $R/$name.json "$@" > $R/$name.log 2>&1; echo "== $name rc=$? $(( $(date +%s) - t0 ))s"; tar czf $OUT/results.tgz -C $OUT results; grep -v "^\[20" $R/$name.log | cut -c1-230; }

if [ "${PART:-C}" = C ]; then
s t_wgmma 240 $B/tests/ktune_tests "[gpu][wgmma]" -d yes; grep -E "FAILED|^All tests|test cases" $R/t_wgmma.log | head; grep -B3 -A12 "FAILED" $R/t_wgmma.log | head -60
s conv_f16 200 $B/benchmarks/gpu_conv $R/conv_wgmma_f16.json --dtypes=f16 --template=conv2d_wgmma --budget=12
grep -v "^\[20" $R/conv_f16.log | cut -c1-220
s torch_conv 120 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv_wgmma_f16.json $R/torch_conv_wgmma_f16.json
tail -30 $R/torch_conv.log | cut -c1-200
python3 benchmarks/plot_conv.py $R/conv_wgmma_f16.png $R/conv_wgmma_f16.json --torch $R/torch_conv_wgmma_f16.json > $R/conv_table.md 2>&1; tail -8 $R/conv_table.md
g gemm_square_16 --dtypes=f16,bf16 --groups=square --shapes=4096x4096x4096 --template=gemm_mma,gemm_wgmma --budget=3 --variants="PRODUCER=1;PRODUCER=2;BM=256,BN=128"
fi
if [ "${PART:-C}" = D ]; then
s t_gemm 220 $B/tests/ktune_tests "[gpu][gemm]~[wgmma]" -d yes; grep -E "FAILED|^All tests|test cases|passed" $R/t_gemm.log | tail -5; grep -B3 -A12 "FAILED" $R/t_gemm.log | head -40
s t_conv 150 $B/tests/ktune_tests "[gpu][conv]~[wgmma]" -d yes; grep -E "FAILED|^All tests|test cases|passed" $R/t_conv.log | tail -3
g gemm_skinny_16 --dtypes=f16,bf16 --groups=skinny --template=gemm_mma,gemm_wgmma --budget=2
g gemm_square_32 --dtypes=f32 --groups=square --budget=2
python3 benchmarks/plot_gemm.py $R/gemm.png $R/gemm_skinny_16.json $R/gemm_square_32.json --table > $R/gemm_table.md 2>&1; tail -12 $R/gemm_table.md
fi
tar czf $OUT/results.tgz -C $OUT results

######## gpu-call4.sh
#!/usr/bin/env bash
# scratch: session 4 device call 6 (gemm_mma [gpu] tests, two processes), not committed
set -u
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs
export KTUNE_WORKER=$PWD/build/gpu/ktune-worker
B=build/gpu; R=$OUT/results; mkdir -p $R
date -u | tee $R/date.txt; cat .bundle-rev | tee -a $R/date.txt
t0=$(date +%s)
timeout 270 $B/tests/ktune_tests "gemm_mma is correct for f16*" -d yes > $R/t_mma_odd.log 2>&1 &
p1=$!
timeout 270 $B/tests/ktune_tests "gemm_mma is correct with large tiles*" -d yes > $R/t_mma_large.log 2>&1 &
p2=$!
wait $p2; echo "large rc=$? $(( $(date +%s) - t0 ))s"; grep -E "FAILED|^All tests|test cases|assertions" $R/t_mma_large.log | tail -3
wait $p1; echo "odd rc=$? $(( $(date +%s) - t0 ))s"; grep -E "FAILED|^All tests|test cases|assertions" $R/t_mma_odd.log | tail -3
grep -B2 -A14 "FAILED" $R/t_mma_*.log | head -60
tar czf $OUT/results.tgz -C $OUT results

######## gpu-call5.sh
#!/usr/bin/env bash
# scratch: session 4 device call 7 (conv2d_wgmma second round, then the LLM group), not committed
set -u
export LD_LIBRARY_PATH=$PWD/build/gpu/bundle-libs
export KTUNE_WORKER=$PWD/build/gpu/ktune-worker
export KTUNE_CUDNN_LIB=/usr/lib/x86_64-linux-gnu/libcudnn.so.9
B=build/gpu; R=$OUT/results; mkdir -p $R
date -u | tee $R/date.txt; cat .bundle-rev | tee -a $R/date.txt
s() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $R/$name.log 2>&1; echo "== $name rc=$? $(( $(date +%s) - t0 ))s"; tar czf $OUT/results.tgz -C $OUT results; }
s t_wgmma 150 $B/tests/ktune_tests "[gpu][wgmma]" -d yes; grep -E "FAILED|^All tests|test cases|assertions" $R/t_wgmma.log | tail -3; grep -B3 -A12 "FAILED" $R/t_wgmma.log | head -40
s conv_f16 150 $B/benchmarks/gpu_conv $R/conv_wgmma_f16.json --dtypes=f16 --template=conv2d_wgmma --budget=${CONV_BUDGET:-12}
grep -v "^\[20" $R/conv_f16.log | cut -c1-200
s torch_conv 90 env PYTHONUNBUFFERED=1 python3 benchmarks/peers/torch_conv.py $R/conv_wgmma_f16.json $R/torch_conv_wgmma_f16.json
python3 benchmarks/plot_conv.py $R/conv_wgmma_f16.png $R/conv_wgmma_f16.json --torch $R/torch_conv_wgmma_f16.json > $R/conv_table.md 2>&1; tail -4 $R/conv_table.md
t0=$(date +%s); timeout ${LLM_T:-120} $B/benchmarks/gpu_gemm $R/gemm_llm_f16.json --dtypes=f16 --groups=llm --template=gemm_mma,gemm_wgmma --budget=1 > $R/gemm_llm_f16.log 2>&1; echo "== llm rc=$? $(( $(date +%s) - t0 ))s"; grep -v "^\[20" $R/gemm_llm_f16.log | cut -c1-200
tar czf $OUT/results.tgz -C $OUT results
