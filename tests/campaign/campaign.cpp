// The generated-kernel campaign (docs/checker.md): random valid kernels crossed with pass
// pipelines. Each case is scheduled in process with the structural verifier (after every pass,
// always on) and the translation validator (--verify), its printed schedule must read back to
// itself, and each distinct schedule is simulated with the race checker, nominally and under
// perturbed timing, and nominally once more with fast-forward off, whose result must be the
// same (one forked child per simulation: SystemC elaborates once per process).
// A failing case is reduced (pipeline steps, instructions, loops, trip counts) and written
// out as a .kir whose header holds the pipeline and what fails.
//
// usage: tandem_campaign [--seed N] [--kernels N] [--perturb-runs K] [-j N] [--out DIR]
//                        [--trip-scale S] [--print-kernel I] [--expect-failures N]
// Exit 0 when as many cases failed as expected (0 unless told), 1 otherwise, 2 on bad usage.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_generator.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/driver/schedule_file.h"
#include "sched/ir/parser.h"
#include "sched/ir/printer.h"
#include "sched/support/error.h"
#include "sched/support/log.h"
#include "sim/driver/isolated.h"
#include "sim/driver/simulate_file.h"
#include "sim/report/report.h"

namespace tandem {
namespace {

struct Options {
  uint64_t seed = 1;
  int64_t kernels = 300;
  int perturb_runs = 2;
  int jobs = 2;
  std::string out = "campaign-failures";
  int64_t print_kernel = -1;
  int64_t expect_failures = 0;  // failing cases known at this seed (none today)
  int trip_scale = 1;           // generate_kernel's: loops this many times longer
};

// One kernel scheduled by one pipeline and checked in process.
struct Scheduled {
  std::string failure;             // "CLASS: what", when a check failed
  std::string refusal;             // a pass refused this kernel with a user error
  std::vector<std::string> skips;  // reasons a pass gave for declining
  std::optional<KernelInput> result;
  std::string printed;  // the schedule as tandem opt prints it
};

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

Scheduled schedule_case(const std::string& text, const std::string& pipeline) {
  Scheduled s;
  try {
    KernelInput in = prepare_kernel(parse_kernel(text, "generated.kir"));
    std::ostringstream diag;
    RunOptions ro;
    ro.stats = true;
    ro.verify = true;
    try {
      run_pipeline(in.kernel, in.deps, parse_pipeline(pipeline), ro, diag);
    } catch (const MiscompileError& e) {
      s.failure = "miscompile: " + e.message();
      return s;
    } catch (const Error& e) {
      s.refusal = format_error(e);
      return s;
    } catch (const std::logic_error& e) {
      s.failure = std::string("structural: ") + e.what();
      return s;
    }
    std::istringstream lines(diag.str());
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("  skipped: ", 0) == 0) s.skips.push_back(line.substr(11));
    s.printed = print_kernel(in.kernel, &in.deps);
    try {
      Kernel back = parse_kernel(s.printed, "printed.kir");
      DepGraph g = build_dep_graph(back);
      if (print_kernel(back, &g) != s.printed)
        s.failure = "roundtrip: the printed schedule prints differently once read back";
    } catch (const Error& e) {
      s.failure = "roundtrip: the printed schedule does not read back: " + format_error(e);
    }
    s.result = std::move(in);
  } catch (const Error& e) {
    s.failure = "invalid-kernel: " + format_error(e);
  } catch (const std::exception& e) {
    s.failure = std::string("internal: ") + e.what();
  }
  return s;
}

// The simulations of one schedule: job k <= perturb_runs runs at seed k (0: nominal timing),
// the last one runs the nominal timing again with fast-forward off.
int jobs_per_schedule(int perturb_runs) { return perturb_runs + 2; }

// A simulation's races, one per line (empty when clean); a nominal run adds, after a record
// separator, its whole result (JSON) and the instances fast-forward skipped.
constexpr char kPart = '\x1e';
std::string simulate_job(const KernelInput& in, int job, int perturb_runs) {
  Kernel k = in.kernel;
  DepGraph g = in.deps;
  SimOptions so;
  const bool full = job == jobs_per_schedule(perturb_runs) - 1;
  so.perturb_seed = full ? 0 : static_cast<uint64_t>(job);
  so.fast_forward = !full;
  const SimResult r = simulate(lower_scheduled(k, g, RunOptions{}), so);
  std::string out;
  for (const HazardReport& h : r.hazards) out += h.message + "\n";
  if (so.perturb_seed == 0) out += kPart + format_json(r) + kPart + std::to_string(r.fast_forwarded);
  return out;
}

// Part `i` of a job's output ("" past the last).
std::string part(const std::string& output, int i) {
  size_t from = 0;
  for (; i > 0; --i) {
    from = output.find(kPart, from);
    if (from == std::string::npos) return "";
    ++from;
  }
  return output.substr(from, output.find(kPart, from) - from);
}

// What the simulations of one schedule (simulate_job's, in job order) say is wrong, if anything:
// a failure, a race, or a result fast-forward changed.
std::optional<std::string> sim_failure(const std::vector<IsolatedOutcome>& jobs) {
  for (size_t job = 0; job < jobs.size(); ++job) {
    const bool full = job + 1 == jobs.size();
    const std::string run = full  ? " (nominal timing, fast-forward off)"
                            : job ? " (perturbed run, seed " + std::to_string(job) + ")"
                                  : " (nominal timing)";
    if (!jobs[job].ok) return "simulation: " + first_line(jobs[job].error) + run;
    const std::string races = part(jobs[job].output, 0);
    if (!races.empty()) return "race: " + first_line(races) + run;
  }
  if (part(jobs.front().output, 1) != part(jobs.back().output, 1))
    return std::string("fast-forward: the result differs from simulating every instance");
  return std::nullopt;
}

// The failure class of a case (the word before ':'), or nothing when it passes or is refused.
std::optional<std::string> failure_of(const std::string& text, const std::string& pipeline, int perturb_runs,
                                      std::string* detail = nullptr) {
  Scheduled s = schedule_case(text, pipeline);
  std::optional<std::string> f;
  if (!s.failure.empty()) f = s.failure;
  if (!f && s.result) {
    std::vector<IsolatedOutcome> jobs;
    for (int job = 0; job < jobs_per_schedule(perturb_runs); ++job)
      jobs.push_back(run_isolated_outcome([&] { return simulate_job(*s.result, job, perturb_runs); }, 60));
    f = sim_failure(jobs);
  }
  if (!f) return std::nullopt;
  if (detail) *detail = *f;
  return f->substr(0, f->find(':'));
}

std::vector<std::string> split_steps(const std::string& pipeline) {
  std::vector<std::string> steps;
  int depth = 0;
  std::string cur;
  for (char c : pipeline) {
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == ',' && depth == 0) {
      steps.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  steps.push_back(cur);
  return steps;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b);
}

// Greedy reduction: drop pipeline steps, instructions, whole loops and unused tensors, and
// shorten loops, while the case still fails the same way.
std::pair<std::string, std::string> reduce(std::string text, std::string pipeline, const std::string& cls,
                                           int perturb_runs) {
  auto still = [&](const std::string& t, const std::string& p) {
    const auto f = failure_of(t, p, perturb_runs);
    return f && *f == cls;
  };
  const std::string expanded = format_pipeline(parse_pipeline(pipeline));
  if (still(text, expanded)) pipeline = expanded;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<std::string> steps = split_steps(pipeline);
    for (size_t i = 0; i < steps.size() && steps.size() > 1; ++i) {
      std::vector<std::string> fewer = steps;
      fewer.erase(fewer.begin() + static_cast<long>(i));
      if (still(text, join(fewer, ","))) {
        steps = fewer;
        pipeline = join(fewer, ",");
        --i;
        changed = true;
      }
    }
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 1; i + 1 < lines.size(); ++i) {
      const std::string t = trim(lines[i]);
      std::vector<std::vector<std::string>> candidates;
      if (t.rfind("loop ", 0) == 0) {
        size_t j = i, depth = 0;
        for (; j < lines.size(); ++j) {
          const std::string u = trim(lines[j]);
          if (u.rfind("loop ", 0) == 0) ++depth;
          if (u == "}" && --depth == 0) break;
        }
        std::vector<std::string> without = lines;
        without.erase(without.begin() + static_cast<long>(i), without.begin() + static_cast<long>(j) + 1);
        candidates.push_back(without);
        static const std::regex bounds(R"(= (-?\d+) to (\d+))");
        std::smatch m;
        if (std::regex_search(lines[i], m, bounds) && std::stoll(m[2]) - std::stoll(m[1]) > 1) {
          std::vector<std::string> shorter = lines;
          shorter[i] =
              m.prefix().str() + "= " + m[1].str() + " to " + std::to_string(std::stoll(m[2]) - 1) + m.suffix().str();
          candidates.push_back(shorter);
        }
      } else if (t.rfind("%", 0) == 0 || t.rfind("tensor ", 0) == 0 || t.rfind("dep ", 0) == 0 || t == "s_waitcnt") {
        std::vector<std::string> without = lines;
        without.erase(without.begin() + static_cast<long>(i));
        candidates.push_back(without);
      }
      for (const auto& c : candidates) {
        const std::string t2 = join(c, "\n") + "\n";
        if (still(t2, pipeline)) {
          text = t2;
          lines = c;
          --i;
          changed = true;
          break;
        }
      }
    }
  }
  return {text, pipeline};
}

