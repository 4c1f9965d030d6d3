// hoist-invariants keeps what a kernel computes: random loop nests over a few whole tiles, in
// which some work repeats unchanged and some does not, each compared with the translation
// validator before and after the pass (the pass manager's structural checks run after it too).
#include <catch2/catch.hpp>

#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/translation_validator.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"

using namespace tandem;

namespace {

// A loop %i of 3 around a loop %j of 2, each body a few random statements over tiles %t0..%t4:
// loads of a slice that moves with %i or of a fixed one, activations and element-wise work
// between tiles, and saves of a tile to a slice that moves with %i.
std::string random_kernel(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::ostringstream o;
  o << "kernel @r target = \"trn2\" {\n  tensor %X : dram[128, 1024] f32\n  tensor %Y : dram[128, 1024] f32\n";
  for (int t = 0; t < 5; ++t) o << "  tensor %t" << t << " : sbuf[128, 64] f32\n";
  int n = 0;
  auto statements = [&](const std::string& indent, int count) {
    for (int s = 0; s < count; ++s) {
      const int a = pick(5), b = pick(5), c = pick(5);
      switch (pick(5)) {
        case 0:
          o << indent << "%s" << n++ << " = load %t" << a << " <- %X[0:128, "
            << (pick(2) ? "%i*64 : %i*64 + 64" : "512:576") << "]\n";
          break;
        case 1:
          o << indent << "%s" << n++ << " = save %Y[0:128, %i*64 : %i*64 + 64] <- %t" << a << "\n";
          break;
        case 2:
          o << indent << "%s" << n++ << " = activation %t" << a << " <- %t" << b << "\n";
          break;
        default:
          o << indent << "%s" << n++ << " = tensor_tensor %t" << a << " <- %t" << b << ", %t" << c
            << " {op = \"add\"}\n";
      }
    }
  };
  o << "  loop %i = 0 to 3 {\n";
  statements("    ", 1 + pick(3));
  o << "    loop %j = 0 to 2 {\n";
  statements("      ", 1 + pick(4));
  o << "    }\n";
  statements("    ", pick(3));
  o << "  }\n}\n";
  return o.str();
}

}  // namespace

TEST_CASE("hoist-invariants keeps what random loop nests compute", "[passes]") {
  std::mt19937 rng(7);
  int hoisted = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string text = random_kernel(rng);
    INFO(text);
    const Kernel original = parse_kernel(text, "r.kir");
    Kernel k = original;
    DepGraph g = build_dep_graph(k);
    std::ostringstream stats;
    RunOptions opts;
    opts.stats = true;
    run_pipeline(k, g, parse_pipeline("hoist-invariants"), opts, stats);
    INFO(stats.str());
    CHECK_FALSE(find_translation_difference(original, k));
    hoisted += stats.str().find("hoisted: 0") == std::string::npos;
  }
  // The kernels exercise the pass: many have work it moves.
  CHECK(hoisted > 40);
}
