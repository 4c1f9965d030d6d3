#include <catch2/catch.hpp>

#include "sched/amdgpu/asm_reader.h"
#include "sched/amdgpu/importer.h"
#include "sched/amdgpu/waitcnt.h"

using namespace tandem;
using namespace tandem::amdgpu;

TEST_CASE("VGPR operands are read in every form LLVM prints", "[amdgpu]") {
  CHECK(parse_vgpr("v12") == VgprRange{12, 12});
  CHECK(parse_vgpr("v[20:23]") == VgprRange{20, 23});
  CHECK(parse_vgpr("-v3") == VgprRange{3, 3});
  CHECK(parse_vgpr("|v4|") == VgprRange{4, 4});
  CHECK_FALSE(parse_vgpr("vcc_lo"));
  CHECK_FALSE(parse_vgpr("v[23:20]"));
  CHECK_FALSE(parse_vgpr("s[0:1]"));
  CHECK(parse_int("0xe000") == 0xe000);
  CHECK(parse_int("-4096") == -4096);
}

TEST_CASE("an instruction line gives its VGPR reads, writes, kind and offset", "[amdgpu]") {
  std::vector<AsmLine> lines = read_asm(
      "\tds_load_b128 v[21:24], v37 offset:16 ; comment\n"
      "\tv_dual_mov_b32 v10, s0 :: v_dual_add_nc_u32 v53, 0x800, v50\n"
      "\ts_waitcnt vmcnt(0) lgkmcnt(2)\n"
      ".LBB0_1:\n",
      "t.s");
  REQUIRE(lines.size() == 4);
  const AsmInst& ds = lines[0].inst;
  CHECK(ds.kind == InstKind::kDsLoad);
  CHECK(ds.offset == 16);
  CHECK(ds.vgpr_writes == std::vector<VgprRange>{{21, 24}});
  CHECK(ds.vgpr_reads == std::vector<VgprRange>{{37, 37}});
  const AsmInst& dual = lines[1].inst;
  CHECK(dual.vgpr_writes == std::vector<VgprRange>{{10, 10}, {53, 53}});
  CHECK(dual.vgpr_reads == std::vector<VgprRange>{{50, 50}});
  CHECK(dual.second_mnemonic == "v_dual_add_nc_u32");
  CHECK(waitcnt_field(lines[2].inst, "lgkmcnt") == 2);
  CHECK(waitcnt_field(lines[2].inst, "vmcnt") == 0);
  CHECK_FALSE(waitcnt_field(lines[2].inst, "expcnt"));
  CHECK(lines[3].type == AsmLine::kLabel);
  CHECK(lines[3].label == ".LBB0_1");
}

namespace {

// A counted loop: s0 from 0x800 by 0x1000 until it equals 0x3800 (compared after the step).
const char* kLoop =
    "k:\n"
    "\ts_movk_i32 s0, 0x800\n"
    ".LBB0_1:\n"
    "\tv_add_nc_u32_e32 v53, s0, v34\n"
    "\ts_addk_i32 s0, 0x1000\n"
    "\tds_load_b128 v[37:40], v53\n"
    "\ts_cmpk_eq_i32 s0, 0x3800\n"
    "\tv_wmma_f32_16x16x16_f16 v[10:17], v[18:25], v[37:44], v[10:17]\n"
    "\ts_cbranch_scc0 .LBB0_1\n"
    "\ts_endpgm\n";

}  // namespace

TEST_CASE("the trip count comes from the s_cmp, the step and the initial value", "[amdgpu]") {
  AsmKernel k = analyse_asm(kLoop, "t.s");
  REQUIRE(k.loops.size() == 1);
  CHECK(k.loops[0].trip == 3);
  CHECK(k.loops[0].addr == 53);
  CHECK(k.loops[0].base == 34);
  CHECK(k.loops[0].bias == 0x800);
}

TEST_CASE("an LDS result is waited for by the lowest lgkmcnt that covers it", "[amdgpu]") {
  // Three loads outstanding; the WMMA reads the first two loads' registers: lgkmcnt(1) is enough.
  AsmKernel k = analyse_asm(
      "k:\n"
      "\tds_load_b128 v[0:3], v40\n"
      "\tds_load_b128 v[4:7], v40 offset:16\n"
      "\tds_load_b128 v[8:11], v40 offset:32\n"
      "\tv_wmma_f32_16x16x16_f16 v[20:27], v[0:7], v[12:19], v[20:27]\n"
      "\ts_endpgm\n",
      "t.s");
  WaitcntStats stats;
  const std::string out = fix_waitcnts(k, stats);
  CHECK(stats.inserted == 1);
  CHECK(out.find("\ts_waitcnt lgkmcnt(1)\n\tv_wmma") != std::string::npos);
  // An existing wait that is not enough is lowered instead.
  AsmKernel k2 = analyse_asm(
      "k:\n"
      "\tds_load_b128 v[0:3], v40\n"
      "\tds_load_b128 v[4:7], v40 offset:16\n"
      "\ts_waitcnt lgkmcnt(1)\n"
      "\tv_wmma_f32_16x16x16_f16 v[20:27], v[0:7], v[12:19], v[20:27]\n",
      "t.s");
  WaitcntStats stats2;
  const std::string out2 = fix_waitcnts(k2, stats2);
  CHECK(stats2.tightened == 1);
  CHECK(out2.find("s_waitcnt lgkmcnt(0)") != std::string::npos);
}
