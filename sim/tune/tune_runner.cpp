#include "sim/tune/tune_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include <fmt/printf.h>
#include <nlohmann/json.hpp>

#include "sched/driver/schedule_file.h"
#include "sched/ir/printer.h"
#include "sched/support/error.h"
#include "sched/support/output.h"
#include "sim/driver/isolated.h"
#include "sim/driver/progress_line.h"
#include "sim/driver/simulate_file.h"
#include "sim/report/html_report.h"
#include "sim/report/report.h"
#include "sim/tune/tune_space.h"
#ifdef TANDEM_HAVE_MPI
#include "sim/driver/sweep/mpi_pool.h"
#endif

namespace tandem {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNoTime = std::numeric_limits<double>::infinity();
constexpr uint64_t kRestartSeed = 1;    // the random restarts' generator: fixed, so runs repeat
constexpr int kPerturbedRuns = 2;       // perturbed runs that confirm the best point race-free
constexpr int kConfirmTries = 3;        // best points tried that way before giving up
constexpr double kConfirmSeconds = 60;  // time allowed to those perturbed runs
constexpr size_t kListLimit = 100000;   // --list-points refuses a larger space

volatile sig_atomic_t g_interrupted = 0;  // the signal that stopped the search, or 0
extern "C" void on_interrupt(int sig) { g_interrupted = sig; }

struct Budget {
  size_t points = 0;   // 0: none
  double seconds = 0;  // 0: none
};

Budget parse_budget(const std::string& text) {
  Budget b;
  if (text.empty()) return b;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (used > 0 && unit.empty() && v >= 1 && v == static_cast<double>(static_cast<size_t>(v)) &&
      text.find_first_not_of("0123456789") == std::string::npos)
    b.points = static_cast<size_t>(v);
  else if (used > 0 && scale > 0 && v > 0)
    b.seconds = v * scale;
  else
    throw Error("--budget '" + printable(text) + "': give a number of points (40) or a time (30s, 2m, 1h)");
  return b;
}

struct Eval {
  size_t point = 0;
  std::string pipeline;
  std::string status;  // ok, racy, miscompiled, error, timeout, internal-error
  double total_ns = kNoTime, bound_ns = 0;
  std::string bound_resource;
  std::string message;       // why a point was rejected
  bool repeated = false;     // its schedule is an earlier point's: not simulated again
  size_t source = SIZE_MAX;  // then the index (in evaluation order) of the point simulated
};

// One point in its own process: "m" MESSAGE when it fails --verify, else "r" RACES " "
// TOTAL_PS " " BOUND_PS " " RESOURCE.
std::string run_point(const TuneRun& args, const TuneSpace& space, size_t point) {
  // Ctrl-C on a terminal stops the running points at once; SIGTERM and SIGHUP (the parent's
  // death signal among them) end a point, whatever the search catches.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
  RunOptions ropts;
  ropts.verify = true;
  try {
    const SimResult r =
        schedule_and_simulate(args.kernel, args.hw, space.pipeline(space.coords(point)), ropts, SimOptions{});
    return "r" + std::to_string(r.hazards.size()) + " " + std::to_string(r.total_ps) + " " +
           std::to_string(r.lower_bound_ps) + " " + r.lower_bound_resource;
  } catch (const MiscompileError& e) {
    return "m" + e.message();
  }
}

class Search {
 public:
  Search(const TuneRun& args, const TuneSpace& space, Budget budget, Clock::time_point deadline)
      : args_(args), space_(space), budget_(budget), deadline_(deadline) {}

#ifdef TANDEM_HAVE_MPI
  void use_mpi(MpiPool* mpi) { mpi_ = mpi; }
  bool under_mpi() const { return mpi_ != nullptr; }
#else
  bool under_mpi() const { return false; }
#endif

  bool stopped() const {
    return g_interrupted || (budget_.points && evals_.size() >= budget_.points) || Clock::now() > deadline_;
  }

