// Loading and launching a candidate inside the worker (see worker_kernels.h).
#include "worker_kernels.h"

#include <algorithm>
#include <cstring>

#include "ktune/error.h"
#include "launch_plan_runner.h"

namespace ktune::worker {

void check_candidate(cudaError_t code, const std::string& where) {
  if (code == cudaSuccess) return;
  auto f = classify_cuda_error(code, where);
  throw CandidateFault{f.status, f.context_lost, f.message};
}

LoadedPlan::LoadedPlan(const std::vector<char>& cubin, const LaunchPlan& plan, bool programmatic)
    : plan_(plan), programmatic_(programmatic) {
  if (cubin.empty())
    throw CandidateFault{Status::launch_error, false, "empty cubin: nothing to load"};
  try {
    module_ = std::make_unique<detail::CudaModule>(cubin);
    for (const auto& step : plan_.steps)
      if (step.kind == LaunchStep::Kind::kernel) module_->kernel(step.entry);
    detail::check_plan_signatures(*module_, plan_);
  } catch (const Error& e) {
    // A cubin that does not load, lacks an entry or declares other parameters than the plan
    // passes cannot be launched; the context is intact.
    throw CandidateFault{Status::launch_error, false, e.what()};
  }
}

LoadedPlan::~LoadedPlan() = default;

std::size_t LoadedPlan::add_buffer_set(const std::vector<DeviceBufferRef>& buffers) {
  auto buffer_at = [&](std::size_t index, const std::string& entry) -> const DeviceBufferRef& {
    if (index >= buffers.size())
      throw CandidateFault{Status::launch_error, false,
                           entry + " refers to buffer " + std::to_string(index) + " but there are " +
                               std::to_string(buffers.size()) + " buffers"};
    return buffers[index];
  };
  std::vector<PreparedStep> steps;
  for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
    const auto& step = plan_.steps[s];
    PreparedStep p;
    p.kind = step.kind;
    p.programmatic = detail::launched_programmatically(step, programmatic_, module_->cc_major());
    p.entry = step.entry;
    if (step.kind == LaunchStep::Kind::memset) {
      const auto& b = buffer_at(step.memset_buffer, "memset step " + std::to_string(s));
      p.memset_ptr = b.data;
      p.memset_bytes = b.bytes;
      p.memset_byte = step.memset_byte;
    } else {
      p.grid = dim3(step.grid[0], step.grid[1], step.grid[2]);
      p.block = dim3(step.block[0], step.block[1], step.block[2]);
      p.smem = step.dynamic_smem;
      p.values.resize(step.args.size());
      for (std::size_t a = 0; a < step.args.size(); ++a) {
        const auto& arg = step.args[a];
        void* ptr = arg.kind == KernelArg::Kind::buffer
                        ? buffer_at(arg.buffer, "argument " + std::to_string(a) + " of " + step.entry).data
                        : nullptr;
        try {
          p.values[a] = detail::argument_slot(arg, ptr, a);
        } catch (const Error& e) {
          throw CandidateFault{Status::launch_error, false, step.entry + ": " + e.what()};
        }
      }
    }
    steps.push_back(std::move(p));
  }
  // Pointers into `values` are taken after the steps reached their final place.
  for (auto& p : steps)
    for (auto& v : p.values) p.pointers.push_back(&v);
  sets_.push_back(std::move(steps));
  return sets_.size() - 1;
}

bool LoadedPlan::programmatic() const {
  return detail::plan_launched_programmatically(plan_, programmatic_, module_->cc_major());
}

void LoadedPlan::enqueue(std::size_t set, cudaStream_t stream) const {
  for (const auto& p : sets_.at(set)) {
    if (p.kind == LaunchStep::Kind::memset) {
      cudaError_t rc = cudaMemsetAsync(p.memset_ptr, p.memset_byte, p.memset_bytes, stream);
      if (rc != cudaSuccess) check_candidate(rc, "memset step");
      continue;
    }
    auto status = module_->launch(p.entry, p.grid, p.block, p.smem,
                                  const_cast<void**>(p.pointers.data()), stream, p.programmatic);
    if (!status.ok()) {
      auto f = classify_cuda_error(status.error, "launch of " + p.entry);
      throw CandidateFault{f.status, f.context_lost, status.message};
    }
  }
}

RunGraph::RunGraph(const LoadedPlan& plan, const std::vector<std::size_t>& sets,
                   cudaStream_t stream) {
  check_candidate(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                  "starting a graph capture");
  try {
    for (std::size_t set : sets) plan.enqueue(set, stream);
  } catch (...) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
    throw;
  }
  check_candidate(cudaStreamEndCapture(stream, &graph_), "ending a graph capture");
  const cudaError_t rc = cudaGraphInstantiate(&exec_, graph_, 0);
  if (rc != cudaSuccess) {
    cudaGraphDestroy(graph_);
    graph_ = nullptr;
    check_candidate(rc, "instantiating the runs' graph");
  }
}

RunGraph::~RunGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void RunGraph::launch(cudaStream_t stream) const {
  check_candidate(cudaGraphLaunch(exec_, stream), "launching the runs' graph");
}

}  // namespace ktune::worker
