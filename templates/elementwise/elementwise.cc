// The "elementwise" template (templates/elementwise/elementwise.cu): activations (relu, gelu
// tanh / erf forms, silu), binary add / mul, and the fused y = act(alpha * x + bias[col]) over
// a row-major [rows, cols] tensor in f32 / f16 / bf16 with fp32 math. Problem shape convention:
// "rows x cols"; the per-column bias of the bias_* functions has cols elements; a 1-D tensor
// of n elements is "1 x n" (the other functions only see rows * cols elements).
#include <algorithm>
#include <cmath>

#include "builtin_templates.h"
#include "host_dtype.h"
#include "ktune/error.h"
#include "templates/common/memory_bound_support.h"

namespace ktune {

namespace {

using memory_bound::ceil_div;

/// The scale alpha of the fused bias functions (exact in every dtype).
constexpr double kAlpha = 0.75;

/// What a "fn" attribute computes: kernel kind (KT_KIND) and activation (KT_ACT).
struct ElementwiseFn {
  int kind;  ///< 0 act(x), 1 x + z, 2 x * z, 3 act(alpha * x + bias[col])
  int act;   ///< 0 relu, 1 gelu tanh, 2 gelu erf, 3 silu, 4 identity
};

/// The "fn" attribute values with their meaning, default first.
const std::vector<std::pair<std::string, ElementwiseFn>>& functions() {
  static const std::vector<std::pair<std::string, ElementwiseFn>> list = {
      {"relu", {0, 0}},       {"gelu_tanh", {0, 1}},      {"gelu_erf", {0, 2}},
      {"silu", {0, 3}},       {"add", {1, 4}},            {"mul", {2, 4}},
      {"bias_relu", {3, 0}},  {"bias_gelu_tanh", {3, 1}}, {"bias_gelu_erf", {3, 2}},
      {"bias_silu", {3, 3}},  {"bias_identity", {3, 4}}};
  return list;
}

/// The function of a (checked) problem.
ElementwiseFn function_of(const Problem& problem) {
  const std::string fn = problem.attr("fn", "relu");
  for (const auto& [name, f] : functions())
    if (name == fn) return f;
  throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": unknown fn " + fn);
}

/// The activation in double precision (the reference).
double activation(int act, double v) {
  switch (act) {
    case 0: return v > 0 ? v : 0.0;
    case 1: return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case 2: return 0.5 * v * (1.0 + std::erf(v * 0.7071067811865476));
    case 3: return v / (1.0 + std::exp(-v));
    default: return v;
  }
}

/// Buffers: x, then z (add / mul) or bias (bias_*), then y.
class ElementwiseWorkload final : public Workload {
 public:
  ElementwiseWorkload(std::int64_t rows, std::int64_t cols, DType dtype, ElementwiseFn fn)
      : rows_(rows), cols_(cols), dtype_(dtype), fn_(fn) {}

  std::vector<BufferSpec> buffers() const override {
    const auto n = static_cast<std::size_t>(rows_ * cols_);
    std::vector<BufferSpec> list = {{"x", dtype_, n, Role::input, 0}};
    if (fn_.kind == 1 || fn_.kind == 2) list.push_back({"z", dtype_, n, Role::input, 0});
    if (fn_.kind == 3) list.push_back({"bias", dtype_, static_cast<std::size_t>(cols_), Role::input, 0});
    list.push_back({"y", dtype_, n, Role::output, 0});
    return list;
  }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    check(buffers);
    // Magnitudes from 2^-10 to 2^7 (products stay inside f16's range), never zero.
    fill_wide_magnitude(buffers[0], seed, -10, 6);
    if (buffers.size() == 3) fill_wide_magnitude(buffers[1], seed ^ 0x5bd1e995u, -6, 2);
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    check(buffers);
    HostBuffer& y = buffers.back();
    const auto n = static_cast<std::size_t>(rows_ * cols_);
    for (std::size_t e = 0; e < n; ++e) {
      const double x = read_element(buffers[0], e);
      double r;
      switch (fn_.kind) {
        case 1: r = x + read_element(buffers[1], e); break;
        case 2: r = x * read_element(buffers[1], e); break;
        case 3:
          r = activation(fn_.act, kAlpha * x + read_element(buffers[1], e % static_cast<std::size_t>(cols_)));
          break;
        default: r = activation(fn_.act, x); break;
      }
      write_element(y, e, r);
    }
  }

