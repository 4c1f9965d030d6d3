// The race checker fed hand-made instance records: times chosen so that each race, or its
// absence, can be worked out by hand.
#include <catch2/catch.hpp>

#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "sched/analysis/dependence_analysis.h"
#include "sched/passes/pass_manager.h"
#include "sim/lower/program.h"
#include "sim/observe/race_checker.h"
#include "tests/unit/test_util.h"

using namespace tandem;

namespace {

// A straight-line kernel lowered for simulation, and records of its instances.
struct Rig {
  explicit Rig(const std::string& body) : k(test::parse(body)), g(build_dep_graph(k)) {
    run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
    p = lower_for_simulation(k, g);
    ivs.assign(k.loops.size() + 1, 0);
    counts.assign(k.loops.size() + 1, 0);
  }
  // The loop `depth` deep around instruction `name`.
  size_t loop_of(const std::string& name, size_t depth = 0) const {
    return static_cast<size_t>(p.insts[static_cast<size_t>(k.find_inst(name))].nest.at(depth));
  }
  // Loop `loop`, entered once, at its iteration `iv`.
  void iteration(size_t loop, int64_t iv) {
    ivs[loop] = iv;
    counts[loop] = iv - k.loops[loop].lo + 1;
  }
  // An instance of `name` busy from `start` to `end`, its results visible at `end`.
  InstanceRecord at(const std::string& name, Picos start, Picos end) const {
    InstanceRecord r;
    r.inst = k.find_inst(name);
    r.unit = 0;
    r.free = r.start = r.busy_start = start;
    r.busy_end = r.complete = end;
    r.loop_ivs = ivs.data();
    r.loop_counts = counts.data();
    return r;
  }
  Kernel k;
  DepGraph g;
  SimProgram p;
  std::vector<int64_t> ivs, counts;
};

// The hazards' kinds, and their messages for a failing check's report.
std::string kinds(const std::vector<Hazard>& hs) {
  std::string s;
  for (const Hazard& h : hs) {
    s += h.kind + " ";
    UNSCOPED_INFO(h.message);
  }
  return s;
}

}  // namespace

// Five dimensions, one more than a box keeps inline elsewhere: the read's two halves come
// from two writes, each still landing when the read starts.
TEST_CASE("race checker: a read of two halves written too late, in five dimensions", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[2, 2, 2, 2, 8] f32\n"
      "  tensor %u : sbuf[2, 2, 2, 2, 8] f32\n"
      "  %w1 = memset %t[0:2, 0:2, 0:2, 0:2, 0:4] {value = 0}\n"
      "  %w2 = memset %t[0:2, 0:2, 0:2, 0:2, 4:8] {value = 0}\n"
      "  %r = activation %u <- %t {func = \"exp\"}\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  c.record(rig.at("w1", 0, 10000));
  c.record(rig.at("w2", 0, 12000));
  SECTION("read before both landed") {
    c.record(rig.at("r", 5000, 20000));
    c.advance(30000, std::numeric_limits<int64_t>::max());
    const std::vector<Hazard>& hs = c.hazards();
    REQUIRE(kinds(hs) == "RAW RAW ");
    // Newest producer first.
    CHECK(hs[0].first == rig.k.find_inst("w2"));
    CHECK(hs[0].message ==
          "RAW race on %t[0:2, 0:2, 0:2, 0:2, 4:8]: %r at test.kir:6:3 read it at 5.000 ns, before %w2 at "
          "test.kir:5:3 had written it at 12.000 ns; the order that prevents it: dep %w2 -> %r flow");
    CHECK(hs[1].first == rig.k.find_inst("w1"));
    CHECK(hs[1].message ==
          "RAW race on %t[0:2, 0:2, 0:2, 0:2, 0:4]: %r at test.kir:6:3 read it at 5.000 ns, before %w1 at "
          "test.kir:4:3 had written it at 10.000 ns; the order that prevents it: dep %w1 -> %r flow");
  }
  SECTION("read after both landed") {
    c.record(rig.at("r", 12000, 20000));
    c.advance(30000, std::numeric_limits<int64_t>::max());
    CHECK(c.hazards().empty());
  }
}

