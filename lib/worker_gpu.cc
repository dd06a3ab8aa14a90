// The worker's GPU backend: sets up a template's workload on one device (buffers with canary
// guards), then for every candidate verifies it on fresh random inputs (outputs poisoned,
// canaries and inputs checked, outputs compared with the reference of the seed, computed once
// on the host or by the workload's GPU reference kernel) and only then times it with CUDA
// events, keeping L2 cold by rotating buffer copies or flushing. Each seed's inputs and expected
// outputs stay on the device so verification is device-to-device copies and GPU-side checks;
// only a failed check downloads the buffers so the host can name the first bad element.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>

#include "device_checks.h"
#include "device_reference.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "l2_priority_reset.h"
#include "nvml.h"
#include "timing.h"
#include "verify.h"
#include "worker_kernels.h"
#include "worker_reference_cache.h"
#include "worker_server.h"

namespace ktune::worker {

namespace {

/// Host inputs and expected outputs for one seed (the reference runs once per seed).
struct SeedData {
  std::uint64_t seed = 0;
  std::vector<HostBuffer> initial;   // contents before the run (inputs filled)
  std::vector<HostBuffer> expected;  // after the reference
  std::vector<Tolerance> tolerance;  // per buffer: the workload's, with the element bound
};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

/// Result slots of the GPU-side checks: enough for canaries, inputs and outputs of the workload
/// and a plan's scratch buffers; plans with more buffers are verified on the host.
constexpr int kCheckSlots = 256;
/// Seeds whose data is kept on the device at once (the default seed pool is 3).
constexpr std::size_t kDeviceSeeds = 3;

/// A device allocation holding a buffer at an offset, followed by canary bytes.
class DeviceAlloc {
 public:
  DeviceAlloc() = default;
  DeviceAlloc(const BufferSpec& spec, std::size_t canary) : spec_(spec), canary_(canary) {
    bytes_ = spec.elements * dtype_size(spec.dtype);
    total_ = spec.offset_bytes + bytes_ + canary_;
    if (cudaMalloc(&base_, total_) != cudaSuccess) {
      cudaGetLastError();
      base_ = nullptr;
    }
  }
  DeviceAlloc(DeviceAlloc&& o) noexcept { *this = std::move(o); }
  DeviceAlloc& operator=(DeviceAlloc&& o) noexcept {
    std::swap(base_, o.base_);
    spec_ = o.spec_;
    canary_ = o.canary_;
    bytes_ = o.bytes_;
    total_ = o.total_;
    return *this;
  }
  ~DeviceAlloc() {
    if (base_) cudaFree(base_);
  }
  bool ok() const { return base_ != nullptr; }
  char* data() const { return static_cast<char*>(base_) + spec_.offset_bytes; }
  char* canary() const { return data() + bytes_; }
  std::size_t bytes() const { return bytes_; }
  std::size_t total() const { return total_; }
  std::size_t canary_bytes() const { return canary_; }
  const BufferSpec& spec() const { return spec_; }
  DeviceBufferRef ref() const { return {data(), bytes_}; }

