// The ledger's interval vector (Ledger::Intervals): a vector with an inline append whose
// insert and erase keep the order the ledger's merges rely on, across the growth of its
// storage.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sim/observe/ledger.h"

using namespace tandem;

namespace {

std::vector<std::pair<Picos, Picos>> contents(const Ledger::Intervals& set) { return {set.begin(), set.end()}; }

}  // namespace

TEST_CASE("ledger intervals append across growth") {
  Ledger::Intervals set;
  CHECK(set.empty());
  // Past the first storage (16) and its doubling (32).
  for (Picos i = 0; i < 40; ++i) set.push_back({10 * i, 10 * i + 5});
  REQUIRE(set.size() == 40);
  CHECK(set[0] == std::pair<Picos, Picos>{0, 5});
  CHECK(set[39] == std::pair<Picos, Picos>{390, 395});
  CHECK(set.back() == std::pair<Picos, Picos>{390, 395});
  set.back().second = 398;
  CHECK(set[39].second == 398);
}

TEST_CASE("ledger intervals insert and erase keep the order") {
  Ledger::Intervals set;
  set.push_back({0, 5});
  set.push_back({20, 25});
  set.push_back({40, 45});
  auto at = set.insert(set.begin() + 1, {10, 12});
  CHECK(at == set.begin() + 1);
  set.insert(set.end(), {50, 51});
  set.insert(set.begin(), {-5, -1});
  CHECK(contents(set) ==
        std::vector<std::pair<Picos, Picos>>{{-5, -1}, {0, 5}, {10, 12}, {20, 25}, {40, 45}, {50, 51}});
  set.erase(set.begin() + 2, set.begin() + 4);
  CHECK(contents(set) == std::vector<std::pair<Picos, Picos>>{{-5, -1}, {0, 5}, {40, 45}, {50, 51}});
  set.erase(set.begin(), set.begin());
  CHECK(set.size() == 4);
  set.shrink_to(1);
  CHECK(contents(set) == std::vector<std::pair<Picos, Picos>>{{-5, -1}});
  set.clear();
  CHECK(set.empty());
  set.push_back({7, 8});  // storage kept: the old entries do not come back
  CHECK(contents(set) == std::vector<std::pair<Picos, Picos>>{{7, 8}});
}

TEST_CASE("ledger intervals insert into full storage") {
  Ledger::Intervals set;
  for (Picos i = 0; i < 16; ++i) set.push_back({10 * (i + 1), 10 * (i + 1) + 1});
  // The 17th entry grows the storage while the insert moves the tail.
  set.insert(set.begin() + 3, {35, 36});
  REQUIRE(set.size() == 17);
  CHECK(set[2] == std::pair<Picos, Picos>{30, 31});
  CHECK(set[3] == std::pair<Picos, Picos>{35, 36});
  CHECK(set[4] == std::pair<Picos, Picos>{40, 41});
  CHECK(set[16] == std::pair<Picos, Picos>{160, 161});
}
