// The conv2d workload: buffers x, w, y and bias, random inputs in [-1, 1] that are never
// zero, the double-precision direct-convolution host reference, the GPU reference
// (templates/conv/conv2d_reference.cu, fp64 accumulation) offered above
// kDeviceReferenceCost multiply-adds, and the tolerance of each dtype.
#include <algorithm>
#include <cmath>

#include "conv_problem.h"
#include "host_dtype.h"
#include "ktune/error.h"

namespace ktune::conv {

namespace {

/// Threads per block of the GPU reference.
constexpr unsigned kReferenceThreads = 256;

/// All elements of a buffer as doubles.
std::vector<double> as_doubles(const HostBuffer& buffer) {
  std::vector<double> out(buffer.spec.elements);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = read_element(buffer, i);
  return out;
}

/// The conv2d workload of one problem.
class ConvWorkload final : public Workload {
 public:
  explicit ConvWorkload(ConvShape shape) : s_(shape) {}

  std::vector<BufferSpec> buffers() const override {
    std::vector<BufferSpec> list = {
        BufferSpec{"x", s_.dtype, static_cast<std::size_t>(s_.x_elements()), Role::input, 0},
        BufferSpec{"w", s_.dtype, static_cast<std::size_t>(s_.w_elements()), Role::input, 0},
        BufferSpec{"y", s_.dtype, static_cast<std::size_t>(s_.y_elements()), Role::output, 0}};
    if (s_.bias)
      list.push_back(BufferSpec{"bias", s_.dtype, static_cast<std::size_t>(s_.K), Role::input, 0});
    return list;
  }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      if (buffers[i].spec.role != Role::input) continue;
      FillRng rng(seed * 0x9e3779b97f4a7c15ull + i + 1);  // one stream per buffer
      fill_uniform_around(buffers[i], rng, 0, buffers[i].spec.elements, 0.0, 1.0);
    }
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    reference_conv(s_, buffers.at(0), buffers.at(1), s_.bias ? &buffers.at(3) : nullptr,
                   buffers.at(2));
  }

  Tolerance tolerance(const BufferSpec&) const override {
    // fp32 accumulation error grows like sqrt(R*S*C); the rounding of the output is a fixed
    // relative term. An indexing bug (wrong tap, channel or pixel) is O(1).
    const double growth =
        std::max(1.0, std::sqrt(static_cast<double>(s_.gemm_k()) / 1024.0));
    Tolerance t;
    switch (s_.dtype) {
      case DType::f16: t.rel_l2 = 2e-3 + 1e-4 * growth; break;
      case DType::bf16: t.rel_l2 = 1e-2 + 1e-4 * growth; break;
      default: t.rel_l2 = 1e-5 * growth; break;
    }
    return t;
  }

  double bytes() const override {
    const double e = static_cast<double>(dtype_size(s_.dtype));
    return (static_cast<double>(s_.x_elements()) + static_cast<double>(s_.w_elements()) +
            static_cast<double>(s_.y_elements()) + (s_.bias ? static_cast<double>(s_.K) : 0.0)) *
           e;
  }

  double flops() const override { return 2.0 * s_.macs(); }

  double reference_cost() const override { return s_.macs(); }

  std::optional<DeviceReference> device_reference() const override {
    if (reference_cost() <= kDeviceReferenceCost) return std::nullopt;
    DeviceReference ref;
    ref.source = embedded_source("conv/conv2d_reference.cu");
    const int dtype_code = s_.dtype == DType::f16 ? 1 : s_.dtype == DType::bf16 ? 2 : 0;
    ref.options = {"-DKT_DTYPE=" + std::to_string(dtype_code)};
    LaunchStep step;
    step.entry = "conv2d_reference";
    const std::int64_t blocks = (s_.y_elements() + kReferenceThreads - 1) / kReferenceThreads;
    step.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(blocks, 1 << 20));
    step.block[0] = kReferenceThreads;
    const std::size_t bias = s_.bias ? 3 : 2;
    step.args = {KernelArg::buf(0),          KernelArg::buf(1),          KernelArg::buf(2),
                 KernelArg::buf(bias),       KernelArg::i32(s_.N),       KernelArg::i32(s_.H),
                 KernelArg::i32(s_.W),       KernelArg::i32(s_.C),       KernelArg::i32(s_.K),
                 KernelArg::i32(s_.R),       KernelArg::i32(s_.S),       KernelArg::i32(s_.P()),
                 KernelArg::i32(s_.Q()),     KernelArg::i32(s_.stride),  KernelArg::i32(s_.pad),
                 KernelArg::i32(s_.dilation), KernelArg::i32(s_.bias ? 1 : 0),
                 KernelArg::i32(s_.relu ? 1 : 0)};
    ref.plan.steps.push_back(step);
    return ref;
  }

 private:
  ConvShape s_;
};

}  // namespace

std::unique_ptr<Workload> make_conv_workload(const ConvShape& shape) {
  return std::make_unique<ConvWorkload>(shape);
}

void reference_conv(const ConvShape& s, const HostBuffer& x, const HostBuffer& w,
                    const HostBuffer* bias, HostBuffer& y) {
  if (x.spec.elements < static_cast<std::size_t>(s.x_elements()) ||
      w.spec.elements < static_cast<std::size_t>(s.w_elements()) ||
      y.spec.elements < static_cast<std::size_t>(s.y_elements()) ||
      (s.bias && (!bias || bias->spec.elements < static_cast<std::size_t>(s.K))))
    throw Error(ErrorCode::invalid_argument, "reference_conv: buffers smaller than the shape");
  const std::vector<double> xd = as_doubles(x), wd = as_doubles(w);
  const std::vector<double> bd = s.bias ? as_doubles(*bias) : std::vector<double>(s.K, 0.0);
  const std::int64_t P = s.P(), Q = s.Q(), C = s.C;
  std::vector<double> acc(static_cast<std::size_t>(s.K));
  for (std::int64_t n = 0; n < s.N; ++n)
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t q = 0; q < Q; ++q) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::int64_t r = 0; r < s.R; ++r) {
          const std::int64_t h = p * s.stride - s.pad + r * s.dilation;
          if (h < 0 || h >= s.H) continue;
          for (std::int64_t t = 0; t < s.S; ++t) {
            const std::int64_t col = q * s.stride - s.pad + t * s.dilation;
            if (col < 0 || col >= s.W) continue;
            const double* xp = &xd[static_cast<std::size_t>(((n * s.H + h) * s.W + col) * C)];
            for (std::int64_t k = 0; k < s.K; ++k) {
              const double* wp = &wd[static_cast<std::size_t>(((k * s.R + r) * s.S + t) * C)];
              double sum = 0;
              for (std::int64_t c = 0; c < C; ++c) sum += xp[c] * wp[c];
              acc[static_cast<std::size_t>(k)] += sum;
            }
          }
        }
        const std::size_t out = static_cast<std::size_t>(((n * P + p) * Q + q) * s.K);
        for (std::int64_t k = 0; k < s.K; ++k) {
          double v = acc[static_cast<std::size_t>(k)] + bd[static_cast<std::size_t>(k)];
          if (s.relu) v = std::max(v, 0.0);
          write_element(y, out + static_cast<std::size_t>(k), v);
        }
      }
}

}  // namespace ktune::conv
