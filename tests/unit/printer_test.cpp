#include <catch2/catch.hpp>

#include <filesystem>

#include "sched/ir/printer.h"
#include "test_util.h"

using namespace tandem;

// Every workload, including ones added later: parse -> print -> parse -> print is a fixed
// point, and the dependence graph survives the trip.
TEST_CASE("printing every workload is a fixed point of parse and print", "[printer]") {
  namespace fs = std::filesystem;
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(TANDEM_SOURCE_DIR) + "/workloads")) {
    if (entry.path().extension() != ".kir") continue;
    INFO(entry.path().string());
    Kernel k1 = parse_kernel_file(entry.path().string());
    DepGraph g1 = build_dep_graph(k1);
    std::string p1 = print_kernel(k1, &g1);
    Kernel k2 = parse_kernel(p1, "printed.kir");
    DepGraph g2 = build_dep_graph(k2);
    std::string p2 = print_kernel(k2, &g2);
    CHECK(p1 == p2);
    CHECK(print_deps(k1, g1) == print_deps(k2, g2));
    ++checked;
  }
  CHECK(checked >= 7);
}

TEST_CASE("a kernel with listed deps prints every edge and reads back the same graph", "[printer]") {
  Kernel k = test::parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  tensor %b : sbuf[128, 128] bf16\n"
      "  loop %i = 0 to 4 {\n"
      "    %x = memset %a\n"
      "    %y = activation %b <- %a\n"
      "  }\n");
  DepGraph g = build_dep_graph(k);
  // A pass that edits the graph marks it listed; the text then carries all edges.
  g.remove(k.find_inst("x"), k.find_inst("y"));
  k.attrs.set_flag("deps_listed");
  std::string text = print_kernel(k, &g);
  CHECK_THAT(text, Catch::Contains("kernel @t target = \"trn2\" {deps_listed} {"));
  CHECK_THAT(text, Catch::Contains("dep %y -> %x anti distance=1"));
  CHECK_THAT(text, !Catch::Contains("dep %x -> %y flow"));
  Kernel k2 = parse_kernel(text, "listed.kir");
  DepGraph g2 = build_dep_graph(k2);
  CHECK(print_deps(k2, g2) == print_deps(k, g));
  CHECK(print_kernel(k2, &g2) == text);
}

TEST_CASE("unnamed instructions are referred to by program position", "[printer]") {
  Kernel k = test::parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  memset %a\n"
      "  %n = activation %a <- %a\n");
  DepGraph g = build_dep_graph(k);
  CHECK(print_deps(k, g) == "dep %0 -> %n flow\n");
}

TEST_CASE("dep lines sort by source and destination position, distance, kind, then loop", "[printer]") {
  Kernel k = test::parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  tensor %b : sbuf[128, 128] bf16\n"
      "  loop %i = 0 to 4 {\n"
      "    loop %j = 0 to 2 {\n"
      "      %x = memset %a\n"
      "      %y = activation %b <- %a\n"
      "      activation %a <- %b\n"
      "    }\n"
      "  }\n");
  const InstId x = k.find_inst("x"), y = k.find_inst("y"), u = 2;
  k.move_before(y, x);  // program order y, x, u: positions are not ids
  const LoopId i = 0, j = 1;
  DepGraph g(k.insts.size());
  // Added out of order: the lines come out in the order of their text's key all the same.
  g.add(u, x, DepKind::Anti, 1, j);
  g.add(x, u, DepKind::Anti, 1, i);
  g.add(y, x, DepKind::Output);
  g.add(x, u, DepKind::Flow);
  g.add(x, y, DepKind::Flow);
  g.add_unique(x, y, DepEdge{DepKind::Ordered});
  g.add(x, u, DepKind::Anti, 1, j);
  CHECK(print_deps(k, g) ==
        "dep %y -> %x output\n"
        "dep %x -> %y flow\n"
        "dep %x -> %y ordered\n"
        "dep %x -> %2 flow\n"
        "dep %x -> %2 anti distance=1\n"
        "dep %x -> %2 anti distance=1 loop=%i\n"
        "dep %2 -> %x anti distance=1\n");
  // Only the explicit ones when asked; none at all leaves no blank line in the kernel.
  CHECK(print_deps(k, g, true).empty());
  CHECK_THAT(print_kernel(k, &g), Catch::EndsWith("activation %a <- %b\n    }\n  }\n}\n"));
}

TEST_CASE("attributes print as they read, integers, strings, reals and flags", "[printer]") {
  Kernel k = test::parse(
      "  tensor %a : sbuf[128, 128] bf16 {address = 4096, note = \"say \\\"hi\\\"\\n\"}\n"
      "  loop %i = 0 to 4 {unroll = -2, ratio = 0.5, flag} {\n"
      "    %x = memset %a {order = 3}\n"
      "  }\n");
  const std::string text = print_kernel(k);
  CHECK_THAT(text,
             Catch::Contains("  tensor %a : sbuf[128, 128] bf16 {address = 4096, note = \"say \\\"hi\\\"\\n\"}\n"));
  CHECK_THAT(text, Catch::Contains("  loop %i = 0 to 4 {unroll = -2, ratio = 0.5, flag} {\n"));
  CHECK_THAT(text, Catch::Contains("    %x = memset %a {order = 3}\n"));
  CHECK(print_kernel(parse_kernel(text, "again.kir")) == text);
}
