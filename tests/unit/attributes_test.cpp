#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sched/ir/attributes.h"

using namespace tandem;

// Attributes::find answers "absent" from a 64-bit key filter without reading the entries: with
// 100 keys some must share a bit, so a filter that forgot a key, or cleared a bit another key
// still needs, fails here.
TEST_CASE("attributes find every key set, through erasure and copies", "[attributes]") {
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i)
    keys.push_back("key" + std::to_string(i) + std::string(static_cast<size_t>(i % 7), 'x'));
  Attributes a;
  for (size_t i = 0; i < keys.size(); ++i) a.set(keys[i], static_cast<int64_t>(i));
  for (size_t i = 0; i < keys.size(); ++i) CHECK(a.get_int(keys[i]) == static_cast<int64_t>(i));
  CHECK_FALSE(a.has("absent"));
  CHECK_FALSE(a.has(""));

  for (size_t i = 0; i < keys.size(); i += 2) CHECK(a.erase(keys[i]));
  for (size_t i = 0; i < keys.size(); ++i) CHECK(a.has(keys[i]) == (i % 2 == 1));

  const Attributes copy = a;
  for (size_t i = 1; i < keys.size(); i += 2) CHECK(copy.get_int(keys[i]) == static_cast<int64_t>(i));

  a.set_flag("");  // the empty key is a key like any other
  CHECK(a.has(""));
  CHECK(a.erase(""));
  CHECK_FALSE(a.has(""));
}
