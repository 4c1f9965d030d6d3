// The hand-off between units (sim/units/hand_off.h): wakers run in the order they were woken,
// once however often woken before they run, those they wake in turn run in the same call, a
// call from within a resume returns at once, and nothing runs once the queue is stopped.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "sim/units/hand_off.h"

using namespace tandem;

namespace {

struct Recorder final : Waker {
  Recorder(ReadyQueue& q, std::string name, std::vector<std::string>& log)
      : Waker(q), name(std::move(name)), log(log) {}
  void resume() override {
    log.push_back(name);
    if (then) then();
  }
  std::string name;
  std::vector<std::string>& log;
  std::function<void()> then;  // what this resume does besides being logged
};

}  // namespace

TEST_CASE("hand-off runs wakers in the order woken, each once") {
  ReadyQueue q;
  std::vector<std::string> log;
  Recorder a(q, "a", log), b(q, "b", log), c(q, "c", log);
  b.wake();
  a.wake();
  b.wake();  // already queued: runs once
  c.wake();
  q.run();
  CHECK(log == std::vector<std::string>{"b", "a", "c"});
  // Once run, a waker can be woken again.
  b.wake();
  q.run();
  CHECK(log == std::vector<std::string>{"b", "a", "c", "b"});
}

TEST_CASE("hand-off runs what a resume wakes in the same call, after the others") {
  ReadyQueue q;
  std::vector<std::string> log;
  Recorder a(q, "a", log), b(q, "b", log), c(q, "c", log);
  a.then = [&, first = true]() mutable {
    if (first) {
      c.wake();
      a.wake();  // a waker may wake itself again while it runs
    }
    first = false;
    q.run();  // nested: returns at once, the outer run goes on
    log.push_back("a done");
  };
  a.wake();
  b.wake();
  q.run();
  CHECK(log == std::vector<std::string>{"a", "a done", "b", "c", "a", "a done"});
}

TEST_CASE("hand-off stops running once stopped") {
  ReadyQueue q;
  std::vector<std::string> log;
  Recorder a(q, "a", log), b(q, "b", log);
  a.then = [&] { q.stop(); };
  a.wake();
  b.wake();
  q.run();
  CHECK(log == std::vector<std::string>{"a"});
}
