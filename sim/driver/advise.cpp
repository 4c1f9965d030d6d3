#include "sim/driver/advise.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

#include <fmt/printf.h>

#include "sched/driver/schedule_file.h"
#include "sched/ir/parser.h"
#include "sched/support/yaml_file.h"
#include "sched/target/target.h"
#include "sim/driver/isolated.h"
#include "sim/driver/simulate_file.h"
#include "sim/report/metrics.h"
#include "sim/report/report.h"

namespace tandem {

namespace {

// A change to simulate: a pipeline, model fields set on top of the run's, or both.
struct Candidate {
  std::string change;
  std::string passes;
  std::vector<ModelEdit> edits;
};

// A gain this close to 1 is the same time.
constexpr double kNoGain = 1.0005;

std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string("_./=,:%+-").find(c) != std::string::npos;
  });
  if (plain) return s;
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The run's edits with `more` set on top (a field set twice keeps the later value).
std::vector<ModelEdit> merged_edits(const std::vector<ModelEdit>& run, const std::vector<ModelEdit>& more) {
  std::vector<ModelEdit> all = run;
  for (const ModelEdit& e : more) {
    auto same = std::find_if(all.begin(), all.end(), [&](const ModelEdit& o) { return o.field == e.field; });
    if (same != all.end())
      same->value = e.value;
    else
      all.push_back(e);
  }
  return all;
}

std::string command_of(const AdvisedRun& run, const Candidate& c) {
  std::string cmd = "tandem sim";
  if (!run.hw.empty()) cmd += " --hw " + shell_word(run.hw);
  for (const ModelEdit& e : merged_edits(run.edits, c.edits)) cmd += " --set " + shell_word(e.field + "=" + e.value);
  if (c.passes != "none") cmd += " --passes=" + shell_word(c.passes);
  return cmd + " " + shell_word(run.file);
}

// The model as the run reads it: its file's document with the run's own edits applied.
class RunModel {
 public:
  explicit RunModel(const AdvisedRun& run)
      : file_(run.hw.empty() ? parse_kernel_file(run.file).target->file : resolve_model_file(run.hw)),
        yaml_(file_),
        edits_(run.edits) {}

  // The field's value as the run sees it, if it is a number of the model.
  std::optional<double> number(const std::string& field) const {
    for (const ModelEdit& e : edits_)
      if (e.field == field && is_number(e.value)) return std::stod(e.value);
    const YAML::Node n = model_field(yaml_.root(), field);
    if (!n || !n.IsScalar() || !is_number(n.Scalar())) return std::nullopt;
    return std::stod(n.Scalar());
  }

 private:
  std::string file_;
  YamlFile yaml_;
  std::vector<ModelEdit> edits_;
};

std::string number_text(double v) { return fmt::sprintf("%g", v); }

// A model field scaled by `factor`, as an architect's change, when the model has it.
void add_scaled(std::vector<Candidate>& out, const RunModel& model, const std::string& field, double factor,
                const std::string& what) {
  const std::optional<double> v = model.number(field);
  if (!v || *v <= 0) return;
  const std::string to = number_text(*v * factor);
  out.push_back({what + " (model: " + field + " " + number_text(*v) + " -> " + to + ")", "", {{field, to}}});
}

// The resource that binds the run: the main loop's binding bound, else the kernel's.
struct Binding {
  std::string resource;
  bool recurrence = false;  // the loop's recurrence needs more than its resource bound
  std::string cycle;
};

Binding binding_of(const SimResult& r) {
  const LoopResult* l = main_loop(r);
  if (!l) return {r.lower_bound_resource, false, ""};
  return {l->bound_resource, l->recurrence_bound_ps > l->resource_bound_ps, l->recurrence_cause};
}

const UnitResult* unit_named(const SimResult& r, const std::string& name) {
  for (const UnitResult& u : r.units)
    if (u.name == name) return &u;
  return nullptr;
}

// Does hoist-invariants move work out of a loop of the run's kernel? Only then is it a change.
bool hoists_work(const AdvisedRun& run) {
  try {
    KernelInput in = read_and_schedule(run.file, run.hw, "none", RunOptions{});
    std::vector<LoopId> loop_of;
    for (const Instruction& inst : in.kernel.insts) loop_of.push_back(inst.loop);
    std::ostringstream quiet;
    run_pipeline(in.kernel, in.deps, parse_pipeline("hoist-invariants"), RunOptions{}, quiet);
    for (size_t i = 0; i < loop_of.size(); ++i)
      if (in.kernel.insts[i].loop != loop_of[i]) return true;
  } catch (const std::exception&) {  // the candidates' own runs report what fails
  }
  return false;
}