 private:
  void* base_ = nullptr;
  BufferSpec spec_;
  std::size_t canary_ = 0, bytes_ = 0, total_ = 0;
};

/// One seed's inputs and expected outputs on the device (index-aligned with the workload's
/// buffers; allocations of roles that need none stay empty).
struct DeviceSeed {
  std::uint64_t seed = 0;
  std::vector<DeviceAlloc> initial;   // inputs and inouts as filled
  std::vector<DeviceAlloc> expected;  // outputs and inouts after the reference
  std::vector<Tolerance> tolerance;   // the seed's (SeedData::tolerance)
};

void check_setup(cudaError_t code, const std::string& what) {
  if (code != cudaSuccess)
    throw Error(ErrorCode::cuda_error, what + ": " + cudaGetErrorName(code) + " (" +
                                           cudaGetErrorString(code) + ")");
}

bool reads_input(Role r) { return r == Role::input || r == Role::inout; }
bool is_checked_output(Role r) { return r == Role::output || r == Role::inout; }

class GpuBackend : public WorkerBackend {
 public:
  ~GpuBackend() override {
    for (auto e : events_) cudaEventDestroy(e);
    if (flush_) cudaFree(flush_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  nlohmann::json setup(const nlohmann::json& request) override {
    if (auto why = cuda_unavailable_reason()) throw Error(ErrorCode::no_device, *why);
    device_ = request.value("device", 0);
    canary_ = request.value("canary_bytes", std::size_t{4096});
    reference_cache_ = ReferenceCache(request.value("reference_cache_dir", std::string()));
    check_setup(cudaSetDevice(device_), "selecting device " + std::to_string(device_));
    check_setup(cudaFree(nullptr), "creating a CUDA context on device " + std::to_string(device_));
    check_setup(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream");
    tmpl_ = find_template(request.at("template").get<std::string>());
    problem_ = Problem::from_key(request.at("problem").get<std::string>());
    tmpl_->check_problem(problem_);
    workload_ = tmpl_->workload(problem_);
    specs_ = workload_->buffers();
    for (const auto& spec : specs_) {
      primary_.emplace_back(spec, canary_);
      if (!primary_.back().ok())
        throw Error(ErrorCode::cuda_error, "cannot allocate workload buffer " + spec.name + " (" +
                                               std::to_string(primary_.back().total()) + " bytes)");
      footprint_ += primary_.back().bytes();
    }
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_);
    l2_bytes_ = static_cast<std::size_t>(l2);
    char bus[64] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device_) != cudaSuccess) cudaGetLastError();
    sensor_ = std::make_unique<nvml::GpuSensor>(bus);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device_);
    arch_ = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    try {
      checks_ = std::make_unique<DeviceChecks>(arch_, kCheckSlots);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ktune-worker: warning: verifying on the host only: %s\n", e.what());
      checks_.reset();
    }
    try {
      l2_reset_ = std::make_unique<L2PriorityReset>(arch_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ktune-worker: warning: L2 eviction priorities are not reset between candidates: %s\n",
                   e.what());
      l2_reset_.reset();
    }
    device_reference_ = workload_->device_reference();
    if (device_reference_) {
      std::vector<std::size_t> outputs;
      for (std::size_t i = 0; i < specs_.size(); ++i)
        if (is_checked_output(specs_[i].role)) outputs.push_back(i);
      detail::check_device_reference_plan(*device_reference_, specs_.size(), outputs);
    }
    return {{"name", prop.name},         {"ordinal", device_},
            {"l2_bytes", l2_bytes_},      {"pci_bus_id", bus},
            {"nvml", sensor_->available()}, {"footprint_bytes", footprint_},
            {"gpu_checks", checks_ != nullptr}, {"device_reference", device_reference_.has_value()}};
  }

  WorkerResult measure(const nlohmann::json& request, const std::vector<char>& cubin,
                       const PhaseReporter& report) override {
    WorkerResult r;
    try {
      r = run_candidate(request, cubin, report);
    } catch (const CandidateFault& f) {
      r.status = f.status;
      r.context_lost = f.context_lost;
      r.message = f.message;
    }
    if (!r.context_lost) {
      // A refused launch leaves the context usable; make sure nothing else is pending.
      cudaGetLastError();
      cudaError_t rc = cudaStreamSynchronize(stream_);
      if (rc != cudaSuccess) {
        auto f = classify_cuda_error(rc, "after the candidate");
        r.context_lost = true;
        if (r.status == Status::ok) {
          r.status = f.status;
          r.message = f.message;
        }
      }
    }
    return r;
  }