int usage(const std::string& why) {
  std::cerr << "tandem_campaign: " << why
            << "\nusage: tandem_campaign [--seed N] [--kernels N] [--perturb-runs K] [-j N] [--out DIR] "
               "[--trip-scale S] [--print-kernel I] [--expect-failures N]\n";
  return 2;
}

// "%name" and numbers replaced, so that one reason given by many kernels counts once.
std::string reason_kind(const std::string& reason) {
  static const std::regex names(R"(%[A-Za-z0-9_.]+)"), numbers(R"(\b\d+\b)");
  return std::regex_replace(std::regex_replace(reason, names, "%_"), numbers, "N");
}

int run(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  int64_t cases = 0, passed = 0, declined = 0, refused = 0, failed = 0, trn = 0, gpu = 0, schedules = 0, sims = 0,
          fast_forwarded = 0;
  size_t trn_pipelines = 0, gpu_pipelines = 0;
  std::map<std::string, int64_t> reasons, refusals, failures;
  mkdir(o.out.c_str(), 0777);
  for (int64_t ki = 0; ki < o.kernels; ++ki) {
    const GeneratedKernel gk = generate_kernel(o.seed, ki, o.trip_scale);
    const std::vector<std::string> pipelines = pipelines_for(gk);
    (gk.gpu ? gpu : trn) += 1;
    (gk.gpu ? gpu_pipelines : trn_pipelines) = pipelines.size();
    // Distinct schedules of this kernel, each simulated once; the cases that produced each.
    std::vector<std::pair<std::string, KernelInput>> unique;
    std::map<std::string, size_t> index_of;
    std::vector<std::vector<size_t>> cases_of;
    std::vector<std::optional<std::string>> verdict(pipelines.size());
    for (size_t pi = 0; pi < pipelines.size(); ++pi) {
      ++cases;
      Scheduled s = schedule_case(gk.text, pipelines[pi]);
      if (!s.refusal.empty()) {
        ++refused;
        refusals[reason_kind(
            s.refusal.substr(s.refusal.find("error: ") == std::string::npos ? 0 : s.refusal.find("error: ") + 7))]++;
        verdict[pi] = "";
        continue;
      }
      if (!s.failure.empty()) {
        verdict[pi] = s.failure;
        continue;
      }
      if (!s.skips.empty()) ++declined;
      for (const auto& r : s.skips) reasons[reason_kind(r)]++;
      auto [it, fresh] = index_of.try_emplace(s.printed, unique.size());
      if (fresh) {
        unique.emplace_back(s.printed, std::move(*s.result));
        cases_of.emplace_back();
      }
      cases_of[it->second].push_back(pi);
    }
    // Simulations: every distinct schedule at nominal timing and under K perturbations, and at
    // nominal timing with fast-forward off.
    const auto per = static_cast<size_t>(jobs_per_schedule(o.perturb_runs));
    std::vector<std::vector<IsolatedOutcome>> outcomes(unique.size(), std::vector<IsolatedOutcome>(per));
    schedules += static_cast<int64_t>(unique.size());
    sims += static_cast<int64_t>(unique.size() * per);
    run_isolated_pool(
        unique.size() * per, o.jobs,
        [&](size_t j) { return simulate_job(unique[j / per].second, static_cast<int>(j % per), o.perturb_runs); },
        [&](size_t j, const IsolatedOutcome& out) { outcomes[j / per][j % per] = out; }, 60);
    std::vector<std::optional<std::string>> sim_verdict(unique.size());
    for (size_t u = 0; u < unique.size(); ++u) {
      sim_verdict[u] = sim_failure(outcomes[u]);
      if (outcomes[u].front().ok && std::stoll("0" + part(outcomes[u].front().output, 2)) > 0) ++fast_forwarded;
    }
    for (size_t u = 0; u < unique.size(); ++u)
      for (size_t pi : cases_of[u]) verdict[pi] = sim_verdict[u] ? *sim_verdict[u] : std::string();
    for (size_t pi = 0; pi < pipelines.size(); ++pi) {
      if (!verdict[pi] || verdict[pi]->empty()) continue;
      ++failed;
      const std::string cls = verdict[pi]->substr(0, verdict[pi]->find(':'));
      const int64_t seen = ++failures[cls + " under " + pipelines[pi]];
      std::cout << "FAIL kernel " << ki << " (" << gk.shape << "), pipeline '" << pipelines[pi] << "': " << *verdict[pi]
                << "\n";
      // One reduced reproducer per failure class and pipeline.
      if (seen > 1) continue;
      const std::string file = o.out + "/kernel" + std::to_string(ki) + "_case" + std::to_string(pi) + ".kir";
      auto [text, pipeline] = reduce(gk.text, pipelines[pi], cls, o.perturb_runs);
      std::string detail;
      failure_of(text, pipeline, o.perturb_runs, &detail);
      std::ofstream f(file);
      f << "# Generated-kernel campaign, seed " << o.seed << ", kernel " << ki << ", reduced.\n"
        << "# tandem sim " << file << " --passes='" << pipeline << "' --perturb-runs=" << o.perturb_runs << "\n"
        << "# tandem opt " << file << " --passes='" << pipeline << "' --verify\n"
        << "# fails: " << detail << "\n"
        << text;
      std::cout << "  reduced reproducer: " << file << " with --passes='" << pipeline << "'\n";
    }
  }
  // A case neither refused nor failed passed every check.
  passed = cases - refused - failed;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "campaign seed " << o.seed << (o.trip_scale > 1 ? ", trips x" + std::to_string(o.trip_scale) : "")
            << ": " << o.kernels << " kernels (" << trn << " trn, " << gpu << " gpu) x " << trn_pipelines << " trn / "
            << gpu_pipelines << " gpu pipelines\n"
            << "cases: " << cases << "\n"
            << "passed: " << passed << " (of which a pass declined with a reason: " << declined << ")\n"
            << "refused (a pass's user error, e.g. buffers that do not fit): " << refused << "\n"
            << "failed: " << failed << "\n"
            << "distinct schedules simulated: " << schedules << " (" << sims << " simulations, " << o.perturb_runs
            << " perturbed runs and one without fast-forward each)\n"
            << "fast-forwarded: " << fast_forwarded << " nominal runs skipped steady periods\n";
  auto top = [](const std::map<std::string, int64_t>& m, const char* title) {
    if (m.empty()) return;
    std::vector<std::pair<int64_t, std::string>> v;
    for (const auto& [k, n] : m) v.emplace_back(-n, k);
    std::sort(v.begin(), v.end());
    std::cout << title << "\n";
    for (size_t i = 0; i < v.size() && i < 12; ++i) std::cout << "  " << -v[i].first << "  " << v[i].second << "\n";
    if (v.size() > 12) std::cout << "  ... " << v.size() - 12 << " more\n";
  };
  top(reasons, "declined with a reason (by reason):");
  top(refusals, "refused (by message):");
  top(failures, "failed (by class and pipeline):");
  std::printf("time: %.1f s\n", seconds);
  if (failed != o.expect_failures)
    std::cout << "expected " << o.expect_failures << " failed cases, found " << failed << "\n";
  return failed == o.expect_failures ? 0 : 1;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  tandem::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--seed")
        o.seed = std::stoull(value());
      else if (a == "--kernels")
        o.kernels = std::stoll(value());
      else if (a == "--perturb-runs")
        o.perturb_runs = std::stoi(value());
      else if (a == "-j")
        o.jobs = std::max(1, std::stoi(value()));
      else if (a == "--out")
        o.out = value();
      else if (a == "--print-kernel")
        o.print_kernel = std::stoll(value());
      else if (a == "--expect-failures")
        o.expect_failures = std::stoll(value());
      else if (a == "--trip-scale")
        o.trip_scale = std::max(1, std::stoi(value()));
      else
        return tandem::usage("unknown argument '" + a + "'");
    } catch (const std::exception& e) {
      return tandem::usage(e.what());
    }
  }
  tandem::set_log_level("off");
  if (o.print_kernel >= 0) {
    const tandem::GeneratedKernel k = tandem::generate_kernel(o.seed, o.print_kernel, o.trip_scale);
    std::cout << "# " << k.shape << "\n" << k.text;
    for (const auto& p : tandem::pipelines_for(k)) std::cout << "# pipeline: " << p << "\n";
    return 0;
  }
  return tandem::run(o);
}
