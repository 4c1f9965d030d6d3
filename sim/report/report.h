// Presentations of a SimResult: the terminal summary and the `tandem.sim/1` JSON document
// (docs/metrics.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/observe/sim_result.h"

namespace tandem {

std::string format_summary(const SimResult& r);
std::string format_json(const SimResult& r);
// format_json's text in parts, in order, to `out`: one loop's part at a time.
void write_json(const SimResult& r, const std::function<void(const std::string&)>& out);
// A loop's II and what bounds it, in words: the per-iteration needs (busiest resource,
// recurrence), then the span against its bound and the efficiency, their ratio.
std::string format_loop_bounds(const LoopResult& l);
// " (spilled to DRAM: %a, %b)" when the kernel spilled tensors of the space, else "".
std::string format_spilled(const SpaceResult& sp);
// tandem sim --profile: one row per instruction, longest busy time first (the JSON's profile[]).
std::string format_profile(const SimResult& r);
// A tandem.sim/1 document read back (what a run in another process found): the inverse of
// format_json up to the document's precision.
SimResult parse_sim_json(const std::string& sim_json);

}  // namespace tandem
