#include <catch2/catch.hpp>

#include "sched/target/cost_formula.h"

using namespace tandem;

namespace {
const std::vector<std::string> kVars = {"N", "N_stationary", "N_moving", "MIN_II"};
SourceLoc at_col(int col) { return SourceLoc{intern_file_name("model.yaml"), 7, col}; }
}  // namespace

TEST_CASE("NKI cost formulas evaluate on instruction shapes", "[cost]") {
  auto matmul = CostFormula::parse("max(min(64, N_stationary), N_moving)", kVars, at_col(10));
  CHECK(matmul.eval({0, 128, 512, 64}) == 512);
  CHECK(matmul.eval({0, 32, 16, 64}) == 32);
  auto fp32 = CostFormula::parse("4 * max(min(64, N_stationary), N_moving)", kVars, at_col(10));
  CHECK(fp32.eval({0, 128, 512, 64}) == 2048);
  auto act = CostFormula::parse("max(MIN_II, N) + MIN_II", kVars, at_col(10));
  CHECK(act.eval({1000, 0, 0, 64}) == 1064);
  CHECK(act.eval({10, 0, 0, 64}) == 128);
  auto arith = CostFormula::parse("-(N - 2) / 4 + ceil(N / 3) * 2 - floor(0.5)", kVars, at_col(1));
  CHECK(arith.eval({10, 0, 0, 0}) == Approx(-2.0 + 8.0));
  CHECK(CostFormula::parse("max(1, 5, 3)", kVars, at_col(1)).eval({0, 0, 0, 0}) == 5);
}

TEST_CASE("cost formula errors point into the model file", "[cost]") {
  auto error_of = [](const std::string& text) {
    try {
      CostFormula::parse(text, kVars, at_col(10));
    } catch (const Error& e) {
      return std::to_string(e.loc().col) + " " + e.message();
    }
    return std::string("no error");
  };
  CHECK(error_of("max(N, Nx)") ==
        "17 unknown variable 'Nx' in cost formula (known: N, N_stationary, N_moving, MIN_II)");
  CHECK(error_of("max(N,") == "16 cost formula ends early");
  CHECK(error_of("sqrt(N)") == "10 unknown function 'sqrt' in cost formula (use min, max, ceil, floor)");
  CHECK(error_of("min(N)") == "10 min() takes 2 to 64 arguments");
  CHECK(error_of("N N") == "12 unexpected 'N' in cost formula");
  CHECK(error_of("(N") == "12 expected ')' in cost formula");
  CHECK(error_of("0x10 + N") == "10 malformed number in cost formula");
  CHECK(error_of("1.5.2") == "10 malformed number in cost formula");
  CHECK(CostFormula::parse("2.5e1 + 1E-1", kVars, at_col(1)).eval({0, 0, 0, 0}) == Approx(25.1));
}
