// What one DMA transfer costs on the model's DMA system: which engines carry it, at what
// efficiency, and each engine's fixed work for it. The one place this is derived: the
// simulator's lowering (sim/lower/program.cpp) and the passes' analyses (prefetch depth,
// loop bounds) all call dma_transfer().
#pragma once

#include <cstdint>

#include "sched/target/target.h"

namespace tandem {

struct DmaTransfer {
  double bytes = 0;
  int first_engine = 0;  // DMA engines [first, first + count) carry it
  int engine_count = 1;
  double efficiency = 1;
  // Each engine's fixed work for the transfer (per-transfer and per-descriptor overheads),
  // in bytes at the engine's bandwidth: it moves bytes / engine_count + overhead_bytes.
  double overhead_bytes = 0;

  double engine_bytes() const { return bytes / engine_count + overhead_bytes; }
};

// The shape of a transfer as the DMA system sees it.
struct DmaShape {
  double bytes = 0;        // the bytes that land
  int64_t partitions = 0;  // of its on-chip side; 0: no partitioned side
  int64_t first_partition = 0;
  int64_t runs_per_partition = 1;  // contiguous runs (descriptors) per partition row
  double descriptors = 0;          // all of its descriptors; 0: runs_per_partition x partitions
};

// A transfer is split across DMA engines by the partitions of its on-chip side (DMA-OV:
// partitions_per_engine per engine); a transfer with no partitioned side spreads over all
// engines. Each engine adds its fixed work: engine_overhead_ns, and descriptor_overhead_ns per
// contiguous run of each of its partitions.
DmaTransfer dma_transfer(const DmaModel& dma, const DmaShape& shape);

// Time from a transfer's first byte to its last (its data phase alone on its engines), ns.
double dma_data_ns(const DmaModel& dma, const DmaTransfer& t);

}  // namespace tandem
