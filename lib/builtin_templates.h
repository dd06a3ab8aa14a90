// Factories of the built-in kernel templates. Each template family adds its make_* line here;
// lib/builtin_templates.cc registers them all on first use of the template registry.
#pragma once

#include <memory>

#include "ktune/template.h"

namespace ktune {

/// The trivial "copy" template: y = alpha * x, vectorized (templates/copy).
std::shared_ptr<KernelTemplate> make_copy_template();

/// The test template "faults": deliberately broken candidates selected by MODE (templates/faults).
std::shared_ptr<KernelTemplate> make_faults_template();

/// The "elementwise" template: activations, add/mul, act(alpha*x + bias) (templates/elementwise).
std::shared_ptr<KernelTemplate> make_elementwise_template();
/// The "reduction" template: sum/max/mean over the last dimension (templates/reduction).
std::shared_ptr<KernelTemplate> make_reduction_template();
/// The "layernorm" template: LayerNorm and RMSNorm forward (templates/layernorm).
std::shared_ptr<KernelTemplate> make_layernorm_template();

/// The "gemm_simt" template: fp32 GEMM on CUDA cores (templates/gemm).
std::shared_ptr<KernelTemplate> make_gemm_simt_template();
/// The "gemm_mma" template: f16/bf16/tf32 GEMM on tensor cores with mma.sync (templates/gemm).
std::shared_ptr<KernelTemplate> make_gemm_mma_template();
/// The "gemm_wgmma" template: f16/bf16 GEMM (layout NT) with Hopper wgmma, sm_90a (templates/gemm).
std::shared_ptr<KernelTemplate> make_gemm_wgmma_template();

/// The "conv2d_simt" template: fp32 implicit-GEMM convolution on CUDA cores (templates/conv).
std::shared_ptr<KernelTemplate> make_conv2d_simt_template();
/// The "conv2d_mma" template: f16/bf16 implicit-GEMM convolution with mma.sync (templates/conv).
std::shared_ptr<KernelTemplate> make_conv2d_mma_template();
/// The "conv2d_wgmma" template: f16/bf16 implicit-GEMM convolution with Hopper wgmma, sm_90a (templates/conv).
std::shared_ptr<KernelTemplate> make_conv2d_wgmma_template();

/// Registers every built-in template (idempotent; called by the registry on first access).
void register_builtin_templates();

}  // namespace ktune
