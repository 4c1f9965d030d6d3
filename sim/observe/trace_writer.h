// Trace Event JSON for ui.perfetto.dev (and chrome://tracing): a track per engine and DMA
// queue (and one more for each instance that overlaps earlier ones, so every track nests) with
// one slice per dynamic instance and its phases inside it, flow arrows from the semaphore signal that set
// an instance's start to that start, barrier releases as instants, and counter tracks of the
// bytes of SBUF and PSUM holding live data. Events stream to an OutputFile
// (sched/support/output.h): a temporary beside the target, renamed into place only when the
// trace is complete, or written through to a FIFO or character device.
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sched/support/output.h"
#include "sim/units/instance_record.h"

namespace tandem {

class TraceWriter {
 public:
  TraceWriter(const std::string& path, const SimProgram& program);
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

  OutputFile file_;
  const SimProgram& p_;
  std::FILE* out_;
  bool first_ = true;
  int64_t next_flow_ = 1;
  std::vector<Access> accesses_;
  std::vector<std::vector<int64_t>> slot_end_;  // per unit, per track: end of its last slice
  std::set<int> named_;                         // the extra tracks named so far
  std::map<std::pair<InstId, Picos>, Span> signalled_;  // (instance, a time it signals at) -> slice  // on-chip tensor accesses, for the live-bytes counters
};

}  // namespace tandem
