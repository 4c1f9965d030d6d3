// `tandem ab`: two tandem.sim/1 documents of one kernel under two pipelines, side by side,
// with each figure's difference (B - A) and ratio (B / A).
#pragma once

#include <string>

namespace tandem {

struct AbInput {
  std::string pipeline;
  std::string sim_json;  // a tandem.sim/1 document
};

std::string format_ab_summary(const AbInput& a, const AbInput& b);
std::string format_ab_json(const AbInput& a, const AbInput& b);  // tandem.ab/1

}  // namespace tandem