 private:
  const SeedData& seed_data(std::uint64_t seed) {
    for (const auto& d : seeds_)
      if (d.seed == seed) return d;
    SeedData d;
    d.seed = seed;
    for (const auto& spec : specs_) {
      HostBuffer b;
      b.spec = spec;
      b.bytes.assign(spec.elements * dtype_size(spec.dtype), verify::poison_byte(spec.dtype));
      d.initial.push_back(std::move(b));
    }
    d.expected = d.initial;
    if (reference_cache_.load(seed, d.initial, d.expected)) return remember(std::move(d));
    workload_->fill(d.initial, seed);
    for (const auto& b : d.initial)
      if (reads_input(b.spec.role) && !b.bytes.empty() &&
          std::all_of(b.bytes.begin(), b.bytes.end(), [](std::uint8_t x) { return x == 0; }))
        std::fprintf(stderr, "ktune-worker: warning: input %s is all zeros after fill()\n",
                     b.spec.name.c_str());
    d.expected = d.initial;
    auto start = std::chrono::steady_clock::now();
    if (device_reference_)
      run_device_reference(d);
    else
      workload_->reference(d.expected);
    // A host reference that took long is kept on disk for workers restarted after a fault. A
    // device reference is not: redoing it (threaded fill, one GPU call) costs less than
    // writing and reading back the inputs and outputs of a large problem (~1 GB for a
    // 4096 x 14336 x 14336 GEMM).
    if (!device_reference_ &&
        std::chrono::steady_clock::now() - start > std::chrono::milliseconds(500))
      reference_cache_.store(seed, d.initial, d.expected);
    return remember(std::move(d));
  }

  const SeedData& remember(SeedData d) {
    // Each checked output's tolerance with its per-element bound (from the reference's RMS,
    // once per seed): a few wrong elements fail even where the L2 norm would not notice.
    d.tolerance.clear();
    for (const auto& b : d.expected)
      d.tolerance.push_back(is_checked_output(b.spec.role)
                                ? verify::with_element_bound(workload_->tolerance(b.spec), b)
                                : workload_->tolerance(b.spec));
    if (seeds_.size() >= 4) seeds_.pop_front();
    seeds_.push_back(std::move(d));
    return seeds_.back();
  }

  void sync(const std::string& where) { check_candidate(cudaStreamSynchronize(stream_), where); }

  /// Runs the workload's GPU reference on `d.initial` and stores its outputs in `d.expected`.
  /// A reference that fails is a setup error (Error), never a candidate's fault.
  void run_device_reference(SeedData& d) {
    const DeviceReference& ref = *device_reference_;
    if (reference_cubin_.empty()) {
      auto out = detail::compile_device_reference(ref, arch_);
      if (!out.ok)
        throw Error(ErrorCode::internal, "the GPU reference of " + tmpl_->name() +
                                             " does not compile for " + arch_ + ":\n" + out.log);
      reference_cubin_ = std::move(out.cubin);
    }
    try {
      LoadedPlan loaded(reference_cubin_, ref.plan);
      std::vector<DeviceAlloc> scratch;
      for (const auto& spec : ref.plan.scratch) {
        scratch.emplace_back(spec, 0);
        if (!scratch.back().ok())
          throw Error(ErrorCode::cuda_error, "no memory for scratch buffer " + spec.name +
                                                 " of the GPU reference");
      }
      std::vector<DeviceBufferRef> refs;
      for (const auto& a : primary_) refs.push_back(a.ref());
      for (const auto& a : scratch) refs.push_back(a.ref());
      loaded.add_buffer_set(refs);
      for (std::size_t i = 0; i < primary_.size(); ++i) upload(primary_[i], d.initial[i], nullptr);
      loaded.enqueue(0, stream_);
      sync("running the GPU reference");
      for (std::size_t i = 0; i < primary_.size(); ++i) {
        if (!is_checked_output(primary_[i].spec().role)) continue;
        auto& out = d.expected[i].bytes;
        check_candidate(cudaMemcpy(out.data(), primary_[i].data(), out.size(), cudaMemcpyDeviceToHost),
                        "downloading the GPU reference's " + primary_[i].spec().name);
        for (std::size_t e = 0; e < primary_[i].spec().elements; ++e)
          if (verify::is_poison(out.data(), primary_[i].spec().dtype, e))
            throw Error(ErrorCode::internal, "the GPU reference of " + tmpl_->name() +
                                                 " left element " + std::to_string(e) + " of " +
                                                 primary_[i].spec().name + " unwritten");
      }
    } catch (const CandidateFault& f) {
      throw Error(ErrorCode::internal, "the GPU reference of " + tmpl_->name() + " failed: " + f.message);
    }
  }

