#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sched/support/name_index.h"
#include "test_util.h"

using namespace tandem;

TEST_CASE("a name index finds each name's first id, through growth and clearing", "[name_index]") {
  std::vector<std::string> names;
  const auto name_of = [&](int id) -> const std::string& { return names[static_cast<size_t>(id)]; };
  NameIndex index;
  CHECK(index.find("a", name_of) == -1);
  // Enough names to grow the table many times and to make probes run into each other.
  for (int i = 0; i < 5000; ++i) {
    names.push_back("t" + std::to_string(i));
    CHECK(index.insert(names.back(), i, name_of) == i);
  }
  CHECK(index.size() == 5000);
  // A name already there keeps its id.
  names.push_back("t17");
  CHECK(index.insert(names.back(), 5000, name_of) == 17);
  CHECK(index.size() == 5000);
  bool all = true;
  for (int i = 0; i < 5000; ++i) all = all && index.find("t" + std::to_string(i), name_of) == i;
  CHECK(all);
  CHECK(index.find("t5000", name_of) == -1);
  CHECK(index.find("", name_of) == -1);
  CHECK(index.find("t1 ", name_of) == -1);
  index.clear();
  CHECK(index.size() == 0);
  CHECK(index.find("t1", name_of) == -1);
  CHECK(index.insert("t1", 1, name_of) == 1);
  CHECK(index.find("t1", name_of) == 1);
}

TEST_CASE("a kernel finds the first tensor of a name, after appends and after its list shrinks", "[name_index]") {
  Kernel k = test::parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  tensor %b : sbuf[128, 128] bf16\n");
  const int a = k.find_tensor("a"), b = k.find_tensor("b");
  REQUIRE(a != kNoId);
  CHECK(k.tensors[static_cast<size_t>(b)].name == "b");
  CHECK(k.find_tensor("c") == kNoId);
  Tensor c = k.tensors[static_cast<size_t>(a)];
  c.name = "c";
  k.tensors.push_back(c);
  CHECK(k.find_tensor("c") == static_cast<int>(k.tensors.size() - 1));
  k.tensors.push_back(c);  // a second "c": the first one is found
  CHECK(k.find_tensor("c") == static_cast<int>(k.tensors.size() - 2));
  k.tensors.resize(static_cast<size_t>(b));  // b and both c gone: indexed again
  CHECK(k.find_tensor("b") == kNoId);
  CHECK(k.find_tensor("c") == kNoId);
  CHECK(k.find_tensor("a") == a);
}

TEST_CASE("a kernel finds the first live instruction of a name, and unique_name the first free suffix",
          "[name_index]") {
  Kernel k = test::parse(
      "  tensor %t : sbuf[128, 128] bf16\n"
      "  %x = activation %t <- %t\n"
      "  %y = activation %t <- %t\n");
  const InstId x = k.find_inst("x");
  REQUIRE(x != kNoId);
  CHECK(k.insts[static_cast<size_t>(x)].name == "x");
  CHECK(k.find_inst("z") == kNoId);
  CHECK(k.find_inst("t") == kNoId);  // a tensor's name is not an instruction's
  // Each name given is taken by the instruction added under it: the next suffix is the next free.
  const auto add = [&](const std::string& name) {
    Instruction in = k.insts[static_cast<size_t>(x)];
    in.name = name;
    const InstId id = k.add_inst(std::move(in));
    k.insert_before(x, id);
    return id;
  };
  CHECK(k.unique_name("b") == "b");
  add("b");
  CHECK(k.unique_name("b") == "b.1");
  const InstId b1 = add("b.1");
  CHECK(k.find_inst("b.1") == b1);
  add(k.unique_name("b"));
  CHECK(k.find_inst("b.2") != kNoId);
  CHECK(k.unique_name("b") == "b.3");
  CHECK(k.unique_name("b") == "b.3");  // asked twice without adding it: still free
  CHECK(k.unique_name("t") == "t.1");  // a tensor's name is taken too
  // An erased instruction's name is free again, and a later one of that name is found.
  k.erase(b1);
  CHECK(k.find_inst("b.1") == kNoId);
  CHECK(k.unique_name("b") == "b.1");
  const InstId again = add("b.1");
  CHECK(k.find_inst("b.1") == again);
  CHECK(k.unique_name("b") == "b.3");
}
