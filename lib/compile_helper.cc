// NVRTC compiles in helper processes: the `ktune-worker --compile` loop and its client (see
// compile_helper.h).
#include "compile_helper.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cubin_cache.h"
#include "ktune/error.h"
#include "worker_process.h"
#include "worker_protocol.h"
#include "worker_server.h"

namespace ktune::worker {

namespace {

/// What a helper and its client must agree on before a cubin may cross: the NVRTC version and
/// the built-in headers (the other parts of a build's cache key travel in the request).
const nlohmann::json& compile_identity() {
  // "protocol" 2: requests may ask for the PTX (keep_ptx); a helper that would ignore that is
  // refused at hello.
  static const nlohmann::json identity = {{"nvrtc", detail::nvrtc_version_string()},
                                          {"headers", detail::template_headers_hash()},
                                          {"protocol", 2}};
  return identity;
}

}  // namespace

int serve_compiles(int in_fd, int out_fd) {
  const nlohmann::json& identity = compile_identity();
  return serve_frames(in_fd, out_fd, "ktune-worker --compile",
                      [&](const Frame& request) -> std::optional<Frame> {
    const std::string type = request.header.value("type", "");
    if (type == "quit") return std::nullopt;
    Frame reply;
    if (type == "hello") {
      reply.header = {{"type", "hello"}, {"identity", identity}};
      return reply;
    }
    if (type != "compile")
      throw Error(ErrorCode::invalid_argument, "unknown message type \"" + type + "\"");
    if (request.header.value("identity", nlohmann::json()) != identity)
      throw Error(ErrorCode::invalid_argument,
                  "compile request for " + request.header.value("identity", nlohmann::json()).dump() +
                      ", this helper is " + identity.dump());
    const std::string source(request.payload.begin(), request.payload.end());
    const bool keep_ptx = request.header.value("keep_ptx", false);
    detail::NvrtcOutput out = detail::nvrtc_compile(
        source, request.header.at("name").get<std::string>(), detail::template_headers(),
        request.header.at("options").get<std::vector<std::string>>(), keep_ptx);
    reply.header = {{"type", "compiled"}, {"ok", out.ok}, {"log", out.log}, {"compile_ms", out.compile_ms}};
    if (keep_ptx) reply.header["ptx"] = out.ptx;
    reply.payload = std::move(out.cubin);
    return reply;
  });
}

CompileHelper::CompileHelper(const std::string& program)
    : child_(std::make_unique<ChildProcess>(std::vector<std::string>{program, "--compile"})),
      reader_(std::make_unique<FrameReader>(child_->fd())) {
  // A program that does not speak --compile (an older ktune-worker), or was built with another
  // NVRTC or other headers, is found out here, before it is given a config to compile.
  Frame hello;
  hello.header = {{"type", "hello"}};
  Frame reply;
  std::string why;
  const bool sent = write_frame(child_->fd(), hello);
  const ReadStatus rs = sent ? reader_->read(reply, 30000, &why) : ReadStatus::closed;
  std::string problem;
  if (rs == ReadStatus::closed)
    problem = "it " + child_->reap(1000) + " instead of answering";
  else if (rs == ReadStatus::timeout)
    problem = "no answer within 30 s";
  else if (rs == ReadStatus::malformed)
    problem = "protocol error: " + why;
  else if (reply.header.value("type", "") != "hello" ||
           reply.header.value("identity", nlohmann::json()) != compile_identity())
    problem = "it answered " + reply.header.dump() + " where this library is " + compile_identity().dump();
  if (!problem.empty()) {
    usable_ = false;
    child_->kill_and_reap();
    throw Error(ErrorCode::io_error, "compile helper " + program + " is not usable: " + problem);
  }
}

CompileHelper::~CompileHelper() {
  if (child_ && child_->running()) {
    Frame quit;
    quit.header = {{"type", "quit"}};
    if (usable_ && write_frame(child_->fd(), quit)) child_->reap(1000);
  }
}

std::optional<detail::NvrtcOutput> CompileHelper::compile(const std::string& source,
                                                          const std::string& program_name,
                                                          const std::vector<std::string>& options,
                                                          bool keep_ptx, double timeout_ms,
                                                          std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<detail::NvrtcOutput> {
    usable_ = false;
    if (why) *why = reason;
    if (child_) child_->kill_and_reap();
    return std::nullopt;
  };
  if (!usable_) return fail("the helper failed earlier");
  Frame request;
  request.header = {{"type", "compile"},
                    {"identity", compile_identity()},
                    {"name", program_name},
                    {"options", options},
                    {"keep_ptx", keep_ptx}};
  request.payload.assign(source.begin(), source.end());
  if (!write_frame(child_->fd(), request)) return fail("the helper is gone");
  Frame reply;
  std::string error;
  switch (reader_->read(reply, timeout_ms, &error)) {
    case ReadStatus::ok: break;
    case ReadStatus::timeout: return fail("no answer within " + std::to_string(timeout_ms) + " ms");
    case ReadStatus::closed: {
      // The compile took the helper down (NVRTC crashed on this source, or the process was
      // killed): the config fails to compile, and this process, which would crash the same
      // way, does not try it again.
      usable_ = false;
      died_ = true;
      detail::NvrtcOutput died;
      died.log = "the NVRTC compile helper (" + child_->reap(1000) + ") did not answer for " +
                 program_name;
      return died;
    }
    case ReadStatus::malformed: return fail("protocol error: " + error);
  }
  if (!reply.header.is_object()) return fail("protocol error: the answer's header is not an object");
  const std::string type = reply.header.value("type", "");
  if (type == "error") return fail("refused: " + reply.header.value("message", std::string("?")));
  if (type != "compiled") return fail("unexpected message \"" + type + "\"");
  detail::NvrtcOutput out;
  try {
    out.ok = reply.header.at("ok").get<bool>();
    out.log = reply.header.at("log").get<std::string>();
    out.compile_ms = reply.header.at("compile_ms").get<double>();
    if (keep_ptx && out.ok) out.ptx = reply.header.at("ptx").get<std::string>();
  } catch (const std::exception& e) {
    return fail(std::string("malformed answer: ") + e.what());
  }
  if (out.ok && !detail::looks_like_cubin(reply.payload))
    return fail("a successful compile whose cubin is not an ELF file");
  out.cubin = std::move(reply.payload);
  return out;
}

CompileHelperPool::CompileHelperPool(std::string program, int max_helpers)
    : program_(std::move(program)), max_helpers_(max_helpers < 1 ? 1 : max_helpers) {}

CompileHelperPool::~CompileHelperPool() = default;

std::optional<detail::NvrtcOutput> CompileHelperPool::compile(
    const std::string& source, const std::string& program_name,
    const std::vector<std::string>& options, bool keep_ptx) {
  std::unique_ptr<CompileHelper> helper;
  {
    std::lock_guard lock(mutex_);
    if (disabled_) return std::nullopt;
    if (!idle_.empty()) {
      helper = std::move(idle_.back());
      idle_.pop_back();
    } else if (started_ >= max_helpers_) {
      return std::nullopt;  // more compiling threads than helpers: this one compiles here
    } else {
      ++started_;
    }
  }
  if (!helper) {
    try {
      helper = std::make_unique<CompileHelper>(program_);
    } catch (const std::exception& e) {
      spdlog::warn("compiling in this process: {}", e.what());
      std::lock_guard lock(mutex_);
      --started_;
      disabled_ = true;
      return std::nullopt;
    }
  }
  std::string why;
  // Far above any compile of the built-in templates (seconds), below a hung process's forever.
  constexpr double kTimeoutMs = 120000;
  auto out = helper->compile(source, program_name, options, keep_ptx, kTimeoutMs, &why);
  if (helper->died()) {
    // Once more in a fresh helper: a helper killed from outside is not the source's fault,
    // while a source that takes NVRTC down does so again and fails to compile.
    try {
      helper = std::make_unique<CompileHelper>(program_);
      out = helper->compile(source, program_name, options, keep_ptx, kTimeoutMs, &why);
    } catch (const std::exception& e) {
      spdlog::warn("compile helper could not be restarted: {}", e.what());
    }
  }
  std::lock_guard lock(mutex_);
  if (out) ++compiles_;
  if (helper->usable()) {
    failures_ = 0;
    idle_.push_back(std::move(helper));
    return out;
  }
  --started_;
  if (!out) {
    spdlog::warn("compiling {} in this process: the compile helper failed: {}", program_name, why);
    // A helper that refuses (another NVRTC, other headers) or times out will do so again.
    if (++failures_ >= 2 && !disabled_) {
      disabled_ = true;
      spdlog::warn("compile helpers failed twice in a row: compiling in this process from now on");
    }
  }
  return out;
}

std::uint64_t CompileHelperPool::compiles() const {
  std::lock_guard lock(mutex_);
  return compiles_;
}

}  // namespace ktune::worker
