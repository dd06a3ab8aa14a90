// Reading the files a user hands to ktune (logs, caches, T1 documents, plans, kernels), with
// the guards untrusted input needs: a missing, unreachable or folder path is a named error,
// and a compressed file that inflates far beyond any real log (a "gzip bomb") is refused
// early instead of exhausting memory or time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <streambuf>
#include <string>

#include "ktune/error.h"

namespace ktune::detail {

/// Largest whole JSON document (cache, T4 file) read into memory, after decompression.
constexpr std::size_t kMaxJsonDocumentBytes = std::size_t{1} << 30;
/// Compressed input may inflate to this many times its size on disk (real logs: under 10x) ...
constexpr std::uint64_t kMaxInflation = 100;
/// ... once this many bytes are out; below that, any ratio is accepted.
constexpr std::uint64_t kInflationCheckedFrom = std::uint64_t{64} << 20;

/// Decompressed bytes of a file, gzip or plain, with the inflation guard. A gzip file may hold
/// several members one after another (joined exports); anything else after a member (plain
/// text appended to a .gz, a member cut short) is refused, never skipped. Throws Error:
/// not_found (missing or unreachable path), io_error (unreadable, corrupt gzip), parse_error
/// (inflates beyond kMaxInflation, truncated, or trailing data that is not gzip).
class GzipInput : public std::streambuf {
 public:
  /// Opens `path`; `what` names the file's role in messages ("Kernel Tuner cache file").
  GzipInput(const std::string& path, const std::string& what);
  ~GzipInput() override;
  GzipInput(const GzipInput&) = delete;
  GzipInput& operator=(const GzipInput&) = delete;
  /// Up to `n` more decompressed bytes into `out`; 0 at the end.
  std::size_t read(char* out, std::size_t n);

 protected:
  int_type underflow() override;

 private:
  /// More raw bytes of the file into in_ (after what is left there); false at its end.
  bool fill_input();

  std::string path_;
  int fd_ = -1;
  void* stream_ = nullptr;  // z_stream, while the file is gzip
  bool plain_ = false;      // not gzip: read as it is
  bool ended_ = false;      // the last member (or the plain file) is read whole
  std::uint64_t disk_bytes_ = 0;
  std::uint64_t in_offset_ = 0;  // raw bytes read from the file so far
  std::uint64_t out_bytes_ = 0;
  unsigned char in_[1 << 16];
  char buffer_[1 << 16];
};

/// A path that can be read more than once, as format detection and the two reads of a
/// streamed import need: a regular file is used in place; anything else ("-" for standard
/// input, a pipe, a process substitution such as <(zcat log.jsonl.gz)) is first copied to a
/// temporary file, removed again with this object, or by SIGTERM / SIGHUP where the program
/// has no handler of its own for them. Throws Error: not_found (missing path, a folder),
/// io_error (unreadable input, or no room for the copy), parse_error (NUL bytes in the first
/// 64 KiB of an input that is neither gzip data nor an SQLite database, e.g. /dev/zero).
class RereadableInput {
 public:
  /// `what` names the input's role in messages ("file to import"). `poll`, when given, is
  /// called between the chunks of a copy (and when a signal interrupts a read); whatever it
  /// throws (a Ctrl-C) leaves the constructor with the partial copy removed.
  RereadableInput(const std::string& path, const std::string& what,
                  const std::function<void()>& poll = {});
  ~RereadableInput();
  RereadableInput(const RereadableInput&) = delete;
  RereadableInput& operator=(const RereadableInput&) = delete;
  /// The regular file to open: the path given, or the temporary copy.
  const std::string& path() const { return path_; }
  /// Whether the input was copied (messages naming path() should name the input instead).
  bool copied() const { return copied_; }
  /// `e` with every mention of the temporary copy replaced by the input's own name ("standard
  /// input" for "-"), so a reader's message names what the user gave.
  Error naming_input(const Error& e) const;

 private:
  std::string given_;
  std::string path_;
  bool copied_ = false;
  int guard_slot_ = -1;  ///< the copy's slot in the SIGTERM / SIGHUP clean-up, or -1
};

/// Throws Error(io_error) naming `what` '`path`' and the system's reason ("Permission denied")
/// when this process may not read the file; does nothing otherwise (a missing path, a symbolic
/// link loop: callers name those).
void require_read_permission(const std::string& path, const std::string& what);

/// The whole content of the plain file `path`; `what` names its role in messages ("plan
/// file"). Throws Error: not_found (missing, unreachable, a folder), io_error (unreadable),
/// parse_error (more than kMaxJsonDocumentBytes, such as a device that never ends).
std::string read_text_file(const std::string& path, const std::string& what);

/// The whole decompressed content of `path` (gzip or plain), or its first `limit` bytes;
/// above kMaxJsonDocumentBytes (when `limit` does not stop it first) throws parse_error.
std::string read_maybe_gzip(const std::string& path, const std::string& what,
                            std::size_t limit = std::numeric_limits<std::size_t>::max());

}  // namespace ktune::detail
