// Constant index boxes: one half-open interval per dimension. The dependence analysis, the
// race checker and the translation validator all reason about which ranges writes cover.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace tandem {

// Inline storage for up to four dimensions: the race checker makes a box per access of every
// simulated instance, without a heap allocation each.
using Box = boost::container::small_vector<std::pair<int64_t, int64_t>, 4>;

bool overlaps(const Box& a, const Box& b);
bool contains(const Box& outer, const Box& inner);
Box intersect(const Box& a, const Box& b);
// a minus b, as disjoint boxes.
std::vector<Box> subtract(const Box& a, const Box& b);
// "[0:128, 64:128]"
std::string box_text(const Box& b);

}  // namespace tandem
