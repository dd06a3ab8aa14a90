// The conv2d problem as the conv template family sees it: forward 2-D convolution of NHWC
// activations x (N x H x W x C) with KRSC filters w (K x R x S x C) into an NHWC output
// y (N x P x Q x K), P = (H + 2 pad - dil (R - 1) - 1) / stride + 1 (Q likewise), with an
// optional per-channel bias and ReLU. Shape "NxHxWxCxKxRxS"; attributes dtype (f32 for
// conv2d_simt; f16, bf16 for conv2d_mma), stride, pad, dilation (both axes), bias, relu.
// Shared by the templates (problem checks, NVRTC defines, launch plans) and the workload
// (buffers, fp64 host reference, GPU reference, tolerance).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/problem.h"
#include "ktune/template.h"

namespace ktune::conv {

/// A checked conv2d problem in typed form.
struct ConvShape {
  std::int64_t N = 1, H = 1, W = 1, C = 1;  ///< input: images, height, width, channels
  std::int64_t K = 1, R = 1, S = 1;         ///< filters: output channels, height, width
  std::int64_t stride = 1;                  ///< step of the filter window (both axes)
  std::int64_t pad = 0;                     ///< zero padding on every side
  std::int64_t dilation = 1;                ///< spacing of filter taps
  DType dtype = DType::f32;                 ///< x, w, y and bias element type
  bool bias = false;                        ///< adds bias[k]
  bool relu = false;                        ///< max(0, .) after the bias

  /// Output height.
  std::int64_t P() const { return (H + 2 * pad - dilation * (R - 1) - 1) / stride + 1; }
  /// Output width.
  std::int64_t Q() const { return (W + 2 * pad - dilation * (S - 1) - 1) / stride + 1; }
  /// Output pixels N * P * Q: the implicit GEMM's M.
  std::int64_t pixels() const { return N * P() * Q(); }
  /// R * S * C: the implicit GEMM's reduced dimension.
  std::int64_t gemm_k() const { return R * S * C; }
  /// Multiply-adds of the convolution.
  double macs() const;
  /// Elements of x, w and y.
  std::int64_t x_elements() const { return N * H * W * C; }
  std::int64_t w_elements() const { return K * R * S * C; }  ///< filter elements
  std::int64_t y_elements() const { return pixels() * K; }   ///< output elements
  /// Channels after the small-C pre-pass (a multiple of 4).
  std::int64_t padded_channels() const { return (C + 3) / 4 * 4; }
  /// Elements (a power of two, at most 16 bytes' worth) by which C divides: the widest copy.
  int channel_alignment() const;
};

/// Attribute values each attribute accepts (first = default) for a template of `dtypes`.
std::map<std::string, std::vector<std::string>> conv_attr_domains(
    const std::vector<std::string>& dtypes);

/// Largest extent, tensor size or implicit-GEMM M (2^30): the kernels' 32-bit index and tile
/// arithmetic never reaches 2^31.
constexpr std::int64_t kMaxConvSize = std::int64_t{1} << 30;
/// Checks what attribute domains leave out (a non-empty output, sizes up to kMaxConvSize,
/// computed without overflow). Throws Error naming the problem and what is wrong.
void check_conv_geometry(const Problem& problem);

/// The typed form of a checked problem.
ConvShape conv_shape(const Problem& problem);

/// NVRTC defines of the problem (see templates/conv/conv_common.cuh).
std::vector<std::string> conv_problem_defines(const ConvShape& shape);

/// True when the small-C pre-pass (SMALL_C = 1) is offered: C is not a multiple of 4 and
/// at most 16, so padding costs little and turns 2-byte copies into 8/16-byte ones.
bool small_c_applies(const ConvShape& shape);

/// Geometry of a conv config that the launch plan needs.
struct ConvLaunchGeometry {
  std::string entry;        ///< main kernel
  std::int64_t bm = 0;      ///< block tile rows (output pixels)
  std::int64_t bn = 0;      ///< block tile columns (output channels)
  std::int64_t split_k = 1; ///< splits of R*S*C (grid.z)
  bool small_c = false;     ///< channel-padding pre-pass of x and w
  unsigned threads = 0;     ///< threads per block
  unsigned smem_bytes = 0;  ///< dynamic shared memory per block
};

/// Launch plan: [pad x, pad w], the main kernel over (tiles, 1, split_k), [split-K
/// reduction], with scratch buffers for the padded copies and the fp32 workspace. Throws
/// Error(invalid_argument) when the grid exceeds CUDA's limits.
LaunchPlan conv_launch_plan(const ConvShape& shape, const ConvLaunchGeometry& geometry,
                            const Device& device);

/// Buffers (x, w, y, [bias]), inputs (uniform in [-1, 1], never zero), fp64 host reference,
/// GPU reference above kDeviceReferenceCost multiply-adds, and tolerance.
std::unique_ptr<Workload> make_conv_workload(const ConvShape& shape);

/// Multiply-adds above which the workload offers its GPU reference (device_reference()).
constexpr double kDeviceReferenceCost = 1 << 26;

/// Double-precision direct convolution, in place: y = act(conv(x, w) + bias), rounded to
/// y's dtype. `bias` may be null when the shape has none.
void reference_conv(const ConvShape& shape, const HostBuffer& x, const HostBuffer& w,
                    const HostBuffer* bias, HostBuffer& y);

}  // namespace ktune::conv
