// `{key = value, flag}` attribute dictionaries on kernels, loops, tensors and instructions.
// Order is kept so that printing is stable and round-trips.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tandem {

// A flag (`{accumulate}`) has no value; otherwise an integer, a real or a string.
using AttrValue = std::variant<std::monostate, int64_t, double, std::string>;

class Attributes {
 public:
  bool has(const std::string& key) const { return find(key) != nullptr; }
  const AttrValue* find(const std::string& key) const;
  void set(const std::string& key, AttrValue value);  // replaces or appends
  void set_flag(const std::string& key) { set(key, std::monostate{}); }
  bool erase(const std::string& key);

  std::optional<int64_t> get_int(const std::string& key) const;
  std::optional<std::string> get_string(const std::string& key) const;

  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, AttrValue>>& entries() const { return entries_; }

  // "{a = 1, b = \"x\", flag}" or "" when empty.
  std::string str() const;

 private:
  std::vector<std::pair<std::string, AttrValue>> entries_;
};

std::string format_attr_value(const AttrValue& v);

// Instruction attributes that say how an instruction is scheduled, not what it computes
// (the translation validator ignores them). A pass that stamps a new scheduling attribute
// on instructions adds its key here.
bool is_scheduling_attribute(const std::string& key);

}  // namespace tandem