  /// The device copy of a seed's data, uploaded on first use; nullptr when GPU-side checks are
  /// off or the memory is not there (verification then runs on the host).
  const DeviceSeed* device_seed(const SeedData& d) {
    if (!checks_) return nullptr;
    for (const auto& s : device_seeds_)
      if (s.seed == d.seed) return &s;
    if (device_seeds_.size() >= kDeviceSeeds) device_seeds_.pop_front();
    std::size_t need = 0;
    for (const auto& spec : specs_)
      need += (reads_input(spec.role) + is_checked_output(spec.role)) * spec.elements * dtype_size(spec.dtype);
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    if (need + (std::size_t{1} << 30) > free_bytes) return nullptr;
    DeviceSeed s;
    s.seed = d.seed;
    s.tolerance = d.tolerance;
    // A plain device copy of a host buffer (no offset, no canary); false when it failed.
    auto copy_to_device = [](const HostBuffer& host, DeviceAlloc& out) {
      BufferSpec plain = host.spec;
      plain.offset_bytes = 0;
      out = DeviceAlloc(plain, 0);
      return out.ok() && cudaMemcpy(out.data(), host.bytes.data(), out.bytes(),
                                    cudaMemcpyHostToDevice) == cudaSuccess;
    };
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      s.initial.emplace_back();
      s.expected.emplace_back();
      if (reads_input(specs_[i].role) && !copy_to_device(d.initial[i], s.initial.back())) return nullptr;
      if (is_checked_output(specs_[i].role) && !copy_to_device(d.expected[i], s.expected.back()))
        return nullptr;
    }
    device_seeds_.push_back(std::move(s));
    return &device_seeds_.back();
  }

  /// GPU-side verification: canaries, unchanged inputs and output comparisons in one pass with
  /// one small download. Returns the largest relative L2 error, or nullopt when a check found
  /// a problem (the host check then names it) or there are more buffers than result slots.
  std::optional<double> verify_on_device(const DeviceSeed& ds, const std::vector<DeviceAlloc>& scratch) {
    int needed = static_cast<int>(scratch.size() + 2 * primary_.size());
    if (needed > checks_->slots()) return std::nullopt;
    check_candidate(checks_->reset(stream_), "clearing verification slots");
    int slot = 0;
    for (const auto& a : scratch)
      check_candidate(checks_->bytes_equal_value(a.canary(), a.canary_bytes(), verify::kCanaryByte, slot++, stream_),
                      "checking the canary of " + a.spec().name);
    std::vector<int> compare_slot(primary_.size(), -1);
    for (std::size_t i = 0; i < primary_.size(); ++i) {
      const auto& a = primary_[i];
      check_candidate(checks_->bytes_equal_value(a.canary(), a.canary_bytes(), verify::kCanaryByte, slot++, stream_),
                      "checking the canary of " + a.spec().name);
      Role role = a.spec().role;
      if (role == Role::input) {
        check_candidate(checks_->bytes_equal(a.data(), ds.initial[i].data(), a.bytes(), slot++, stream_),
                        "checking input " + a.spec().name);
      } else if (is_checked_output(role)) {
        compare_slot[i] = slot;
        check_candidate(checks_->compare(a.data(), ds.expected[i].data(), a.spec().dtype, a.spec().elements,
                                         ds.tolerance.at(i), slot++, stream_),
                        "comparing " + a.spec().name);
      }
    }
    std::vector<CheckResult> results;
    check_candidate(checks_->read(slot, stream_, results), "reading verification results");
    for (const auto& r : results)
      if (r.first_bad) return std::nullopt;
    double worst = 0;
    for (std::size_t i = 0; i < primary_.size(); ++i) {
      if (compare_slot[i] < 0) continue;
      const auto& r = results[static_cast<std::size_t>(compare_slot[i])];
      double rel = r.ref2 > 0 ? std::sqrt(r.diff2 / r.ref2) : std::sqrt(r.diff2);
      if (!(rel <= workload_->tolerance(primary_[i].spec()).rel_l2)) return std::nullopt;
      worst = std::max(worst, rel);
    }
    return worst;
  }

