// The gemm workload: buffers A, B, C (read and updated: beta != 0) and bias, random inputs in
// [-1, 1] that are never zero, the double-precision host reference (blocked, converting
// panels on the fly), the GPU reference above kDeviceReferenceMinCost multiply-adds
// (gemm_reference.cc) and the tolerance of each precision.
#include <algorithm>
#include <cmath>
#include <optional>

#include "gemm_problem.h"
#include "host_dtype.h"
#include "ktune/error.h"

namespace ktune::gemm {

namespace {

/// Columns of C per reference block (a row of the block stays in L1).
constexpr std::size_t kRefColumns = 128;
/// k per reference block (a B panel of kRefDepth x kRefColumns doubles stays in L2).
constexpr std::size_t kRefDepth = 256;

/// Converts `count` consecutive elements of `buffer` from `first` to doubles.
void read_run(const HostBuffer& buffer, std::size_t first, std::size_t count, double* out) {
  if (first + count > buffer.spec.elements)
    throw Error(ErrorCode::internal, "gemm reference: read past buffer " + buffer.spec.name);
  switch (buffer.spec.dtype) {
    case DType::f32: {
      const float* p = buffer.as<float>() + first;
      for (std::size_t i = 0; i < count; ++i) out[i] = p[i];
      return;
    }
    case DType::f16: {
      const std::uint16_t* p = buffer.as<std::uint16_t>() + first;
      for (std::size_t i = 0; i < count; ++i) out[i] = half_bits_to_float(p[i]);
      return;
    }
    case DType::bf16: {
      const std::uint16_t* p = buffer.as<std::uint16_t>() + first;
      for (std::size_t i = 0; i < count; ++i) out[i] = bf16_bits_to_float(p[i]);
      return;
    }
    default:
      for (std::size_t i = 0; i < count; ++i) out[i] = read_element(buffer, first + i);
  }
}

/// The gemm workload of one problem.
class GemmWorkload final : public Workload {
 public:
  explicit GemmWorkload(GemmShape shape) : s_(shape) {}

  std::vector<BufferSpec> buffers() const override {
    const auto M = static_cast<std::size_t>(s_.M), N = static_cast<std::size_t>(s_.N),
               K = static_cast<std::size_t>(s_.K);
    std::vector<BufferSpec> list = {
        BufferSpec{"A", s_.input_dtype(), M * K, Role::input, 0},
        BufferSpec{"B", s_.input_dtype(), K * N, Role::input, 0},
        BufferSpec{"C", s_.output_dtype(), M * N, Role::inout, 0}};
    if (s_.bias) list.push_back(BufferSpec{"bias", s_.output_dtype(), N, Role::input, 0});
    return list;
  }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      FillRng rng(seed * 0x9e3779b97f4a7c15ull + i + 1);  // one stream per buffer
      fill_uniform_around(buffers[i], rng, 0, buffers[i].spec.elements, 0.0, 1.0);
    }
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    reference_gemm(s_, buffers.at(0), buffers.at(1), s_.bias ? &buffers.at(3) : nullptr, kAlpha,
                   kBeta, buffers.at(2));
  }

  Tolerance tolerance(const BufferSpec&) const override {
    // Accumulation error grows like sqrt(K) (fp32 sums); rounding of the output and, for
    // TF32, of the inputs is a fixed relative term. Any indexing bug is O(1).
    const double growth = std::max(1.0, std::sqrt(static_cast<double>(s_.K) / 1024.0));
    Tolerance t;
    switch (s_.precision) {
      case Precision::f32: t.rel_l2 = 1e-5 * growth; break;
      case Precision::tf32: t.rel_l2 = 2e-3 + 1e-5 * growth; break;
      case Precision::f16: t.rel_l2 = (s_.out_f32 ? 5e-4 : 2e-3) + 1e-4 * growth; break;
      case Precision::bf16: t.rel_l2 = (s_.out_f32 ? 5e-4 : 1e-2) + 1e-4 * growth; break;
    }
    return t;
  }

