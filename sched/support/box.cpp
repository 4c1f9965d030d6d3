#include "sched/support/box.h"

#include <algorithm>

namespace tandem {

bool overlaps(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.size() && d < b.size(); ++d)
    if (a[d].second <= b[d].first || b[d].second <= a[d].first) return false;
  return true;
}

bool contains(const Box& outer, const Box& inner) {
  for (size_t d = 0; d < outer.size() && d < inner.size(); ++d)
    if (inner[d].first < outer[d].first || inner[d].second > outer[d].second) return false;
  return true;
}

Box intersect(const Box& a, const Box& b) {
  Box r = a;
  for (size_t d = 0; d < a.size() && d < b.size(); ++d)
    r[d] = {std::max(a[d].first, b[d].first), std::min(a[d].second, b[d].second)};
  return r;
}

std::vector<Box> subtract(const Box& a, const Box& b) {
  if (!overlaps(a, b)) return {a};
  std::vector<Box> out;
  Box rest = a;
  for (size_t d = 0; d < a.size() && d < b.size(); ++d) {
    if (rest[d].first < b[d].first) {
      Box piece = rest;
      piece[d].second = b[d].first;
      out.push_back(piece);
      rest[d].first = b[d].first;
    }
    if (b[d].second < rest[d].second) {
      Box piece = rest;
      piece[d].first = b[d].second;
      out.push_back(piece);
      rest[d].second = b[d].second;
    }
  }
  return out;
}

std::string box_text(const Box& b) {
  std::string s = "[";
  for (size_t d = 0; d < b.size(); ++d)
    s += (d ? ", " : "") + std::to_string(b[d].first) + ":" + std::to_string(b[d].second);
  return s + "]";
}

}  // namespace tandem
