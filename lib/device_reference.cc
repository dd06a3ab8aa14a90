// Compiling and checking GPU references (see device_reference.h).
#include "device_reference.h"

#include <algorithm>
#include <set>

#include "ktune/error.h"

namespace ktune::detail {

NvrtcOutput compile_device_reference(const DeviceReference& ref, const std::string& arch) {
  std::vector<std::string> options = ref.options;
  options.push_back("--gpu-architecture=" + arch);
  add_default_language_standard(options);
  if (const std::string& include = cuda_include_dir(); !include.empty())
    options.push_back("-I" + include);
  return nvrtc_compile(ref.source, ref.source_name, template_headers(), options);
}

void check_device_reference_plan(const DeviceReference& ref, std::size_t workload_buffers,
                                 const std::vector<std::size_t>& outputs) {
  const std::size_t limit = workload_buffers + ref.plan.scratch.size();
  std::set<std::size_t> passed;
  bool any_kernel = false;
  for (std::size_t s = 0; s < ref.plan.steps.size(); ++s) {
    const auto& step = ref.plan.steps[s];
    auto check = [&](std::size_t index, const std::string& what) {
      if (index >= limit)
        throw Error(ErrorCode::invalid_argument,
                    "device reference step " + std::to_string(s) + " (" + what + ") refers to buffer " +
                        std::to_string(index) + " but there are " + std::to_string(limit));
      passed.insert(index);
    };
    if (step.kind == LaunchStep::Kind::memset) {
      check(step.memset_buffer, "memset");
      continue;
    }
    any_kernel = true;
    if (step.entry.empty())
      throw Error(ErrorCode::invalid_argument,
                  "device reference step " + std::to_string(s) + " has no kernel entry name");
    for (const auto& arg : step.args)
      if (arg.kind == KernelArg::Kind::buffer) check(arg.buffer, step.entry);
  }
  if (!any_kernel)
    throw Error(ErrorCode::invalid_argument, "device reference plan has no kernel step");
  for (auto o : outputs)
    if (!passed.count(o))
      throw Error(ErrorCode::invalid_argument, "device reference plan never passes output buffer " +
                                                   std::to_string(o) + " to a kernel");
}

}  // namespace ktune::detail
