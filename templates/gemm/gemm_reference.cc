// The GPU reference of the gemm workloads: templates/gemm/gemm_reference.cu (fp64 accumulation,
// no code shared with the tuned kernels) with the defines of a shape's dtypes, layouts and
// bias, and its one-step launch plan over the workload's buffers (A, B, C, bias).
#include <limits>

#include "gemm_problem.h"
#include "ktune/error.h"

namespace ktune::gemm {

namespace {

/// Rows and columns of C per reference block (kTile in gemm_reference.cu).
constexpr std::int64_t kReferenceTile = 64;
/// Threads per reference block.
constexpr unsigned kReferenceThreads = 256;

/// REF_IN / REF_OUT code of an element type: 0 f32, 1 f16, 2 bf16.
int reference_type_code(DType dtype) {
  switch (dtype) {
    case DType::f32: return 0;
    case DType::f16: return 1;
    case DType::bf16: return 2;
    default:
      throw Error(ErrorCode::internal, std::string("gemm device reference: no element type ") +
                                           to_string(dtype));
  }
}

}  // namespace

DeviceReference make_device_reference(const GemmShape& s) {
  const std::int64_t tiles = ((s.M + kReferenceTile - 1) / kReferenceTile) *
                             ((s.N + kReferenceTile - 1) / kReferenceTile);
  if (tiles > std::numeric_limits<std::int32_t>::max())
    throw Error(ErrorCode::invalid_argument,
                "gemm device reference " + std::to_string(s.M) + "x" + std::to_string(s.N) +
                    ": " + std::to_string(tiles) + " tiles exceed the CUDA grid limit");
  DeviceReference ref;
  ref.source = embedded_source("gemm/gemm_reference.cu");
  ref.options = {"-DREF_IN=" + std::to_string(reference_type_code(s.input_dtype())),
                 "-DREF_OUT=" + std::to_string(reference_type_code(s.output_dtype())),
                 std::string("-DREF_A_T=") + (s.a_transposed ? "1" : "0"),
                 std::string("-DREF_B_T=") + (s.b_transposed ? "1" : "0"),
                 std::string("-DREF_BIAS=") + (s.bias ? "1" : "0")};
  LaunchStep step;
  step.entry = "gemm_reference";
  step.grid[0] = static_cast<unsigned>(tiles);
  step.block[0] = kReferenceThreads;
  const std::size_t c = 2, bias = s.bias ? 3 : c;  // without bias C stands in, unused
  step.args = {KernelArg::buf(0), KernelArg::buf(1), KernelArg::buf(c), KernelArg::buf(bias),
               KernelArg::i32(s.M), KernelArg::i32(s.N), KernelArg::i32(s.K),
               KernelArg::f64(kAlpha), KernelArg::f64(kBeta)};
  ref.plan.steps.push_back(step);
  return ref;
}

}  // namespace ktune::gemm
