// The semaphore's ring (sim/units/semaphore.h) holds the live keys, not the whole window: it
// grows as the keys published and not released grow, and neither the window (when the
// producer must wait for space) nor any live key's value may change on the way.
#include <catch2/catch.hpp>

#include "sim/units/semaphore.h"

using namespace tandem;

namespace {

Picos value_of(int64_t key) { return 1000 + 7 * key; }

}  // namespace

TEST_CASE("a semaphore keeps every live key's value while its ring grows to the window") {
  SimChannel spec;  // one key per iteration, distance 0
  Semaphore s(spec, 0, 0, 256);
  for (int64_t k = 0; k < 256; ++k) {
    REQUIRE(s.has_space());
    s.publish(value_of(k));
  }
  // The window, not the ring's first size, bounds the producer.
  CHECK_FALSE(s.has_space());
  for (int64_t k = 0; k < 256; ++k) CHECK(s.value(k) == value_of(k));
  // Released keys make room; the ring wraps around with the live keys intact.
  s.release_below(200);
  for (int64_t k = 256; k < 456; ++k) {
    REQUIRE(s.has_space());
    s.publish(value_of(k));
  }
  CHECK_FALSE(s.has_space());
  for (int64_t k = 200; k < 456; ++k) CHECK(s.value(k) == value_of(k));
}

TEST_CASE("a semaphore's ring grows with live keys that wrap around") {
  SimChannel spec;
  Semaphore s(spec, 0, 0, 64);
  // Keep a few keys live while the head goes round the first ring, then let more pile up.
  int64_t released = 0;
  for (int64_t k = 0; k < 30; ++k) {
    s.publish(value_of(k));
    if (k >= 3) s.release_below(++released);
  }
  for (int64_t k = 30; k < 60; ++k) s.publish(value_of(k));
  for (int64_t k = released; k < 60; ++k) CHECK(s.value(k) == value_of(k));
  CHECK(s.available(59));
  CHECK_FALSE(s.available(60));
}

TEST_CASE("a semaphore with a window below the ring's first size waits at the window") {
  SimChannel spec;
  Semaphore s(spec, 0, 0, 3);
  for (int64_t k = 0; k < 3; ++k) s.publish(value_of(k));
  CHECK_FALSE(s.has_space());
  s.release_below(1);
  REQUIRE(s.has_space());
  s.publish(value_of(3));
  CHECK_FALSE(s.has_space());
  for (int64_t k = 1; k < 4; ++k) CHECK(s.value(k) == value_of(k));
}