  /// Initial contents for a verification run: inputs copied (from the seed's device copy when
  /// there is one), outputs poisoned, canaries set.
  void upload(const DeviceAlloc& a, const HostBuffer& initial, const DeviceAlloc* device_initial) {
    Role role = a.spec().role;
    if (reads_input(role) && device_initial)
      check_candidate(cudaMemcpyAsync(a.data(), device_initial->data(), a.bytes(),
                                      cudaMemcpyDeviceToDevice, stream_),
                      "copying " + a.spec().name);
    else if (reads_input(role))
      check_candidate(cudaMemcpyAsync(a.data(), initial.bytes.data(), a.bytes(),
                                      cudaMemcpyHostToDevice, stream_),
                      "uploading " + a.spec().name);
    else if (role == Role::output)
      check_candidate(cudaMemsetAsync(a.data(), verify::poison_byte(a.spec().dtype), a.bytes(), stream_),
                      "poisoning " + a.spec().name);
    check_candidate(cudaMemsetAsync(a.canary(), verify::kCanaryByte, a.canary_bytes(), stream_),
                    "writing the canary of " + a.spec().name);
  }

  /// Downloads payload + canary of an allocation.
  std::vector<std::uint8_t> download(const DeviceAlloc& a) {
    std::vector<std::uint8_t> host(a.bytes() + a.canary_bytes());
    check_candidate(cudaMemcpyAsync(host.data(), a.data(), host.size(), cudaMemcpyDeviceToHost, stream_),
                    "downloading " + a.spec().name);
    sync("downloading " + a.spec().name);
    return host;
  }

  [[noreturn]] static void fail(Status status, std::string message) {
    throw CandidateFault{status, false, std::move(message)};
  }

  /// Checks canaries, unchanged inputs and outputs; returns the largest relative L2 error.
  double verify_run(const SeedData& data, const DeviceSeed* ds, const std::vector<DeviceAlloc>& scratch) {
    if (ds)
      if (auto worst = verify_on_device(*ds, scratch)) return *worst;
    return verify_on_host(data, scratch);
  }

  /// verify_run on downloaded buffers (names the first bad element, byte or guard).
  double verify_on_host(const SeedData& data, const std::vector<DeviceAlloc>& scratch) {
    double worst = 0;
    for (const auto& s : scratch) {
      auto host = download(s);
      if (auto bad = verify::first_bad_canary(host.data() + s.bytes(), s.canary_bytes()))
        fail(Status::wrong_result, "wrote past the end of scratch buffer " + s.spec().name +
                                       " (guard byte " + std::to_string(*bad) + ")");
    }
    for (std::size_t i = 0; i < primary_.size(); ++i) {
      const auto& a = primary_[i];
      auto host = download(a);
      if (auto bad = verify::first_bad_canary(host.data() + a.bytes(), a.canary_bytes()))
        fail(Status::wrong_result, "wrote past the end of " + a.spec().name + " (guard byte " +
                                       std::to_string(*bad) + ")");
      Role role = a.spec().role;
      if (role == Role::input) {
        if (auto diff = verify::first_difference(host.data(), data.initial[i].bytes.data(), a.bytes()))
          fail(Status::wrong_result, "modified input " + a.spec().name + " (byte " +
                                         std::to_string(*diff) + " changed)");
      } else if (is_checked_output(role)) {
        HostBuffer got;
        got.spec = a.spec();
        got.bytes.assign(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(a.bytes()));
        auto c = verify::compare(got, data.expected[i], data.tolerance.at(i));
        worst = std::max(worst, c.rel_l2);
        if (!c.ok) throw WrongResult{c.message, c.rel_l2};
      }
    }
    return worst;
  }

  struct WrongResult {
    std::string message;
    double norm;
  };

  /// Makes sure `sets` buffer sets exist for rotation (set 0 is the primary one); false when
  /// the memory is not there.
  bool ensure_rotation_sets(int sets) {
    while (static_cast<int>(extra_sets_.size()) + 1 < sets) {
      std::vector<DeviceAlloc> set;
      for (const auto& spec : specs_) {
        set.emplace_back(spec, 0);
        if (!set.back().ok()) return false;
      }
      extra_sets_.push_back(std::move(set));
    }
    return true;
  }

