// The race checker's access plan: what each static instruction touches, worked out once
// before the simulation, so that recording an instance adds products and looks nothing up.
// Per access its write log (the tensor's rotation buffer) and its box as constants plus loop
// terms; per instruction its place in program order as a constant plus one product per loop.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/lower/program.h"
#include "sim/observe/race_write_log.h"

namespace tandem::race {

// One access of an instruction: its rotation (tensor attributes `buffers`, `rotate`) and its
// box as constants plus loop terms.
struct AccessPlan {
  bool read;                   // reads, and the reads of accumulating writes
  int64_t buffers;             // rotation buffers (when `rotate` is set)
  LoopId rotate;               // the loop the tensor rotates over, kNoId when it does not
  int64_t rotate_lo;           // its first iteration
  LoopId fresh_at;             // an accumulating read: not at this loop's first iteration (`start`)
  int64_t fresh_lo;            // that loop's first iteration
  size_t log;                  // the write log of the tensor's rotation buffer 0 (buffer b: log + b)
  WriteLog* log0;              // the checker's logs[log] (the logs do not move once built)
  std::vector<Interval> base;  // every bound's constant (a whole access: the tensor's extent)
  uint32_t rank;               // base.size()
  // A box without loop terms and not empty: one key per distinct box, its box kept once in
  // ProgramPlan::keyed (events with a key store no box of their own); else 0.
  uint32_t key;
  struct Term {
    size_t dim;
    bool hi;
    LoopId loop;
    int64_t coeff;
  };
  std::vector<Term> terms;  // bound of `dim` += coeff * iv of `loop`
};

// A read waiting to be checked: its buffer's write log and its box's key (0: the box is stored
// beside it).
struct QueuedRead {
  WriteLog* log;
  uint32_t key;
};

// Per instruction: its accesses and its place in program order as a constant plus one
// product per enclosing loop (SimInst::seq with the loops' first iterations folded in).
struct InstPlan {
  std::vector<AccessPlan> reads;  // in program text order: reads, then accumulating writes' reads
  std::vector<AccessPlan> writes;
  // When every read has a key and no rotation, every instance reads the same (log, key)
  // list: a queued instance points at it instead of copying it read by read. `fixed_fresh`
  // leaves out the accumulating reads, for the instances that start their group (`fresh_at`
  // at `fresh_lo`, kNoId when none does).
  bool fixed = false;
  std::vector<QueuedRead> fixed_reads;
  std::vector<QueuedRead> fixed_fresh;
  LoopId fresh_at = kNoId;
  int64_t fresh_lo = 0;
  int64_t seq_base = 0;
  std::vector<std::pair<LoopId, int64_t>> seq_terms;  // (loop, stride)
};

// The plan of a whole program.
struct ProgramPlan {
  std::vector<InstPlan> insts;  // per instruction
  // The box of each key (keyed[0] unused), in `keyed_boxes`, which does not move.
  std::vector<const Interval*> keyed;
  std::vector<Interval> keyed_boxes;
  size_t stride = 1;  // the largest rank of any followed tensor
};

// The plan of every instruction of `p`. `logs` gets one write log per rotation buffer of every
// tensor something writes, each with its buffer and rank; a tensor nothing writes has none,
// and its reads get no plan: they see no write and cannot race. Throws std::logic_error when
// two accesses of a tensor differ in rank.
ProgramPlan plan_accesses(const SimProgram& p, std::vector<WriteLog>& logs);

// The rotation buffer an instance of the access touches (its loops' induction variables: ivs).
inline int64_t buffer_of(const AccessPlan& ap, const int64_t* ivs) {
  if (ap.rotate == kNoId) return 0;
  return (ivs[ap.rotate] - ap.rotate_lo) % ap.buffers;
}

// The box an instance of the access touches, written to out[0, ap.rank).
inline void box_of(const AccessPlan& ap, const int64_t* ivs, Interval* out) {
  const Interval* base = ap.base.data();
  for (uint32_t d = 0; d < ap.rank; ++d) out[d] = base[d];
  for (const AccessPlan::Term& t : ap.terms) {
    auto& bound = t.hi ? out[t.dim].second : out[t.dim].first;
    bound += t.coeff * ivs[t.loop];
  }
}

}  // namespace tandem::race