// Writes recorded out of program order (from different units) are put back in order: the
// read's producer is the later write in program order, and the older one landing after it
// is the WAW the read saw.
TEST_CASE("race checker: writes recorded out of program order", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[128, 64] f32\n"
      "  tensor %u : sbuf[128, 64] f32\n"
      "  %w1 = memset %t {value = 0}\n"
      "  %w2 = memset %t {value = 1}\n"
      "  %r = activation %u <- %t {func = \"exp\"}\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  c.record(rig.at("w2", 0, 20000));
  SECTION("the older write lands last") {
    c.record(rig.at("w1", 0, 30000));
    c.record(rig.at("r", 40000, 50000));
    c.advance(60000, std::numeric_limits<int64_t>::max());
    const std::vector<Hazard>& hs = c.hazards();
    REQUIRE(kinds(hs) == "WAW ");
    CHECK(hs[0].first == rig.k.find_inst("w1"));
    CHECK(hs[0].second == rig.k.find_inst("w2"));
    // Found by the read's check (which names the read), before settling drops %w1.
    CHECK(hs[0].message ==
          "WAW race on %t[0:128, 0:64]: %w1 at test.kir:4:3 landed at 30.000 ns, after %w2 at test.kir:5:3 at "
          "20.000 ns, so %r at test.kir:6:3 saw the older value; the order that prevents it: dep %w1 -> %w2 output");
  }
  SECTION("the older write lands first") {
    c.record(rig.at("w1", 0, 10000));
    c.record(rig.at("r", 40000, 50000));
    c.advance(60000, std::numeric_limits<int64_t>::max());
    CHECK(c.hazards().empty());
  }
}

// Reads recorded out of program order (from different units) are checked in program order:
// %r2's instance arrives first, %r1's after it; both read %t before %w landed, and the
// races come out in program order of the reads.
TEST_CASE("race checker: reads recorded out of program order", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[128, 64] f32\n"
      "  tensor %u : sbuf[128, 64] f32\n"
      "  tensor %v : sbuf[128, 64] f32\n"
      "  %w = memset %t {value = 0}\n"
      "  %r1 = activation %u <- %t {func = \"exp\"}\n"
      "  %r2 = activation %v <- %t {func = \"exp\"}\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  c.record(rig.at("w", 0, 10000));
  c.record(rig.at("r2", 6000, 7000));
  c.record(rig.at("r1", 4000, 5000));
  c.advance(20000, std::numeric_limits<int64_t>::max());
  const std::vector<Hazard>& hs = c.hazards();
  REQUIRE(kinds(hs) == "RAW RAW ");
  CHECK(hs[0].message ==
        "RAW race on %t[0:128, 0:64]: %r1 at test.kir:6:3 read it at 4.000 ns, before %w at test.kir:5:3 had "
        "written it at 10.000 ns; the order that prevents it: dep %w -> %r1 flow");
  CHECK(hs[1].second == rig.k.find_inst("r2"));
}

// A slice written and read back per iteration, checked while later iterations are still
// pending (the watermark lags behind): hundreds of boxes with loop terms wait and leave in
// order, and the one read that starts before its slice landed (i = 150) is reported with its
// own box and iteration.
TEST_CASE("race checker: slices checked while later ones wait", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[128, 1024] f32\n"
      "  tensor %u : sbuf[128, 1024] f32\n"
      "  loop %i = 0 to 200 {\n"
      "    %w = memset %t[0:128, %i*4 : %i*4 + 4] {value = 0}\n"
      "    %r = activation %u[0:128, %i*4 : %i*4 + 4] <- %t[0:128, %i*4 : %i*4 + 4] {func = \"exp\"}\n"
      "  }\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  const size_t loop = rig.loop_of("w");
  for (int64_t i = 0; i < 200; ++i) {
    rig.iteration(loop, i);
    const Picos t = i * 100000;
    c.record(rig.at("w", t, t + 10000));
    const Picos read_start = i == 150 ? t + 5000 : t + 10000;
    c.record(rig.at("r", read_start, t + 20000));
    // Every instance so far recorded; the last twenty iterations' reads still wait.
    c.advance(t - 20 * 100000, std::numeric_limits<int64_t>::max());
  }
  c.advance(std::numeric_limits<Picos>::max(), std::numeric_limits<int64_t>::max());
  const std::vector<Hazard>& hs = c.hazards();
  REQUIRE(kinds(hs) == "RAW ");
  CHECK(hs[0].message ==
        "RAW race on %t[0:128, 600:604]: %r (i=150) at test.kir:6:5 read it at 15005.000 ns, before %w (i=150) at "
        "test.kir:5:5 had written it at 15010.000 ns; the order that prevents it: dep %w -> %r flow");
}