  bool ensure_flush_buffer() {
    std::size_t want = std::max<std::size_t>(2 * l2_bytes_, 1 << 20);
    if (flush_bytes_ >= want) return true;
    if (flush_) cudaFree(flush_);
    flush_ = nullptr;
    flush_bytes_ = 0;
    if (cudaMalloc(&flush_, want) != cudaSuccess) {
      cudaGetLastError();
      flush_ = nullptr;
      return false;
    }
    flush_bytes_ = want;
    return true;
  }

  void ensure_events(std::size_t n) {
    while (events_.size() < n) {
      cudaEvent_t e;
      check_candidate(cudaEventCreate(&e), "creating timing events");
      events_.push_back(e);
    }
  }

  WorkerResult run_candidate(const nlohmann::json& request, const std::vector<char>& cubin,
                             const PhaseReporter& report) {
    auto start = Clock::now();
    report("host", 0);
    const SeedData& data = seed_data(request.value("seed", std::uint64_t{1}));
    const DeviceSeed* ds = device_seed(data);
    LaunchPlan plan = plan_from_json(request.at("plan"));
    TimingOptions options = timing_from_json(request.value("timing", nlohmann::json::object()));
    LoadedPlan loaded(cubin, plan, options.programmatic_launch);

    std::vector<DeviceAlloc> scratch;
    for (const auto& spec : plan.scratch) {
      scratch.emplace_back(spec, canary_);
      if (!scratch.back().ok())
        fail(Status::launch_error, "cannot allocate scratch buffer " + spec.name + " (" +
                                       std::to_string(scratch.back().total()) + " bytes)");
    }
    auto refs_for = [&](const std::vector<DeviceAlloc>& set) {
      std::vector<DeviceBufferRef> refs;
      for (const auto& a : set) refs.push_back(a.ref());
      for (const auto& s : scratch) refs.push_back(s.ref());
      return refs;
    };
    loaded.add_buffer_set(refs_for(primary_));

    // --- verification run ---
    for (std::size_t i = 0; i < primary_.size(); ++i)
      upload(primary_[i], data.initial[i], ds ? &ds->initial[i] : nullptr);
    for (const auto& s : scratch)
      check_candidate(cudaMemsetAsync(s.canary(), verify::kCanaryByte, s.canary_bytes(), stream_),
                      "writing the canary of " + s.spec().name);
    sync("preparing buffers");
    WorkerResult result;
    result.prepare_ms = ms_since(start);
    auto verify_start = Clock::now();
    report("kernel", 0);
    loaded.enqueue(0, stream_);
    sync("running the candidate");
    report("host", 0);
    try {
      result.error_norm = verify_run(data, ds, scratch);
    } catch (const WrongResult& w) {
      result.status = Status::wrong_result;
      result.message = w.message;
      result.error_norm = w.norm;
      result.verify_ms = ms_since(verify_start);
      return result;
    }
    result.verify_ms = ms_since(verify_start);
    auto timing_start = Clock::now();

    // --- timing ---
    // In-place buffers are restored before every run from the seed's device copy of their
    // initial contents (or from a snapshot uploaded for this candidate).
    std::vector<std::pair<std::size_t, DeviceAlloc>> own_snapshots;
    std::vector<std::pair<std::size_t, const DeviceAlloc*>> snapshots;
    for (std::size_t i = 0; i < primary_.size(); ++i)
      if (primary_[i].spec().role == Role::inout) {
        if (ds) {
          snapshots.emplace_back(i, &ds->initial[i]);
          continue;
        }
        DeviceAlloc snap(primary_[i].spec(), 0);
        if (!snap.ok()) fail(Status::launch_error, "no memory for a snapshot of " + primary_[i].spec().name);
        check_candidate(cudaMemcpyAsync(snap.data(), data.initial[i].bytes.data(), snap.bytes(),
                                        cudaMemcpyHostToDevice, stream_),
                        "snapshot of " + snap.spec().name);
        own_snapshots.emplace_back(i, std::move(snap));
      }
    for (const auto& [i, snap] : own_snapshots) snapshots.emplace_back(i, &snap);
    std::vector<const std::vector<DeviceAlloc>*> sets{&primary_};
    // Lines an earlier candidate (or this one's verification run) left evict_last on these
    // buffers would be L2 hits for this candidate's runs: back to normal priority first.
    const bool reset_l2 = l2_reset_ && options.reset_l2_priorities;
    if (reset_l2) {
      std::vector<DeviceBufferRef> all = refs_for(primary_);
      for (const auto& set : extra_sets_)
        for (const auto& a : set) all.push_back(a.ref());
      check_candidate(l2_reset_->reset(all, stream_), "resetting L2 eviction priorities");
    }
    auto restore = [&](std::size_t set) {
      for (const auto& [i, snap] : snapshots)
        check_candidate(cudaMemcpyAsync((*sets[set])[i].data(), snap->data(), (*sets[set])[i].bytes(),
                                        cudaMemcpyDeviceToDevice, stream_),
                        "restoring " + (*sets[set])[i].spec().name);
    };
    ensure_events(2);
    restore(0);
    check_candidate(cudaEventRecord(events_[0], stream_), "recording an event");
    loaded.enqueue(0, stream_);
    check_candidate(cudaEventRecord(events_[1], stream_), "recording an event");
    check_candidate(cudaEventSynchronize(events_[1]), "running the candidate");
    float estimate = 0;
    check_candidate(cudaEventElapsedTime(&estimate, events_[0], events_[1]), "reading an event");

    auto tp = timing::make_plan(options, estimate, footprint_, l2_bytes_);
    if (tp.l2 == L2Policy::rotate && !ensure_rotation_sets(tp.buffer_sets)) tp.l2 = L2Policy::flush;
    if (tp.l2 == L2Policy::rotate) {
      for (int s = 1; s < tp.buffer_sets; ++s) {
        const auto& set = extra_sets_[static_cast<std::size_t>(s - 1)];
        for (std::size_t i = 0; i < set.size(); ++i)
          if (reads_input(set[i].spec().role))
            check_candidate(cudaMemcpyAsync(set[i].data(), primary_[i].data(), set[i].bytes(),
                                            cudaMemcpyDeviceToDevice, stream_),
                            "copying inputs for rotation");
        sets.push_back(&set);
        loaded.add_buffer_set(refs_for(set));
      }
    } else {
      tp.buffer_sets = 1;
    }
    if (tp.l2 == L2Policy::flush && !ensure_flush_buffer()) tp.l2 = L2Policy::none;

    report("timing", tp.planned_ms);
    // Without work between runs (no restore, no flush) one event separates two samples, so each
    // sample costs one event record instead of two, and a sample may hold several back-to-back
    // runs; otherwise every run is a sample with its own pair of events.
    const bool chained = snapshots.empty() && tp.l2 != L2Policy::flush;
    if (!chained) timing::one_run_per_sample(tp);
    const auto batch = static_cast<std::size_t>(tp.runs_per_sample);
    const auto samples = static_cast<std::size_t>(tp.reps);
    auto start_event = [&](std::size_t j) { return chained ? j : 2 * j; };
    auto end_event = [&](std::size_t j) { return chained ? j + 1 : 2 * j + 1; };
    ensure_events(end_event(samples - 1) + 1);
    // Run i of the timed runs belongs to sample i / batch.
    auto one_run = [&](std::size_t i, bool timed) {
      std::size_t set = i % sets.size();
      restore(set);
      if (tp.l2 == L2Policy::flush) {
        // A memset's normal-priority lines do not displace evict_last ones: demote them first.
        if (reset_l2)
          check_candidate(l2_reset_->demote(refs_for(*sets[set]), stream_), "resetting L2 eviction priorities");
        check_candidate(cudaMemsetAsync(flush_, static_cast<int>(i & 0xFF), flush_bytes_, stream_),
                        "flushing L2");
      }
      const std::size_t j = i / batch;
      if (timed && i % batch == 0 && (!chained || j == 0))
        cudaEventRecord(events_[start_event(j)], stream_);
      loaded.enqueue(set, stream_);
      if (timed && (i + 1) % batch == 0) cudaEventRecord(events_[end_event(j)], stream_);
    };
    for (int w = 0; w < tp.warmup; ++w) one_run(static_cast<std::size_t>(w) + 1, false);
    // As graphs: sample j holds runs j * batch ... on the buffer sets those runs would use, so
    // each distinct first set gets one graph, captured and launched once untimed first.
    const bool graphs = chained && options.graph;
    std::map<std::size_t, std::unique_ptr<RunGraph>> graph_of;  // by the sample's first set
    if (graphs) {
      for (std::size_t j = 0; j < samples; ++j) {
        const std::size_t first = (j * batch) % sets.size();
        if (graph_of.count(first)) continue;
        std::vector<std::size_t> run_sets;
        for (std::size_t k = 0; k < batch; ++k) run_sets.push_back((first + k) % sets.size());
        graph_of[first] = std::make_unique<RunGraph>(loaded, run_sets, stream_);
        graph_of[first]->launch(stream_);
      }
      for (std::size_t j = 0; j < samples; ++j) {
        if (j == 0) cudaEventRecord(events_[start_event(0)], stream_);
        graph_of.at((j * batch) % sets.size())->launch(stream_);
        cudaEventRecord(events_[end_event(j)], stream_);
      }
    } else {
      for (std::size_t i = 0; i < samples * batch; ++i) one_run(i, true);
    }
    check_candidate(cudaEventSynchronize(events_[end_event(samples - 1)]), "timing the candidate");
    result.times_ms.reserve(samples);
    for (std::size_t j = 0; j < samples; ++j) {
      float ms = 0;
      check_candidate(cudaEventElapsedTime(&ms, events_[start_event(j)], events_[end_event(j)]),
                      "reading events");
      result.times_ms.push_back(ms / static_cast<float>(batch));
    }
    result.reps = static_cast<int>(samples);
    result.runs_per_sample = static_cast<int>(batch);
    result.status = Status::ok;
    result.sm_clock_mhz = sensor_->sm_clock_mhz();
    result.temperature_c = sensor_->temperature_c();
    // A plan without grid_dependency_wait steps runs as usual even when the option is on.
    const bool pdl = loaded.programmatic();
    result.launch = launch_form(graphs, pdl);
    char note[256];
    std::snprintf(note, sizeof note,
                  "verified (rel. L2 error %.3g); %d warm-up + %zu timed samples of %zu run(s)%s%s, L2 %s x%d",
                  result.error_norm, tp.warmup, samples, batch,
                  graphs ? " as CUDA graphs"
                  : options.graph ? " (no graphs: work between runs)" : "",
                  pdl ? ", programmatic launch"
                  : options.programmatic_launch ? " (no programmatic launch: no kernel waits for it)" : "",
                  to_string(tp.l2), tp.buffer_sets);
    result.message = note;
    result.timing_ms = ms_since(timing_start);
    return result;
  }

  int device_ = 0;
  std::string arch_;
  std::unique_ptr<DeviceChecks> checks_;
  std::unique_ptr<L2PriorityReset> l2_reset_;  // null where applypriority is unavailable
  std::optional<DeviceReference> device_reference_;
  std::vector<char> reference_cubin_;
  std::deque<DeviceSeed> device_seeds_;
  std::size_t canary_ = 4096;
  ReferenceCache reference_cache_;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<const KernelTemplate> tmpl_;
  Problem problem_;
  std::unique_ptr<Workload> workload_;
  std::vector<BufferSpec> specs_;
  std::vector<DeviceAlloc> primary_;
  std::vector<std::vector<DeviceAlloc>> extra_sets_;
  std::size_t footprint_ = 0;
  std::size_t l2_bytes_ = 0;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  std::deque<SeedData> seeds_;
  std::vector<cudaEvent_t> events_;
  std::unique_ptr<nvml::GpuSensor> sensor_;
};

}  // namespace

std::unique_ptr<WorkerBackend> make_gpu_backend() { return std::make_unique<GpuBackend>(); }

}  // namespace ktune::worker
