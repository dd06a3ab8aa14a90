// Two-level cubin cache: memory map of shared futures (joins concurrent compiles of one key)
// over an optional directory of <key>.cubin + <key>.json files written atomically.
#include "cubin_cache.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "atomic_file.h"
#include "content_hash.h"
#include "ktune/error.h"

namespace ktune::detail {

namespace fs = std::filesystem;

bool looks_like_cubin(const std::vector<char>& bytes) {
  return bytes.size() >= 64 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
         bytes[3] == 'F';
}

namespace {

constexpr int kSidecarFormat = 1;  // bump when the sidecar layout changes

/// Whole file as bytes, or nullopt when it cannot be read.
std::optional<std::vector<char>> read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;  // a folder or a FIFO is no entry
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return std::nullopt;
    return bytes;
  } catch (const std::exception&) {  // a read error of the stream library
    return std::nullopt;
  }
}

/// Temporary files older than kStaleTemporary: left by a writer killed between its write and
/// its rename (no write takes that long), which nothing else would ever remove.
constexpr auto kStaleTemporary = std::chrono::minutes(10);

void remove_stale_temporaries(const fs::path& directory) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 6 || !name.starts_with('.') || !name.ends_with(".tmp") ||
        (name.find(".cubin.") == std::string::npos && name.find(".json.") == std::string::npos))
      continue;
    std::error_code time_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    if (!time_ec && now - written > kStaleTemporary) fs::remove(it->path(), time_ec);
  }
}

}  // namespace

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

CubinCache::CubinCache(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) return;
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec || !fs::is_directory(directory_))
    throw Error(ErrorCode::io_error, "cannot create the cubin cache directory '" + directory_ +
                                         "': " + (ec ? ec.message() : "not a directory"));
}

std::string CubinCache::cubin_path(const std::string& key) const {
  return (fs::path(directory_) / (key + ".cubin")).string();
}

std::string CubinCache::sidecar_path(const std::string& key) const {
  return (fs::path(directory_) / (key + ".json")).string();
}

std::pair<CompiledKernel, CacheSource> CubinCache::get_or_compile(
    const std::string& key, const std::function<CompiledKernel()>& compile) {
  std::promise<CompiledKernel> promise;
  std::unique_lock lock(mutex_);
  if (auto it = memory_.find(key); it != memory_.end()) {
    ++stats_.memory_hits;
    std::shared_future<CompiledKernel> pending = it->second;
    lock.unlock();  // wait for an in-flight compile without holding the lock
    return {pending.get(), CacheSource::memory};
  }
  memory_.emplace(key, promise.get_future().share());
  lock.unlock();
  try {
    if (!directory_.empty()) {
      if (auto entry = load_from_disk(key)) {
        {
          std::lock_guard count_lock(mutex_);
          ++stats_.disk_hits;
        }
        promise.set_value(*entry);
        return {*entry, CacheSource::disk};
      }
    }
    CompiledKernel entry = compile();
    {
      std::lock_guard count_lock(mutex_);
      ++stats_.compiles;
      if (!entry.ok) ++stats_.failures;
    }
    if (entry.ok && !directory_.empty()) store_to_disk(key, entry);
    promise.set_value(entry);
    return {entry, CacheSource::miss};
  } catch (...) {
    // Never leave waiters hanging: hand them the exception and forget the key.
    promise.set_exception(std::current_exception());
    std::lock_guard relock(mutex_);
    memory_.erase(key);
    throw;
  }
}

CacheStats CubinCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CubinCache::clear_memory() {
  std::lock_guard lock(mutex_);
  memory_.clear();
}

std::optional<CompiledKernel> CubinCache::load_from_disk(const std::string& key) const {
  auto sidecar = read_file(sidecar_path(key));
  auto cubin = read_file(cubin_path(key));
  if (!sidecar || !cubin) return std::nullopt;
  try {
    auto meta = nlohmann::json::parse(sidecar->begin(), sidecar->end());
    if (meta.at("format").get<int>() != kSidecarFormat || meta.at("key").get<std::string>() != key)
      return std::nullopt;
    if (meta.at("cubin_bytes").get<std::size_t>() != cubin->size() || !looks_like_cubin(*cubin) ||
        meta.at("cubin_fnv1a").get<std::string>() !=
            hex64(fnv1a64(std::string_view(cubin->data(), cubin->size()))))
      return std::nullopt;
    CompiledKernel entry;
    entry.ok = true;
    entry.log = meta.at("log").get<std::string>();
    entry.arch = meta.at("arch").get<std::string>();
    entry.options = meta.at("options").get<std::vector<std::string>>();
    entry.compile_ms = meta.at("compile_ms").get<double>();
    entry.cubin = std::make_shared<const std::vector<char>>(std::move(*cubin));
    return entry;
  } catch (const std::exception& e) {
    spdlog::debug("ignoring unreadable cubin cache entry {}: {}", sidecar_path(key), e.what());
    return std::nullopt;
  }
}

void CubinCache::store_to_disk(const std::string& key, const CompiledKernel& entry) const {
  // Best effort: a cache that cannot be written costs a recompile later, never a failed build.
  const std::vector<char>& cubin = *entry.cubin;
  nlohmann::json meta = {
      {"format", kSidecarFormat},
      {"key", key},
      {"arch", entry.arch},
      {"options", entry.options},
      {"log", entry.log},
      {"compile_ms", entry.compile_ms},
      {"cubin_bytes", cubin.size()},
      {"cubin_fnv1a", hex64(fnv1a64(std::string_view(cubin.data(), cubin.size())))},
  };
  // The cubin goes first: a sidecar is only ever next to the cubin it describes (the checksum
  // catches a concurrent writer's cubin of the same key, which is identical anyway).
  // Each file is written whole or not at all (atomic_file.h): readers never see a torn one.
  try {
    write_file_atomically(cubin_path(key), [&](std::ostream& out) {
      out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    }, AtomicTarget::library_file);
    write_file_atomically(sidecar_path(key), [&](std::ostream& out) {
      out << meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    }, AtomicTarget::library_file);
  } catch (const Error& e) {
    spdlog::warn("could not write cubin cache entry {} in {}: {}", key, directory_, e.what());
    return;
  }
  // Once per cache object, after its first write: the folder is never pruned and may hold
  // many entries, so a scan per write would make filling it quadratic.
  std::call_once(swept_, [&] { remove_stale_temporaries(directory_); });
}

}  // namespace ktune::detail
