// The conv2d problem in typed form, its attribute domains and checks, its NVRTC defines and
// the launch plan shared by the conv templates (small-C pre-pass, main kernel, split-K
// reduction).
#include "conv_problem.h"

#include <algorithm>
#include <limits>

#include "ktune/error.h"
#include "templates/gemm/gemm_problem.h"

namespace ktune::conv {

namespace {

/// Threads per block of the helper kernels (pad, split-K reduction).
constexpr unsigned kHelperThreads = 256;

/// "lo".."hi" as strings.
std::vector<std::string> integer_strings(int lo, int hi) {
  std::vector<std::string> out;
  for (int v = lo; v <= hi; ++v) out.push_back(std::to_string(v));
  return out;
}

/// A grid-stride helper step over `elements` with the given arguments.
LaunchStep helper_step(const std::string& entry, std::int64_t elements,
                       std::vector<KernelArg> args, const Device& device) {
  LaunchStep step;
  step.entry = entry;
  step.grid[0] = gemm::grid_stride_blocks(elements, kHelperThreads, device);
  step.block[0] = kHelperThreads;
  step.args = std::move(args);
  return step;
}

}  // namespace

double ConvShape::macs() const {
  return static_cast<double>(pixels()) * static_cast<double>(K) * static_cast<double>(gemm_k());
}

int ConvShape::channel_alignment() const {
  int align = static_cast<int>(16 / dtype_size(dtype));
  while (align > 1 && C % align != 0) align /= 2;
  return align;
}

std::map<std::string, std::vector<std::string>> conv_attr_domains(
    const std::vector<std::string>& dtypes) {
  return {{"dtype", dtypes},
          {"stride", integer_strings(1, 4)},
          {"pad", integer_strings(0, 8)},
          {"dilation", integer_strings(1, 4)},
          {"bias", {"0", "1"}},
          {"relu", {"0", "1"}}};
}

void check_conv_geometry(const Problem& problem) {
  const ConvShape s = conv_shape(problem);
  const std::string where = "problem " + problem.key() + ": ";
  // Each extent first, so that the sizes below are computed without overflowing.
  for (const auto& [name, value] : problem.dims)
    if (value > kMaxConvSize)
      throw Error(ErrorCode::invalid_argument, where + name + " = " + std::to_string(value) +
                                                   " must be <= 2^30 (32-bit kernel indices)");
  if (s.H + 2 * s.pad < s.dilation * (s.R - 1) + 1 || s.W + 2 * s.pad < s.dilation * (s.S - 1) + 1)
    throw Error(ErrorCode::invalid_argument,
                where + "the dilated " + std::to_string(s.R) + "x" + std::to_string(s.S) +
                    " filter is larger than the padded " + std::to_string(s.H) + "x" +
                    std::to_string(s.W) + " input (empty output)");
  // The kernels index in 32-bit ints and add tile sizes to the implicit GEMM's M = N*P*Q:
  // sizes up to 2^30 keep every such sum below 2^31. Products of extents <= 2^30 fit 128 bits.
  using Wide = __int128;
  const std::pair<const char*, Wide> sizes[] = {
      {"N*H*W*C", Wide{s.N} * s.H * s.W * s.C},
      {"K*R*S*C", Wide{s.K} * s.R * s.S * s.C},
      {"N*P*Q", Wide{s.N} * s.P() * s.Q()},
      {"N*P*Q*K", Wide{s.N} * s.P() * s.Q() * s.K},
      {"padded N*H*W*C", Wide{s.N} * s.H * s.W * s.padded_channels()}};
  for (const auto& [what, value] : sizes)
    if (value > kMaxConvSize)
      throw Error(ErrorCode::invalid_argument,
                  where + what + " = " +
                      (value <= std::numeric_limits<std::int64_t>::max()
                           ? std::to_string(static_cast<std::int64_t>(value))
                           : std::string("more than 2^63")) +
                      " must be <= 2^30 (32-bit kernel indices)");
}

ConvShape conv_shape(const Problem& problem) {
  ConvShape s;
  s.N = problem.dim("N");
  s.H = problem.dim("H");
  s.W = problem.dim("W");
  s.C = problem.dim("C");
  s.K = problem.dim("K");
  s.R = problem.dim("R");
  s.S = problem.dim("S");
  s.stride = std::stoll(problem.attr("stride", "1"));
  s.pad = std::stoll(problem.attr("pad", "0"));
  s.dilation = std::stoll(problem.attr("dilation", "1"));
  const std::string dtype = problem.attr("dtype", "f32");
  if (dtype != "f32" && dtype != "f16" && dtype != "bf16")
    throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": conv2d dtype \"" +
                                                 dtype + "\" is not one of f32, f16, bf16");
  s.dtype = dtype_from_string(dtype);
  s.bias = problem.attr("bias", "0") == "1";
  s.relu = problem.attr("relu", "0") == "1";
  return s;
}

