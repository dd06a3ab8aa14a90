// Thin wrapper over NVRTC: one source plus named in-memory headers and options to a cubin and
// the compiler log. Never throws for compiler failures; locates the CUDA headers directory so
// that <cuda_fp16.h> and <cuda_bf16.h> work in templates.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ktune {
class Config;
class KernelTemplate;
struct Problem;
}  // namespace ktune

namespace ktune::detail {

/// One in-memory header given to NVRTC: include name (e.g. "common/vec.cuh") and text.
struct NvrtcHeader {
  std::string name;  ///< path used in #include "..."
  std::string text;  ///< contents
};

/// Outcome of one NVRTC compile.
struct NvrtcOutput {
  bool ok = false;          ///< a cubin (nvrtc_compile) or PTX (nvrtc_compile_ptx) was produced
  std::string log;          ///< compiler log (errors, warnings, ptxas -v report)
  std::vector<char> cubin;  ///< the binary (ok only; nvrtc_compile)
  std::string ptx;          ///< the PTX (ok only; nvrtc_compile_ptx, nvrtc_compile's keep_ptx)
  double compile_ms = 0;    ///< wall time of compile + cubin retrieval
};

/// Compiles `source` (named `program_name` in messages) to a cubin. Failures, including
/// rejected options, come back as ok=false with the reason in the log. `keep_ptx`: the PTX the
/// cubin was made from comes back too (to read what a kernel does before it waits).
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& program_name,
                          const std::vector<NvrtcHeader>& headers,
                          const std::vector<std::string>& options, bool keep_ptx = false);

/// Compiles `source` to PTX (options name a virtual architecture: compute_90), to read what
/// the front end made of it, e.g. which instructions an entry begins with. Failures come back
/// as ok=false with the reason in the log.
NvrtcOutput nvrtc_compile_ptx(const std::string& source, const std::string& program_name,
                              const std::vector<NvrtcHeader>& headers,
                              const std::vector<std::string>& options);

/// Every embedded *.cuh under templates/, named by relative path ("common/dtype.cuh"), as
/// NVRTC headers, so sources can include them (defined with the Builder, lib/builder.cc).
const std::vector<NvrtcHeader>& template_headers();

/// The NVRTC options `config` of `tmpl` compiles with for `problem` on `arch` (the problem's
/// and the config's defines, --gpu-architecture, the language standard), before the Builder's
/// own additions (ptxas report, cache bypass, CUDA include folder); defined with the Builder.
std::vector<std::string> template_compile_options(const KernelTemplate& tmpl, const Problem& problem,
                                                  const Config& config, const std::string& arch);

/// Hex hash of the names and texts of template_headers() (part of every build's cache key, and
/// what a compile helper checks before it answers).
const std::string& template_headers_hash();

/// Appends ktune's language standard (-std=c++20) unless `options` already name one (a user
/// template's CompilerOptions): given after it, the default would override it.
void add_default_language_standard(std::vector<std::string>& options);

/// NVRTC version as "13.0".
std::string nvrtc_version_string();

/// True when this NVRTC keeps its own cache of compiled programs (12.9 and later, in the CUDA
/// compute cache, ~/.nv/ComputeCache): a hit skips ptxas, so the log lacks the --ptxas-options=-v
/// report (registers, shared memory, spills) that the Builder reads. Such compiles pass
/// kNvrtcNoCache; the Builder keeps its own cache, with the log, instead.
bool nvrtc_caches_programs();

/// The NVRTC option that bypasses its own cache (12.9 and later).
inline constexpr const char* kNvrtcNoCache = "--no-cache";

/// A directory holding cuda_fp16.h: the toolkit this library was built with, else
/// $CUDA_HOME/include, $CUDA_PATH/include or /usr/local/cuda/include; "" when none exists.
const std::string& cuda_include_dir();

}  // namespace ktune::detail
