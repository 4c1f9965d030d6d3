// `{key = value, flag}` attribute dictionaries on kernels, loops, tensors and instructions.
// Order is kept so that printing is stable and round-trips.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tandem {

// A flag (`{accumulate}`) has no value; otherwise an integer, a real or a string.
using AttrValue = std::variant<std::monostate, int64_t, double, std::string>;

class Attributes {
 public:
  // Keys by view: the attr:: constants are C strings, and a look-up must not make a
  // std::string of one (longer ones on the heap).
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const AttrValue* find(std::string_view key) const {
    // Most look-ups ask for a key the dictionary lacks: `keys_` answers most of them without
    // reading the entries, which live elsewhere on the heap (a cache miss per instruction).
    if (!(keys_ & key_bit(key))) return nullptr;
    return scan(key);
  }
  void set(std::string_view key, AttrValue value);  // replaces or appends
  void set_flag(std::string_view key) { set(key, std::monostate{}); }
  bool erase(std::string_view key);

  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;

  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, AttrValue>>& entries() const { return entries_; }

 private:
  // One bit per key, by its length and end characters: a key whose bit is clear is absent.
  static uint64_t key_bit(std::string_view key) {
    return key.empty() ? 1
                       : uint64_t{1} << ((key.size() * 7 + static_cast<unsigned char>(key.front()) +
                                          static_cast<unsigned char>(key.back())) &
                                         63);
  }
  const AttrValue* scan(std::string_view key) const;

  std::vector<std::pair<std::string, AttrValue>> entries_;
  uint64_t keys_ = 0;  // the key_bit of every entry
};

std::string format_attr_value(const AttrValue& v);

// Instruction attributes that say how an instruction is scheduled, not what it computes
// (the translation validator ignores them). A pass that stamps a new scheduling attribute
// on instructions adds its key here.
bool is_scheduling_attribute(const std::string& key);

}  // namespace tandem
