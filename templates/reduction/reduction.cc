// The "reduction" template (templates/reduction/reduction.cu): sum, max or mean over the last
// dimension of a row-major [rows, cols] f32 / f16 / bf16 tensor with fp32 accumulation and an
// fp32 output of `rows` values. Problem shape convention: "rows x cols"; a whole-tensor
// reduction of n elements is "1 x n". Tunables: threads per row (sub-warp, warp, several
// warps, whole block), threads per block, vector width, loads in flight, blocks per row with
// a second pass or atomics, and warp-shuffle vs shared-memory-tree combining.
#include <algorithm>
#include <cmath>

#include "builtin_templates.h"
#include "host_dtype.h"
#include "ktune/error.h"
#include "templates/common/memory_bound_support.h"

namespace ktune {

namespace {

using memory_bound::ceil_div;

/// Index of the "fn" attribute: 0 sum, 1 max, 2 mean (the KT_FN define).
int fn_index(const Problem& problem) {
  const std::string fn = problem.attr("fn", "sum");
  if (fn == "sum") return 0;
  if (fn == "max") return 1;
  if (fn == "mean") return 2;
  throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": unknown fn " + fn);
}

/// Buffers: x [rows * cols] (input dtype) and out [rows] (f32).
class ReductionWorkload final : public Workload {
 public:
  ReductionWorkload(std::int64_t rows, std::int64_t cols, DType dtype, int fn)
      : rows_(rows), cols_(cols), dtype_(dtype), fn_(fn) {}

  std::vector<BufferSpec> buffers() const override {
    return {{"x", dtype_, static_cast<std::size_t>(rows_ * cols_), Role::input, 0},
            {"out", DType::f32, static_cast<std::size_t>(rows_), Role::output, 0}};
  }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    check(buffers);
    fill_wide_magnitude(buffers[0], seed, -8, 5);  // 2^-8 .. 2^6, random sign, never zero
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    check(buffers);
    for (std::int64_t r = 0; r < rows_; ++r) {
      const auto base = static_cast<std::size_t>(r * cols_);
      double acc = fn_ == 1 ? -INFINITY : 0.0;
      for (std::int64_t c = 0; c < cols_; ++c) {
        const double v = read_element(buffers[0], base + static_cast<std::size_t>(c));
        acc = fn_ == 1 ? std::max(acc, v) : acc + v;
      }
      if (fn_ == 2) acc /= static_cast<double>(cols_);
      write_element(buffers[1], static_cast<std::size_t>(r), acc);
    }
  }

  Tolerance tolerance(const BufferSpec&) const override {
    // max is exact; sums accumulate in fp32 (random-walk error far below 1e-4 of the norm).
    Tolerance t;
    t.rel_l2 = fn_ == 1 ? 1e-7 : 1e-4;
    return t;
  }

  double bytes() const override {
    return static_cast<double>(rows_) * static_cast<double>(cols_) *
               static_cast<double>(dtype_size(dtype_)) + 4.0 * static_cast<double>(rows_);
  }

  double reference_cost() const override {
    return static_cast<double>(rows_) * static_cast<double>(cols_);
  }

  /// Above kDeviceReferenceCost: ref_reduce_chunks (double partials of chunks of a row, one
  /// block each) then ref_reduce_finish (one thread per row).
  std::optional<DeviceReference> device_reference() const override {
    if (reference_cost() <= memory_bound::kDeviceReferenceCost) return std::nullopt;
    DeviceReference ref =
        memory_bound::reference_program(dtype_, {"-DREF_FN=" + std::to_string(fn_)});
    const std::int64_t chunk = std::max<std::int64_t>(65536, ceil_div(cols_, 65535));
    const std::int64_t chunks = ceil_div(cols_, chunk);
    ref.plan.scratch.push_back({"ref_partial", DType::f64,
                                static_cast<std::size_t>(rows_ * chunks), Role::scratch, 0});
    ref.plan.steps.push_back(memory_bound::reference_step(
        "ref_reduce_chunks", rows_, chunks,
        {KernelArg::buf(0), KernelArg::buf(2), KernelArg::i64(cols_), KernelArg::i64(chunk)}));
    ref.plan.steps.push_back(memory_bound::reference_step(
        "ref_reduce_finish", ceil_div(rows_, memory_bound::kReferenceThreads), 1,
        {KernelArg::buf(2), KernelArg::buf(1), KernelArg::i64(rows_), KernelArg::i32(chunks),
         KernelArg::i64(cols_)}));
    return ref;
  }

