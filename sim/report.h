// Presentations of a SimResult: the terminal summary and the `tandem.sim/1` JSON document
// (docs/metrics.md).
#pragma once

#include <string>

#include "sim/sim_result.h"

namespace tandem {

std::string format_summary(const SimResult& r);
std::string format_json(const SimResult& r);

}  // namespace tandem
