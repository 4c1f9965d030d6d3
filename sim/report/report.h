// Presentations of a SimResult: the terminal summary and the `tandem.sim/1` JSON document
// (docs/metrics.md).
#pragma once

#include <string>
#include <vector>

#include "sim/observe/sim_result.h"

namespace tandem {

std::string format_summary(const SimResult& r);
std::string format_json(const SimResult& r);
// The hazards of a tandem.sim/1 document (what a run in another process found).
std::vector<HazardReport> hazards_from_json(const std::string& sim_json);

}  // namespace tandem
