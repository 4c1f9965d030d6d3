#include "sim/driver/sweep/sweep_runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "sched/passes/pass_manager.h"
#include "sched/support/error.h"
#include "sched/support/output.h"
#include "sim/driver/isolated.h"
#include "sim/driver/progress_line.h"
#include "sim/driver/simulate_file.h"
#include "sim/report/html_report.h"
#ifdef TANDEM_HAVE_MPI
#include "sim/driver/sweep/mpi_pool.h"
#endif
#include "sim/driver/sweep/sweep_spec.h"
#include "sim/driver/sweep/sweep_table.h"

namespace tandem {

namespace {

// One point, in its own process: the point's model (if it sets model fields) goes to a scratch
// file named from `scratch`; a model error names the point rather than that file.
// The answer: "r" RACES "\n" CELLS for a simulated point, "m" MESSAGE for one whose pipeline
// fails --verify.
std::string run_point(const SweepSpec& spec, const SweepTable& table, size_t point, const std::string& scratch,
                      bool verify) {
  const size_t n = spec.points.size();
  const std::string& kernel = spec.kernels[point / n];
  const std::vector<std::string>& values = spec.points[point % n];
  const std::string base = sweep_base_model(spec, point / n, values);
  std::string hw = spec.model_files.empty() ? spec.model : base;
  const std::string yaml = point_model_yaml(spec, base, values);
  const bool edited = !yaml.empty();
  std::unique_ptr<ScratchFile> point_model;
  if (edited) {
    point_model = std::make_unique<ScratchFile>(scratch + "-point-" + std::to_string(point) + ".yaml", yaml);
    hw = point_model->path();
  }
  RunOptions ropts;
  ropts.verify = verify;
  try {
    SimResult r = schedule_and_simulate(kernel, hw, point_pipeline(spec, values), ropts, SimOptions{});
    // A point's own model is a scratch file: name the model it derives from (the
    // hash stays the point's own model's).
    if (edited) {
      std::error_code ec;
      const std::filesystem::path from = std::filesystem::weakly_canonical(base, ec);
      r.provenance.model_file = ec ? base : from.string();
    }
    return "r" + std::to_string(r.hazards.size()) + "\n" + table.metric_cells(r);
  } catch (const MiscompileError& e) {
    return "m" + e.message();
  } catch (const Error& e) {
    if (e.loc().file && edited && e.loc().file == std::string(hw))
      throw Error(base + " with this point's values: " + e.message());
    throw;
  }
}

// The CSV a sweep writes: -o, or the sweep file's name with .csv in the working directory.
std::string csv_path(const SweepRun& args) {
  return args.out.empty() ? std::filesystem::path(args.file).stem().string() + ".csv" : args.out;
}

// One sweep writes a CSV at a time: another one's rows would interleave with ours and one of
// the two rewrites would drop the other's. The lock is held until the process ends.
void lock_csv(const std::string& out) {
  if (std::filesystem::exists(out) && !std::filesystem::is_regular_file(out))
    throw Error("-o " + out + ": the CSV must be a regular file (it is appended to, then rewritten sorted)");
  const int lock = ::open(out.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) throw Error("-o " + out + ": cannot write it: " + std::strerror(errno));
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0)
    throw Error("-o " + out + ": another tandem sweep is writing this CSV; give each sweep its own file");
}

// The points whose rows the CSV already holds (--resume only); a CSV started afresh gets its
// header.
std::set<size_t> start_csv(const SweepRun& args, const SweepTable& table, const std::string& out) {
  if (args.resume) {
    // A row cut by an interrupted write (no newline at its end) is dropped; its point runs again.
    const std::string torn = drop_torn_row(out);
    if (!torn.empty())
      std::fprintf(stderr, "sweep: --resume: dropped the torn last row of %s ('%s'); its point runs again\n",
                   out.c_str(), printable(torn).c_str());
  }
  const std::set<size_t> done = args.resume ? table.done_points(out) : std::set<size_t>{};
  if (!args.resume || !std::filesystem::exists(out) || std::filesystem::is_empty(out)) {
    std::ofstream header(out, std::ios::trunc);
    header << table.header() << "\n";
    header.close();
    if (!header)
      throw Error("-o " + out + ": cannot write the CSV's header (" + std::strerror(errno) + "); no point ran");
  }
  return done;
}

// Appends a row to the CSV as each point finishes, and shows the progress line. One write per
// whole row: an interrupted sweep leaves only complete rows, and a row that cannot be written
// whole (a full disk) is cut back off and stops the sweep, the rows before it kept.
class RowWriter {
 public:
  RowWriter(const SweepTable& table, const std::string& out, size_t points, bool progress_lines)
      : table_(table),
        out_(out),
        points_(points),
        csv_(::open(out.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC)),
        progress_(progress_lines) {
    if (csv_ < 0) throw Error("cannot write " + out);
  }

