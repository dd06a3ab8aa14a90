// Content hashes: 64-bit FNV-1a, the one hash of text and bytes used for cache keys, template
// source hashes, config hashes and run ids derived from a file's content, and its hex form.
// Internal API of the library (not installed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ktune::detail {

/// The standard 64-bit FNV-1a offset basis.
constexpr std::uint64_t kFnv1a64Offset = 0xcbf29ce484222325ULL;

/// 64-bit FNV-1a of `bytes`, continuing from `state` (the standard offset basis by default).
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state = kFnv1a64Offset) {
  for (unsigned char c : bytes) {
    state ^= c;
    state *= 0x100000001b3ULL;
  }
  return state;
}

/// 16 lower-case hex digits of a 64-bit value.
std::string hex64(std::uint64_t value);

}  // namespace ktune::detail
