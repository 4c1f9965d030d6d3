#include "sched/passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

#include "sched/analysis/allocator.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/structural_verifier.h"
#include "sched/analysis/translation_validator.h"
#include "sched/ir/printer.h"
#include "sched/passes/address_rotation.h"
#include "sched/passes/assign_engines.h"
#include "sched/passes/balance_engines.h"
#include "sched/passes/hoist_invariants.h"
#include "sched/passes/list_schedule.h"
#include "sched/passes/prefetch_schedule.h"
#include "sched/passes/separate_load_compute.h"
#include "sched/passes/wmma_reorder.h"
#include "sched/support/error.h"
#include "sched/support/log.h"

namespace tandem {

const std::string& PassOptions::value_of(const PassOptionSpec& spec) const {
  const auto it = values_.find(spec.name);
  return it == values_.end() ? spec.default_value : it->second;
}

std::vector<std::string> parse_names(const std::string& option, const std::string& text) {
  std::vector<std::string> names;
  for (size_t at = 0; !text.empty() && at <= text.size();) {
    const size_t bar = std::min(text.find('|', at), text.size());
    const std::string n = text.substr(at, bar - at);
    if (n.size() < 2 || n[0] != '%')
      throw Error("option '" + option + "' takes %names separated by '|' (e.g. %a|%b), not '" + printable(text) + "'");
    names.push_back(n);
    at = bar + 1;
  }
  return names;
}

void PassStats::add(const std::string& name, int64_t n) {
  for (auto& [k, v] : counters)
    if (k == name) {
      v += n;
      return;
    }
  counters.emplace_back(name, n);
}

int64_t PassStats::get(const std::string& name) const {
  for (const auto& [k, v] : counters)
    if (k == name) return v;
  return 0;
}

void PassContext::skip(const std::string& reason) {
  stats.skip_reasons.push_back(reason);
  log->debug("skipped: {}", reason);
}

void PassContext::note(const std::string& what) {
  stats.notes.push_back(what);
  log->debug("note: {}", what);
}

bool PassContext::rotates_later(const std::string& space) const {
  for (const auto& [pass, options] : later)
    if (pass == "address-rotation" && typed_options(AddressRotationPass::option_rows(), options).space == space)
      return true;
  return false;
}

bool PassContext::moves_loads_later() const {
  for (const auto& [pass, options] : later)
    if (pass == "separate-load-compute" && typed_options(SeparateLoadComputePass::option_rows(), options).post_ada)
      return true;
  return false;
}

bool PassContext::schedules_later() const {
  for (const auto& [pass, options] : later)
    if (pass == "list-schedule") return true;
  return false;
}

const std::vector<PassInfo>& pass_registry() {
  static const std::vector<PassInfo> table = {
#define TANDEM_PASS(NAME, CLASS)                           \
  {NAME, CLASS::kHelp, option_specs(CLASS::option_rows()), \
   [](const PassOptions& o) { return std::make_unique<CLASS>(typed_options(CLASS::option_rows(), o)); }},
#include "sched/passes/pass_registry.def"
#undef TANDEM_PASS
  };
  return table;
}

const PassInfo* find_pass(const std::string& name) {
  for (const auto& p : pass_registry())
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

// --time-passes: wall time per pass step (in pipeline order) and per kind of check, as
// LLVM's -time-passes prints it.
class PassTimes {
 public:
  void start() { from_ = Clock::now(); }
  // Adds the time since start() (or the last stop()) to `what`.
  void stop(const std::string& what) {
    const Clock::time_point now = Clock::now();
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](const auto& r) { return r.first == what; });
    if (it == rows_.end()) it = rows_.insert(rows_.end(), {what, 0.0});
    it->second += std::chrono::duration<double, std::milli>(now - from_).count();
    from_ = now;
  }
  std::string table() const {
    double total = 0;
    for (const auto& [what, ms] : rows_) total += ms;
    std::string out = "=== pass execution time (wall) ===\n";
    for (const auto& [what, ms] : rows_)
      out += fmt::format("  {:10.3f} ms {:6.1f}%  {}\n", ms, total > 0 ? 100 * ms / total : 0.0, what);
    return out + fmt::format("  {:10.3f} ms {:6.1f}%  total\n", total, 100.0);
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point from_ = Clock::now();
  std::vector<std::pair<std::string, double>> rows_;
};

}  // namespace