  double bytes() const override {
    const double in = static_cast<double>(dtype_size(s_.input_dtype()));
    const double out = static_cast<double>(dtype_size(s_.output_dtype()));
    const double M = static_cast<double>(s_.M), N = static_cast<double>(s_.N),
                 K = static_cast<double>(s_.K);
    return (M * K + K * N) * in + 2 * M * N * out + (s_.bias ? N * out : 0.0);
  }

  double flops() const override {
    return 2.0 * static_cast<double>(s_.M) * static_cast<double>(s_.N) *
           static_cast<double>(s_.K);
  }

  double reference_cost() const override {
    return static_cast<double>(s_.M) * static_cast<double>(s_.N) * static_cast<double>(s_.K);
  }

  std::optional<DeviceReference> device_reference() const override {
    if (reference_cost() <= kDeviceReferenceMinCost) return std::nullopt;
    return make_device_reference(s_);
  }

 private:
  GemmShape s_;
};

}  // namespace

std::unique_ptr<Workload> make_gemm_workload(const GemmShape& shape) {
  return std::make_unique<GemmWorkload>(shape);
}

void reference_gemm(const GemmShape& s, const HostBuffer& a, const HostBuffer& b,
                    const HostBuffer* bias, double alpha, double beta, HostBuffer& c) {
  const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N),
             K = static_cast<std::size_t>(s.K);
  if (a.spec.elements < M * K || b.spec.elements < K * N || c.spec.elements < M * N ||
      (s.bias && (!bias || bias->spec.elements < N)))
    throw Error(ErrorCode::invalid_argument, "reference_gemm: buffers smaller than the shape");
  std::vector<double> acc, a_panel(M * std::min(K, kRefDepth)), b_panel, run, c_row, bias_run;
  for (std::size_t n0 = 0; n0 < N; n0 += kRefColumns) {
    const std::size_t nb = std::min(kRefColumns, N - n0);
    acc.assign(M * nb, 0.0);
    for (std::size_t k0 = 0; k0 < K; k0 += kRefDepth) {
      const std::size_t kb = std::min(kRefDepth, K - k0);
      // b_panel[k][n] = op(B)(k0 + k, n0 + n)
      b_panel.assign(kb * nb, 0.0);
      if (!s.b_transposed) {
        for (std::size_t k = 0; k < kb; ++k) read_run(b, (k0 + k) * N + n0, nb, &b_panel[k * nb]);
      } else {
        run.resize(kb);
        for (std::size_t n = 0; n < nb; ++n) {
          read_run(b, (n0 + n) * K + k0, kb, run.data());
          for (std::size_t k = 0; k < kb; ++k) b_panel[k * nb + n] = run[k];
        }
      }
      // a_panel[m][k] = op(A)(m, k0 + k)
      if (!s.a_transposed) {
        for (std::size_t m = 0; m < M; ++m) read_run(a, m * K + k0, kb, &a_panel[m * kb]);
      } else {
        run.resize(M);
        for (std::size_t k = 0; k < kb; ++k) {
          read_run(a, (k0 + k) * M, M, run.data());
          for (std::size_t m = 0; m < M; ++m) a_panel[m * kb + k] = run[m];
        }
      }
      for (std::size_t m = 0; m < M; ++m) {
        double* row = &acc[m * nb];
        for (std::size_t k = 0; k < kb; ++k) {
          const double x = a_panel[m * kb + k];
          const double* brow = &b_panel[k * nb];
          for (std::size_t n = 0; n < nb; ++n) row[n] += x * brow[n];
        }
      }
    }
    bias_run.assign(nb, 0.0);
    if (s.bias) read_run(*bias, n0, nb, bias_run.data());
    c_row.resize(nb);
    for (std::size_t m = 0; m < M; ++m) {
      read_run(c, m * N + n0, nb, c_row.data());
      for (std::size_t n = 0; n < nb; ++n)
        write_element(c, m * N + n0 + n,
                      alpha * acc[m * nb + n] + beta * c_row[n] + bias_run[n]);
    }
  }
}

}  // namespace ktune::gemm
