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

# ---- calls 3-11 (PART=C, C, D, E, F, G, H, I, J; PART=C ran twice, before and after the 8 MiB case and the 16 MiB runner test), same header:
if [ $PART = C ]; then
  s residue 120 $B/benchmarks/gpu_l2_residue $R/l2_residue.json
  s t_runner 240 $B/tests/ktune_tests "[gpu][runner]" -d yes
  s t_faults 200 $B/tests/ktune_tests "[gpu][faults]" -d yes
fi
if [ $PART = D ]; then
  s t_core 320 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 250 $B/tests/ktune_tests "[gpu][demo]" -d yes
fi
if [ $PART = E ]; then
  s t_copy 120 $B/tests/ktune_tests "[gpu][copy]" -d yes -s
  s runner 300 $B/benchmarks/gpu_runner $R/gpu_runner.json
fi
if [ $PART = F ]; then
  for i in 1 2; do $B/ktune compile --template copy --shape 1000003 --samples 0 -j 1 > $R/compile$i.log 2>&1; cat $R/compile$i.log; done
  s t_buildcopy 60 $B/tests/ktune_tests "copy compiles for sm_90a and with f16 (CUDA headers found)"
  s t_copy 120 $B/tests/ktune_tests "[gpu][copy]"
  s t_runner 240 $B/tests/ktune_tests "[gpu][runner]" -d yes
  s runner 300 $B/benchmarks/gpu_runner $R/gpu_runner.json
fi
if [ $PART = G ]; then
  env | grep -i "cuda\|nvrtc" > $R/env.txt; ls -la ~ ~/.nv ~/.nv/* >> $R/env.txt 2>&1; du -sh ~/.nv/* >> $R/env.txt 2>&1
  for i in 1 2; do $B/ktune compile --template copy --shape 1000005 --samples 0 -j 1 2>&1 | tail -1; done
  for i in 1 2; do CUDA_CACHE_DISABLE=1 $B/ktune compile --template copy --shape 1000005 --samples 0 -j 1 2>&1 | tail -1; done
  $B/ktune compile --template copy --shape 1000005 --dtype f16 --samples 0 -j 1 2>&1 | tail -1
  CUDA_CACHE_DISABLE=1 $B/ktune compile --template copy --shape 1000005 --dtype f16 --samples 0 -j 1 2>&1 | tail -1
  $B/ktune compile --template copy --shape 1000005 --dtype f16 --samples 0 -j 1 2>&1 | tail -1
  find ~ -newer $R/date.txt -type f 2>/dev/null | head -20 > $R/new_files.txt; cat $R/new_files.txt
  pack
fi
if [ $PART = H ]; then
  s t_builder 120 $B/tests/ktune_tests "[builder]"
  s t_builder2 120 $B/tests/ktune_tests "[builder]"
  s t_copy 120 $B/tests/ktune_tests "[gpu][copy]"
  s t_runner 240 $B/tests/ktune_tests "[gpu][runner]" -d yes
  s runner 300 $B/benchmarks/gpu_runner $R/gpu_runner.json
fi
if [ $PART = I ]; then
  s bench_compile 120 $B/benchmarks/bench_compile --benchmark_filter=Cold
  s runner 300 $B/benchmarks/gpu_runner $R/gpu_runner.json
  s t_runner 240 $B/tests/ktune_tests "[gpu][runner],[gpu][faults]" -d yes
fi
if [ $PART = J ]; then
  i=0; for k in 8 2 3 4 6 8 4; do i=$((i+1)); s runner_${i}_k$k 120 $B/benchmarks/gpu_runner $R/gpu_runner_${i}_k$k.json skip 1048576 $k; done
fi

# ---- call 12 (PART=K), same header:
if [ $PART = K ]; then
  s t_core 330 $B/tests/ktune_tests "[gpu]~[gemm]~[conv]~[demo]" -d yes
  s t_demo 200 $B/tests/ktune_tests "[gpu][demo]" -d yes
fi

# ---- call 13 (PART=L), same header:
if [ $PART = L ]; then
  s bench_compile 100 $B/benchmarks/bench_compile --benchmark_filter=Cold
  s runner 150 $B/benchmarks/gpu_runner $R/gpu_runner.json
  s t_runner 60 $B/tests/ktune_tests "[gpu][runner]"
fi
