# The device calls of session 25, as run (bundle: scripts/gpu-bundle at 6d9fc46, carried as build/gpu).
# call 1
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite info tests-core tests-demo demo deploy-readonly membound-norms
# call 2 (issue 6, f16 norms: gpu_memory_bound --families=layernorm --dtypes=f16 --copy-kernel-trials=12, then torch)
scripts/gpu-suite info membound-c
# call 3 (issue 6, elementwise + reduction, then f32 norms, each followed by torch on the same shapes)
scripts/gpu-suite info membound-a membound-b
# chart and table, on the development machine
/usr/bin/python3 benchmarks/plot_memory_bound.py memory_bound.png call3/memory_bound_elementwise_reduction.json \
  call3/memory_bound_layernorm_f32.json call2/memory_bound_layernorm_f16.json \
  --torch call3/torch_memory_bound_elementwise_reduction.json call3/torch_memory_bound_layernorm_f32.json \
  call2/torch_memory_bound_layernorm_f16.json --table > memory_bound_table.md
# call 4 (bundle f585edb)
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite info tests-core tests-demo demo deploy-readonly membound-norms
# call 5 (bundle f585edb)
scripts/gpu-suite info membound-norms
# call 6 (bundle d0f9fd6)
KTUNE_PHASE_TIMEOUT=300 scripts/gpu-suite info tests-core tests-demo demo deploy-readonly membound-norms
# call 7 (bundle 1f17443)
KTUNE_PHASE_TIMEOUT=200 scripts/gpu-suite info tests-demo demo deploy-readonly
# call 8 (bundle 1f17443)
scripts/gpu-suite info membound-norms
