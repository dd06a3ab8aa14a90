// Frames and JSON forms of the parent <-> ktune-worker protocol (see worker_protocol.h).
#include "worker_protocol.h"

#include <limits>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "enum_names.h"
#include "ktune/error.h"

namespace ktune::worker {

namespace {

constexpr char kMagic[4] = {'K', 'T', 'W', '1'};
constexpr std::size_t kPrefixBytes = 4 + 4 + 8;

using Clock = std::chrono::steady_clock;

bool is_socket(int fd) {
  struct stat st{};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

bool write_all(int fd, const char* data, std::size_t size) {
  bool sock = is_socket(fd);
  while (size > 0) {
    ssize_t n = sock ? ::send(fd, data, size, MSG_NOSIGNAL) : ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

const char* kind_name(KernelArg::Kind k) {
  switch (k) {
    case KernelArg::Kind::buffer: return "buffer";
    case KernelArg::Kind::i32: return "i32";
    case KernelArg::Kind::i64: return "i64";
    case KernelArg::Kind::f32: return "f32";
    case KernelArg::Kind::f64: return "f64";
  }
  return "?";
}

KernelArg::Kind kind_from_name(const std::string& s) {
  for (auto k : {KernelArg::Kind::buffer, KernelArg::Kind::i32, KernelArg::Kind::i64,
                 KernelArg::Kind::f32, KernelArg::Kind::f64})
    if (s == kind_name(k)) return k;
  throw Error(ErrorCode::parse_error, "worker protocol: unknown kernel argument kind \"" + s + "\"");
}

nlohmann::json buffer_to_json(const BufferSpec& b) {
  return {{"name", b.name}, {"dtype", to_string(b.dtype)}, {"elements", b.elements},
          {"role", static_cast<int>(b.role)}, {"offset", b.offset_bytes}};
}

BufferSpec buffer_from_json(const nlohmann::json& j) {
  BufferSpec b;
  b.name = j.at("name").get<std::string>();
  b.dtype = dtype_from_string(j.at("dtype").get<std::string>());
  b.elements = j.at("elements").get<std::size_t>();
  const int role = j.at("role").get<int>();
  if (role < static_cast<int>(Role::input) || role > static_cast<int>(Role::scratch))
    throw Error(ErrorCode::parse_error, "worker protocol: buffer \"" + b.name + "\" has role " +
                                            std::to_string(role) + " (expected 0 .. 3)");
  b.role = static_cast<Role>(role);
  b.offset_bytes = j.at("offset").get<std::size_t>();
  return b;
}

}  // namespace

std::vector<char> encode_frame(const Frame& frame) {
  std::string header = frame.header.dump();
  std::uint32_t hlen = static_cast<std::uint32_t>(header.size());
  std::uint64_t plen = frame.payload.size();
  std::vector<char> out(kPrefixBytes + header.size() + frame.payload.size());
  std::memcpy(out.data(), kMagic, 4);
  std::memcpy(out.data() + 4, &hlen, 4);
  std::memcpy(out.data() + 8, &plen, 8);
  std::memcpy(out.data() + kPrefixBytes, header.data(), header.size());
  if (!frame.payload.empty())
    std::memcpy(out.data() + kPrefixBytes + header.size(), frame.payload.data(), plen);
  return out;
}

bool write_frame(int fd, const Frame& frame) {
  auto bytes = encode_frame(frame);
  return write_all(fd, bytes.data(), bytes.size());
}

ReadStatus FrameReader::parse_buffered(Frame& out, std::string* error) {
  if (buffer_.size() < kPrefixBytes) return ReadStatus::timeout;  // need more bytes
  if (std::memcmp(buffer_.data(), kMagic, 4) != 0) {
    if (error) *error = "bad frame magic (the peer wrote something that is not a frame)";
    return ReadStatus::malformed;
  }
  std::uint32_t hlen;
  std::uint64_t plen;
  std::memcpy(&hlen, buffer_.data() + 4, 4);
  std::memcpy(&plen, buffer_.data() + 8, 8);
  if (hlen > kMaxHeaderBytes || plen > kMaxPayloadBytes) {
    if (error) *error = "frame too large (header " + std::to_string(hlen) + " bytes, attachment " +
                        std::to_string(plen) + " bytes)";
    return ReadStatus::malformed;
  }
  std::size_t total = kPrefixBytes + hlen + plen;
  if (buffer_.size() < total) return ReadStatus::timeout;
  try {
    out.header = nlohmann::json::parse(buffer_.begin() + kPrefixBytes,
                                       buffer_.begin() + kPrefixBytes + hlen);
  } catch (const std::exception& e) {
    if (error) *error = std::string("frame header is not JSON: ") + e.what();
    return ReadStatus::malformed;
  }
  out.payload.assign(buffer_.begin() + kPrefixBytes + hlen, buffer_.begin() + total);
  buffer_.erase(buffer_.begin(), buffer_.begin() + total);
  return ReadStatus::ok;
}

ReadStatus FrameReader::read(Frame& out, double timeout_ms, std::string* error) {
  auto deadline = Clock::now() + std::chrono::microseconds(
                                     static_cast<std::int64_t>(std::max(0.0, timeout_ms) * 1000));
  char chunk[1 << 16];
  for (;;) {
    ReadStatus s = parse_buffered(out, error);
    if (s != ReadStatus::timeout) return s;
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() < 0) return ReadStatus::timeout;
      wait_ms = static_cast<int>(std::min<std::int64_t>(left.count() + 1, 1 << 30));
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, wait_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::closed;
    }
    if (r == 0) {
      if (Clock::now() >= deadline) return ReadStatus::timeout;
      continue;
    }
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ReadStatus::closed;
    }
    if (n == 0) return ReadStatus::closed;
    feed(chunk, static_cast<std::size_t>(n));
  }
}

nlohmann::json plan_to_json(const LaunchPlan& plan) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : plan.steps) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : s.args)
      args.push_back({{"kind", kind_name(a.kind)}, {"buffer", a.buffer}, {"i", a.i}, {"f", a.f}});
    steps.push_back({{"kind", s.kind == LaunchStep::Kind::kernel ? "kernel" : "memset"},
                     {"entry", s.entry},
                     {"grid", {s.grid[0], s.grid[1], s.grid[2]}},
                     {"block", {s.block[0], s.block[1], s.block[2]}},
                     {"smem", s.dynamic_smem},
                     {"args", args},
                     {"memset_buffer", s.memset_buffer},
                     {"memset_byte", s.memset_byte},
                     {"grid_dependency_wait", s.grid_dependency_wait}});
  }
  nlohmann::json scratch = nlohmann::json::array();
  for (const auto& b : plan.scratch) scratch.push_back(buffer_to_json(b));
  return {{"steps", steps}, {"scratch", scratch}};
}

