#include "sim/dma_system.h"

#include <cmath>
#include <limits>

namespace tandem {

namespace {
double now_ps() { return static_cast<double>(sc_core::sc_time_stamp().value()); }
// A chunk within this many bytes of done is done: wake-ups round up to whole picoseconds.
constexpr double kEpsilonBytes = 1e-6;
}  // namespace

DmaSystem::DmaSystem(sc_core::sc_module_name name, const DmaModel& model)
    : sc_module(name), model_(model), engines_(static_cast<size_t>(model.engines)) {
  SC_METHOD(wake);
  sensitive << wake_;
  dont_initialize();
}

double DmaSystem::rate(const Engine& e, const Chunk& c) const {
  return model_.bandwidth_bytes_per_ns / 1000.0 * c.efficiency / static_cast<double>(e.active.size());
}

void DmaSystem::advance(Engine& e, double now) {
  const double dt = now - e.updated_ps;
  if (dt > 0)
    for (Chunk& c : e.active) c.remaining -= rate(e, c) * dt;
  e.updated_ps = now;
}

void DmaSystem::start(const DmaTransfer& t, sc_core::sc_event* done, Picos* end) {
  const double now = now_ps();
  if (t.bytes <= 0) {
    *end = static_cast<Picos>(now);
    done->notify(sc_core::SC_ZERO_TIME);
    return;
  }
  int id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<int>(transfers_.size());
    transfers_.emplace_back();
  }
  transfers_[static_cast<size_t>(id)] = Transfer{t.engine_count, done, end};
  const double per_engine = t.bytes / t.engine_count;
  for (int i = 0; i < t.engine_count; ++i) {
    Engine& e = engines_[static_cast<size_t>((t.first_engine + i) % model_.engines)];
    advance(e, now);
    e.active.push_back({id, per_engine, t.efficiency});
  }
  reschedule(now);
}

void DmaSystem::reschedule(double now) {
  double next = std::numeric_limits<double>::infinity();
  for (Engine& e : engines_)
    for (const Chunk& c : e.active) next = std::min(next, e.updated_ps + c.remaining / rate(e, c));
  if (std::isinf(next)) return;
  const double delay = std::max(0.0, std::ceil(next - 1e-9) - now);
  wake_.cancel();
  wake_.notify(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(delay)));
}

void DmaSystem::wake() {
  const double now = now_ps();
  for (Engine& e : engines_) {
    advance(e, now);
    for (size_t i = 0; i < e.active.size();) {
      if (e.active[i].remaining > kEpsilonBytes) {
        ++i;
        continue;
      }
      Transfer& t = transfers_[static_cast<size_t>(e.active[i].transfer)];
      if (--t.chunks_left == 0) {
        *t.end = static_cast<Picos>(now);
        t.done->notify(sc_core::SC_ZERO_TIME);
        free_slots_.push_back(e.active[i].transfer);
      }
      e.active.erase(e.active.begin() + static_cast<long>(i));
    }
  }
  reschedule(now);
}

}  // namespace tandem
