// SBUF and PSUM by live range (sched/analysis/allocator.h): where each tile is live, the most
// a space holds at once, and what a ring may take beside the others.
#include <catch2/catch.hpp>

#include "sched/analysis/allocator.h"
#include "test_util.h"

using namespace tandem;

namespace {

// Positions: %za 0, loop %i opens 1, %ld 2, %cp 3, %st 4, loop closes 5, %sa 6.
const char* kTiles =
    "  tensor %X : dram[128, 1024] f32\n"
    "  tensor %a : sbuf[128, 128] f32\n"  // written before the loop, read after it
    "  tensor %t : sbuf[128, 128] f32\n"  // replaced at the top of every iteration
    "  tensor %u : sbuf[128, 128] f32\n"  // read before it is written: carried
    "  tensor %n : sbuf[128, 128] f32\n"  // never used
    "  %za = memset %a {value = 0}\n"
    "  loop %i = 0 to 8 {\n"
    "    %ld = load %t <- %X[0:128, %i*128 : %i*128 + 128]\n"
    "    %cp = tensor_tensor %u <- %u, %t\n"
    "    %st = save %X[0:128, %i*128 : %i*128 + 128] <- %u\n"
    "  }\n"
    "  %sa = save %X[0:128, 0:128] <- %a\n";

int tensor(const Kernel& k, const char* name) { return k.find_tensor(name); }

}  // namespace

TEST_CASE("a tile is live from its first use to its last, over the loops it carries a value through", "[allocator]") {
  const Kernel k = test::parse(kTiles);
  Allocator a(k);
  // %a: defined before the loop and read after it: the whole loop, 0..6.
  CHECK(a.live(tensor(k, "a")).first == 0);
  CHECK(a.live(tensor(k, "a")).last == 6);
  // %t: its load replaces it at the top of each iteration: only %ld..%cp.
  CHECK(a.live(tensor(k, "t")).first == 2);
  CHECK(a.live(tensor(k, "t")).last == 3);
  // %u: read by %cp before any write in the body: the loop, 1..5.
  CHECK(a.live(tensor(k, "u")).first == 1);
  CHECK(a.live(tensor(k, "u")).last == 5);
  CHECK(a.live(tensor(k, "n")).empty());
  // At %ld and %cp three 512-byte tiles are live.
  CHECK(a.peak("sbuf") == 3 * 512);
}

TEST_CASE("a ring is live over its loop, and takes its buffers there", "[allocator]") {
  const Kernel k = test::parse(kTiles);
  Allocator a(k);
  const int t = tensor(k, "t");
  const LoopId i = k.insts[static_cast<size_t>(k.find_inst("ld"))].loop;
  CHECK(a.live_if_rotated(t, i).first == 1);
  CHECK(a.live_if_rotated(t, i).last == 5);
  // trn2: 212992 bytes per partition; %a and %u take 1024 over the loop.
  CHECK(a.free_for(t, i) == 212992 - 1024);
  a.rotate(t, 4, i);
  CHECK(a.peak("sbuf") == 1024 + 4 * 512);
  CHECK(a.live(t).first == 1);
}

TEST_CASE("an accumulation replaces its tile only in loops around the loop that starts it", "[allocator]") {
  const Kernel k = test::parse(
      "  tensor %A : dram[128, 4096] bf16\n"
      "  tensor %x : sbuf[128, 128] bf16\n"
      "  tensor %acc : psum[128, 512] f32\n"
      "  tensor %o : sbuf[128, 512] f32\n"
      "  loop %n = 0 to 4 {\n"
      "    loop %k = 0 to 8 {\n"
      "      %ld = load %x <- %A[0:128, %k*128 : %k*128 + 128]\n"
      "      %mm = matmul %acc <- %x, %x[0:128, 0:128] {accumulate, start = \"%k\"}\n"
      "    }\n"
      "    %cp = tensor_copy %o <- %acc\n"
      "  }\n");
  Allocator a(k);
  // Positions: %n opens 0, %k opens 1, %ld 2, %mm 3, %k closes 4, %cp 5, %n closes 6. The
  // group continues across %k (live over it), and starts afresh in each iteration of %n.
  CHECK(a.live(tensor(k, "acc")).first == 1);
  CHECK(a.live(tensor(k, "acc")).last == 5);
  CHECK(a.peak("psum") == 1);
}

