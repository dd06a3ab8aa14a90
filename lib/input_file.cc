// Input files (input_file.h): zlib reads gzip and plain files alike; plain text read whole;
// pipes copied to a temporary file where a reader needs a file it can read twice.
#include "input_file.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "ktune/error.h"

namespace ktune::detail {

namespace {

// Temporary copies being written or read, removed by SIGTERM or SIGHUP (what `timeout`, `kill`
// and a closed terminal send) before the signal ends the process as it would have: otherwise
// only Ctrl-C (which the commands catch) left no copy behind. Fixed slots, since a signal
// handler may only unlink and read memory; more copies at once than slots go unguarded.
constexpr int kGuardedCopies = 8;
constexpr std::size_t kGuardedPathBytes = 4096;
char g_copy_paths[kGuardedCopies][kGuardedPathBytes];
std::atomic<bool> g_copy_used[kGuardedCopies];

extern "C" void remove_copies_and_end(int sig) {
  for (int i = 0; i < kGuardedCopies; ++i)
    if (g_copy_used[i].load()) ::unlink(g_copy_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// Installs the handler once for SIGTERM and SIGHUP, where the program has none of its own.
void guard_copies_against_signals() {
  static const bool installed = [] {
    for (int sig : {SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_copies_and_end;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)installed;
}

/// The slot now guarding `path`, or -1 (no free slot, or a path too long).
int guard_copy(const std::string& path) {
  guard_copies_against_signals();
  if (path.size() >= kGuardedPathBytes) return -1;
  for (int i = 0; i < kGuardedCopies; ++i) {
    bool expected = false;
    if (g_copy_used[i].load() || !g_copy_used[i].compare_exchange_strong(expected, true)) continue;
    // Written while marked used: a signal now would unlink a half-written name at worst.
    std::memcpy(g_copy_paths[i], path.c_str(), path.size() + 1);
    return i;
  }
  return -1;
}

void unguard_copy(int slot) {
  if (slot >= 0) g_copy_used[slot].store(false);
}

/// Throws Error(parse_error) when `size` bytes read from `what` '`path`' pass
/// kMaxJsonDocumentBytes; `counted` says what was counted (" (after decompression)").
void require_document_size(std::size_t size, const std::string& what, const std::string& path,
                           const char* counted) {
  if (size > kMaxJsonDocumentBytes)
    throw Error(ErrorCode::parse_error, what + " '" + path + "' is larger than " +
                                            std::to_string(kMaxJsonDocumentBytes >> 20) + " MiB" +
                                            counted + "; ktune reads such files up to that size");
}

/// Whether the start of an input (`head`, its first bytes) may be binary: gzip data or an
/// SQLite database. Anything else ktune reads is text, in which a NUL byte never occurs.
bool binary_start(std::string_view head) {
  return (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
          static_cast<unsigned char>(head[1]) == 0x8b) ||
         head.substr(0, 16) == std::string_view("SQLite format 3\0", 16);
}

}  // namespace

GzipInput::GzipInput(const std::string& path, const std::string& what) : path_(path) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (ec || !exists) {
    throw Error(ErrorCode::not_found, what + " '" + path + "' " +
                                          (ec ? "cannot be reached: " + ec.message() : "does not exist"));
  }
  const auto size = std::filesystem::file_size(path, ec);
  disk_bytes_ = ec ? 0 : static_cast<std::uint64_t>(size);
  require_read_permission(path, what);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(ErrorCode::io_error, "cannot open '" + path + "': " + std::strerror(errno));
  auto* z = new z_stream{};
  stream_ = z;
  try {
    // gzip by its magic bytes (1f 8b); anything else is read as it is.
    fill_input();
    plain_ = !(z->avail_in >= 2 && z->next_in[0] == 0x1f && z->next_in[1] == 0x8b);
    if (!plain_ && inflateInit2(z, 16 + MAX_WBITS) != Z_OK) {
      plain_ = true;  // nothing to end
      throw Error(ErrorCode::io_error, "cannot start decompressing '" + path + "'");
    }
  } catch (...) {
    delete z;
    ::close(fd_);
    throw;
  }
}

GzipInput::~GzipInput() {
  auto* z = static_cast<z_stream*>(stream_);
  if (z && !plain_) inflateEnd(z);
  delete z;
  if (fd_ >= 0) ::close(fd_);
}

bool GzipInput::fill_input() {
  auto* z = static_cast<z_stream*>(stream_);
  if (z->avail_in > 0 && z->next_in != in_) std::memmove(in_, z->next_in, z->avail_in);
  const std::size_t kept = z->avail_in;
  ssize_t got = 0;
  do {
    got = ::read(fd_, in_ + kept, sizeof in_ - kept);
  } while (got < 0 && errno == EINTR);
  if (got < 0) throw Error(ErrorCode::io_error, "cannot read '" + path_ + "': " + std::strerror(errno));
  in_offset_ += static_cast<std::uint64_t>(got);
  z->next_in = in_;
  z->avail_in = static_cast<uInt>(kept + static_cast<std::size_t>(got));
  return got > 0;
}

std::size_t GzipInput::read(char* out, std::size_t n) {
  auto* z = static_cast<z_stream*>(stream_);
  n = std::min<std::size_t>(n, 1u << 30);
  std::size_t got = 0;
  if (plain_) {  // what is buffered first, then the file
    got = std::min<std::size_t>(n, z->avail_in);
    std::memcpy(out, z->next_in, got);
    z->next_in += got;
    z->avail_in -= static_cast<uInt>(got);
    if (got == 0 && !ended_) {
      if (!fill_input()) ended_ = true;
      return ended_ ? 0 : read(out, n);
    }
    out_bytes_ += got;
    return got;
  }
  z->next_out = reinterpret_cast<Bytef*>(out);
  z->avail_out = static_cast<uInt>(n);
  while (z->avail_out == n && !ended_) {
    if (z->avail_in == 0 && !fill_input()) {
      // The file ends inside a member: cut short (an interrupted copy, a log still being written).
      throw Error(ErrorCode::parse_error,
                  "'" + path_ + "' ends in the middle of its gzip stream (truncated, or still being "
                  "written?): refused rather than read as a shorter file");
    }
    const int code = inflate(z, Z_NO_FLUSH);
    if (code == Z_STREAM_END) {
      // Another member may follow (joined exports), and nothing else may.
      if (z->avail_in < 2) fill_input();
      if (z->avail_in == 0) {
        ended_ = true;
      } else if (z->avail_in >= 2 && z->next_in[0] == 0x1f && z->next_in[1] == 0x8b) {
        inflateReset(z);
      } else {
        const std::uint64_t at = in_offset_ - z->avail_in;
        throw Error(ErrorCode::parse_error,
                    "'" + path_ + "' holds " +
                        (z->avail_in < 2 ? std::string("a gzip member cut short")
                                         : std::string("data that is not gzip (plain text "
                                                       "appended to a .gz file, e.g. `export - "
                                                       ">> log.jsonl.gz`?)")) +
                        " after its gzip stream, at byte " + std::to_string(at) +
                        ": refused rather than read as a shorter file");
      }
    } else if (code != Z_OK && code != Z_BUF_ERROR) {
      throw Error(ErrorCode::io_error, "cannot read '" + path_ + "': corrupt gzip data (" +
                                           (z->msg ? z->msg : "zlib error " + std::to_string(code)) +
                                           ")");
    }
  }
  got = n - z->avail_out;
  out_bytes_ += got;
  // A compressed file may not inflate without bound.
  if (out_bytes_ > kInflationCheckedFrom && disk_bytes_ > 0 && out_bytes_ > kMaxInflation * disk_bytes_) {
    throw Error(ErrorCode::parse_error,
                "'" + path_ + "' inflates to more than " + std::to_string(kMaxInflation) +
                    " times its " + std::to_string(disk_bytes_) +
                    " bytes; refused as implausible for a log or cache");
  }
  return got;
}

GzipInput::int_type GzipInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const std::size_t got = read(buffer_, sizeof buffer_);
  if (got == 0) return traits_type::eof();
  setg(buffer_, buffer_, buffer_ + got);
  return traits_type::to_int_type(*gptr());
}

Error RereadableInput::naming_input(const Error& e) const {
  if (!copied_) return e;
  std::string message = e.what();
  const std::string shown = given_ == "-" ? "standard input" : given_;
  for (auto at = message.find(path_); at != std::string::npos; at = message.find(path_, at + shown.size()))
    message.replace(at, path_.size(), shown);
  return Error(e.code(), message);
}

RereadableInput::RereadableInput(const std::string& path, const std::string& what,
                                 const std::function<void()>& poll)
    : given_(path), path_(path) {
  std::error_code ec;
  const bool standard_input = path == "-";
  if (!standard_input) {
    const auto status = std::filesystem::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)  // a folder on the way may not be searched
      throw Error(ErrorCode::io_error, what + " '" + path + "' cannot be reached: " + ec.message());
    if (ec || !std::filesystem::exists(status))
      throw Error(ErrorCode::not_found, what + " '" + path + "' does not exist");
    if (std::filesystem::is_directory(status))
      throw Error(ErrorCode::not_found, what + " '" + path + "' is a folder, not a file");
    if (std::filesystem::is_regular_file(status)) return;
  }
  const std::string shown = standard_input ? "standard input" : what + " '" + path + "'";
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "ktune-input-XXXXXX").string();
  if (ec) pattern = "/tmp/ktune-input-XXXXXX";
  const int out = ::mkstemp(pattern.data());
  if (out < 0)
    throw Error(ErrorCode::io_error, "cannot create a temporary copy of " + shown + " ('" +
                                         pattern + "'): " + std::strerror(errno));
  path_ = pattern;
  copied_ = true;
  guard_slot_ = guard_copy(path_);
  int in = -1;
  // A constructor that throws runs no destructor: every way out below removes the copy.
  auto discard_copy = [&] {
    if (in >= 0 && !standard_input) ::close(in);
    ::close(out);
    std::filesystem::remove(path_, ec);
    unguard_copy(guard_slot_);
  };
  auto fail = [&](const std::string& why) {
    const int saved = errno;
    discard_copy();
    throw Error(ErrorCode::io_error, why + ": " + std::strerror(saved));
  };
  auto check_poll = [&] {
    if (!poll) return;
    try {
      poll();
    } catch (...) {
      discard_copy();
      throw;
    }
  };
  // Opening a FIFO waits for its writer; a signal meanwhile is polled like one during a read.
  if (standard_input) in = STDIN_FILENO;
  else
    do {
      check_poll();
      in = ::open(path.c_str(), O_RDONLY);
    } while (in < 0 && errno == EINTR);
  if (in < 0) fail("cannot open " + shown);
  char buffer[1 << 16];
  // The first bytes say whether the input may be binary; text (JSON) holding a NUL byte in
  // its first 64 KiB is refused there (a device such as /dev/zero would fill the disk).
  std::string head;
  std::size_t copied_bytes = 0;
  constexpr std::size_t kHeadBytes = 16, kTextCheckBytes = std::size_t{1} << 16;
  for (;;) {
    check_poll();
    const ssize_t got = ::read(in, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;  // polled again before the next read
      fail("cannot read " + shown);
    }
    if (copied_bytes < kTextCheckBytes) {
      if (head.size() < kHeadBytes)
        head.append(buffer,
                    std::min<std::size_t>(kHeadBytes - head.size(), static_cast<std::size_t>(got)));
      if (head.size() >= kHeadBytes && !binary_start(head) &&
          std::memchr(buffer, 0, static_cast<std::size_t>(got)) != nullptr) {
        discard_copy();
        throw Error(ErrorCode::parse_error,
                    shown + " holds NUL bytes in its first 64 KiB: not a tuning log, a JSON "
                            "document or gzip data");
      }
    }
    copied_bytes += static_cast<std::size_t>(got);
    for (ssize_t done = 0; done < got;) {
      const ssize_t put = ::write(out, buffer + done, static_cast<std::size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) fail("cannot copy " + shown + " to '" + path_ + "'");
      done += put;
    }
  }
  if (!standard_input) ::close(in);
  if (::close(out) != 0) fail("cannot copy " + shown + " to '" + path_ + "'");
}

RereadableInput::~RereadableInput() {
  if (!copied_) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  // A copied SQLite log read in place leaves its companions beside the copy.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, ec);
  unguard_copy(guard_slot_);
}

void require_read_permission(const std::string& path, const std::string& what) {
  if (::faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) == 0) return;
  const int error = errno;  // before any allocation below may change it
  if (error != EACCES && error != EPERM) return;  // missing, a loop...: the caller names those
  throw Error(ErrorCode::io_error, what + " '" + path + "' cannot be read: " + std::strerror(error));
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    throw Error(ErrorCode::not_found, what + " '" + path + "' " +
                                          (ec && ec != std::errc::no_such_file_or_directory
                                               ? "cannot be reached: " + ec.message()
                                               : "does not exist"));
  }
  if (std::filesystem::is_directory(status))
    throw Error(ErrorCode::not_found, what + " '" + path + "' is a folder, not a file");
  require_read_permission(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::io_error, what + " '" + path + "' cannot be opened");
  // In chunks, up to the JSON document limit: a device or a pipe (/dev/zero) that never ends
  // is refused instead of filling memory.
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    require_document_size(text.size(), what, path, "");
  }
  if (in.bad()) throw Error(ErrorCode::io_error, what + " '" + path + "' cannot be read");
  return text;
}

std::string read_maybe_gzip(const std::string& path, const std::string& what, std::size_t limit) {
  GzipInput in(path, what);
  std::string out;
  char buffer[1 << 16];
  while (out.size() < limit) {
    const std::size_t got = in.read(buffer, std::min(sizeof buffer, limit - out.size()));
    if (got == 0) break;
    out.append(buffer, got);
    require_document_size(out.size(), what, path, " (after decompression)");
  }
  return out;
}

}  // namespace ktune::detail