  // Evaluates the points not evaluated yet, in their order (so ties go the same way every run).
  void evaluate(const std::vector<size_t>& batch) {
    std::vector<size_t> fresh;
    for (size_t p : batch)
      if (!by_point_.count(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end()) fresh.push_back(p);
    if (budget_.points) fresh.resize(std::min(fresh.size(), budget_.points - std::min(budget_.points, evals_.size())));
    // Scheduled here (no simulation): a point refused by a pass is rejected at once, and one
    // whose schedule an earlier point has is not simulated again.
    std::vector<Eval> out(fresh.size());
    std::vector<size_t> run;                   // indices into `fresh` to simulate
    std::map<size_t, size_t> same_as;          // index into `fresh` -> the index simulated for it
    std::map<std::string, size_t> batch_keys;  // key -> index into `fresh`
    for (size_t i = 0; i < fresh.size() && !g_interrupted && Clock::now() <= deadline_; ++i) {
      Eval& e = out[i];
      e.point = fresh[i];
      try {
        e.pipeline = space_.pipeline(space_.coords(e.point));
        const std::string key = schedule_key(args_.kernel, args_.hw, e.pipeline);
        if (auto k = by_key_.find(key); k != by_key_.end()) {
          copy_result(e, evals_[k->second]);
          e.source = k->second;
        } else if (auto b = batch_keys.find(key); b != batch_keys.end()) {
          same_as[i] = b->second;
        } else {
          batch_keys[key] = i;
          keys_[i] = key;
          run.push_back(i);
        }
      } catch (const Error& err) {
        e.status = "error";
        e.message = format_error(err);
      }
    }
    std::vector<bool> done(fresh.size(), false);
    auto record = [&](size_t i, const IsolatedOutcome& o) {
      Eval& e = out[i];
      if (!o.ok && g_interrupted) return;  // killed by the Ctrl-C
      done[i] = true;
      if (!o.ok) {
        e.status = o.timed_out ? "timeout" : o.internal ? "internal-error" : "error";
        e.message = o.error;
      } else if (o.output[0] == 'm') {
        e.status = "miscompiled";
        e.message = o.output.substr(1);
      } else {
        std::istringstream in(o.output.substr(1));
        long long races = 0, total = 0, bound = 0;
        in >> races >> total >> bound;
        std::getline(in >> std::ws, e.bound_resource);
        e.total_ns = static_cast<double>(total) / 1000;
        e.bound_ns = static_cast<double>(bound) / 1000;
        e.status = races ? "racy" : "ok";
        if (races) e.message = std::to_string(races) + " race(s) at nominal timing";
      }
      ++simulated_;
      progress();
    };
    auto job = [&](size_t k) { return run_point(args_, space_, out[run[k]].point); };
#ifdef TANDEM_HAVE_MPI
    if (mpi_) {
      std::map<size_t, size_t> index_of;  // point -> index into `fresh`
      std::vector<size_t> points;
      for (size_t i : run) {
        index_of[out[i].point] = i;
        points.push_back(out[i].point);
      }
      mpi_->run_batch(
          points, [&](size_t point, const IsolatedOutcome& o) { record(index_of.at(point), o); },
          [] { return g_interrupted != 0; });
    } else
#endif
      run_isolated_pool(
          run.size(), args_.jobs, job, [&](size_t k, const IsolatedOutcome& o) { record(run[k], o); },
          args_.point_timeout, [&] { return g_interrupted || Clock::now() > deadline_; });
    std::vector<size_t> index(fresh.size(), SIZE_MAX);  // in evals_
    for (size_t i = 0; i < fresh.size(); ++i) {
      Eval& e = out[i];
      if (e.status.empty() && same_as.count(i) && done[same_as[i]]) {
        copy_result(e, out[same_as[i]]);
        e.source = index[same_as[i]];
      }
      if (e.status.empty() && !done[i]) continue;  // never ran: the search stopped first
      index[i] = evals_.size();
      add(e, keys_.count(i) && done[i] ? &keys_[i] : nullptr);
    }
    keys_.clear();
    flush_log();
    progress();
  }

  // --log: every evaluated point, one row each, appended batch by batch. With --resume, the
  // rows already there (of the same kernel, model and space) are taken as evaluated, in their
  // order, so that the search goes on as it would have.
  void open_log(const std::string& path, bool resume) {
    const std::string header = "# tandem tune log 1: " + args_.kernel + " on " +
                               (args_.hw.empty() ? "its target" : args_.hw) + "; space " + signature();
    lock_log(path);
    if (resume && std::filesystem::exists(path)) {
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // A row cut by an interrupted write has no newline: dropped, its point runs again.
      text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
      std::filesystem::resize_file(path, text.size());
      std::istringstream lines(text);
      std::string line;
      if (std::getline(lines, line) && line != header)
        throw Error("--resume: " + path + " is the log of another kernel, model or space (its first line: '" +
                    printable(line) + "')");
      while (std::getline(lines, line)) resume_row(line);
    }
    const bool fresh = !resume || !std::filesystem::exists(path) || std::filesystem::is_empty(path);
    log_ = std::fopen(path.c_str(), fresh ? "w" : "a");
    if (!log_) throw Error("--log " + path + ": cannot write it: " + std::strerror(errno));
    log_path_ = path;
    if (fresh) std::fprintf(log_, "%s\n", header.c_str());
    flush_log();
  }

  // One search writes a log at a time: another one's rows would interleave with ours, and a
  // --resume would cut them. The lock is held while the search runs; a log that is not a
  // regular file (a device, a FIFO) is not locked.
  void lock_log(const std::string& path) {
    if (std::filesystem::exists(path) && !std::filesystem::is_regular_file(path)) return;
    log_lock_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (log_lock_ < 0) throw Error("--log " + path + ": cannot write it: " + std::strerror(errno));
    if (::flock(log_lock_, LOCK_EX | LOCK_NB) != 0)
      throw Error("--log " + path + ": another tandem tune is writing this log; give each search its own log");
  }

  // A log that cannot take the batch's rows would make a later --resume start over: stop now.
  void flush_log() {
    if (!log_) return;
    errno = 0;
    if (std::fflush(log_) != 0 || std::ferror(log_))
      throw Error("--log " + log_path_ + ": cannot append to it" +
                  (errno ? std::string(": ") + std::strerror(errno) : "") +
                  "; the search stops (the log holds the points written before)");
  }

  size_t resumed() const { return resumed_; }

  ~Search() {
    if (log_) std::fclose(log_);
    if (log_lock_ >= 0) ::close(log_lock_);
  }

  bool evaluated(size_t point) const { return by_point_.count(point) > 0; }

  // The time of a point (kNoTime when rejected or not evaluated).
  double time_of(size_t point) const {
    auto it = by_point_.find(point);
    return it == by_point_.end() || evals_[it->second].status != "ok" ? kNoTime : evals_[it->second].total_ns;
  }

  // Clean schedules, fastest first, ties in evaluation order: a point whose schedule an
  // earlier point had is left out (it adds nothing but another way to write it).
  std::vector<const Eval*> ranking() const {
    std::vector<const Eval*> r;
    for (const Eval& e : evals_)
      if (e.status == "ok" && !e.repeated) r.push_back(&e);
    std::stable_sort(r.begin(), r.end(), [](const Eval* a, const Eval* b) { return a->total_ns < b->total_ns; });
    return r;
  }

  // A point found racing after the search, and every point that shares its schedule.
  void reject(size_t point, const std::string& status, const std::string& message) {
    const size_t i = by_point_.at(point);
    for (size_t j = 0; j < evals_.size(); ++j)
      if (j == i || evals_[j].source == i) {
        evals_[j].status = status;
        evals_[j].message = message;
      }
  }

  void finish_progress() { progress_.finish(); }

  const std::vector<Eval>& evals() const { return evals_; }
  const std::vector<double>& best_so_far() const { return best_so_far_; }
  size_t simulated() const { return simulated_; }

 private:
  void add(const Eval& e, const std::string* key) {
    by_point_[e.point] = evals_.size();
    if (key) by_key_[*key] = evals_.size();
    evals_.push_back(e);
    const double best = best_so_far_.empty() ? kNoTime : best_so_far_.back();
    best_so_far_.push_back(e.status == "ok" ? std::min(best, e.total_ns) : best);
    if (!log_) return;
    std::string message = e.message;
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(log_, "%zu,%s,%.17g,%.17g,%s,%d,%zu,%s\n", e.point, e.status.c_str(), e.total_ns, e.bound_ns,
                 e.bound_resource.c_str(), e.repeated ? 1 : 0, e.source, message.c_str());
  }

  void resume_row(const std::string& line) {
    std::vector<std::string> f;
    size_t start = 0;
    for (int i = 0; i < 7; ++i) {
      const size_t comma = line.find(',', start);
      if (comma == std::string::npos) throw Error("--resume: a malformed log row: '" + printable(line) + "'");
      f.push_back(line.substr(start, comma - start));
      start = comma + 1;
    }
    Eval e;
    try {
      e.point = std::stoull(f[0]);
      e.total_ns = std::stod(f[2]);
      e.bound_ns = std::stod(f[3]);
      e.source = std::stoull(f[6]);
    } catch (const std::exception&) {
      throw Error("--resume: a malformed log row: '" + printable(line) + "'");
    }
    if (e.point >= space_.size() || by_point_.count(e.point)) return;
    e.status = f[1];
    e.bound_resource = f[4];
    e.repeated = f[5] == "1";
    e.message = line.substr(start);
    e.pipeline = space_.pipeline(space_.coords(e.point));
    std::string key;
    if (!e.repeated && e.status != "error") key = schedule_key(args_.kernel, args_.hw, e.pipeline);
    add(e, key.empty() ? nullptr : &key);
    ++resumed_;
  }

  std::string signature() const {
    std::string sig;
    for (const TuneDimension& d : space_.dims) {
      sig += (sig.empty() ? "" : " ") + d.name + "=";
      for (size_t v = 0; v < d.values.size(); ++v) sig += (v ? "|" : "") + d.values[v];
    }
    return sig;
  }

  static void copy_result(Eval& to, const Eval& from) {
    to.status = from.status;
    to.total_ns = from.total_ns;
    to.bound_ns = from.bound_ns;
    to.bound_resource = from.bound_resource;
    to.message = from.message;
    to.repeated = true;
  }

  void progress() {
    if (!progress_.on()) return;
    const double best = best_so_far_.empty() ? kNoTime : best_so_far_.back();
    char line[160];
    std::snprintf(line, sizeof line, "tune: %zu points, %zu simulated, best %s, %.0f s", evals_.size(), simulated_,
                  best == kNoTime ? "none yet" : (std::to_string(best) + " ns").c_str(), progress_.seconds());
    progress_.show(line);
  }

  const TuneRun& args_;
  const TuneSpace& space_;
  Budget budget_;
  Clock::time_point deadline_;
  ProgressLine progress_{static_cast<bool>(::isatty(STDERR_FILENO))};  // on a terminal only
#ifdef TANDEM_HAVE_MPI
  MpiPool* mpi_ = nullptr;
#endif
  std::vector<Eval> evals_;
  std::vector<double> best_so_far_;
  std::map<size_t, size_t> by_point_;     // point -> evals_ index
  std::map<std::string, size_t> by_key_;  // scheduled kernel -> evals_ index of the point simulated
  std::map<size_t, std::string> keys_;    // this batch: index -> key of the points simulated
  size_t simulated_ = 0;
  std::FILE* log_ = nullptr;
  std::string log_path_;
  int log_lock_ = -1;  // the descriptor holding the log's lock
  size_t resumed_ = 0;
};

// Coordinate descent from `current` (docs/tune.md): each dimension from `first` on is tried in
// turn at every value with the others fixed, keeping a strictly faster point, until a round
// changes nothing.
void descend_from(Search& search, const TuneSpace& space, size_t current, size_t first) {
  for (bool improved = true; improved && !search.stopped();) {
    improved = false;
    for (size_t d = first; d < space.dims.size() && !search.stopped(); ++d) {
      std::vector<size_t> batch;
      for (size_t v = 0; v < space.dims[d].values.size(); ++v) {
        std::vector<size_t> at = space.coords(current);
        at[d] = v;
        batch.push_back(space.point(at));
      }
      search.evaluate(batch);
      for (size_t p : batch)
        if (search.time_of(p) < search.time_of(current)) current = p, improved = true;
    }
  }
}

// The search above the exhaustive limit: the seeds (each pipeline value, every option at its
// first value), then a descent from each seed over the options, its pipeline kept (each seed is
// its own basin: an option's best value under `none` is not its best under `default`), fastest
// seed first; then one over every dimension from the best point; then, while a budget is left,
// descents from random points not yet evaluated (a fixed generator seed).
void descend(Search& search, const TuneSpace& space, bool restarts) {
  std::vector<size_t> seeds;
  for (size_t v = 0; v < space.dims[0].values.size(); ++v) {
    std::vector<size_t> at(space.dims.size(), 0);
    at[0] = v;
    seeds.push_back(space.point(at));
  }
  search.evaluate(seeds);
  std::stable_sort(seeds.begin(), seeds.end(),
                   [&](size_t a, size_t b) { return search.time_of(a) < search.time_of(b); });
  for (size_t seed : seeds) descend_from(search, space, seed, 1);
  if (const auto ranking = search.ranking(); !ranking.empty()) descend_from(search, space, ranking[0]->point, 0);
  std::mt19937_64 rng(kRestartSeed);
  std::uniform_int_distribution<size_t> any(0, space.size() - 1);
  while (restarts && !search.stopped() && search.evals().size() < space.size()) {
    size_t next = any(rng);
    for (int tries = 0; tries < 100 && search.evaluated(next); ++tries) next = any(rng);
    search.evaluate({next});
    descend_from(search, space, next, 0);
  }
}

std::string fmt_ns(double ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ns);
  return buf;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A simulation of `pipeline` as a tandem.sim/1 document with its timeline, in its own process.
std::string sim_json(const TuneRun& args, const std::string& pipeline) {
  SimOptions sopts;
  sopts.capture_timeline = true;
  return run_isolated(
      [&] { return format_json(schedule_and_simulate(args.kernel, args.hw, pipeline, RunOptions{}, sopts)); });
}

// ---- the result: one tandem.tune/1 document (docs/tune.md), printed as text or JSON ----

using Json = nlohmann::ordered_json;

// The space and the search: what was tried, rejected and why.
Json summarize_search(const TuneRun& args, const TuneSpace& space, const Search& search, bool exhaustive,
                      const Budget& budget, bool interrupted, double seconds) {
  Json j = {{"schema", "tandem.tune/1"}, {"kernel", args.kernel}, {"model", args.hw}};
  Json dims = Json::array();
  for (const TuneDimension& d : space.dims) dims.push_back({{"name", d.name}, {"values", d.values}});
  j["space"] = {{"points", space.size()}, {"dimensions", dims}, {"left_out", space.left_out}};
  j["search"] =
      (exhaustive ? "exhaustive (" + std::to_string(space.size()) + " points)"
                  : "coordinate descent from each seed" +
                        std::string(budget.points || budget.seconds > 0 ? ", random restarts (seed 1)" : "")) +
      (budget.points        ? ", budget " + std::to_string(budget.points) + " points"
       : budget.seconds > 0 ? ", budget " + args.budget
                            : "") +
      (interrupted ? ", interrupted" : "");
  j["interrupted"] = interrupted;
  size_t repeated = 0;
  Json rejected = Json::object(), examples = Json::object();
  size_t total_rejected = 0;
  std::map<std::string, size_t> by_status;
  for (const Eval& e : search.evals()) {
    repeated += e.repeated;
    if (e.status == "ok") continue;
    ++by_status[e.status];
    ++total_rejected;
    if (!examples.contains(e.status)) examples[e.status] = printable(e.pipeline + ": " + e.message, 300);
  }
  for (const auto& [status, n] : by_status) rejected[status] = n;
  j["evaluated"] = {{"points", search.evals().size()},
                    {"simulated", search.simulated()},
                    {"repeated", repeated},
                    {"resumed", search.resumed()},
                    {"log", args.log},
                    {"seconds", seconds}};
  j["rejected"] = {{"points", total_rejected}, {"by_status", rejected}, {"examples", examples}};
  j["best"] = nullptr;
  j["seeds"] = Json::array();
  j["top"] = Json::array();
  j["units"] = {{"total_ns", "ns"},
                {"lower_bound_ns", "ns"},
                {"of_bound", "fraction"},
                {"speedup_of_best", "ratio"},
                {"seconds", "s"}};
  return j;
}

// The best point against its bound, the seed pipelines against it (from the search when it
// evaluated them, else simulated now, outside the budget; `none` aside), the top points and
// the command that reproduces the best.
void add_best(Json& j, const TuneRun& args, const Search& search, const Eval& best, const std::string& unconfirmed) {
  j["best"] = {{"pipeline", best.pipeline},
               {"total_ns", best.total_ns},
               {"lower_bound_ns", best.bound_ns},
               {"lower_bound_resource", best.bound_resource},
               {"of_bound", best.total_ns > 0 ? best.bound_ns / best.total_ns : 1.0},
               {"unconfirmed", unconfirmed}};
  for (const std::string& seed : tune_seeds()) {
    if (seed == "none") continue;
    std::string status = "ok";
    double ns = kNoTime;
    const auto& evals = search.evals();
    auto e = std::find_if(evals.begin(), evals.end(), [&](const Eval& x) { return x.pipeline == seed; });
    if (e != evals.end()) {
      status = e->status;
      ns = e->total_ns;
    } else {
      RunOptions ropts;
      ropts.verify = true;
      const IsolatedOutcome out = run_isolated_outcome(
          [&] {
            const SimResult r = schedule_and_simulate(args.kernel, args.hw, seed, ropts, SimOptions{});
            return std::string(r.hazards.empty() ? "" : "racy ") + std::to_string(r.total_ps);
          },
          args.point_timeout);
      if (!out.ok)
        status = "error";
      else if (out.output.rfind("racy ", 0) == 0)
        status = "racy";
      else
        ns = std::stod(out.output) / 1000;
    }
    Json ref = {{"pipeline", seed}, {"status", status}};
    if (status == "ok") {
      ref["total_ns"] = ns;
      ref["speedup_of_best"] = ns / best.total_ns;
    }
    j["seeds"].push_back(ref);
  }
  const std::vector<const Eval*> ranking = search.ranking();
  for (size_t i = 0; i < ranking.size() && i < static_cast<size_t>(args.top); ++i)
    j["top"].push_back({{"rank", i + 1}, {"total_ns", ranking[i]->total_ns}, {"pipeline", ranking[i]->pipeline}});
  j["reproduce"] =
      "tandem sim " + args.kernel + (args.hw.empty() ? "" : " --hw " + args.hw) + " --passes=" + quoted(best.pipeline);
}

std::string format_tune_text(const Json& j, bool explain_space) {
  std::ostringstream o;
  const std::string hw = j.at("model");
  o << "tune: " << j.at("kernel").get<std::string>() << (hw.empty() ? "" : " on " + hw) << "\n";
  const Json& space = j.at("space");
  o << "space: " << space.at("points").get<size_t>() << " points";
  bool first = true;
  for (const Json& d : space.at("dimensions")) {
    o << (first ? ": " : " x ") << d.at("name").get<std::string>() << " (" << d.at("values").size() << ")";
    first = false;
  }
  o << "\n";
  if (explain_space) {
    for (const Json& d : space.at("dimensions")) {
      o << "  " << d.at("name").get<std::string>() << ":";
      for (const Json& v : d.at("values")) o << " " << v.get<std::string>();
      o << "\n";
    }
    for (const Json& why : space.at("left_out")) o << "  left out: " << why.get<std::string>() << "\n";
  }
  o << "search: " << j.at("search").get<std::string>() << "\n";
  const Json& ev = j.at("evaluated");
  o << "evaluated: " << ev.at("points").get<size_t>() << " points, " << ev.at("simulated").get<size_t>()
    << " simulated (" << ev.at("repeated").get<size_t>() << " had an earlier point's schedule) in "
    << fmt::sprintf("%.1f", ev.at("seconds").get<double>()) << " s";
  if (ev.at("resumed").get<size_t>())
    o << "; " << ev.at("resumed").get<size_t>() << " from " << ev.at("log").get<std::string>();
  o << "\n";
  const Json& rejected = j.at("rejected");
  o << "rejected: " << rejected.at("points").get<size_t>();
  first = true;
  for (const auto& [status, n] : rejected.at("by_status").items()) {
    o << (first ? " (" : ", ") << n.get<size_t>() << " " << status;
    first = false;
  }
  o << (first ? "" : ")") << "\n";
  for (const auto& [status, text] : rejected.at("examples").items())
    o << "  e.g. " << status << ": " << text.get<std::string>() << "\n";
  if (j.at("best").is_null()) return o.str();

  const Json& best = j.at("best");
  o << "best: " << best.at("pipeline").get<std::string>() << "\n";
  if (const std::string why = best.at("unconfirmed"); !why.empty())
    o << "  (race-free at nominal timing; not checked under perturbed timing: " << why << ")\n";
  o << "  total_ns " << fmt_ns(best.at("total_ns")) << "; lower_bound_ns " << fmt_ns(best.at("lower_bound_ns")) << " ("
    << best.at("lower_bound_resource").get<std::string>() << "), "
    << fmt::sprintf("%.2f%%", 100 * best.at("of_bound").get<double>()) << " of it\n";
  for (const Json& seed : j.at("seeds")) {
    const std::string name = seed.at("pipeline");
    if (seed.at("status") == "ok")
      o << fmt::sprintf("  %s: %s ns; speedup of the best %.3fx\n", name, fmt_ns(seed.at("total_ns")),
                        seed.at("speedup_of_best").get<double>());
    else
      o << "  " << name << ": rejected (" << seed.at("status").get<std::string>() << ")\n";
  }
  o << "top " << j.at("top").size() << ":\n";
  for (const Json& t : j.at("top"))
    o << fmt::sprintf("  %2zu  %12s ns  ", t.at("rank").get<size_t>(), fmt_ns(t.at("total_ns")))
      << t.at("pipeline").get<std::string>() << "\n";
  o << "reproduce: " << j.at("reproduce").get<std::string>() << "\n";
  return o.str();
}

// --list-points: every point's pipeline, one a line.
void list_points(const TuneSpace& space) {
  if (space.size() > kListLimit)
    throw Error("--list-points: the space has " + std::to_string(space.size()) + " points; narrow it with --space");
  for (size_t p = 0; p < space.size(); ++p) std::printf("%s\n", space.pipeline(space.coords(p)).c_str());
}

// When the search stops: `start` plus the time budget, or never.
Clock::time_point deadline_of(const Budget& budget, Clock::time_point start) {
  return budget.seconds > 0
             ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget.seconds))
             : Clock::time_point::max();
}