TEST_CASE("the capacity problem names the point and the tiles live there", "[allocator]") {
  const Kernel k = test::parse(
      "  tensor %a : sbuf[128, 30000] f32\n"
      "  tensor %b : sbuf[128, 30000] f32\n"
      "  %za = memset %a {value = 0}\n"
      "  %zb = memset %b {value = 0}\n"
      "  %cp = tensor_copy %b <- %a\n");
  const std::optional<CapacityProblem> p = find_capacity_problem(k);
  REQUIRE(p);
  CHECK(p->message ==
        "at %zb, the tensors live in sbuf need 240000 bytes per partition but sbuf has 212992 (%a 120000 written by "
        "%za, %b 120000 written by %zb, %cp)");
  CHECK(p->loc.line == 5);
  // Used one after the other, the same two tiles fit.
  const Kernel apart = test::parse(
      "  tensor %X : dram[128, 30000] f32\n"
      "  tensor %a : sbuf[128, 30000] f32\n"
      "  tensor %b : sbuf[128, 30000] f32\n"
      "  %za = memset %a {value = 0}\n"
      "  %sa = save %X <- %a\n"
      "  %zb = memset %b {value = 0}\n"
      "  %sb = save %X <- %b\n");
  CHECK_FALSE(find_capacity_problem(apart));
  CHECK(space_allocation(apart, "sbuf") == 120000);
}

TEST_CASE("a block dimension filled tile by tile by an inner loop is replaced there", "[allocator]") {
  // %qk's block j is written by iteration j of %j, and all of %qk is read after %j, in each
  // iteration of %i: nothing is carried from one iteration of %i to the next, so %qk is live
  // from %j's start to %rd, not over all of %i (a partial write alone would carry it).
  const Kernel k = test::parse(
      "  tensor %A : dram[128, 256] f32\n"
      "  tensor %qk : sbuf[128, 4, 64] f32\n"
      "  tensor %r : sbuf[128, 4] f32\n"
      "  loop %i = 0 to 2 {\n"
      "    loop %j = 0 to 4 {\n"
      "      %ld = load %qk[0:128, %j, 0:64] <- %A[0:128, %j*64 : %j*64 + 64]\n"
      "    }\n"
      "    %rd = tensor_reduce %r <- %qk\n"
      "    %st = save %A[0:128, 0:4] <- %r\n"
      "  }\n");
  Allocator a(k);
  // Positions: %i opens 0, %j opens 1, %ld 2, %j closes 3, %rd 4, %st 5, %i closes 6.
  CHECK(a.live(tensor(k, "qk")).first == 1);
  CHECK(a.live(tensor(k, "qk")).last == 4);
  // Half the blocks are not a cover: the other half would come from the previous iteration.
  const Kernel half = test::parse(
      "  tensor %A : dram[128, 256] f32\n"
      "  tensor %qk : sbuf[128, 4, 64] f32\n"
      "  tensor %r : sbuf[128, 4] f32\n"
      "  loop %i = 0 to 2 {\n"
      "    loop %j = 0 to 2 {\n"
      "      %ld = load %qk[0:128, %j, 0:64] <- %A[0:128, %j*64 : %j*64 + 64]\n"
      "    }\n"
      "    %rd = tensor_reduce %r <- %qk\n"
      "    %st = save %A[0:128, 0:4] <- %r\n"
      "  }\n");
  Allocator h(half);
  CHECK(h.live(tensor(half, "qk")).first == 0);
  CHECK(h.live(tensor(half, "qk")).last == 6);
}

TEST_CASE("a tile an inner loop replaces at the top of each iteration is replaced in the outer loop", "[allocator]") {
  // %t is written whole, then read, in each iteration of %j: in %i it is live over %j only.
  const Kernel k = test::parse(
      "  tensor %A : dram[128, 512] f32\n"
      "  tensor %t : sbuf[128, 64] f32\n"
      "  tensor %u : sbuf[128, 64] f32\n"
      "  loop %i = 0 to 2 {\n"
      "    %z = memset %u {value = 0}\n"
      "    loop %j = 0 to 4 {\n"
      "      %ld = load %t <- %A[0:128, %j*64 : %j*64 + 64]\n"
      "      %ad = tensor_tensor %u <- %u, %t\n"
      "    }\n"
      "    %st = save %A[0:128, 0:64] <- %u\n"
      "  }\n");
  Allocator a(k);
  // Positions: %i opens 0, %z 1, %j opens 2, %ld 3, %ad 4, %j closes 5, %st 6, %i closes 7.
  CHECK(a.live(tensor(k, "t")).first == 3);
  CHECK(a.live(tensor(k, "t")).last == 4);
  CHECK(a.live(tensor(k, "u")).first == 1);
  CHECK(a.live(tensor(k, "u")).last == 6);
}

