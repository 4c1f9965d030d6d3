// tandem sim: schedule a kernel, simulate it on a hardware model and report.
#include <charconv>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "sched/support/error.h"
#include "sched/support/output.h"
#include "sim/driver/advise.h"
#include "sim/driver/isolated.h"
#include "sim/driver/simulate_file.h"
#include "sim/report/csv_tables.h"
#include "sim/report/html_report.h"
#include "sim/report/report.h"
#include "tools/commands.h"
#include "tools/output.h"

namespace tandem::cli {

namespace {

struct SimArgs {
  std::string file;
  std::string hw;
  std::string passes = "none";
  std::string out;
  std::string trace;
  std::string trace_loops;
  std::string trace_iterations;
  std::string trace_max_bytes;
  std::string report;
  std::string csv_dir;
  bool json = false;
  bool stats = false;
  bool time_passes = false;
  bool profile = false;
  bool no_race_check = false;
  bool no_fast_forward = false;
  bool progress = false;
  std::string perturb;
  int perturb_runs = 0;
  size_t iterations_kept = 10000;
  std::string max_instances = "0";
  std::vector<std::string> sets;
  bool advise = false;
};

// --perturb=SEED[,SPREAD]
void parse_perturb(const std::string& text, SimOptions& o) {
  const size_t comma = text.find(',');
  try {
    size_t used = 0;
    const std::string seed = text.substr(0, comma);
    o.perturb_seed = std::stoull(seed, &used);
    if (used != seed.size() || o.perturb_seed == 0) throw std::invalid_argument(seed);
    if (comma != std::string::npos) {
      const std::string spread = text.substr(comma + 1);
      o.perturb_spread = std::stod(spread, &used);
      if (used != spread.size() || !(o.perturb_spread >= 0 && o.perturb_spread < 1))
        throw std::invalid_argument(spread);
    }
  } catch (const std::exception&) {
    throw Error("--perturb needs SEED[,SPREAD]: a seed from 1 and a spread in [0, 1), not '" + printable(text) + "'");
  }
}

// --csv DIR: the directory made if missing, each table written whole or not at all.
void write_csv_tables(const SimResult& result, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw Error("--csv " + dir + ": cannot make a directory there" + (ec ? ": " + ec.message() : std::string()));
  for (const auto& [name, text] : format_csv_tables(result)) write_file_atomic(dir + "/" + name, text);
}

// --trace-loops %k,%j  --trace-iterations A:B  --trace-max-bytes N[k|M|G]
TraceFilter parse_trace_filter(const SimArgs& a) {
  TraceFilter f;
  for (size_t at = 0; at < a.trace_loops.size();) {
    const size_t comma = std::min(a.trace_loops.find(',', at), a.trace_loops.size());
    std::string iv = a.trace_loops.substr(at, comma - at);
    if (!iv.empty()) f.loops.insert(iv[0] == '%' ? iv : "%" + iv);
    at = comma + 1;
  }
  auto count = [](const std::string& text, const std::string& option) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || v < 0) throw Error(option + " needs whole numbers, not '" + printable(text) + "'");
    return std::make_pair(v, std::string(end, text.data() + text.size()));
  };
  if (!a.trace_iterations.empty()) {
    const size_t colon = a.trace_iterations.find(':');
    const std::string first = a.trace_iterations.substr(0, colon);
    const std::string end = colon == std::string::npos ? "" : a.trace_iterations.substr(colon + 1);
    const auto [from, rest1] = count(first, "--trace-iterations A:B");
    const auto [to, rest2] = count(end, "--trace-iterations A:B");
    if (colon == std::string::npos || !rest1.empty() || !rest2.empty() || to <= from)
      throw Error("--trace-iterations needs A:B, iterations A to B - 1 with A < B, not '" +
                  printable(a.trace_iterations) + "'");
    f.first_iteration = from;
    f.end_iteration = to;
  }
  if (!a.trace_max_bytes.empty()) {
    const auto [v, unit] = count(a.trace_max_bytes, "--trace-max-bytes");
    const int64_t scale = unit.empty() ? 1 : unit == "k" ? 1000 : unit == "M" ? 1000000 : unit == "G" ? 1000000000 : 0;
    if (scale == 0 || v == 0)
      throw Error("--trace-max-bytes needs a size such as 50M (k, M, G), not '" + printable(a.trace_max_bytes) + "'");
    f.max_bytes = v * scale;
  }
  if (!f.empty() && a.trace.empty())
    throw Error("--trace-loops, --trace-iterations and --trace-max-bytes go with --trace FILE");
  return f;
}