// While caught, SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the search rather than tune: the
// search ends with what it has found. Under mpirun, Ctrl-C reaches rank 0 as SIGTERM (mpirun
// forwards it to every rank, and SIGKILLs them a second later: odls_base_sigkill_timeout).
class InterruptCatcher {
 public:
  InterruptCatcher() {
    struct sigaction act {};
    act.sa_handler = on_interrupt;
    sigemptyset(&act.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) {
      ::sigaction(kSignals[i], nullptr, &old_[i]);
      // A signal tune was started with ignored (nohup) stays ignored.
      if (!(old_[i].sa_flags & SA_SIGINFO) && old_[i].sa_handler == SIG_IGN) continue;
      ::sigaction(kSignals[i], &act, nullptr);
    }
  }
  // From here a signal stops tune at once.
  void release() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// A search stopped by `sig`: the one line on stderr, and the status 128 + sig.
int stopped(int sig) {
  std::fprintf(stderr, "tandem tune: stopped by %s; the search ended with the points it had run\n",
               sig == SIGINT    ? "SIGINT"
               : sig == SIGTERM ? "SIGTERM"
                                : "SIGHUP");
  return 128 + sig;
}

// Every point when the space is small enough (kTuneExhaustiveLimit, or the point budget when
// larger), else coordinate descent. Returns whether the search was exhaustive.
bool search_space(Search& search, const TuneSpace& space, const Budget& budget) {
  const size_t size = space.size();
  const bool exhaustive = size <= std::max(kTuneExhaustiveLimit, budget.points);
  if (exhaustive) {
    std::vector<size_t> all(size);
    for (size_t p = 0; p < size; ++p) all[p] = p;
    search.evaluate(all);
  } else {
    descend(search, space, budget.points || budget.seconds > 0);
  }
  return exhaustive;
}

struct BestPoint {
  const Eval* eval = nullptr;  // none: no clean point, or every one tried raced when perturbed
  std::string unconfirmed;     // why it was not checked under perturbed timing
};

// The best point is confirmed race-free under perturbed timing too; a point that races
// there is rejected and the next one tried. Not after a Ctrl-C, which wants the answer now,
// nor past kConfirmSeconds (perturbed runs of long loops can be much slower than nominal ones).
BestPoint confirm_best(const TuneRun& args, Search& search, bool interrupted) {
  for (int tries = 0; tries < kConfirmTries; ++tries) {
    const std::vector<const Eval*> ranking = search.ranking();
    if (ranking.empty()) break;
    const Eval* candidate = ranking[0];
    if (interrupted) return {candidate, "interrupted"};
    const IsolatedOutcome out = run_isolated_outcome(
        [&] {
          return format_json(simulate_with_perturbed_runs(args.kernel, args.hw, candidate->pipeline, RunOptions{},
                                                          SimOptions{}, kPerturbedRuns));
        },
        kConfirmSeconds);
    if (!out.ok)
      return {candidate,
              out.timed_out ? "the perturbed runs took over " + std::to_string(static_cast<int>(kConfirmSeconds)) + " s"
                            : "the perturbed runs failed: " + out.error};
    const size_t races = parse_sim_json(out.output).hazards.size();
    if (races == 0) return {candidate, ""};
    search.reject(candidate->point, "racy", std::to_string(races) + " race(s) under perturbed timing");
  }
  return {};
}

// Why no point is the answer: clean points all raced under perturbed timing, or none was clean.
[[noreturn]] void fail_without_best(const TuneRun& args, const Search& search) {
  if (!search.ranking().empty())
    throw Error(args.kernel + ": the " + std::to_string(kConfirmTries) +
                " fastest clean points race under perturbed timing; narrow the space (see the rejected points above)");
  throw Error(args.kernel + ": no point of the space is race-free and passes --verify (see the rejected points above)");
}

// --out: the best scheduled kernel; --report: the search and the best point's simulation
// beside each clean seed's.
void write_best(const TuneRun& args, const Search& search, const Eval& best, const Json& summary,
                const std::string& text) {
  std::vector<std::pair<std::string, double>> references;
  for (const Json& seed : summary.at("seeds"))
    references.emplace_back(seed.at("pipeline"),
                            seed.at("status") == "ok" ? seed.at("total_ns").get<double>() : kNoTime);
  if (!args.out.empty()) {
    KernelInput in = read_and_schedule(args.kernel, args.hw, best.pipeline, RunOptions{});
    write_file_atomic(args.out, print_kernel(in.kernel, &in.deps));
  }
  if (!args.report.empty()) {
    std::vector<std::pair<std::string, std::string>> sims = {{best.pipeline, sim_json(args, best.pipeline)}};
    for (const auto& [seed, ns] : references)
      if (ns != kNoTime && seed != best.pipeline) sims.emplace_back(seed, sim_json(args, seed));
    write_file_atomic(args.report,
                      html_tune_report("Tandem tune: " + args.kernel, text, search.best_so_far(), references, sims));
  }
}

}  // namespace

