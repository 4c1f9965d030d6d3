#include "sched/target/dma_cost.h"

#include <algorithm>

namespace tandem {

DmaTransfer dma_transfer(const DmaModel& dma, const DmaShape& shape) {
  DmaTransfer t;
  t.bytes = shape.bytes;
  const int64_t per_engine = std::max<int64_t>(1, dma.partitions_per_engine);
  const int64_t engines = std::max<int64_t>(1, dma.engines);
  int64_t partitions = shape.partitions;
  if (partitions > 0) {
    t.first_engine = static_cast<int>((shape.first_partition / per_engine) % engines);
    const int64_t last = (shape.first_partition + partitions - 1) / per_engine;
    t.engine_count = static_cast<int>(std::min<int64_t>(engines, last - shape.first_partition / per_engine + 1));
    t.efficiency = dma.efficiency_at(shape.bytes / static_cast<double>(partitions));
  } else {
    t.first_engine = 0;
    t.engine_count = static_cast<int>(engines);
    t.efficiency = dma.efficiency_at(shape.bytes / static_cast<double>(engines));
    partitions = engines;  // one row per engine [guess: the spread off chip is not published]
  }
  const double all =
      shape.descriptors > 0 ? shape.descriptors : static_cast<double>(shape.runs_per_partition * partitions);
  const double descriptors = all / t.engine_count;
  t.overhead_bytes = (dma.engine_overhead_ns + descriptors * dma.descriptor_overhead_ns) * dma.bandwidth_bytes_per_ns;
  return t;
}

double dma_data_ns(const DmaModel& dma, const DmaTransfer& t) {
  const double rate = dma.bandwidth_bytes_per_ns * t.efficiency;
  return rate > 0 ? t.engine_bytes() / rate : 0;
}

}  // namespace tandem