TEST_CASE("a block dimension indexed by the loop that holds all uses takes one block", "[allocator]") {
  // %s[:, %i, :] is written and read in iteration %i only: one 256-byte block at a time, not
  // the 2048 bytes of all eight.
  const Kernel k = test::parse(
      "  tensor %A : dram[128, 512] f32\n"
      "  tensor %s : sbuf[128, 8, 64] f32\n"
      "  loop %i = 0 to 8 {\n"
      "    %ld = load %s[0:128, %i, 0:64] <- %A[0:128, %i*64 : %i*64 + 64]\n"
      "    %st = save %A[0:128, %i*64 : %i*64 + 64] <- %s[0:128, %i, 0:64]\n"
      "  }\n");
  Allocator a(k);
  CHECK(a.peak("sbuf") == 256);
  CHECK(a.live(tensor(k, "s")).first == 1);
  CHECK(a.live(tensor(k, "s")).last == 2);
}

TEST_CASE("a tile its first instructions fill in disjoint parts is replaced there", "[allocator]") {
  // Positions: loop %i opens 0, %c0 1, %c1 2, %st 3, loop closes 4.
  const Kernel k = test::parse(
      "  tensor %X : dram[128, 1024] f32\n"
      "  tensor %s : sbuf[128, 512] f32\n"
      "  tensor %p : sbuf[128, 1024] f32\n"  // two halves, then read: replaced in each iteration
      "  tensor %q : sbuf[128, 1024] f32\n"  // two overlapping parts do not cover it: carried
      "  loop %i = 0 to 4 {\n"
      "    %c0 = tensor_copy %p[0:128, 0:512] <- %s\n"
      "    %c1 = tensor_copy %p[0:128, 512:1024] <- %s\n"
      "    %d0 = tensor_copy %q[0:128, 0:512] <- %s\n"
      "    %d1 = tensor_copy %q[0:128, 256:768] <- %s\n"
      "    %st = save %X[0:128, 0:1024] <- %p, %q\n"
      "  }\n");
  Allocator a(k);
  CHECK(a.live(tensor(k, "p")).first == 1);
  CHECK(a.live(tensor(k, "p")).last == 5);
  CHECK(a.live(tensor(k, "q")).first == 0);
  CHECK(a.live(tensor(k, "q")).last == 6);
}

TEST_CASE("reads between a tile's disjoint parts of what they wrote keep it replaced", "[allocator]") {
  // Positions: loop %i opens 0, %c0 1, %r0 2, %c1 3, %r1 4, %d0 5, %e0 6, %d1 7, loop closes 8.
  const Kernel k = test::parse(
      "  tensor %s : sbuf[128, 512] f32\n"
      "  tensor %m : sbuf[128, 4] f32\n"
      "  tensor %p : sbuf[128, 1024] f32\n"  // each read inside a part written before it
      "  tensor %q : sbuf[128, 1024] f32\n"  // a read of the half not yet written: carried
      "  loop %i = 0 to 4 {\n"
      "    %c0 = tensor_copy %p[0:128, 0:512] <- %s\n"
      "    %r0 = tensor_reduce %m[0:128, 0] <- %p[0:128, 0:512] {op = \"max\"}\n"
      "    %c1 = tensor_copy %p[0:128, 512:1024] <- %s\n"
      "    %r1 = tensor_reduce %m[0:128, 1] <- %p[0:128, 512:1024] {op = \"max\"}\n"
      "    %d0 = tensor_copy %q[0:128, 0:512] <- %s\n"
      "    %e0 = tensor_reduce %m[0:128, 2] <- %q[0:128, 512:1024] {op = \"max\"}\n"
      "    %d1 = tensor_copy %q[0:128, 512:1024] <- %s\n"
      "  }\n");
  Allocator a(k);
  CHECK(a.live(tensor(k, "p")).first == 1);
  CHECK(a.live(tensor(k, "p")).last == 4);
  CHECK(a.live(tensor(k, "q")).first == 0);
  CHECK(a.live(tensor(k, "q")).last == 8);
}

