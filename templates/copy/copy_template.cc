// The built-in "copy" template (templates/copy/copy.cu): y = alpha * x over N elements, f32
// or f16. Declares its tunables (VEC, THREADS, ITEMS, GRID_STRIDE), the launch geometry and a
// workload checked against a double-precision CPU reference. It exists to exercise the
// machinery end to end and to measure copy bandwidth next to the tuned kernels.
#include <algorithm>
#include <random>

#include "builtin_templates.h"
#include "host_dtype.h"
#include "ktune/error.h"
#include "templates/common/memory_bound_support.h"

namespace ktune {

namespace {

/// The scale factor every copy applies (exact in f16; != 1 so a plain copy is caught).
constexpr double kAlpha = -1.75;
/// Largest grid.x of a launch.
constexpr std::int64_t kMaxGridX = 2147483647;

/// Buffers x (input) and y (output) of N elements; y = alpha * x computed in double.
class CopyWorkload final : public Workload {
 public:
  CopyWorkload(std::int64_t n, DType dtype) : n_(n), dtype_(dtype) {}

  std::vector<BufferSpec> buffers() const override {
    const auto n = static_cast<std::size_t>(n_);
    return {BufferSpec{"x", dtype_, n, Role::input, 0}, BufferSpec{"y", dtype_, n, Role::output, 0}};
  }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    check_sizes(buffers);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> magnitude(0.5f, 2.0f);  // never zero
    for (std::int64_t i = 0; i < n_; ++i) {
      float v = (rng() & 1u) ? magnitude(rng) : -magnitude(rng);
      write_element(buffers[0], static_cast<std::size_t>(i), v);
    }
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    check_sizes(buffers);
    for (std::int64_t i = 0; i < n_; ++i)
      write_element(buffers[1], static_cast<std::size_t>(i),
                    kAlpha * read_element(buffers[0], static_cast<std::size_t>(i)));
  }

  Tolerance tolerance(const BufferSpec&) const override {
    // f32: the kernel's single rounding of alpha*x equals the reference's; f16 may differ by
    // one unit in the last place through the f32 intermediate.
    const double eps = dtype_ == DType::f16 ? 2e-3 : 1e-6;
    return Tolerance{eps, 0.0, eps};
  }

  double bytes() const override {
    return 2.0 * static_cast<double>(n_) * static_cast<double>(dtype_size(dtype_));
  }

 private:
  /// Throws unless `buffers` holds x and y of N elements of the workload's dtype.
  void check_sizes(const std::vector<HostBuffer>& buffers) const {
    const std::size_t want = static_cast<std::size_t>(n_) * dtype_size(dtype_);
    if (buffers.size() != 2 || buffers[0].bytes.size() != want || buffers[1].bytes.size() != want)
      throw Error(ErrorCode::invalid_argument,
                  "copy workload: expected 2 host buffers (x, y) of " + std::to_string(want) +
                      " bytes each");
  }

  std::int64_t n_;
  DType dtype_;
};

/// Vectors of VEC elements the config covers per block pass.
std::int64_t blocks_needed(std::int64_t n, const Config& config) {
  const std::int64_t vectors = n / config["VEC"];
  const std::int64_t tile = config["THREADS"] * config["ITEMS"];
  return std::max<std::int64_t>(1, (vectors + tile - 1) / tile);
}

class CopyTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "copy"; }
  std::string op() const override { return "copy"; }
  std::string description() const override {
    return "y = alpha * x, vectorized loads/stores (VEC, THREADS, ITEMS, GRID_STRIDE)";
  }
  const std::string& source() const override { return embedded_source("copy/copy.cu"); }
  std::vector<std::string> dim_names() const override { return {"N"}; }
  void check_problem(const Problem& problem) const override {
    KernelTemplate::check_problem(problem);
    memory_bound::check_element_count(problem);
  }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return {{"dtype", {"f32", "f16"}}};
  }
  Problem example_problem() const override {
    return Problem{"copy", {{"N", std::int64_t{1} << 24}}, {{"dtype", "f32"}}};
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    SearchSpace::Builder b;
    b.param("VEC", {1, 2, 4}, 4)
        .param("THREADS", {64, 128, 256, 512, 1024}, 256)
        .param("ITEMS", {1, 2, 4, 8}, 1)
        .param("GRID_STRIDE", {0, 1}, 0);
    if (device.max_threads_per_block > 0)
      b.constraint("THREADS <= " + std::to_string(device.max_threads_per_block));
    return b.build();
  }

  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    if (config["GRID_STRIDE"] == 0 && blocks_needed(problem.dim("N"), config) > kMaxGridX) {
      if (why) *why = "N=" + std::to_string(problem.dim("N")) + " needs more than 2^31-1 blocks "
                      "without GRID_STRIDE";
      return false;
    }
    return true;
  }

  std::vector<std::string> problem_defines(const Problem& problem) const override {
    check_problem(problem);
    return {std::string("-DKT_DTYPE=") + (dtype(problem) == DType::f16 ? "1" : "0")};
  }

  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    require_implementable(problem, config);
    const std::int64_t n = problem.dim("N");
    std::int64_t grid = blocks_needed(n, config);
    const std::int64_t threads = config["THREADS"];
    if (config["GRID_STRIDE"] != 0 && device.sm_count > 0) {
      // Enough blocks to fill every SM once; the loop covers the rest.
      const int threads_per_sm = device.max_threads_per_sm > 0 ? device.max_threads_per_sm : 2048;
      const std::int64_t resident = device.sm_count * std::max<std::int64_t>(1, threads_per_sm / threads);
      grid = std::min(grid, resident);
    }
    if (grid > kMaxGridX)
      throw Error(ErrorCode::unsupported, "copy: " + config.str() + " cannot cover N=" +
                                              std::to_string(n) + " (grid too large)");
    LaunchStep step;
    step.entry = "ktune_copy";
    step.grid_dependency_wait = true;  // copy.cu: kt_grid_dependency_wait() comes first
    step.grid[0] = static_cast<unsigned>(grid);
    step.block[0] = static_cast<unsigned>(threads);
    step.args = {KernelArg::buf(1), KernelArg::buf(0), KernelArg::f32(kAlpha), KernelArg::i64(n)};
    LaunchPlan plan;
    plan.steps.push_back(step);
    return plan;
  }

  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    return std::make_unique<CopyWorkload>(problem.dim("N"), dtype(problem));
  }

  std::string vendor_reference() const override { return "copy"; }

 private:
  static DType dtype(const Problem& problem) {
    return dtype_from_string(problem.attr("dtype", "f32"));
  }
};

}  // namespace

std::shared_ptr<KernelTemplate> make_copy_template() { return std::make_shared<CopyTemplate>(); }

}  // namespace ktune