// Writes whose starts and landings are out of program order (an older transfer still moving
// when a newer one starts and lands first): the read after both sees the older value (WAW),
// and a read between them is overwritten while reading (WAR).
TEST_CASE("race checker: writes landing out of program order", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[128, 64] f32\n"
      "  tensor %u : sbuf[128, 64] f32\n"
      "  tensor %v : sbuf[128, 64] f32\n"
      "  %w1 = memset %t {value = 0}\n"
      "  %r1 = activation %u <- %t {func = \"exp\"}\n"
      "  %w2 = memset %t {value = 1}\n"
      "  %r2 = activation %v <- %t {func = \"exp\"}\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  c.record(rig.at("w1", 0, 30000));
  c.record(rig.at("r1", 31000, 40000));
  c.record(rig.at("w2", 10000, 20000));
  c.record(rig.at("r2", 50000, 60000));
  c.advance(70000, std::numeric_limits<int64_t>::max());
  const std::vector<Hazard>& hs = c.hazards();
  REQUIRE(kinds(hs) == "WAR WAW ");
  CHECK(hs[0].message ==
        "WAR race on %t[0:128, 0:64]: %w2 at test.kir:7:3 overwrote it at 10.000 ns while %r1 at test.kir:6:3 was "
        "reading it until 40.000 ns; the order that prevents it: dep %r1 -> %w2 anti");
  CHECK(hs[1].message ==
        "WAW race on %t[0:128, 0:64]: %w1 at test.kir:5:3 landed at 30.000 ns, after %w2 at test.kir:7:3 at "
        "20.000 ns, so %r2 at test.kir:8:3 saw the older value; the order that prevents it: dep %w1 -> %w2 output");
}

// A strip written slice by slice, rewritten a round later (a hoisted strip): the slices stay
// live through many advances between the rounds, and each leaves when its next round's
// write, sixteen writes on, has settled. Round 0's slice 3 lands after round 1's: the WAW
// is found as that slice leaves, named once, with the loop that carries the pair.
TEST_CASE("race checker: a strip rewritten a round later", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[128, 16, 4] f32\n"
      "  loop %m = 0 to 2 {\n"
      "    loop %s = 0 to 16 {\n"
      "      %w = memset %t[0:128, %s, 0:4] {value = 0}\n"
      "    }\n"
      "  }\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  const size_t m = rig.loop_of("w", 0), s = rig.loop_of("w", 1);
  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  for (int64_t round = 0; round < 2; ++round) {
    for (int64_t slice = 0; slice < 16; ++slice) {
      rig.ivs[m] = round;
      rig.ivs[s] = slice;
      const Picos t = round * 200000 + slice * 1000;
      c.record(rig.at("w", t, round == 0 && slice == 3 ? 250000 : t + 500));
      c.advance(t, kAll);
    }
    // Between the rounds: advances that bring nothing new.
    for (Picos t = 20000; round == 0 && t < 200000; t += 20000) c.advance(t, kAll);
  }
  for (Picos t = 220000; t <= 300000; t += 20000) c.advance(t, kAll);
  const std::vector<Hazard>& hs = c.hazards();
  REQUIRE(kinds(hs) == "WAW ");
  CHECK(hs[0].message ==
        "WAW race on %t[0:128, 3:4, 0:4]: %w (m=0, s=3) at test.kir:5:7 landed at 250.000 ns, after %w (m=1, s=3) "
        "at test.kir:5:7 at 203.500 ns; the order that prevents it: dep %w -> %w output distance=1 loop=%m");
}

