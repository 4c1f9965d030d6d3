// tandem ab's work: one kernel under two pipelines or on two hardware models (or both), each
// simulated in its own process, the
// A/B table (text or tandem.ab/1 JSON) and, if asked, the HTML report. A side that races is
// flagged in all three, and makes the exit code 3 (docs/metrics.md, A/B).
#pragma once

#include <string>

namespace tandem {

struct AbRun {
  std::string file;
  std::string a;        // pipeline A
  std::string b;        // pipeline B
  std::string hw_a;     // model A, a name or a file; "" = the kernel's target model
  std::string hw_b;     // model B
  std::string report;   // an HTML report too, if set
  bool json = false;    // tandem.ab/1 instead of the text table
  bool verify = false;  // run the translation validator on each side's pipeline (tandem opt --verify)
};

struct AbOutcome {
  std::string text;   // the table or the JSON document
  int exit_code = 0;  // 0, or 3 when either side races
};

// Throws Error for a bad pipeline, a bad model, a bad kernel or a side that fails --verify.
AbOutcome run_ab(const AbRun& run);

}  // namespace tandem
