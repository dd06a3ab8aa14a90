// The kernel template sources compiled into the library (templates/**/*.cu, *.cuh), keyed by
// their path under templates/; the definition is generated at build time by
// cmake/embed_sources.cmake. Internal API of the library (not installed).
#pragma once

#include <map>
#include <string>

namespace ktune::detail {

/// Every embedded template source: "gemm/gemm_mma.cu" -> its text.
const std::map<std::string, std::string>& embedded_sources();

}  // namespace ktune::detail