LaunchPlan plan_from_json(const nlohmann::json& j) {
  try {
    LaunchPlan plan;
    for (const auto& s : j.at("steps")) {
      LaunchStep step;
      step.kind = s.at("kind").get<std::string>() == "kernel" ? LaunchStep::Kind::kernel
                                                               : LaunchStep::Kind::memset;
      step.entry = s.at("entry").get<std::string>();
      for (int d = 0; d < 3; ++d) {
        step.grid[d] = s.at("grid").at(d).get<unsigned>();
        step.block[d] = s.at("block").at(d).get<unsigned>();
      }
      step.dynamic_smem = s.at("smem").get<unsigned>();
      for (const auto& a : s.at("args")) {
        KernelArg arg;
        arg.kind = kind_from_name(a.at("kind").get<std::string>());
        arg.buffer = a.at("buffer").get<std::size_t>();
        arg.i = a.at("i").get<std::int64_t>();
        arg.f = a.at("f").get<double>();
        step.args.push_back(arg);
      }
      step.memset_buffer = s.at("memset_buffer").get<std::size_t>();
      step.memset_byte = s.at("memset_byte").get<int>();
      step.grid_dependency_wait = s.value("grid_dependency_wait", false);
      plan.steps.push_back(std::move(step));
    }
    for (const auto& b : j.at("scratch")) plan.scratch.push_back(buffer_from_json(b));
    return plan;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::parse_error, std::string("worker protocol: bad launch plan: ") + e.what());
  }
}

