// Trace Event JSON for ui.perfetto.dev (and chrome://tracing): a track per engine and DMA
// queue with one slice per dynamic instance, flow arrows from the semaphore signal that set
// an instance's start to that start, barrier releases as instants, and counter tracks of the
// bytes of SBUF and PSUM holding live data. Events stream to an OutputFile
// (sched/support/output.h): a temporary beside the target, renamed into place only when the
// trace is complete, or written through to a FIFO or character device.
#pragma once

#include <cstdio>
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
  void event(const std::string& json);
  std::string instance_name(const InstanceRecord& r) const;

  OutputFile file_;
  const SimProgram& p_;
  std::FILE* out_;
  bool first_ = true;
  int64_t next_flow_ = 1;
  std::vector<Access> accesses_;  // on-chip tensor accesses, for the live-bytes counters
};

}  // namespace tandem
