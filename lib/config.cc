// Config: values of one point of a search space, with its text form, NVRTC defines, stable
// FNV-1a hash and lookup by parameter name.
#include "ktune/config.h"

#include <algorithm>
#include <charconv>

#include "content_hash.h"
#include "ktune/error.h"

namespace ktune {
namespace {

/// Decimal digits of a value without allocating.
std::string_view digits(Value v, char (&buffer)[24]) {
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  (void)ec;
  return {buffer, static_cast<std::size_t>(end - buffer)};
}

}  // namespace

Config::Config(std::shared_ptr<const std::vector<std::string>> names, std::vector<Value> values)
    : names_(std::move(names)), values_(std::move(values)) {
  const std::size_t name_count = names_ ? names_->size() : 0;
  if (name_count != values_.size()) {
    throw Error(ErrorCode::invalid_argument,
                "config has " + std::to_string(values_.size()) + " values for " +
                    std::to_string(name_count) + " parameter names");
  }
}

const std::vector<std::string>& Config::names() const {
  static const std::vector<std::string> none;
  return names_ ? *names_ : none;
}

Value Config::operator[](std::string_view name) const {
  const auto& n = names();
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i] == name) return values_[i];
  }
  std::string known;
  for (std::size_t i = 0; i < n.size(); ++i) known += (i ? ", " : "") + n[i];
  throw Error(ErrorCode::unknown_name, "config {" + str() + "} has no parameter '" +
                                           std::string(name) + "' (parameters: " + known + ")");
}

Value Config::get_or(std::string_view name, Value fallback) const {
  const auto& n = names();
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i] == name) return values_[i];
  }
  return fallback;
}

std::map<std::string, Value> Config::values_by_name() const {
  std::map<std::string, Value> out;
  const auto& n = names();
  for (std::size_t i = 0; i < n.size(); ++i) out[n[i]] = values_[i];
  return out;
}

bool Config::has(std::string_view name) const {
  const auto& n = names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

std::string Config::str() const {
  const auto& n = names();
  std::string out;
  char buffer[24];
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (i) out += ',';
    out += n[i];
    out += '=';
    out += digits(values_[i], buffer);
  }
  return out;
}

std::vector<std::string> Config::defines() const {
  const auto& n = names();
  std::vector<std::string> out;
  out.reserve(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) {
    out.push_back("-D" + n[i] + "=" + std::to_string(values_[i]));
  }
  return out;
}

std::uint64_t Config::hash() const {
  // Same bytes as str(), hashed without building the string.
  const auto& n = names();
  std::uint64_t h = detail::kFnv1a64Offset;
  char buffer[24];
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (i) h = detail::fnv1a64(",", h);
    h = detail::fnv1a64(n[i], h);
    h = detail::fnv1a64("=", h);
    h = detail::fnv1a64(digits(values_[i], buffer), h);
  }
  return h;
}

bool operator==(const Config& a, const Config& b) {
  if (a.values_ != b.values_) return false;
  return a.names_ == b.names_ || a.names() == b.names();
}

}  // namespace ktune
