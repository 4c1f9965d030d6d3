// A semaphore carrying one dependence edge between dynamic instances (sim/program.h,
// SimChannel): the source publishes the completion time of each key in order; the
// destination reads the key it needs and releases the ones it will never read again. A
// bounded ring: a source that runs too far ahead of its destination waits for space, which
// bounds memory by the window, not by the number of dynamic instances. A side that waits
// registers its Waker; the other side's publish or release hands off to it.
#pragma once

#include <algorithm>
#include <cassert>
#include <vector>

#include "sim/lower/program.h"
#include "sim/units/hand_off.h"
#include "sim/units/unit_state.h"

namespace tandem {

class Semaphore {
 public:
  // `spec` must outlive the semaphore (it is the program's channel number `channel`).
  Semaphore(const SimChannel& spec, int channel, int producer_unit, size_t window)
      : spec_(&spec), channel_(channel), producer_unit_(producer_unit) {
    // A per-tile channel publishes every source instance: room for the iterations of its
    // distance and two more.
    size_ = static_cast<int64_t>(
        static_cast<size_t>(spec.distance) + window +
        (spec.tile_key.empty() ? 0 : (static_cast<size_t>(spec.distance) + 2) * static_cast<size_t>(spec.src_per_key)));
    // The ring holds what is live, not the whole window: most channels keep a few keys, and
    // a ring the size of the window would walk its publishes through kilobytes of cache.
    storage_.resize(static_cast<size_t>(std::min<int64_t>(size_, kFirstCapacity)));
    ring_ = storage_.data();
    capacity_ = static_cast<int64_t>(storage_.size());
    per_tile_ = !spec.tile_key.empty();
  }

  const SimChannel& spec() const { return *spec_; }
  int channel() const { return channel_; }
  int producer_unit() const { return producer_unit_; }  // -1 for a barrier

  bool available(int64_t key) const { return key < produced_; }
  Picos value(int64_t key) const {
    assert(key >= released_ && key < produced_);
    // key's slot, counted back from the next one (no division on the hot path)
    int64_t slot = head_ - (produced_ - key);
    if (slot < 0) slot += capacity_;
    return ring_[slot];
  }
  bool has_space() const { return closed_ || produced_ - released_ < size_; }
  int64_t next_key() const { return produced_; }

  void publish(Picos t) {
    assert(has_space());
    // Per tile, a destination reads one source instance's key for all the earlier ones too.
    if (per_tile_) t = latest_ = std::max(latest_, t);
    if (closed_) {
      released_ = ++produced_;
      return;
    }
    if (produced_ - released_ == capacity_) grow();
    const int64_t slot = head_;
    if (++head_ == capacity_) head_ = 0;
    ring_[slot] = t;
    ++produced_;
    if (consumer_waiter_) consumer_waiter_->wake();
  }

  void release_below(int64_t key) {
    if (key <= released_) return;
    released_ = std::min(key, produced_);
    if (producer_waiter_) producer_waiter_->wake();
  }
  // The destination has finished: nothing published from now on will be read.
  void close() {
    closed_ = true;
    released_ = produced_;
    if (producer_waiter_) producer_waiter_->wake();
  }

  // Lists the semaphore's state (sim/units/unit_state.h): its live keys by key, not by slot.
  void visit_state(StateVisitor& v) {
    v.exact(closed_);
    v.exact(produced_ - released_);
    v.count(produced_);
    v.count(released_);
    for (int64_t key = released_; key < produced_; ++key) {
      int64_t slot = head_ - (produced_ - key);
      if (slot < 0) slot += capacity_;
      v.time(ring_[slot]);
    }
    v.time(latest_);
    v.identity(consumer_waiter_);
    v.identity(producer_waiter_);
  }

  // The fields every visit reads come first, together (one cache line with the waiters).
 private:
  static constexpr int64_t kFirstCapacity = 8;  // one cache line of keys

  // Doubles the ring (never past the window), the live keys first in it.
  [[gnu::noinline]] void grow() {
    std::vector<Picos> bigger(static_cast<size_t>(std::min(2 * capacity_, size_)));
    for (int64_t k = released_; k < produced_; ++k) bigger[static_cast<size_t>(k - released_)] = value(k);
    storage_.swap(bigger);
    ring_ = storage_.data();
    capacity_ = static_cast<int64_t>(storage_.size());
    head_ = produced_ - released_;
  }

  int64_t produced_ = 0;
  int64_t released_ = 0;
  int64_t head_ = 0;       // the slot of the next key
  int64_t size_ = 0;       // the window: at most this many keys published and not released
  Picos* ring_ = nullptr;  // storage_'s slots
  int64_t capacity_ = 0;   // storage_'s size: the live keys fit, at most size_
  bool closed_ = false;
  bool per_tile_ = false;

 public:
  Waker* consumer_waiter_ = nullptr;  // waits for a key not produced yet
  Waker* producer_waiter_ = nullptr;  // waits for space

 private:
  std::vector<Picos> storage_;
  const SimChannel* spec_;
  int channel_;
  int producer_unit_;
  Picos latest_ = 0;
};

}  // namespace tandem
