// Trace Event JSON for ui.perfetto.dev (and chrome://tracing): a track per engine and DMA
// queue (and an "in flight" track for each instance that overlaps earlier ones on its unit, so
// every track nests) with one slice per dynamic instance and its phases inside it, flow arrows
// from the semaphore signal that set an instance's start to that start, barrier releases as
// instants, a track per loop with an instant where each iteration starts, and counter tracks
// of the bytes of SBUF and PSUM holding live data. A TraceFilter keeps a trace small. Events stream to an OutputFile
// (sched/support/output.h): a temporary beside the target, renamed into place only when the
// trace is complete, or written through to a FIFO or character device.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sched/support/output.h"
#include "sim/units/instance_record.h"

namespace tandem {

// Which instances a trace keeps (tandem sim --trace-loops, --trace-iterations,
// --trace-max-bytes). The simulation and its figures are the same whatever is kept.
struct TraceFilter {
  std::set<std::string> loops;  // keep only instances inside these loops ("%k"); empty: all
  // Keep only iterations [first, end) of an instance's outermost kept loop (counted over the
  // whole run from 0); instances outside loops are kept.
  int64_t first_iteration = 0;
  int64_t end_iteration = INT64_MAX;
  int64_t max_bytes = 0;  // stop adding events past this size, and say so in the trace (0: no limit)

  bool empty() const { return loops.empty() && first_iteration == 0 && end_iteration == INT64_MAX && max_bytes == 0; }
};

class TraceWriter {
 public:
  TraceWriter(const std::string& path, const SimProgram& program, const TraceFilter& filter = {});
  // Destroyed without finish(), it removes the temporary file (OutputFile).

  void record(const InstanceRecord& r);
  void finish();

 private:
  struct Access {
    Picos start;
    Picos end;
    int tensor;
    bool write;  // starts a new value; an accumulating write extends the old one
  };
  struct Span {
    int tid;
    int64_t from, to;  // ns
  };
  void event(const std::string& json);
  int track(int unit, int64_t from, int64_t to);
  // A 'B' or 'E' event; an 'E' repeats its 'B''s name, category and arguments (viewers that
  // match ends by name and arguments, as speedscope does, then close the right slice).
  void duration(const char* ph, int tid, int64_t at, const std::string& name, const std::string& cat,
                const std::string& args);
  void remember(const InstanceRecord& r, const Span& span);
  std::string instance_name(const InstanceRecord& r) const;
  bool keeps(const InstanceRecord& r) const;
  void note_accesses(const InstanceRecord& r);
  bool mark_iterations(const InstanceRecord& r);  // whether r is inside a kept loop
  void write_iteration_markers();
  bool over_budget();

  OutputFile file_;
  const SimProgram& p_;
  TraceFilter filter_;
  std::vector<char> loop_kept_;  // per LoopId: named by filter_.loops (all when it names none)
  // Per (loop, iteration started so far): the earliest start of a kept instance, and the iv.
  std::map<std::pair<LoopId, int64_t>, std::pair<Picos, int64_t>> iteration_starts_;
  int64_t bytes_ = 0;                          // written so far
  Picos truncated_at_ = -1;                    // the start of the first instance left out by max_bytes
  Picos kept_from_ = INT64_MAX, kept_to_ = 0;  // the time the kept instances inside loops span
  std::FILE* out_;
  bool first_ = true;
  int64_t next_flow_ = 1;
  std::vector<Access> accesses_;
  std::vector<std::vector<int64_t>> slot_end_;  // per unit, per track: end of its last slice
  std::set<int> named_;                         // the extra tracks named so far
  std::map<std::pair<InstId, Picos>, Span>
      signalled_;  // (instance, a time it signals at) -> slice  // on-chip tensor accesses, for the live-bytes counters
};

}  // namespace tandem
