// The test template "faults" (templates/faults/faults.cu): y = 2x + 1 whose MODE parameter
// selects deliberately broken candidates (out-of-bounds write, illegal address, infinite
// loop, too much shared memory, too many threads, wrong result, NaN, compile error, trap, and
// launch plans whose arguments do not match the kernel's parameters),
// so that the runner's isolation and classification can be tested on a GPU. `expected_status`
// says how each mode must be classified. L2_MARK 1 (with MODE 0) leaves x's lines evict_last in
// L2, for the test of the measurer's L2 priority reset.
#include "faults_template.h"

#include <random>

#include "builtin_templates.h"
#include "ktune/error.h"

namespace ktune {

namespace {

/// Buffers x (input) and y (output) of N floats; y = 2x + 1 in double.
class FaultsWorkload final : public Workload {
 public:
  explicit FaultsWorkload(std::int64_t n) : n_(static_cast<std::size_t>(n)) {}
  std::vector<BufferSpec> buffers() const override {
    return {BufferSpec{"x", DType::f32, n_, Role::input, 0},
            BufferSpec{"y", DType::f32, n_, Role::output, 0}};
  }
  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    check(buffers);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> magnitude(0.25f, 4.0f);  // never zero
    float* x = buffers[0].as<float>();
    for (std::size_t i = 0; i < n_; ++i) x[i] = (rng() & 1u) ? magnitude(rng) : -magnitude(rng);
  }
  void reference(std::vector<HostBuffer>& buffers) const override {
    check(buffers);
    const float* x = buffers[0].as<float>();
    float* y = buffers[1].as<float>();
    for (std::size_t i = 0; i < n_; ++i) y[i] = static_cast<float>(2.0 * x[i] + 1.0);
  }
  Tolerance tolerance(const BufferSpec&) const override { return Tolerance{1e-6, -1, 0}; }
  double bytes() const override { return 8.0 * static_cast<double>(n_); }

 private:
  void check(const std::vector<HostBuffer>& buffers) const {
    if (buffers.size() != 2 || buffers[0].bytes.size() != 4 * n_ || buffers[1].bytes.size() != 4 * n_)
      throw Error(ErrorCode::invalid_argument,
                  "faults workload: expected buffers x and y of " + std::to_string(n_) + " floats");
  }
  std::size_t n_;
};

class FaultsTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "faults"; }
  std::string op() const override { return "faults"; }
  std::string description() const override {
    return "test template: y = 2x + 1 with deliberately broken variants selected by MODE";
  }
  const std::string& source() const override { return embedded_source("faults/faults.cu"); }
  std::vector<std::string> dim_names() const override { return {"N"}; }
  std::map<std::string, std::vector<std::string>> attr_domains() const override { return {}; }
  Problem example_problem() const override { return Problem{"faults", {{"N", 1 << 20}}, {}}; }

  SearchSpace space(const Problem& problem, const Device&) const override {
    check_problem(problem);
    SearchSpace::Builder b;
    b.param("MODE", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0)
        .param("BLOCK", {128, 256}, 256)
        .param("ITEMS", {1, 4}, 1)
        .param("L2_MARK", {0, 1}, 0)
        .constraint("L2_MARK == 0 or MODE == 0");
    return b.build();
  }

  LaunchPlan launch(const Problem& problem, const Config& config, const Device&) const override {
    const std::int64_t n = problem.dim("N");
    const std::int64_t block = config["BLOCK"], items = config["ITEMS"];
    LaunchStep step;
    step.entry = "ktune_faults";
    step.grid[0] = static_cast<unsigned>((n + block * items - 1) / (block * items));
    step.block[0] = static_cast<unsigned>(config["MODE"] == fault_mode::too_many_threads ? 2048 : block);
    step.dynamic_smem = config["MODE"] == fault_mode::too_much_shared ? (1u << 20) : 0u;
    step.args = {KernelArg::buf(0), KernelArg::buf(1), KernelArg::i64(n)};
    if (config["MODE"] == fault_mode::extra_argument) step.args.push_back(KernelArg::i32(1));
    if (config["MODE"] == fault_mode::narrow_argument) step.args[2] = KernelArg::i32(n);
    LaunchPlan plan;
    plan.steps.push_back(step);
    return plan;
  }

  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    return std::make_unique<FaultsWorkload>(problem.dim("N"));
  }
};

}  // namespace

Status faults_expected_status(Value mode) {
  switch (mode) {
    case fault_mode::good: return Status::ok;
    case fault_mode::out_of_bounds: return Status::wrong_result;
    case fault_mode::illegal_address: return Status::runtime_error;
    case fault_mode::infinite_loop: return Status::timeout;
    case fault_mode::too_much_shared: return Status::launch_error;
    case fault_mode::too_many_threads: return Status::launch_error;
    case fault_mode::wrong_result: return Status::wrong_result;
    case fault_mode::nan_output: return Status::wrong_result;
    case fault_mode::compile_error: return Status::compile_error;
    case fault_mode::trap: return Status::runtime_error;
    case fault_mode::extra_argument: return Status::launch_error;
    case fault_mode::narrow_argument: return Status::launch_error;
    default:
      throw Error(ErrorCode::invalid_argument, "faults template: unknown MODE " + std::to_string(mode));
  }
}

std::shared_ptr<KernelTemplate> make_faults_template() { return std::make_shared<FaultsTemplate>(); }

}  // namespace ktune