const char* to_string(L2Policy policy) {
  switch (policy) {
    case L2Policy::automatic: return "automatic";
    case L2Policy::flush: return "flush";
    case L2Policy::rotate: return "rotate";
    case L2Policy::none: return "none";
  }
  return "?";
}

L2Policy l2_policy_from_string(const std::string& text) {
  constexpr L2Policy kAll[] = {L2Policy::automatic, L2Policy::flush, L2Policy::rotate, L2Policy::none};
  return detail::enum_from_name(text, kAll, "L2 policy", to_string);
}

nlohmann::json timing_to_json(const TimingOptions& t) {
  return {{"min_time_ms", t.min_time_ms}, {"min_reps", t.min_reps}, {"max_reps", t.max_reps},
          {"warmup_ms", t.warmup_ms},     {"min_warmup", t.min_warmup}, {"l2", to_string(t.l2)},
          {"runs_per_sample", t.runs_per_sample}, {"reset_l2_priorities", t.reset_l2_priorities},
          {"graph", t.graph}, {"programmatic_launch", t.programmatic_launch}};
}

TimingOptions timing_from_json(const nlohmann::json& j) {
  TimingOptions t;
  t.min_time_ms = j.value("min_time_ms", t.min_time_ms);
  t.min_reps = j.value("min_reps", t.min_reps);
  t.max_reps = j.value("max_reps", t.max_reps);
  t.warmup_ms = j.value("warmup_ms", t.warmup_ms);
  t.min_warmup = j.value("min_warmup", t.min_warmup);
  t.l2 = l2_policy_from_string(j.value("l2", std::string("automatic")));
  t.runs_per_sample = j.value("runs_per_sample", t.runs_per_sample);
  t.reset_l2_priorities = j.value("reset_l2_priorities", t.reset_l2_priorities);
  t.graph = j.value("graph", t.graph);
  t.programmatic_launch = j.value("programmatic_launch", t.programmatic_launch);
  return t;
}

nlohmann::json result_to_json(const WorkerResult& r) {
  return {{"type", "result"},          {"status", to_string(r.status)},
          {"message", r.message},      {"context_lost", r.context_lost},
          {"times_ms", r.times_ms},    {"error_norm", r.error_norm},
          {"sm_clock_mhz", r.sm_clock_mhz}, {"temperature_c", r.temperature_c},
          {"reps", r.reps},            {"runs_per_sample", r.runs_per_sample},
          {"launch", to_string(r.launch)},
          {"prepare_ms", r.prepare_ms}, {"verify_ms", r.verify_ms},
          {"timing_ms", r.timing_ms}};
}

WorkerResult result_from_json(const nlohmann::json& j) {
  try {
    WorkerResult r;
    r.status = status_from_string(j.at("status").get<std::string>());
    r.message = j.value("message", std::string());
    r.context_lost = j.value("context_lost", false);
    r.times_ms = j.value("times_ms", std::vector<double>{});
    // NaN (a NaN output's error) travels as JSON null.
    const auto norm = j.find("error_norm");
    r.error_norm = norm == j.end() ? -1.0
                   : norm->is_null() ? std::numeric_limits<double>::quiet_NaN()
                                     : norm->get<double>();
    r.sm_clock_mhz = j.value("sm_clock_mhz", -1);
    r.temperature_c = j.value("temperature_c", -1);
    r.reps = j.value("reps", 0);
    r.runs_per_sample = j.value("runs_per_sample", 1);
    r.launch = launch_form_from_string(j.value("launch", std::string("unknown")));
    r.prepare_ms = j.value("prepare_ms", 0.0);
    r.verify_ms = j.value("verify_ms", 0.0);
    r.timing_ms = j.value("timing_ms", 0.0);
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::parse_error, std::string("worker protocol: bad result: ") + e.what());
  }
}

}  // namespace ktune::worker
