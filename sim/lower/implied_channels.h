// Channels the units need not visit: a channel a -> c (distance d on key loop L) that a path
// a -> b (d1) and b -> c (d2) on the same L with d1 + d2 == d guarantees, strictly, so that
// waiting on it could neither move c's start nor be the input that set it. (Not the analysis'
// implied edges of docs/ir.md: these channels stay in the program, in its semaphore count
// and its bounds; only the units skip them.)
#pragma once

#include <vector>

#include "sim/lower/program.h"

namespace tandem {

// Per channel of `p`: true when the units may leave it out. `spread`: the largest relative
// shortening of a duration the run's jitter may draw (0 without --perturb).
std::vector<bool> implied_channels(const SimProgram& p, double spread);

}  // namespace tandem