std::vector<Candidate> candidates(const AdvisedRun& run, const SimResult& baseline, const RunModel& model) {
  std::vector<Candidate> out;
  const std::string& p = run.passes;
  if (p != "auto") out.push_back({"the pipeline auto: buffers sized from the model, no barrier", "auto", {}});
  if (p != "default") out.push_back({"the pipeline default: the seeds' composition", "default", {}});
  if (p == "none")
    for (int n : {2, 4})
      out.push_back({std::to_string(n) + " buffers per tile a loop rewrites",
                     "address-rotation{buffers=" + std::to_string(n) + "}",
                     {}});
  if (p != "compiler" && p.find("hoist-invariants") == std::string::npos && hoists_work(run))
    out.push_back({"loop-invariant work moved in front of its loops, as a compiler does (hoist-invariants)",
                   p == "none" ? "hoist-invariants" : "hoist-invariants," + p,
                   {}});
  if (p.find("assign-engines") == std::string::npos && p != "auto" && p != "default")
    out.push_back({"element-wise work spread over the engines that can run it",
                   p == "none" ? "assign-engines{policy=balance}" : "assign-engines{policy=balance}," + p,
                   {}});
  const Binding b = binding_of(baseline);
  const UnitResult* unit = unit_named(baseline, b.resource);
  const bool dma = (unit && unit->is_queue) || b.resource.rfind("dma engine", 0) == 0;
  if (dma) {
    add_scaled(out, model, "dma.fixed_cost_ns", 0.5, "DMA setup halved");
    add_scaled(out, model, "dma.bandwidth_bytes_per_ns", 2, "DMA bandwidth doubled");
  } else if (unit) {
    add_scaled(out, model, "engines." + unit->name + ".clock_ghz", 2, unit->name + "'s clock doubled");
  }
  for (Candidate& c : out)
    if (c.passes.empty()) c.passes = p;
  return out;
}

std::vector<Advice> hints(const SimResult& baseline) {
  const Binding b = binding_of(baseline);
  const UnitResult* unit = unit_named(baseline, b.resource);
  std::vector<Advice> out;
  auto hint = [&](const std::string& text) { out.push_back({text, "", false, 0, 0, ""}); };
  if (b.recurrence)
    hint("the recurrence " + b.cycle +
         " sets the interval: a kernel without that dependence, or its tiles on more buffers (above)");
  if (unit && unit->is_queue)
    hint("fewer, larger transfers on " + unit->name +
         ": each one pays the DMA setup, and more bytes per transfer (or fewer transfers per iteration) spread it");
  else if (b.resource.rfind("dma engine", 0) == 0)
    hint("transfers over more partitions: " + b.resource +
         " moves more than the others, and a transfer's partitions decide which DMA engines move it");
  else if (unit)
    hint("less work on " + unit->name + ": fewer or cheaper instructions there, or part of them on another engine");
  return out;
}

}  // namespace

std::vector<Advice> advise(const AdvisedRun& run, const SimResult& baseline) {
  const RunModel model(run);
  const std::vector<Candidate> tried = candidates(run, baseline, model);
  std::vector<Advice> advice(tried.size());
  auto job = [&](size_t i) {
    const Candidate& c = tried[i];
    const EditedModel edited(run.file, run.hw, merged_edits(run.edits, c.edits));
    RunOptions ropts;
    ropts.verify = true;
    try {
      return format_json(schedule_and_simulate(run.file, edited.hw(), c.passes, ropts, SimOptions{}));
    } catch (const Error& e) {
      edited.rethrow(e);
    }
  };
  auto done = [&](size_t i, const IsolatedOutcome& o) {
    Advice& a = advice[i];
    a.change = tried[i].change;
    a.command = command_of(run, tried[i]);
    a.simulated = true;
    if (!o.ok) {
      a.rejected = o.error;
      return;
    }
    const SimResult r = parse_sim_json(o.output);
    a.total_ps = r.total_ps;
    a.gain = r.total_ps > 0 ? static_cast<double>(baseline.total_ps) / static_cast<double>(r.total_ps) : 0;
    if (!r.hazards.empty()) a.rejected = "it races: " + r.hazards.front().message;
  };
  run_isolated_pool(tried.size(), 2, job, done);
  // Gains first, best first; then no gain; then the rejected; program order on ties.
  auto rank = [](const Advice& a) { return !a.rejected.empty() ? 2 : a.gain > kNoGain ? 0 : 1; };
  std::stable_sort(advice.begin(), advice.end(), [&](const Advice& a, const Advice& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return rank(a) == 0 && a.gain > b.gain;
  });
  for (Advice& h : hints(baseline)) advice.push_back(std::move(h));
  return advice;
}

std::string format_advice(const std::vector<Advice>& advice, const SimResult& baseline) {
  const double base_ns = ps_to_ns(baseline.total_ps);
  std::string o =
      "\nadvice: each change simulated alone, race-checked, its pipeline verified (tandem opt --verify); "
      "gain = this run's " +
      fmt::sprintf("%.3f", base_ns) + " ns over its total\n";
  int n = 0;
  std::string no_gain, rejected, hinted;
  for (const Advice& a : advice) {
    if (!a.simulated) {
      hinted += "  - " + a.change + "\n";
    } else if (!a.rejected.empty()) {
      rejected += "  - " + a.change + ": " + a.rejected + "\n";
    } else if (a.gain > kNoGain) {
      o += fmt::sprintf("  %d. %.3fx  %.3f ns  %s\n       %s\n", ++n, a.gain, ps_to_ns(a.total_ps), a.change.c_str(),
                        a.command.c_str());
    } else {
      no_gain += fmt::sprintf("  - %s: %.3fx (%.3f ns)\n", a.change.c_str(), a.gain, ps_to_ns(a.total_ps));
    }
  }
  if (n == 0) o += "  no change tried gains\n";
  if (!no_gain.empty()) o += "no gain (or slower):\n" + no_gain;
  if (!rejected.empty()) o += "not advised:\n" + rejected;
  if (!hinted.empty()) o += "hints, not simulated (they need a rewrite of the kernel):\n" + hinted;
  return o;
}

}  // namespace tandem
