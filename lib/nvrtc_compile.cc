// NVRTC wrapper: program creation with in-memory headers, compile, log and cubin retrieval.
#include "nvrtc_compile.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

namespace ktune::detail {

namespace {

/// Releases an NVRTC program on scope exit.
struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program != nullptr) nvrtcDestroyProgram(&program);
  }
};

/// The program log, or "" when NVRTC cannot give one.
std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);  // drop the terminating NUL
  // NVRTC's size can count NUL bytes between its own text and ptxas's report: a message
  // printed with %s or appended to would end at the first of them.
  log.erase(std::remove(log.begin(), log.end(), '\0'), log.end());
  return log;
}

/// True when `dir` holds the CUDA half-precision header.
bool has_cuda_headers(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / "cuda_fp16.h", ec);
}

/// Copies the compiled program's PTX into `out` (ptx_only compiles).
void take_ptx(NvrtcOutput& out, nvrtcProgram program) {
  std::size_t size = 0;
  nvrtcResult rc = nvrtcGetPTXSize(program, &size);
  if (rc == NVRTC_SUCCESS && size > 1) {
    out.ptx.assign(size, '\0');
    rc = nvrtcGetPTX(program, out.ptx.data());
    out.ptx.resize(size - 1);  // drop the terminating NUL
  }
  if (rc != NVRTC_SUCCESS || out.ptx.empty()) {
    out.ptx.clear();
    out.log += std::string("\nno PTX produced (nvrtcGetPTX: ") + nvrtcGetErrorString(rc) + ")";
    return;
  }
  out.ok = true;
}

/// Runs NVRTC, filling `out` (everything but the time) with the cubin, or with the PTX when
/// `ptx_only`, or with both when `keep_ptx`.
void compile_into(NvrtcOutput& out, const std::string& source, const std::string& program_name,
                  const std::vector<NvrtcHeader>& headers,
                  const std::vector<std::string>& options, bool ptx_only, bool keep_ptx) {
  std::vector<const char*> header_texts, header_names, option_ptrs;
  for (const auto& h : headers) {
    header_texts.push_back(h.text.c_str());
    header_names.push_back(h.name.c_str());
  }
  for (const auto& o : options) option_ptrs.push_back(o.c_str());

  ProgramGuard guard;
  nvrtcResult rc = nvrtcCreateProgram(&guard.program, source.c_str(), program_name.c_str(),
                                      static_cast<int>(headers.size()), header_texts.data(),
                                      header_names.data());
  if (rc != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(rc);
    return;
  }
  rc = nvrtcCompileProgram(guard.program, static_cast<int>(option_ptrs.size()),
                           option_ptrs.data());
  out.log = program_log(guard.program);
  if (rc != NVRTC_SUCCESS) {
    if (!out.log.empty() && out.log.back() != '\n') out.log += '\n';
    out.log += std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(rc);
    return;
  }
  if (ptx_only) return take_ptx(out, guard.program);
  std::size_t size = 0;
  rc = nvrtcGetCUBINSize(guard.program, &size);
  if (rc != NVRTC_SUCCESS || size == 0) {
    out.log += std::string("\nno cubin produced (nvrtcGetCUBINSize: ") +
               nvrtcGetErrorString(rc) + "); is the target a real sm_XX architecture?";
    return;
  }
  out.cubin.resize(size);
  rc = nvrtcGetCUBIN(guard.program, out.cubin.data());
  if (rc != NVRTC_SUCCESS) {
    out.cubin.clear();
    out.log += std::string("\nnvrtcGetCUBIN: ") + nvrtcGetErrorString(rc);
    return;
  }
  if (keep_ptx) {
    take_ptx(out, guard.program);  // sets ok once the PTX is read
    if (!out.ok) out.cubin.clear();
    return;
  }
  out.ok = true;
}

/// compile_into, timed.
NvrtcOutput timed_compile(const std::string& source, const std::string& program_name,
                          const std::vector<NvrtcHeader>& headers,
                          const std::vector<std::string>& options, bool ptx_only,
                          bool keep_ptx = false) {
  NvrtcOutput out;
  auto start = std::chrono::steady_clock::now();
  compile_into(out, source, program_name, headers, options, ptx_only, keep_ptx);
  out.compile_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& program_name,
                          const std::vector<NvrtcHeader>& headers,
                          const std::vector<std::string>& options, bool keep_ptx) {
  return timed_compile(source, program_name, headers, options, false, keep_ptx);
}

NvrtcOutput nvrtc_compile_ptx(const std::string& source, const std::string& program_name,
                              const std::vector<NvrtcHeader>& headers,
                              const std::vector<std::string>& options) {
  return timed_compile(source, program_name, headers, options, true);
}

bool nvrtc_caches_programs() {
  static const bool caches = [] {
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return false;
    return major > 12 || (major == 12 && minor >= 9);
  }();
  return caches;
}

void add_default_language_standard(std::vector<std::string>& options) {
  const bool named = std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o.rfind("-std=", 0) == 0 || o.rfind("--std=", 0) == 0;
  });
  if (!named) options.push_back("-std=c++20");
}

std::string nvrtc_version_string() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

const std::string& cuda_include_dir() {
  static const std::string dir = [] {
    std::vector<std::string> candidates;
#ifdef KTUNE_CUDA_INCLUDE_DIR
    std::stringstream built_with(KTUNE_CUDA_INCLUDE_DIR);  // a CMake list: a;b
    for (std::string d; std::getline(built_with, d, ';');) candidates.push_back(d);
#endif
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* root = std::getenv(var)) candidates.push_back(std::string(root) + "/include");
    candidates.push_back("/usr/local/cuda/include");
    for (const auto& d : candidates)
      if (has_cuda_headers(d)) return d;
    return std::string();
  }();
  return dir;
}

}  // namespace ktune::detail