 private:
  void check(const std::vector<HostBuffer>& host) const {
    memory_bound::check_host_buffers(*this, host, "reduction");
  }

  std::int64_t rows_, cols_;
  DType dtype_;
  int fn_;
};

class ReductionTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "reduction"; }
  std::string op() const override { return "reduction"; }
  std::string description() const override {
    return "sum/max/mean over the last dim of rows x cols (whole tensor: 1 x n); f32/f16/bf16";
  }
  const std::string& source() const override { return embedded_source("reduction/reduction.cu"); }
  std::vector<std::string> dim_names() const override { return {"rows", "cols"}; }
  void check_problem(const Problem& problem) const override {
    KernelTemplate::check_problem(problem);
    memory_bound::check_element_count(problem);
  }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return {{"dtype", memory_bound::io_dtypes()}, {"fn", {"sum", "max", "mean"}}};
  }
  Problem example_problem() const override {
    return Problem{"reduction", {{"rows", 32768}, {"cols", 4096}}, {{"dtype", "f32"}, {"fn", "sum"}}};
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const std::int64_t rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto widths = memory_bound::vector_widths(memory_bound::io_dtype(problem));
    const Defaults d = defaults(rows, cols, widths, device);
    SearchSpace::Builder b;
    b.param("THREADS", {64, 128, 256, 512, 1024}, d.threads)
        .param("TPR", {8, 16, 32, 64, 128, 256, 512, 1024}, d.tpr)
        .param("VEC", widths, d.vec)
        .param("ITEMS", {1, 2, 4, 8}, 4)
        .param("SPLIT", {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}, d.split)
        .param("MULTI", {0, 1, 2}, d.split > 1 ? 2 : 0)
        .param("TREE", {0, 1}, 0)
        .param("CACHE_HINT", {0, 1}, 0)
        .constraint("TPR <= THREADS")
        .constraint("SPLIT == 1 or TPR == THREADS")
        .constraint("SPLIT > 1 or MULTI == 0")
        // No idle lanes beyond the smallest group, no empty row chunks.
        .constraint("TPR == 8 or TPR * VEC <= " + std::to_string(cols))
        .constraint("SPLIT == 1 or SPLIT * THREADS * VEC <= " + std::to_string(cols));
    if (rows > 1)  // every row must start on a vector boundary
      b.constraint("VEC divides cols=" + std::to_string(cols),
                   [cols](const Config& c) { return cols % c["VEC"] == 0; });
    if (device.max_threads_per_block > 0)
      b.constraint("THREADS <= " + std::to_string(device.max_threads_per_block));
    return b.build();
  }

  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    const std::int64_t rows = problem.dim("rows"), cols = problem.dim("cols");
    if (rows > 1 && cols % config["VEC"] != 0) {
      if (why) *why = "VEC=" + std::to_string(config["VEC"]) + " does not divide cols=" +
                      std::to_string(cols) + " (rows would start misaligned)";
      return false;
    }
    return memory_bound::row_grid_fits(rows, config, why);
  }

  std::vector<std::string> problem_defines(const Problem& problem) const override {
    check_problem(problem);
    return {memory_bound::dtype_define(problem), "-DKT_FN=" + std::to_string(fn_index(problem))};
  }

  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device&) const override {
    require_implementable(problem, config);
    const std::int64_t rows = problem.dim("rows"), cols = problem.dim("cols");
    const int fn = fn_index(problem);
    const double scale = fn == 2 ? 1.0 / static_cast<double>(cols) : 1.0;
    const std::int64_t split = config["SPLIT"];
    const bool two_pass = split > 1 && config["MULTI"] == 0;
    const bool atomics = split > 1 && config["MULTI"] == 1;
    const bool last_block = split > 1 && config["MULTI"] == 2;
    const std::int64_t grid = ceil_div(rows, config["THREADS"] / config["TPR"]);
    if (grid > memory_bound::kMaxGridX)
      throw Error(ErrorCode::unsupported, "reduction: " + config.str() + " cannot cover rows=" +
                                              std::to_string(rows));
    LaunchPlan plan;
    if (two_pass)
      plan.scratch.push_back({"partial", DType::f32, static_cast<std::size_t>(rows * split),
                              Role::scratch, 0});
    if (last_block) {  // partials, then one arrival counter per row (zeroed here)
      plan.scratch.push_back({"partial", DType::f32, static_cast<std::size_t>(rows * split),
                              Role::scratch, 0});
      plan.scratch.push_back({"arrivals", DType::i32, static_cast<std::size_t>(rows),
                              Role::scratch, 0});
    }
    if (atomics || last_block) {
      // atomics: sums start at 0.0f, max at 0xffffffff (below every value); last block: the
      // arrival counters start at 0.
      LaunchStep clear;
      clear.kind = LaunchStep::Kind::memset;
      clear.memset_buffer = atomics ? 1 : 3;
      clear.memset_byte = atomics && fn == 1 ? 0xff : 0;
      plan.steps.push_back(clear);
    }
    LaunchStep main;
    main.entry = "reduce_rows";
    main.grid_dependency_wait = true;  // reduction.cu: both kernels wait first
    main.grid[0] = static_cast<unsigned>(grid);
    main.grid[1] = static_cast<unsigned>(split);
    main.block[0] = static_cast<unsigned>(config["THREADS"]);
    main.args = {KernelArg::buf(0), KernelArg::buf(1),
                 two_pass || last_block ? KernelArg::buf(2) : KernelArg::i64(0),
                 KernelArg::i64(rows), KernelArg::i64(cols), KernelArg::f32(scale),
                 last_block ? KernelArg::buf(3) : KernelArg::i64(0)};
    plan.steps.push_back(main);
    if (two_pass) {
      LaunchStep second;
      second.entry = "reduce_partials";
      second.grid_dependency_wait = true;
      second.grid[0] = static_cast<unsigned>(ceil_div(rows, 8));
      second.block[0] = 256;
      second.args = {KernelArg::buf(2), KernelArg::buf(1), KernelArg::i64(rows),
                     KernelArg::i32(split), KernelArg::f32(scale)};
      plan.steps.push_back(second);
    }
    return plan;
  }

  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    memory_bound::check_reference_rows(problem);
    return std::make_unique<ReductionWorkload>(problem.dim("rows"), problem.dim("cols"),
                                               memory_bound::io_dtype(problem), fn_index(problem));
  }

  std::string vendor_reference() const override { return "copy"; }

 private:
  /// The untuned default: the textbook choice, valid for the problem.
  struct Defaults {
    Value threads, tpr, vec, split;
  };
  static Defaults defaults(std::int64_t rows, std::int64_t cols, const std::vector<Value>& widths,
                           const Device& device) {
    Defaults d{256, 256, 1, 1};
    for (Value v : widths)
      if (rows == 1 || cols % v == 0) d.vec = v;
    const std::int64_t vectors = std::max<std::int64_t>(1, cols / d.vec);
    // A block per long row, a warp per medium row, 8 lanes per short row.
    d.tpr = vectors >= 256 ? 256 : (vectors >= 32 ? 32 : 8);
    if (d.tpr == 8 && d.vec * 8 > cols) d.vec = 1;
    if (d.tpr == d.threads) {  // few long rows: enough blocks per row to fill every SM
      const std::int64_t resident = std::max(1, device.sm_count) * (2048 / d.threads);
      const std::int64_t want = ceil_div(resident, rows);
      const std::int64_t fit = std::max<std::int64_t>(1, cols / (d.threads * d.vec));
      d.split = std::min<std::int64_t>({memory_bound::floor_pow2(std::min(want, fit)), 2048});
    }
    return d;
  }
};

}  // namespace

std::shared_ptr<KernelTemplate> make_reduction_template() {
  return std::make_shared<ReductionTemplate>();
}

}  // namespace ktune
