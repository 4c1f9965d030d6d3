#include "sim/driver/ab_run.h"

#include "sched/support/error.h"
#include "sched/support/output.h"
#include "sched/target/target.h"
#include "sim/driver/isolated.h"
#include "sim/driver/simulate_file.h"
#include "sim/report/ab_report.h"
#include "sim/report/html_report.h"
#include "sim/report/report.h"

namespace tandem {

AbOutcome run_ab(const AbRun& args) {
  // Check both pipelines and models before simulating either.
  parse_pipeline(args.a);
  parse_pipeline(args.b);
  if (!args.hw_a.empty()) resolve_model(args.hw_a);
  if (!args.hw_b.empty()) resolve_model(args.hw_b);
  const bool hardware_ab = args.hw_a != args.hw_b;
  RunOptions ropts;
  ropts.verify = args.verify;
  SimOptions sopts;
  sopts.capture_timeline = !args.report.empty();
  // An error names the side it comes from (one pipeline may fail --verify, or not fit).
  auto run = [&](const char* side, const std::string& passes, const std::string& hw) {
    AbInput in{passes, "", hardware_ab ? (hw.empty() ? std::string("its target") : hw) : ""};
    try {
      in.sim_json =
          run_isolated([&] { return format_json(schedule_and_simulate(args.file, hw, passes, ropts, sopts)); });
    } catch (const Error& e) {
      throw Error(e.loc(), std::string(side) + " (" + in.label() + "): " + e.message());
    }
    return in;
  };
  const AbInput a = run("A", args.a, args.hw_a);
  const AbInput b = run("B", args.b, args.hw_b);
  if (!args.report.empty()) write_file_atomic(args.report, html_ab_report(a, b));
  const bool races = !parse_sim_json(a.sim_json).hazards.empty() || !parse_sim_json(b.sim_json).hazards.empty();
  return {args.json ? format_ab_json(a, b) : format_ab_summary(a, b), races ? 3 : 0};
}

}  // namespace tandem