  void write(size_t point, const IsolatedOutcome& o) {
    std::string row;
    bool ok = o.ok;
    if (!o.ok) {
      row = table_.row(point,
                       o.timed_out  ? "timeout"
                       : o.internal ? "internal-error"
                                    : "error",
                       "", o.timed_out ? o.error + " (--point-timeout)" : o.error);
    } else if (!o.output.empty() && o.output[0] == 'm') {
      row = table_.row(point, "miscompiled", "", o.output.substr(1));
      ok = false;
    } else {
      // A point that races is no result: marked `racy`, its figures kept for inspection.
      const size_t eol = o.output.find('\n');
      const bool racy = o.output.substr(1, eol - 1) != "0";
      row = table_.row(point, racy ? "racy" : "ok", o.output.substr(eol + 1), "");
    }
    append(row + "\n", point);
    ++finished_;
    failed_ += !ok;
    show_progress();
  }

  // Closes the CSV and ends the progress line.
  void finish() {
    ::close(csv_);
    progress_.finish();
  }

  size_t finished() const { return finished_; }
  size_t failed() const { return failed_; }

 private:
  void append(const std::string& line, size_t point) {
    const off_t before = ::lseek(csv_, 0, SEEK_END);
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(csv_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : ENOSPC;
        // The torn row is cut back off (should that fail too, --resume drops it).
        const bool cut = before >= 0 && ::ftruncate(csv_, before) == 0;
        throw Error("-o " + out_ + ": cannot append the row of point " + std::to_string(point) + " (" +
                    std::strerror(err) + "); the sweep stops, the rows before it kept" +
                    (cut ? "" : " (and the torn row)") + ": --resume runs the missing points once there is room");
      }
      done += static_cast<size_t>(n);
    }
  }

  void show_progress() {
    const double seconds = progress_.seconds();
    const double rate = seconds > 0 ? static_cast<double>(finished_) / seconds : 0;
    const double eta = rate > 0 ? static_cast<double>(points_ - finished_) / rate : 0;
    char line[160];
    std::snprintf(line, sizeof line, "sweep: %zu/%zu points, %zu failed, %.2f points/s, ETA %.0f s", finished_, points_,
                  failed_, rate, eta);
    progress_.show(line, finished_ == points_);
  }

  const SweepTable& table_;
  const std::string& out_;
  const size_t points_;  // to run in this sweep
  int csv_;              // opened to append
  ProgressLine progress_;
  size_t finished_ = 0, failed_ = 0;
};

// The HTML report of the finished CSV.
void write_sweep_report(const SweepRun& args, const SweepSpec& spec, const std::string& out) {
  std::vector<std::string> parameters;
  for (const SweepParameter& p : spec.parameters) parameters.push_back(p.name);
  std::ifstream in(out);
  const std::string csv_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file_atomic(args.report, html_sweep_report("Tandem sweep: " + args.file, parameters, csv_text));
}

