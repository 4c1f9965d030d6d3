#include <catch2/catch.hpp>

#include "sched/ir/affine.h"

using namespace tandem;

TEST_CASE("affine expressions print canonically", "[affine]") {
  AffineExpr e;
  CHECK(e.str() == "0");
  e.add_term("%k", 128, 0);
  CHECK(e.str() == "%k*128");
  e.constant = 128;
  CHECK(e.str() == "%k*128 + 128");
  e.constant = -3;
  CHECK(e.str() == "%k*128 - 3");
  AffineExpr neg;
  neg.add_term("%i", -1, 0);
  CHECK(neg.str() == "-%i");
}

TEST_CASE("an address register keeps its zero offset", "[affine]") {
  AffineExpr e;
  e.add_term("v10", 1);
  CHECK(e.uses_register());
  CHECK(e.str() == "v10 + 0");
  e.constant = 512;
  CHECK(e.str() == "v10 + 512");
}

TEST_CASE("terms of one symbol merge, and cancel to nothing", "[affine]") {
  AffineExpr a;
  a.add_term("%k", 2, 0);
  a.add_term("%k", 3, 0);
  REQUIRE(a.terms.size() == 1);
  CHECK(a.terms[0].coeff == 5);
  AffineExpr b;
  b.add_term("%k", 5, 0);
  b.constant = 7;
  AffineExpr d = b - a;
  CHECK(d.is_constant());
  CHECK(d.constant == 7);
  CHECK(a != b);
  AffineExpr five;  // %k*5 built in one step equals the merged 2 + 3
  five.add_term("%k", 5, 0);
  CHECK(a == five);
}
