// `tandem ab`: two tandem.sim/1 documents of one kernel under two pipelines or on two
// hardware models, side by side, with each figure's difference (B - A) and ratio (B / A).
#pragma once

#include <string>
#include <vector>

#include "sim/observe/sim_result.h"

namespace tandem {

struct AbInput {
  std::string pipeline;
  std::string sim_json;  // a tandem.sim/1 document
  std::string model;     // the model as the user named it when the two sides' models differ, else ""

  // "PIPELINE", or "PIPELINE on MODEL" in a hardware A/B.
  std::string label() const { return model.empty() ? pipeline : pipeline + " on " + model; }
};

// The A/B table, each cell as the text summary prints it: a row per figure both runs have
// (B - A and B / A; fractions as %, with no ratio), and per loop both have the min / median /
// max of its per-iteration overlap on each side.
struct AbTable {
  struct Row {
    std::string name, a, b, delta, ratio;
  };
  struct Overlap {
    std::string loop, a, b;
  };
  std::vector<Row> rows;
  std::vector<Overlap> overlaps;
};
AbTable ab_table(const SimResult& a, const SimResult& b);

// The table; when a side races, a banner above it names the side and lists its races.
std::string format_ab_summary(const AbInput& a, const AbInput& b);
// That banner alone ("" when neither side races).
std::string format_ab_race_banner(const AbInput& a, const AbInput& b);
// tandem.ab/1: each side's pipeline, model, race count and result, `racy` (the sides that race:
// "a", "b") and the differences (a `races` row among them).
std::string format_ab_json(const AbInput& a, const AbInput& b);

}  // namespace tandem
