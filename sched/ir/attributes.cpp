#include "sched/ir/attributes.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "sched/ir/attribute_keys.h"

namespace tandem {

const AttrValue* Attributes::scan(std::string_view key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

void Attributes::set(std::string_view key, AttrValue value) {
  for (auto& [k, v] : entries_)
    if (k == key) {
      v = std::move(value);
      return;
    }
  entries_.emplace_back(std::string(key), std::move(value));
  keys_ |= key_bit(key);
}

bool Attributes::erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == key) {
      entries_.erase(it);
      keys_ = 0;
      for (const auto& entry : entries_) keys_ |= key_bit(entry.first);
      return true;
    }
  return false;
}

std::optional<int64_t> Attributes::get_int(std::string_view key) const {
  const AttrValue* v = find(key);
  if (v && std::holds_alternative<int64_t>(*v)) return std::get<int64_t>(*v);
  return std::nullopt;
}

std::optional<std::string> Attributes::get_string(std::string_view key) const {
  const AttrValue* v = find(key);
  if (v && std::holds_alternative<std::string>(*v)) return std::get<std::string>(*v);
  return std::nullopt;
}

static std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

bool is_scheduling_attribute(const std::string& key) {
  static const std::set<std::string> keys = {attr::kOrder,
                                             attr::kPrefetch,
                                             attr::kFence,  // list-schedule, prefetch-schedule, the split's barrier
                                             attr::kSeparationBarrier,
                                             attr::kZeroInit,  // separate-load-compute's markers
                                             attr::kIssueCycles,
                                             attr::kLatencyCycles,  // per-instruction costs (wmma-reorder's)
                                             attr::kSpill,
                                             attr::kRefills};  // spill's markers
  return keys.count(key) > 0;
}

std::string format_attr_value(const AttrValue& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<std::string>(v)) return quote(std::get<std::string>(v));
  if (std::holds_alternative<double>(v)) {
    // Shortest text that reads back to the same double (fmt's default), always with a '.'
    // or exponent so that it parses as a real again.
    std::string s = fmt::format("{}", std::get<double>(v));
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  return "";
}

}  // namespace tandem