std::vector<std::string> conv_problem_defines(const ConvShape& s) {
  const int dtype_code = s.dtype == DType::f16 ? 1 : s.dtype == DType::bf16 ? 2 : 0;
  return {"-DKT_DTYPE=" + std::to_string(dtype_code),
          "-DKT_C=" + std::to_string(s.C),
          "-DKT_R=" + std::to_string(s.R),
          "-DKT_S=" + std::to_string(s.S),
          "-DKT_STRIDE=" + std::to_string(s.stride),
          "-DKT_PAD=" + std::to_string(s.pad),
          "-DKT_DIL=" + std::to_string(s.dilation),
          std::string("-DKT_BIAS=") + (s.bias ? "1" : "0"),
          std::string("-DKT_RELU=") + (s.relu ? "1" : "0")};
}

bool small_c_applies(const ConvShape& s) { return s.C % 4 != 0 && s.C <= 16; }

LaunchPlan conv_launch_plan(const ConvShape& s, const ConvLaunchGeometry& g,
                            const Device& device) {
  const std::int64_t tiles = ((s.pixels() + g.bm - 1) / g.bm) * ((s.K + g.bn - 1) / g.bn);
  if (tiles > std::numeric_limits<std::int32_t>::max() || g.split_k > 65535)
    throw Error(ErrorCode::invalid_argument,
                "conv2d: " + std::to_string(tiles) + " tiles x " + std::to_string(g.split_k) +
                    " splits exceed the CUDA grid limits");
  // Workload buffers: x 0, w 1, y 2, [bias 3]; scratch follows in the order added below.
  const std::size_t y = 2;
  const std::size_t bias = s.bias ? 3 : y;  // unused by the kernels without bias
  std::size_t next_scratch = s.bias ? 4 : 3;
  LaunchPlan plan;
  std::size_t x_index = 0, w_index = 1;
  if (g.small_c) {
    const std::int64_t cp = s.padded_channels();
    x_index = next_scratch++;
    w_index = next_scratch++;
    plan.scratch.push_back(BufferSpec{"x_padded", s.dtype,
                                      static_cast<std::size_t>(s.N * s.H * s.W * cp),
                                      Role::scratch, 0});
    plan.scratch.push_back(BufferSpec{"w_padded", s.dtype,
                                      static_cast<std::size_t>(s.K * s.R * s.S * cp),
                                      Role::scratch, 0});
    const std::int64_t x_rows = s.N * s.H * s.W, w_rows = s.K * s.R * s.S;
    plan.steps.push_back(helper_step("conv2d_pad_channels", x_rows * cp,
                                     {KernelArg::buf(0), KernelArg::buf(x_index),
                                      KernelArg::i64(x_rows)},
                                     device));
    plan.steps.push_back(helper_step("conv2d_pad_channels", w_rows * cp,
                                     {KernelArg::buf(1), KernelArg::buf(w_index),
                                      KernelArg::i64(w_rows)},
                                     device));
  }
  const std::size_t workspace = g.split_k > 1 ? next_scratch : y;
  if (g.split_k > 1)
    plan.scratch.push_back(BufferSpec{"workspace", DType::f32,
                                      static_cast<std::size_t>(g.split_k * s.y_elements()),
                                      Role::scratch, 0});
  LaunchStep main;
  main.entry = g.entry;
  main.grid[0] = static_cast<unsigned>(tiles);
  main.grid[2] = static_cast<unsigned>(g.split_k);
  main.block[0] = g.threads;
  main.dynamic_smem = g.smem_bytes;
  main.args = {KernelArg::buf(x_index), KernelArg::buf(w_index), KernelArg::buf(y),
               KernelArg::buf(bias),    KernelArg::buf(workspace), KernelArg::i32(s.N),
               KernelArg::i32(s.H),     KernelArg::i32(s.W),       KernelArg::i32(s.K),
               KernelArg::i32(s.P()),   KernelArg::i32(s.Q())};
  plan.steps.push_back(main);
  if (g.split_k > 1)
    plan.steps.push_back(helper_step("conv2d_splitk_reduce", s.y_elements(),
                                     {KernelArg::buf(workspace), KernelArg::buf(y),
                                      KernelArg::buf(bias), KernelArg::i32(s.pixels()),
                                      KernelArg::i32(s.K), KernelArg::i32(g.split_k)},
                                     device));
  return plan;
}

}  // namespace ktune::conv