int run_tune(const TuneRun& args) {
  if (args.jobs < 1) throw Error("-j must be at least 1");
  if (args.top < 1) throw Error("--top must be at least 1");
  const Budget budget = parse_budget(args.budget);
  // A kernel or model that cannot be read is the command's error, not every point's.
  read_and_schedule(args.kernel, args.hw, "none", RunOptions{});
  const TuneSpace space =
      args.space.empty() ? derive_space(args.kernel, args.hw) : load_space(args.space, args.kernel, args.hw);
  if (args.list_points) {
    list_points(space);
    return 0;
  }
  const Clock::time_point start = Clock::now();
  Search search(args, space, budget, deadline_of(budget, start));
#ifdef TANDEM_HAVE_MPI
  std::unique_ptr<MpiPool> mpi;
  if (launched_under_mpi()) mpi = std::make_unique<MpiPool>();
  if (mpi && mpi->rank() != 0) {
    mpi->work([&](size_t point) { return run_point(args, space, point); }, args.point_timeout);
    return 0;
  }
  search.use_mpi(mpi.get());
#endif
  if (args.resume && args.log.empty()) throw Error("--resume needs --log FILE (the log to resume)");
  if (!args.log.empty()) search.open_log(args.log, args.resume);

  InterruptCatcher interrupts;
  const bool exhaustive = search_space(search, space, budget);
  const int stopped_by = g_interrupted;
  const bool interrupted = stopped_by != 0;
  search.finish_progress();
  interrupts.release();  // what is left takes a few simulations

  const BestPoint best = confirm_best(args, search, interrupted);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  Json summary = summarize_search(args, space, search, exhaustive, budget, interrupted, seconds);
  if (best.eval) add_best(summary, args, search, *best.eval, best.unconfirmed);
  const std::string text = format_tune_text(summary, args.explain_space);
  std::fputs((args.json ? summary.dump(2, ' ', false, Json::error_handler_t::replace) + "\n" : text).c_str(), stdout);
  std::fflush(stdout);
  if (!best.eval) {
    if (interrupted) return stopped(stopped_by);
    fail_without_best(args, search);
  }
  write_best(args, search, *best.eval, summary, text);
  return interrupted ? stopped(stopped_by) : 0;
}

}  // namespace tandem