// A slice of a strip read twice (the second read finds its producer from what the first
// remembered), then patched by a newer write of two slices that is still landing when the
// slice is read again, with a later slice written after the patch: the third read's producer
// is the patch, not the slice's own write the first two reads found.
TEST_CASE("race checker: a strip slice patched between its reads", "[race_checker]") {
  const std::string body =
      "  tensor %t : sbuf[128, 8, 4] f32\n"
      "  tensor %u : sbuf[128, 4] f32\n"
      "  loop %s = 0 to 8 {\n"
      "    %w = memset %t[0:128, %s, 0:4] {value = 0}\n"
      "  }\n"
      "  loop %q = 0 to 2 {\n"
      "    %rd = activation %u <- %t[0:128, 2, 0:4] {func = \"exp\"}\n"
      "  }\n"
      "  %patch = memset %t[0:128, 2:4, 0:4] {value = 1}\n"
      "  %w7 = memset %t[0:128, 7, 0:4] {value = 2}\n"
      "  %again = activation %u <- %t[0:128, 2, 0:4] {func = \"exp\"}\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  const size_t s = rig.loop_of("w"), q = rig.loop_of("rd");
  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  for (int64_t slice = 0; slice < 8; ++slice) {
    rig.iteration(s, slice);
    c.record(rig.at("w", slice * 1000, slice * 1000 + 500));
  }
  for (int64_t round = 0; round < 2; ++round) {
    rig.iteration(q, round);
    const Picos t = 10000 + round * 2000;
    c.record(rig.at("rd", t, t + 1000));
    c.advance(t + 1000, kAll);
  }
  c.record(rig.at("patch", 14000, 30000));
  c.record(rig.at("w7", 15000, 15500));
  c.record(rig.at("again", 20000, 21000));
  c.advance(25000, kAll);
  const std::vector<Hazard>& hs = c.hazards();
  REQUIRE(kinds(hs) == "RAW ");
  CHECK(hs[0].message ==
        "RAW race on %t[0:128, 2:3, 0:4]: %again at test.kir:12:3 read it at 20.000 ns, before %patch at "
        "test.kir:10:3 had written it at 30.000 ns; the order that prevents it: dep %patch -> %again flow");
}

// An accumulating read is checked at every iteration but its group's first: there the
// instance writes afresh. Here %mm (k=0) starts before %z lands (no read, no race) and
// %mm (k=1) reads before %mm (k=0) lands (a RAW); the instruction's reads, all with
// constant boxes, are queued as one list per instruction.
TEST_CASE("race checker: an accumulation group's first instance reads nothing", "[race_checker]") {
  const std::string body =
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  tensor %b : sbuf[128, 512] bf16\n"
      "  tensor %acc : psum[128, 512] f32\n"
      "  %z = memset %acc {value = 0}\n"
      "  loop %k = 0 to 2 {\n"
      "    %mm = matmul %acc <- %a, %b {accumulate, start = \"%k\"}\n"
      "  }\n";
  Rig rig(body);
  RaceChecker c(rig.p);
  const size_t loop = rig.loop_of("mm");
  c.record(rig.at("z", 0, 1000));
  rig.iteration(loop, 0);
  c.record(rig.at("mm", 500, 2000));
  rig.iteration(loop, 1);
  c.record(rig.at("mm", 1500, 3000));
  c.advance(std::numeric_limits<Picos>::max(), std::numeric_limits<int64_t>::max());
  const std::vector<Hazard>& hs = c.hazards();
  REQUIRE(kinds(hs) == "RAW ");
  CHECK(hs[0].message ==
        "RAW race on %acc[0:128, 0:512]: %mm (k=1) at test.kir:7:5 read it at 1.500 ns, before %mm (k=0) at "
        "test.kir:7:5 had written it at 2.000 ns; the order that prevents it: dep %mm -> %mm flow distance=1");
}

namespace {

// Fast-forward's view of the checker's state: the words a visit lists, and a visit that moves
// each linear word on by `periods` times its shift.
class Words final : public StateVisitor {
 public:
  void exact(int64_t v) override { words.push_back(v); }
  void linear(int64_t& v, Kind) override { words.push_back(v); }
  void real(double v) override { words.push_back(static_cast<int64_t>(v)); }
  void identity(const void*) override { words.push_back(0); }
  void refuse() override { refused = true; }
  std::vector<int64_t> words;
  bool refused = false;
};

class MoveOn final : public StateVisitor {
 public:
  MoveOn(const std::vector<int64_t>& shift, int64_t periods) : shift_(shift), periods_(periods) {}
  void exact(int64_t) override { ++next_; }
  void linear(int64_t& v, Kind) override { v += periods_ * shift_.at(next_++); }
  void real(double) override { ++next_; }
  void identity(const void*) override { ++next_; }
  void refuse() override {}
  bool moves() const override { return true; }

 private:
  const std::vector<int64_t>& shift_;
  int64_t periods_;
  size_t next_ = 0;
};

std::vector<int64_t> words_of(RaceChecker& c) {
  Words w;
  c.visit_state(w);
  REQUIRE_FALSE(w.refused);
  return w.words;
}

}  // namespace

