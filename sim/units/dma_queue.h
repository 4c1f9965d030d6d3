// A DMA queue, a two-stage pipeline: transfers issue in order when their inputs are complete
// and the previous transfer's setup (descriptor generation, synchronisation: the fixed cost)
// is done; a transfer's setup overlaps the previous transfer's data, and its data moves after
// the previous transfer's data (FIFO).
//
// Issue and data are apart, as on the hardware the queue's descriptor processing and the DMA
// engines are: the unit's stream issues (and reaches barriers once it has issued),
// and the shared DmaSystem moves each issued transfer in SystemC time; when it lands the
// queue records it and publishes its outputs.
//
// The queue is busy while it moves data. It stalls while its issue waits (for inputs, for room,
// at a barrier) and it moves none: a wait's overlap with the queue's own data phases is not a
// stall, so busy + stall never exceeds the run (docs/metrics.md). A transfer's wait is known
// in full once every transfer issued before it has landed, so it is recorded then.
#pragma once

#include <array>
#include <cstdint>
#include <deque>

#include "sim/units/dma_system.h"
#include "sim/units/stream_unit.h"

namespace tandem {

class DmaQueue : public StreamUnit, public DmaClient {
 public:
  SC_HAS_PROCESS(DmaQueue);
  DmaQueue(sc_core::sc_module_name name, SimContext& ctx, int index);

  // Transfers a queue holds issued but not landed; an issue beyond waits for the oldest to
  // land. A guess, large enough that no bundled kernel reaches it: it bounds memory only.
  static constexpr size_t kDepth = 256;

  void visit_state(StateVisitor& v) override;
  // The waker of the queue's data phase (a semaphore may hold it while it waits for room).
  const Waker* data_phase() const { return &data_phase_; }

 protected:
  void resume() override;  // resume_stream<DmaQueue>()
  Picos pending_floor() const override;
  int64_t pending_seq() const override;
  bool producing() const override { return issued_ > 0; }
  bool drain() override;
  void report_barrier_wait(const InstanceRecord& r, Picos from, Picos to, bool released_by_dma) override;
  // The moving transfer's last byte has landed (called by the DMA system): records it and
  // goes on with the data phase, without a process activation of the queue's own.
  void landed(Picos end) override;

 private:
  friend class StreamUnit;  // the walk calls execute(), inline (StreamUnit::resume_stream)
  [[gnu::always_inline]] inline bool execute(const SimInst& inst, InstanceRecord& r);
  // A barrier's loop counters, kept by position in its nest (SimInst::nest): nothing reads the
  // other loops' of it, and a copy of every loop's made each wait cost the number of loops.
  struct NestValues {
    std::vector<int64_t> counts, ivs;
  };
  // A wait at a barrier, reported once the transfers issued before it have landed.
  struct BarrierWait {
    InstanceRecord r;
    NestValues at;
    Picos from, to;
    bool released_by_dma;
  };
  struct Issued {
    const SimInst* inst;
    InstanceRecord r;  // start (issue), free and stalls filled in
    // The iteration vector at issue, by LoopId: only the instruction's own loops are written
    // (nothing reads the others; copying every loop's made each transfer cost the number of
    // loops), in arrays sized when the slot is first taken (a queue takes few of its slots).
    std::vector<int64_t> counts, ivs;
    Picos first_byte;
    DmaTransfer transfer;
    int64_t future_base;                     // its walk node's (pending_seq() works out the seq from it when asked)
    StallReason input_reason;                // the stall slot of its wait for inputs
    std::vector<BarrierWait> barrier_waits;  // the queue's waits at barriers right after it (reported when it lands)
  };
  // The data phase: the DMA system starts each transfer at its first byte and calls landed()
  // when it lands; the transfer is recorded, the next one starts, and the landed ones publish
  // their outputs in order. Publishing into a full semaphore (the simulator's window, not the
  // hardware: it holds up no transfer) waits for its space with a waker of its own, apart from
  // the stream's. These steps (and busy_within) run once or twice per transfer: always inline,
  // with no call frame per transfer.
  [[gnu::always_inline]] inline void begin_next();  // hands the first transfer not landed to the DMA system
  // Publishes and drops the landed ones, up to a full semaphore (the data phase's waker then
  // waits there).
  [[gnu::always_inline]] inline void retire_landed();
  struct DataPhase final : Waker {
    DataPhase(ReadyQueue& q, DmaQueue& queue) : Waker(q), queue(queue) {}
    void resume() override;  // retries retire_landed once the full semaphore has room
    DmaQueue& queue;
  } data_phase_;
  Picos data_start_ = 0;          // the moving transfer's first byte
  size_t data_publish_next_ = 0;  // the out-channel the front's publishing resumes at
  // Time within [a, b) the queue moved data (its landed transfers).
  [[gnu::always_inline]] inline Picos busy_within(Picos a, Picos b) const;
  void report(const BarrierWait& w);
  // A barrier's loop counters into `at`, and back into arrays by LoopId (the form a record
  // carries) for report().
  void keep(const SimInst& inst, NestValues& at) const;
  void spread(const SimInst& inst, const NestValues& at);
  std::vector<int64_t> spread_counts_, spread_ivs_;

  // The transfers issued and not landed, in kDepth reused slots (their iteration vectors keep
  // their storage: no allocation per transfer). The slots never move once made, so the DMA
  // system keeps its pointer to the moving transfer. The slot freed last is taken next, so a
  // queue with few transfers in flight keeps writing the same few (in cache), not all of them in
  // turn; `order_` is the ring of the held ones' slots, in issue order.
  std::vector<Issued> slots_;
  std::vector<uint16_t> spare_;  // the free slots, the one freed last on top
  std::array<uint16_t, kDepth> order_{};
  // The oldest slot, how many are held (issued_, kDepth at most) and how many of those have
  // landed (the oldest ones, publishing); the next one, if any, is moving.
  size_t front_ = 0, issued_ = 0, landed_ = 0;
  Issued& slot(size_t i) { return slots_[order_[(front_ + i) % kDepth]]; }
  const Issued& slot(size_t i) const { return slots_[order_[(front_ + i) % kDepth]]; }
  Issued& front() { return slot(0); }
  Issued& back() { return slot(issued_ - 1); }
  Picos data_free_ = 0;  // the previous transfer's last byte
  // Data phases of landed transfers (disjoint, in order) that a wait still to be recorded may
  // overlap: those ending after the oldest such wait's start.
  std::deque<std::pair<Picos, Picos>> busy_;
  // The issue waits for a landing (a full queue, the drain at the end): retiring one hands off
  // to it.
  bool issue_waiting_ = false;
  // execute()'s steps, in order; a step that waits is entered again when the wait ends.
  enum Step { kInputs, kRoom, kIssue, kPublishOrdered };
  Picos issue_ = 0;                       // the instance's issue so far
  Picos input_wait_ = 0, room_wait_ = 0;  // the instance's waits for inputs and for room
  StallReason input_reason_ = StallReason::Semaphore;
};

}  // namespace tandem
