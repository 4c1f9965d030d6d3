// An index from names to ids (non-negative ints) that holds no names: a slot keeps an id and
// its name's hash, and a look-up confirms a hash match by asking the names' owner (a Kernel's
// tensors, the parser's source text) for the id's name. Open addressing, linear probing, one
// flat array, where std::unordered_map<std::string, int> would allocate a node and a copy of the
// name per entry.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem {

class NameIndex {
 public:
  // The id indexed under `name`, or -1. `name_of(id)` gives an indexed id's name.
  template <class NameOf>
  int find(std::string_view name, const NameOf& name_of) const {
    if (slots_.empty()) return -1;
    const uint32_t h = hash(name);
    for (size_t i = h & mask(); slots_[i].id >= 0; i = (i + 1) & mask())
      if (slots_[i].hash == h && std::string_view(name_of(slots_[i].id)) == name) return slots_[i].id;
    return -1;
  }

  // Indexes `id` under `name` unless an id of that name is there already; returns the id the
  // name finds afterwards (the earlier one when there was one).
  template <class NameOf>
  int insert(std::string_view name, int id, const NameOf& name_of) {
    if (2 * (size_ + 1) > slots_.size()) grow(2 * (size_ + 1));
    const uint32_t h = hash(name);
    size_t i = h & mask();
    for (; slots_[i].id >= 0; i = (i + 1) & mask())
      if (slots_[i].hash == h && std::string_view(name_of(slots_[i].id)) == name) return slots_[i].id;
    slots_[i] = {h, id};
    ++size_;
    return id;
  }

  // Room for `n` names without growing.
  void reserve(size_t n) {
    if (2 * n > slots_.size()) grow(2 * n);
  }
  void clear() {
    slots_.clear();
    size_ = 0;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t hash;
    int32_t id;  // -1: empty
  };

  static uint32_t hash(std::string_view name) { return static_cast<uint32_t>(std::hash<std::string_view>()(name)); }
  size_t mask() const { return slots_.size() - 1; }

  // Rehashes into a power-of-two table of at least `min_slots` (from the stored hashes).
  void grow(size_t min_slots) {
    size_t n = 16;
    while (n < min_slots) n *= 2;
    const std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(n, Slot{0, -1}));
    for (const Slot& s : old) {
      if (s.id < 0) continue;
      size_t i = s.hash & mask();
      while (slots_[i].id >= 0) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;  // a power of two long, at most half full
  size_t size_ = 0;
};

}  // namespace tandem
