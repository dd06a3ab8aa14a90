// Seed data files for restarted workers (see worker_reference_cache.h).
#include "worker_reference_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ktune/error.h"

namespace ktune::worker {

namespace {
constexpr char kMagic[8] = {'K', 'T', 'R', 'E', 'F', '0', '0', '1'};
}  // namespace

std::string ReferenceCache::path(std::uint64_t seed) const {
  return dir_ + "/seed-" + std::to_string(seed) + ".bin";
}

bool ReferenceCache::load(std::uint64_t seed, std::vector<HostBuffer>& initial,
                          std::vector<HostBuffer>& expected) const {
  if (!enabled()) return false;
  std::ifstream in(path(seed), std::ios::binary);
  if (!in) return false;
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return false;
  for (auto* set : {&initial, &expected})
    for (auto& b : *set) {
      std::uint64_t size = 0;
      if (!in.read(reinterpret_cast<char*>(&size), 8) || size != b.bytes.size()) return false;
      if (!in.read(reinterpret_cast<char*>(b.bytes.data()), static_cast<std::streamsize>(size)))
        return false;
    }
  return true;
}

void ReferenceCache::store(std::uint64_t seed, const std::vector<HostBuffer>& initial,
                           const std::vector<HostBuffer>& expected) const {
  if (!enabled()) return;
  std::string final_path = path(seed);
  std::string tmp = final_path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(kMagic, 8);
    for (const auto* set : {&initial, &expected})
      for (const auto& b : *set) {
        std::uint64_t size = b.bytes.size();
        out.write(reinterpret_cast<const char*>(&size), 8);
        out.write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(size));
      }
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return;
    }
  }
  std::rename(tmp.c_str(), final_path.c_str());
}

std::string make_reference_cache_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/ktune-ref-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw Error(ErrorCode::io_error, "cannot create a reference cache folder like " + pattern +
                                         ": " + std::strerror(errno));
  return buf.data();
}

void remove_reference_cache_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace ktune::worker