TEST_CASE("a loop of one iteration carries no value across iterations", "[allocator]") {
  // Positions: loop %i opens 0, %r 1, %w 2, loop closes 3; loop %j opens 4, %r2 5, %w2 6, closes 7.
  const Kernel k = test::parse(
      "  tensor %s : sbuf[128, 512] f32\n"
      "  tensor %m : sbuf[128, 1] f32\n"
      "  tensor %a : sbuf[128, 512] f32\n"  // read before its write, in a loop of one iteration
      "  tensor %b : sbuf[128, 512] f32\n"  // the same in a loop of two: carried
      "  loop %i = 0 to 1 {\n"
      "    %r = tensor_reduce %m <- %a {op = \"max\"}\n"
      "    %w = tensor_copy %a <- %s\n"
      "  }\n"
      "  loop %j = 0 to 2 {\n"
      "    %r2 = tensor_reduce %m <- %b {op = \"max\"}\n"
      "    %w2 = tensor_copy %b <- %s\n"
      "  }\n");
  Allocator a(k);
  CHECK(a.live(tensor(k, "a")).first == 1);
  CHECK(a.live(tensor(k, "a")).last == 2);
  CHECK(a.live(tensor(k, "b")).first == 4);
  CHECK(a.live(tensor(k, "b")).last == 7);
}

TEST_CASE("a dimension every access indexes with a constant splits the tensor into parts", "[allocator]") {
  // %qk[:, c] for c = 0, 1, 2, each written and read within one iteration of its own loop (a
  // logical tile per query block, as NKI kernels allocate them): each part takes one bank
  // while its loop runs, so the 3 x 4 = 12 banks of the tensor never live at once.
  // Positions: loop %a 0, %m0 1, %r0 2, close 3, loop %b 4, %m1 5, %r1 6, close 7, %m2 8, %r2 9.
  const Kernel k = test::parse(
      "  tensor %x : sbuf[128, 128] bf16\n"
      "  tensor %y : sbuf[128, 512] bf16\n"
      "  tensor %qk : psum[128, 3, 4, 512] f32\n"
      "  tensor %o : sbuf[128, 512] f32\n"
      "  loop %a = 0 to 4 {\n"
      "    %m0 = matmul %qk[0:128, 0, %a, 0:512] <- %x, %y\n"
      "    %r0 = activation %o <- %qk[0:128, 0, %a, 0:512]\n"
      "  }\n"
      "  loop %b = 0 to 4 {\n"
      "    %m1 = matmul %qk[0:128, 1, %b, 0:512] <- %x, %y\n"
      "    %r1 = activation %o <- %qk[0:128, 1, %b, 0:512]\n"
      "  }\n"
      "  %m2 = matmul %qk[0:128, 2, 0, 0:512] <- %x, %y\n"
      "  %r2 = activation %o <- %qk[0:128, 2, 0, 0:512]\n");
  Allocator a(k);
  CHECK(a.peak("psum") == 1);
  CHECK(a.live(tensor(k, "qk")).first == 1);
  CHECK(a.live(tensor(k, "qk")).last == 9);
  CHECK_FALSE(a.first_problem());
  // Read after its loop, part 0 is live from its first write to that read, with all 4 blocks:
  // 4 banks beside part 1's one.
  const Kernel late = test::parse(
      "  tensor %x : sbuf[128, 128] bf16\n"
      "  tensor %y : sbuf[128, 512] bf16\n"
      "  tensor %qk : psum[128, 2, 4, 512] f32\n"
      "  tensor %o : sbuf[128, 512] f32\n"
      "  loop %a = 0 to 4 {\n"
      "    %m0 = matmul %qk[0:128, 0, %a, 0:512] <- %x, %y\n"
      "  }\n"
      "  loop %b = 0 to 4 {\n"
      "    %m1 = matmul %qk[0:128, 1, %b, 0:512] <- %x, %y\n"
      "    %r1 = activation %o <- %qk[0:128, 1, %b, 0:512]\n"
      "  }\n"
      "  %r0 = activation %o <- %qk[0:128, 0, 3, 0:512]\n");
  Allocator b(late);
  CHECK(b.peak("psum") == 5);
}