void run_pipeline(Kernel& k, DepGraph& g, const std::vector<PipelineStep>& steps, const RunOptions& opts,
                  std::ostream& diag) {
  // --verify: the original runs once; the pipeline's result is compared with it at the end
  // and, only when it differs, the kernel after each pass, to name the first that changed it.
  std::unique_ptr<TranslationReference> reference;
  std::vector<std::pair<const PipelineStep*, Kernel>> after_pass;
  if (opts.verify) reference = std::make_unique<TranslationReference>(k);
  // The structural verifier, after every pass (docs/checker.md). Whether the input's tensors
  // fit is the user's business (the lowering says so); a pass must not make a fitting kernel
  // overflow.
  StructureChecks checks;
  if (!steps.empty()) {
    checks.capacity = !find_capacity_problem(k);
    const std::vector<std::string> problems =
        find_structural_problems(k, g, StructureChecks{/*capacity=*/false});  // capacity: just answered
    if (!problems.empty())
      throw std::logic_error("the kernel given to the pipeline is ill-formed: " +
                             describe_structural_problems(problems));
  }
  // Acyclicity after a pass: found again only if that pass added an edge or brought an
  // erased instruction back, the only changes that can close a cycle. After the first pass
  // it is always checked (the input's acyclicity is the caller's).
  std::optional<uint64_t> checked_addition;
  std::vector<uint8_t> checked_erased;
  PassTimes times;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PipelineStep& step = steps[i];
    PassStats stats;
    PassContext ctx{k, g, stats, logger("sched." + step.pass->name)};
    for (size_t j = i + 1; j < steps.size(); ++j) ctx.later.emplace_back(steps[j].pass->name, steps[j].options);
    times.start();
    step.pass->create(step.options)->run(ctx);
    g.grow(k.insts.size());
    times.stop(step.text);
    if (!ctx.unchanged) {  // a pass that changed nothing the checks read cannot have broken it
      const std::vector<std::string> problems = find_structural_problems(k, g, checks);
      if (!problems.empty())
        throw std::logic_error("pass '" + step.text + "' broke the kernel: " + describe_structural_problems(problems));
    }
    bool revived = false;
    for (size_t v = 0; v < checked_erased.size() && !revived; ++v) revived = checked_erased[v] && !k.insts[v].erased;
    if (checked_addition != g.last_addition() || revived) {
      try {
        check_acyclic(k, g);
      } catch (const Error& e) {
        throw std::logic_error("pass '" + step.text + "' broke the kernel: " + e.message());
      }
      checked_addition = g.last_addition();
    }
    checked_erased.resize(k.insts.size());
    for (size_t v = 0; v < k.insts.size(); ++v) checked_erased[v] = k.insts[v].erased;
    times.stop("structural checks after each pass");
    if (opts.stats) {
      diag << "=== stats: " << step.text << " ===\n";
      for (const auto& [name, value] : stats.counters) diag << "  " << name << ": " << value << "\n";
      for (const auto& reason : stats.skip_reasons) diag << "  skipped: " << reason << "\n";
      for (const auto& what : stats.notes) diag << "  note: " << what << "\n";
    }
    if (opts.verify) after_pass.emplace_back(&step, k);
    if (opts.print_after.count(step.pass->name)) {
      diag << "# IR after " << step.text << "\n" << print_kernel(k, &g);
    }
  }
#ifdef __GLIBC__
  // The analysis' and the passes' temporaries are freed by now; give their pages back, so
  // that what follows (printing the kernel) does not add to them in `tandem opt`'s peak RSS.
  malloc_trim(0);
#endif
  times.start();
  if (reference && !steps.empty() && reference->difference(k))
    for (const auto& [step, kernel] : after_pass)
      if (auto difference = reference->difference(kernel))
        throw MiscompileError("--verify: pass " + step->text + " changed what the kernel computes: " + *difference);
  if (reference) times.stop("--verify");
  if (opts.time_passes) diag << times.table();
}

}  // namespace tandem
