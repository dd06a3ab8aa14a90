// Example: deployment. A program that only links the ktune library opens a tuning log (SQLite
// database or JSON-lines export), asks the Dispatcher which config to use for its problem on
// its GPU and why (exact record, nearest tuned shape, same architecture, or the template
// default), then launches the tuned kernel. Without a GPU it shows the selection for an H200
// and exits 0.
//   example_deploy_lookup [database = ktune.db] [template = copy] [shape = template example]
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/dispatch.h"
#include "ktune/error.h"
#include "ktune/template.h"

int main(int argc, char** argv) try {
  if (argc > 1 && argv[1][0] == '-') {  // an option is never taken for the database path
    std::printf("usage: example_deploy_lookup [DB [TEMPLATE [SHAPE]]] (defaults: ktune.db, copy, "
                "the template's example shape)\n");
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  const std::string db_path = argc > 1 ? argv[1] : "ktune.db";
  const std::string template_name = argc > 2 ? argv[2] : "copy";
  auto tmpl = ktune::find_template(template_name);
  const ktune::Problem problem =
      argc > 3 ? ktune::make_problem(*tmpl, argv[3]) : tmpl->example_problem();

  ktune::Dispatcher dispatcher(db_path);
  const auto no_gpu = ktune::cuda_unavailable_reason();
  const ktune::Device device = no_gpu ? ktune::Device::h200() : ktune::query_device(0);

  const ktune::Selection s = dispatcher.select(template_name, problem, device);
  std::printf("problem  %s\ndevice   %s\nconfig   %s\nreason   %s: %s\n", problem.key().c_str(),
              device.key().c_str(), s.config.str().c_str(), ktune::to_string(s.reason),
              s.explanation.c_str());
  if (no_gpu) {
    std::printf("%s: selection shown for an offline H200; nothing launched\n", no_gpu->c_str());
    return 0;
  }

  // Device buffers in the order of the template's workload, then one launch.
  std::vector<void*> buffers;
  for (const auto& b : tmpl->workload(problem)->buffers()) {
    void* p = nullptr;
    if (cudaMalloc(&p, b.elements * ktune::dtype_size(b.dtype)) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc of %s failed\n", b.name.c_str());
      return 1;
    }
    cudaMemset(p, 0, b.elements * ktune::dtype_size(b.dtype));
    buffers.push_back(p);
  }
  dispatcher.launch(template_name, problem, buffers);  // compiles once, then cached
  const cudaError_t status = cudaDeviceSynchronize();
  std::printf("launched %s: %s (%llu compile)\n", template_name.c_str(), cudaGetErrorString(status),
              static_cast<unsigned long long>(dispatcher.compiles()));
  for (void* p : buffers) cudaFree(p);
  return status == cudaSuccess ? 0 : 1;
} catch (const ktune::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