// The property fast-forward relies on: in a steady loop the checker's state repeats up to a
// shift (its times, program positions and boxes move by a fixed amount per period), and the
// state moved on by k periods is the state simulating those k periods gives; what follows
// finds the same races. Here every iteration's add reads its tile before the load lands (a
// RAW), and a result column is kept per iteration (%o, which nothing in the loop reads: left
// out of the listing, given its writes instead).
TEST_CASE("race checker: a steady loop's state moved on by whole periods", "[race_checker]") {
  const std::string body =
      "  tensor %X : dram[128, 1600] f32\n"
      "  tensor %t : sbuf[128, 16] f32\n"
      "  tensor %s : sbuf[128, 16] f32\n"
      "  tensor %o : sbuf[128, 100] f32\n"
      "  tensor %Y : dram[128, 100] f32\n"
      "  loop %i = 0 to 100 {\n"
      "    %ld = load %t <- %X[0:128, %i*16 : %i*16 + 16]\n"
      "    %ad = tensor_tensor %s <- %s, %t\n"
      "    %rd = tensor_reduce %o[0:128, %i] <- %s {op = \"add\"}\n"
      "  }\n"
      "  %sv = save %Y <- %o\n";
  Rig rig(body);
  const size_t i = rig.loop_of("ld");
  const SimInst& ld = rig.p.insts[static_cast<size_t>(rig.k.find_inst("ld"))];
  constexpr Picos kPeriod = 10000;
  // Iteration n: the load 0-6 us into the period, the add from 5 us (before the load lands),
  // the reduce after it; then an advance that settles the iteration before.
  auto run = [&](RaceChecker& c, int64_t from, int64_t to, bool writes_only = false) {
    for (int64_t n = from; n < to; ++n) {
      rig.iteration(i, n);
      const Picos t = n * kPeriod;
      for (const InstanceRecord& r :
           {rig.at("ld", t, t + 6000), rig.at("ad", t + 5000, t + 8000), rig.at("rd", t + 8000, t + 9000)}) {
        if (writes_only)
          c.record_unlisted_writes(r);
        else
          c.record(r);
      }
      if (!writes_only) c.advance(t, ld.seq_base + (n + 1) * ld.seq_strides.at(0));
    }
  };
  RaceChecker moved(rig.p), every(rig.p);
  moved.steady_loop(static_cast<LoopId>(i));
  every.steady_loop(static_cast<LoopId>(i));
  run(moved, 0, 10);
  const std::vector<int64_t> a = words_of(moved);
  run(moved, 10, 11);
  const std::vector<int64_t> b = words_of(moved);
  REQUIRE(a.size() == b.size());
  std::vector<int64_t> shift(a.size());
  for (size_t w = 0; w < a.size(); ++w) shift[w] = b[w] - a[w];
  CHECK(std::count(shift.begin(), shift.end(), kPeriod) > 0);  // times moved by the period
  // 30 periods skipped: the listed state moved on, the write log of %o given their writes.
  run(moved, 11, 41, true);
  moved.settle_unlisted(40 * kPeriod, ld.seq_base + 41 * ld.seq_strides.at(0));
  MoveOn move_on(shift, 30);
  moved.visit_state(move_on);
  run(every, 0, 41);
  CHECK(words_of(moved) == words_of(every));
  // %o's log too, given the skipped periods' writes, once the next advance has settled it
  // (it was settled per chunk, where the loop settles it per advance): listed whole, the same.
  for (RaceChecker* c : {&moved, &every}) {
    c->advance(40 * kPeriod, ld.seq_base + 41 * ld.seq_strides.at(0));
    c->steady_loop(kNoId);
  }
  CHECK(words_of(moved) == words_of(every));
  moved.steady_loop(static_cast<LoopId>(i));
  every.steady_loop(static_cast<LoopId>(i));
  run(moved, 41, 100);
  run(every, 41, 100);
  rig.ivs[i] = 0;
  moved.record(rig.at("sv", 100 * kPeriod, 100 * kPeriod + 5000));
  every.record(rig.at("sv", 100 * kPeriod, 100 * kPeriod + 5000));
  moved.advance(std::numeric_limits<Picos>::max(), std::numeric_limits<int64_t>::max());
  every.advance(std::numeric_limits<Picos>::max(), std::numeric_limits<int64_t>::max());
  REQUIRE(kinds(every.hazards()) == "RAW ");
  REQUIRE(moved.hazards().size() == every.hazards().size());
  CHECK(moved.hazards()[0].message == every.hazards()[0].message);
  CHECK(words_of(moved) == words_of(every));
}
