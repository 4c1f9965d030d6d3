#include "sim/units/dma_queue.h"

#include <algorithm>

#include "sim/units/dma_system.h"
#include "sim/units/observer.h"

namespace tandem {

void DmaQueue::execute(const SimInst& inst, InstanceRecord& r) {
  const Picos ready = wait_inputs(inst, r);
  const Picos issue = std::max(free_, ready);
  if (ready > free_) r.stall[static_cast<size_t>(input_stall_reason(r))] = ready - free_;
  const double f = jitter(inst);
  const Picos first_byte = issue + static_cast<Picos>(static_cast<double>(inst.cycles_ps) * f);
  const Picos data_start = std::max(first_byte, data_free_);
  if (data_free_ > first_byte) r.stall[static_cast<size_t>(StallReason::Queue)] = data_free_ - first_byte;
  pending_start_ = issue;
  wait_until(data_start);
  Picos end = data_start;
  DmaTransfer transfer = inst.dma;
  transfer.efficiency /= f;  // a slower transfer: the same bytes at a lower rate
  ctx_.dma->start(transfer, &done_, &end);
  wait_for_event(done_);
  r.start = issue;
  r.busy_start = data_start;
  r.busy_end = r.complete = end;
  free_ = first_byte;  // the setup stage takes one transfer at a time
  data_free_ = end;
  pending_start_ = std::numeric_limits<Picos>::max();
  ctx_.observer->record(r);
  publish_outputs(inst, issue, end, end);
}

}  // namespace tandem