// Each failed point of the file with its one-line reason, at most kFailedShown of them.
void print_failed_points(const SweepTable& table, const std::string& out) {
  constexpr size_t kFailedShown = 10;
  const std::vector<std::string> failed = table.failed_points(out);
  for (size_t i = 0; i < failed.size() && i < kFailedShown; ++i)
    std::fprintf(stderr, "sweep: failed %s\n", failed[i].c_str());
  if (failed.size() > kFailedShown)
    std::fprintf(stderr, "sweep: ... and %zu more failed points (the error column of %s gives each)\n",
                 failed.size() - kFailedShown, out.c_str());
}

// The exit code describes the whole file (rows kept by --resume too); races and failed
// verifications are named on stderr.
int exit_code_of(const SweepTable& table, const std::string& out) {
  std::map<std::string, size_t> status = table.status_counts(out);
  if (status["racy"])
    std::fprintf(
        stderr,
        "sweep: %zu point(s) raced (status racy): the schedule breaks program order, their figures are not results\n",
        status["racy"]);
  if (status["miscompiled"])
    std::fprintf(stderr,
                 "sweep: %zu point(s) failed --verify (status miscompiled): a pass changed what the kernel computes\n",
                 status["miscompiled"]);
  if (status["internal-error"]) return 2;
  if (status["miscompiled"]) return 1;
  return status["racy"] ? 3 : 0;
}

}  // namespace

int run_sweep(const SweepRun& args) {
  if (args.jobs < 1) throw Error("-j must be at least 1");
  const SweepSpec spec = load_sweep(args.file);
  const SweepTable table(spec);
  // The points' models: $TMPDIR/tandem-sweep-PID-point-N.yaml, each removed by its point's
  // process when done or signalled (a point dies with the sweep: SIGTERM).
  const std::string scratch = temporary_path("tandem-sweep-" + std::to_string(::getpid()));
  const bool verify = args.verify || spec.verify;
  auto job = [&](size_t point) { return run_point(spec, table, point, scratch, verify); };
#ifdef TANDEM_HAVE_MPI
  std::unique_ptr<MpiPool> mpi;
  if (launched_under_mpi()) mpi = std::make_unique<MpiPool>();
  if (mpi && mpi->rank() != 0) {
    mpi->work(job, args.point_timeout);
    return 0;
  }
#endif

  // Here (rank 0 under MPI): the CSV, its rows as points finish, the progress line.
  const std::string out = csv_path(args);
  lock_csv(out);
  const std::set<size_t> done = start_csv(args, table, out);
  std::vector<size_t> todo;
  for (size_t p = 0; p < spec.size(); ++p)
    if (!done.count(p)) todo.push_back(p);
  // Under mpirun stderr is not a terminal, but the user is watching: print progress lines.
  bool progress_lines = args.progress;
#ifdef TANDEM_HAVE_MPI
  progress_lines |= mpi != nullptr;
#endif
  RowWriter rows(table, out, todo.size(), progress_lines || ::isatty(STDERR_FILENO));
  auto record = [&](size_t point, const IsolatedOutcome& o) { rows.write(point, o); };
#ifdef TANDEM_HAVE_MPI
  if (mpi)
    mpi->coordinate(todo, record);
  else
#endif
    run_isolated_pool(
        todo.size(), args.jobs, [&](size_t i) { return job(todo[i]); },
        [&](size_t i, const IsolatedOutcome& o) { record(todo[i], o); }, args.point_timeout);
  rows.finish();
  sort_csv_rows(out);
  if (!args.report.empty()) write_sweep_report(args, spec, out);
  std::string where;
#ifdef TANDEM_HAVE_MPI
  if (mpi) where = "; over " + std::to_string(mpi->size() - 1) + " MPI worker rank(s)";
#endif
  std::fprintf(stderr, "sweep: %zu points run (%zu failed), %zu kept from before; rows in %s%s\n", rows.finished(),
               rows.failed(), done.size(), out.c_str(), where.c_str());
  print_failed_points(table, out);
  return exit_code_of(table, out);
}

}  // namespace tandem