  Tolerance tolerance(const BufferSpec&) const override {
    // Per element: the fp32 math (cancellation in alpha*x + b and 1 + tanh near -1 costs up to
    // a few fp32 ulps of operands <= 2^8) plus the output rounding (two dtype ulps).
    const double unit = dtype_ == DType::f32 ? 0x1.0p-23 : (dtype_ == DType::f16 ? 0x1.0p-10 : 0x1.0p-7);
    Tolerance t;
    t.rel_l2 = 2 * unit;
    t.max_abs = 0x1.0p-24 * 1024;
    t.rel_elem = 2 * unit + 1e-6;
    return t;
  }

  double bytes() const override {
    const double s = static_cast<double>(dtype_size(dtype_));
    const double n = static_cast<double>(rows_) * static_cast<double>(cols_);
    const double inputs = (fn_.kind == 1 || fn_.kind == 2) ? 2.0 : 1.0;
    return (inputs + 1.0) * n * s + (fn_.kind == 3 ? static_cast<double>(cols_) * s : 0.0);
  }

  double reference_cost() const override {
    return static_cast<double>(rows_) * static_cast<double>(cols_);
  }

  /// Above kDeviceReferenceCost: ref_elementwise (double math) over the same buffers.
  std::optional<DeviceReference> device_reference() const override {
    if (reference_cost() <= memory_bound::kDeviceReferenceCost) return std::nullopt;
    DeviceReference ref = memory_bound::reference_program(
        dtype_, {"-DREF_KIND=" + std::to_string(fn_.kind), "-DREF_ACT=" + std::to_string(fn_.act)});
    const std::int64_t n = rows_ * cols_;
    const bool binary = fn_.kind == 1 || fn_.kind == 2;
    const KernelArg none = KernelArg::i64(0);
    const std::int64_t grid = std::min<std::int64_t>(
        ceil_div(n, memory_bound::kReferenceThreads), 65536);
    ref.plan.steps.push_back(memory_bound::reference_step(
        "ref_elementwise", grid, 1,
        {KernelArg::buf(0), binary ? KernelArg::buf(1) : none,
         fn_.kind == 3 ? KernelArg::buf(1) : none, KernelArg::buf(buffers().size() - 1),
         KernelArg::i64(n), KernelArg::i64(cols_), KernelArg::f64(kAlpha)}));
    return ref;
  }

 private:
  void check(const std::vector<HostBuffer>& host) const {
    memory_bound::check_host_buffers(*this, host, "elementwise");
  }

  std::int64_t rows_, cols_;
  DType dtype_;
  ElementwiseFn fn_;
};

/// Vector tiles of one block: THREADS * ITEMS vectors.
std::int64_t tiles_needed(std::int64_t n, const Config& c) {
  return std::max<std::int64_t>(1, ceil_div(n / c["VEC"], c["THREADS"] * c["ITEMS"]));
}

class ElementwiseTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "elementwise"; }
  std::string op() const override { return "elementwise"; }
  std::string description() const override {
    return "activations, add/mul and act(alpha*x + bias[col]) over rows x cols; f32/f16/bf16";
  }
  const std::string& source() const override {
    return embedded_source("elementwise/elementwise.cu");
  }
  std::vector<std::string> dim_names() const override { return {"rows", "cols"}; }
  void check_problem(const Problem& problem) const override {
    KernelTemplate::check_problem(problem);
    memory_bound::check_element_count(problem);
  }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    std::vector<std::string> fns;
    for (const auto& [name, f] : functions()) fns.push_back(name);
    return {{"dtype", memory_bound::io_dtypes()}, {"fn", fns}};
  }
  Problem example_problem() const override {
    return Problem{"elementwise", {{"rows", 1}, {"cols", std::int64_t{1} << 24}},
                   {{"dtype", "f32"}, {"fn", "relu"}}};
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const DType dtype = memory_bound::io_dtype(problem);
    const auto widths = memory_bound::vector_widths(dtype);
    const int inputs = function_of(problem).kind == 1 || function_of(problem).kind == 2 ? 2 : 1;
    // Default: 16-byte vectors, 256 threads, one block per tile; 16-bit types take two
    // vectors per thread (a 16-byte access holds only 8 of their elements).
    const Value items = dtype_size(dtype) == 2 ? 2 : 1;
    SearchSpace::Builder b;
    b.param("VEC", widths, widths.back())
        .param("ITEMS", {1, 2, 4, 8, 16}, items)
        .param("UNROLL", {1, 2, 4, 8, 16}, items)
        .param("THREADS", {64, 128, 256, 512, 1024}, 256)
        .param("GRID_MODE", {0, 1}, 0)
        .param("GRID_MULT", {1, 2, 4, 8, 16, 32}, 1)
        .param("CACHE_HINT", {0, 1}, 0)
        .constraint("ITEMS % UNROLL == 0")
        .constraint("GRID_MODE == 1 or GRID_MULT == 1")
        // Loaded vectors live in registers: at most 256 bytes (64 registers) per thread.
        .constraint("UNROLL * VEC * " + std::to_string(dtype_size(dtype) * inputs) + " <= 256");
    if (device.max_threads_per_block > 0)
      b.constraint("THREADS <= " + std::to_string(device.max_threads_per_block));
    return b.build();
  }

  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    const std::int64_t n = problem.dim("rows") * problem.dim("cols");
    if (config["GRID_MODE"] == 0 && tiles_needed(n, config) > memory_bound::kMaxGridX) {
      if (why) *why = "n = " + std::to_string(n) + " needs more than 2^31-1 blocks with GRID_MODE=0";
      return false;
    }
    return true;
  }

  std::vector<std::string> problem_defines(const Problem& problem) const override {
    check_problem(problem);
    const ElementwiseFn f = function_of(problem);
    return {memory_bound::dtype_define(problem), "-DKT_KIND=" + std::to_string(f.kind),
            "-DKT_ACT=" + std::to_string(f.act)};
  }

  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    require_implementable(problem, config);
    const std::int64_t rows = problem.dim("rows"), cols = problem.dim("cols");
    const std::int64_t n = rows * cols;
    std::int64_t grid = tiles_needed(n, config);
    if (config["GRID_MODE"] == 1)
      grid = std::min(grid, std::max(1, device.sm_count) * config["GRID_MULT"]);
    if (grid > memory_bound::kMaxGridX)
      throw Error(ErrorCode::unsupported, "elementwise: " + config.str() + " cannot cover n=" +
                                              std::to_string(n) + " (grid too large)");
    const ElementwiseFn f = function_of(problem);
    const KernelArg none = KernelArg::i64(0);  // a null pointer for an unused operand
    LaunchStep step;
    step.entry = "elementwise_kernel";
    step.grid_dependency_wait = true;  // elementwise.cu: kt_grid_dependency_wait() comes first
    step.grid[0] = static_cast<unsigned>(grid);
    step.block[0] = static_cast<unsigned>(config["THREADS"]);
    const bool binary = f.kind == 1 || f.kind == 2;
    const std::size_t y = (binary || f.kind == 3) ? 2 : 1;
    step.args = {KernelArg::buf(0),
                 binary ? KernelArg::buf(1) : none,
                 f.kind == 3 ? KernelArg::buf(1) : none,
                 KernelArg::buf(y),
                 KernelArg::i64(n),
                 KernelArg::i64(cols),
                 KernelArg::f32(kAlpha)};
    LaunchPlan plan;
    plan.steps.push_back(step);
    return plan;
  }

  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    return std::make_unique<ElementwiseWorkload>(problem.dim("rows"), problem.dim("cols"),
                                                 memory_bound::io_dtype(problem),
                                                 function_of(problem));
  }

  std::string vendor_reference() const override { return "copy"; }
};

}  // namespace

std::shared_ptr<KernelTemplate> make_elementwise_template() {
  return std::make_shared<ElementwiseTemplate>();
}

}  // namespace ktune
