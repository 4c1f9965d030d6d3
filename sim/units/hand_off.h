// Direct hand-off between the units of one simulation. A unit that waits for a value another
// unit produces, for room in a semaphore, at a barrier or for its own transfers to land does
// not wait in the SystemC kernel: it registers a Waker and returns. Whoever makes the wait end
// (a publish, a release, a landing) puts the Waker on the ReadyQueue, and the process SystemC
// is running (a unit's method, the DMA system's wake) runs the queue before it returns. So a
// hand-off at one simulated time costs a function call, not a process activation: only waits
// for simulated time (a shared resource, docs/performance.md) meet the SystemC kernel.
#pragma once

#include <cstddef>
#include <vector>

namespace tandem {

class ReadyQueue;

class Waker {
 public:
  explicit Waker(ReadyQueue& queue) : queue_(queue) {}
  // Puts this waker on the queue (once, however often it is woken before it runs).
  inline void wake();
  // Goes on with the work that waited; it may register a waker again.
  virtual void resume() = 0;

 protected:
  ~Waker() = default;

 private:
  friend class ReadyQueue;
  ReadyQueue& queue_;
  bool queued_ = false;
};

class ReadyQueue {
 public:
  void push(Waker* w) { items_.push_back(w); }
  // Resumes the queued wakers in the order they were woken, and those they wake, until none
  // is left. A call from within run() returns at once: the outer call goes on with the queue.
  void run() {
    if (running_ || items_.empty()) return;
    running_ = true;
    for (size_t i = 0; i < items_.size() && !stopped_; ++i) {
      Waker* w = items_[i];
      w->queued_ = false;
      w->resume();
    }
    items_.clear();
    running_ = false;
  }
  // The simulation has failed: nothing more runs.
  void stop() { stopped_ = true; }

 private:
  std::vector<Waker*> items_;
  bool running_ = false;
  bool stopped_ = false;
};

inline void Waker::wake() {
  if (queued_) return;
  queued_ = true;
  queue_.push(this);
}

}  // namespace tandem
