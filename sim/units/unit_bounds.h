// How far a unit has come, as the ledger's watermark needs it (StreamUnit::horizon, Ledger).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sim/lower/program.h"

namespace tandem {

// What bounds the start of every record a unit will still produce: its own `floor`, raised to
// the bound of the unit it waits for (`waits_on`), or to the smallest bound of the other units
// at the barrier it waits at (`barrier`); and, apart, the work it has accepted and not yet
// recorded (`accepted`: a DMA queue's transfers still moving), which no wait of its stream holds
// up. Ledger::watermark() solves them.
struct UnitHorizon {
  Picos floor;
  int waits_on = -1;
  InstId barrier = kNoId;
  Picos accepted = std::numeric_limits<Picos>::max();
};

// Every unit's horizon and least program-order position still to come, at one moment: what
// fast-forward gives the observer while it replays records the units are already past
// (InstanceObserver::stand_in).
struct UnitBounds {
  std::vector<UnitHorizon> horizons;
  int64_t min_future_seq = std::numeric_limits<int64_t>::max();
};

}  // namespace tandem