int run_sim(const SimArgs& a) {
  RunOptions ropts;
  ropts.stats = a.stats;
  ropts.time_passes = a.time_passes;
  SimOptions sopts;
  sopts.iterations_kept = a.iterations_kept;
  sopts.trace_path = a.trace;
  sopts.trace_filter = parse_trace_filter(a);
  sopts.check_races = !a.no_race_check;
  sopts.fast_forward = !a.no_fast_forward;
  sopts.capture_timeline = !a.report.empty();
  sopts.progress = a.progress;
  {
    const char* first = a.max_instances.data();
    const char* last = first + a.max_instances.size();
    const auto [end, ec] = std::from_chars(first, last, sopts.max_instances);
    if (ec != std::errc() || end != last || sopts.max_instances < 0)
      throw Error("--max-instances needs a count from 0 to 2^63 - 1, not '" + printable(a.max_instances) + "'");
  }
  if (!a.perturb.empty()) parse_perturb(a.perturb, sopts);
  if (a.perturb_runs > 0 && a.no_race_check)
    throw Error("--perturb-runs runs the race checker; it cannot go with --no-race-check");
  std::vector<ModelEdit> edits;
  for (const std::string& s : a.sets) edits.push_back(parse_model_edit(s));
  const EditedModel model(a.file, a.hw, edits);
  auto simulate = [&] {
    try {
      return simulate_with_perturbed_runs(a.file, model.hw(), a.passes, ropts, sopts, a.perturb_runs);
    } catch (const Error& e) {
      model.rethrow(e);
    }
  };
  // SystemC elaborates once per process: with --advise, whose changes run in processes forked
  // from this one, the run itself runs in its own process too.
  SimResult result = a.advise ? parse_sim_json(run_isolated([&] { return format_json(simulate()); })) : simulate();
  result.perturb_spread = sopts.perturb_spread;
  model.name_in(result);
  if (a.advise) result.advice = advise({a.file, a.hw, edits, a.passes}, result);
  if (!a.report.empty()) write_file_atomic(a.report, html_sim_report(format_json(result)));
  if (!a.csv_dir.empty()) write_csv_tables(result, a.csv_dir);
  if (a.json) {
    emit_parts([&](const auto& write) { write_json(result, write); }, a.out);
  } else {
    std::string text = format_summary(result);
    if (a.profile) text += format_profile(result);
    if (a.advise) text += format_advice(result.advice, result);
    emit(text, a.out);
  }
  return result.hazards.empty() ? 0 : 3;
}

}  // namespace

void add_sim_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* cmd = root.add_subcommand(
      "sim", "Schedule a kernel with a pass pipeline, simulate it on a hardware model and report cycles and overlap.");
  cmd->footer(
      "\nInstructions without an engine or DMA queue get one from assign-engines after the pipeline.\n"
      "Metrics and the JSON schema (tandem.sim/1) are defined in docs/metrics.md.\n"
      "Exit codes: 0 clean; 1 bad input; 2 internal error; 3 the race checker found races (docs/checker.md).");
  cmd->add_option("file", args->file, "kernel in the .kir text format")->required();
  cmd->add_option("--hw", args->hw, kHwHelp);
  cmd->add_option("--passes", args->passes,
                  "pass pipeline to run before simulating: `default` (the pass specification's composition), `auto` "
                  "(buffers from the "
                  "model), `none`, or passes separated by commas (tandem opt --help lists them)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the tandem.sim/1 JSON document instead of the summary");
  cmd->add_flag("--stats", args->stats, "print each pass's statistics to stderr");
  cmd->add_flag("--time-passes", args->time_passes,
                "print each pass's wall time to stderr (as tandem opt --time-passes)");
  cmd->add_flag("--profile", args->profile,
                "append a per-instruction table to the summary: instances, busy time, share, stalls by cause, "
                "longest first (the JSON always has it as profile[])");
  cmd->add_flag("--no-race-check", args->no_race_check, "skip the race checker (faster on long runs)");
  cmd->add_flag("--no-fast-forward", args->no_fast_forward,
                "simulate every period of a steady loop instance by instance (by default, once a loop's whole "
                "state repeats, the periods its end allows are skipped; the results are the same)");
  cmd->add_flag("--progress", args->progress,
                "show a progress line on stderr while simulating, and the run's rate at the end (on by itself on "
                "a terminal for runs of 20 M dynamic instructions or more)");
  cmd->add_option("--max-instances", args->max_instances,
                  "refuse a kernel that runs more dynamic instructions than this (0: no limit)");
  cmd->add_option("--set", args->sets,
                  "FIELD=VALUE: simulate on the model with this field set (a dotted path such as "
                  "dma.fixed_cost_ns=440 or engines.pe.clock_ghz=2.8; repeatable; the model file is left as it is)")
      ->allow_extra_args(false);
  cmd->add_flag("--advise", args->advise,
                "after the summary, list the changes that could move the binding bound, each simulated on its own "
                "(race-checked, its pipeline verified), best first, with the command that reproduces it; what needs "
                "a rewrite of the kernel is listed as a hint, not simulated");
  cmd->add_option("--perturb", args->perturb,
                  "SEED[,SPREAD]: jitter every duration by up to SPREAD (default 0.5) with a seeded generator, "
                  "to expose races that nominal timing hides; the same seed gives the same run");
  cmd->add_option("--perturb-runs", args->perturb_runs,
                  "also simulate K perturbed runs (seeds 1..K, each in its own process) and report any race they find")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--trace", args->trace, "write a Trace Event JSON timeline (open it in ui.perfetto.dev)");
  cmd->add_option("--trace-loops", args->trace_loops,
                  "%k,%j: the trace keeps only instances inside these loops (the figures are the whole run's)");
  cmd->add_option("--trace-iterations", args->trace_iterations,
                  "A:B: the trace keeps iterations A to B - 1 of each instance's outermost kept loop");
  cmd->add_option("--trace-max-bytes", args->trace_max_bytes,
                  "N[k|M|G]: stop adding instances to the trace past this size, and mark where it was cut");
  cmd->add_option("--report", args->report,
                  "write a self-contained HTML report: timeline of the main loop's first, middle and last "
                  "iteration, overlap per iteration, unit utilisation and stalls, II against its bound");
  cmd->add_option("--csv", args->csv_dir,
                  "also write the result as CSV tables into this directory (made if missing): units.csv, loops.csv, "
                  "iterations.csv, profile.csv; columns as in the JSON (docs/metrics.md)");
  cmd->add_option("--iterations-kept", args->iterations_kept,
                  "iterations per loop kept in the report; longer loops keep their first and last halves")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000000));
  cmd->add_option("-o,--output", args->out, "write the report here (atomically) instead of stdout");
  cmd->callback([args, &exit_code] { exit_code = run_sim(*args); });
}

}  // namespace tandem::cli
