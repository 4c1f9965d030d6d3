#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <utility>

#include "sched/target/target.h"

using namespace tandem;

namespace {

const std::string kModels = std::string(TANDEM_SOURCE_DIR) + "/models/";

// A bundled model (trn2.yaml unless told) with one textual substitution, written to a
// temporary file.
std::string variant(const std::string& from, const std::string& to, const std::string& name,
                    const std::string& model = "trn2.yaml") {
  std::ifstream in(kModels + model);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::string path = (std::filesystem::temp_directory_path() / ("hardware_model_test_" + name + ".yaml")).string();
  std::ofstream(path) << text;
  return path;
}

std::string load_error(const std::string& path) {
  struct Remove {
    const std::string& path;
    ~Remove() { std::filesystem::remove(path); }
  } remove_after{path};
  try {
    load_target(path)->require_timing();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the bundled models load with their published figures", "[model]") {
  auto trn2 = load_target(kModels + "trn2.yaml");
  CHECK(trn2->name == "trn2");
  CHECK(trn2->engine("pe")->clock_ghz == 2.4);
  CHECK(trn2->dma.engines == 16);
  CHECK(trn2->dma.bandwidth_bytes_per_ns == 23);
  CHECK(trn2->dma.fixed_cost_ns == 880);
  CHECK(trn2->dma.engine_overhead_ns == 100);
  CHECK(trn2->dma.descriptor_overhead_ns == 5);
  CHECK(trn2->dma.efficiency.empty());  // the stages give the published curve
  CHECK(trn2->dma.efficiency_at(256) == 1.0);
  DmaModel curve;
  curve.efficiency = {{512, 0.6}, {2048, 0.9}};
  CHECK(curve.efficiency_at(1280) == Approx(0.75));  // halfway between 512 and 2048
  CHECK(curve.efficiency_at(100000) == 0.9);
  CHECK(load_target(kModels + "trn1.yaml")->dma.engine_overhead_ns == 450);
  CHECK(trn2->conflicts.empty());
  auto trn1 = load_target(kModels + "trn1.yaml");
  CHECK(trn1->conflicts.size() == 2);
  CHECK(trn1->space("psum")->writers == std::set<std::string>{"pe", "act", "dve"});
  auto gpu = load_target(kModels + "gpu-cu.yaml");
  const OpCost& ds = gpu->engine("wave")->costs.at("ds_load_b128");
  CHECK(ds.cycles.eval(std::vector<double>(cost_variables().size(), 0)) == 1);
  CHECK(ds.latency->eval(std::vector<double>(cost_variables().size(), 0)) == 56);
}

TEST_CASE("a matmul costs what the ISA formula says", "[model]") {
  auto trn2 = load_target(kModels + "trn2.yaml");
  const CostFormula& mm = trn2->engine("pe")->costs.at("matmul").cycles;
  // N, P, N_stationary, N_moving, is_fp32, bytes, elem_bytes, MIN_II, ranks, accumulator_inputs, all_16bit,
  // double_row
  REQUIRE(cost_variables().size() == 12);
  CHECK(mm.eval({512, 128, 128, 512, 0, 0, 2, 0, 1, 0, 1, 0}) == 512);
  CHECK(mm.eval({512, 128, 128, 512, 1, 0, 4, 0, 1, 0, 0, 0}) == 2048);
  CHECK(mm.eval({1024, 128, 256, 1024, 0, 0, 1, 0, 1, 0, 0, 1}) == 512);  // FP8 double-row: half of 1024
}

TEST_CASE("VectorE tensor_tensor costs N with a PSUM or all-16-bit input, else 2N (ISA)", "[model]") {
  // trn1 has the ISA's 128-element datapath; trn2 (ARCH-v3) runs it at twice that rate: half
  // the cycles (1024 -> 512 for f32 in SBUF), MIN_II still the floor.
  for (const auto& [name, rate] : {std::pair<const char*, double>{"trn1.yaml", 1}, {"trn2.yaml", 2}}) {
    auto t = load_target(kModels + name);
    const CostFormula& tt = t->engine("dve")->costs.at("tensor_tensor").cycles;
    // N = 512, MIN_II = 64; then N = 16 (MIN_II binds)
    CHECK(tt.eval({512, 128, 512, 512, 1, 0, 4, 64, 1, 0, 0, 0}) == 1024 / rate);  // f32, both in SBUF
    CHECK(tt.eval({512, 128, 512, 512, 1, 0, 4, 64, 1, 1, 0, 0}) == 512 / rate);   // one input in PSUM
    CHECK(tt.eval({512, 128, 512, 512, 0, 0, 2, 64, 1, 0, 1, 0}) == 512 / rate);   // all bf16
    CHECK(tt.eval({16, 128, 16, 16, 1, 0, 4, 64, 1, 0, 0, 0}) == 64);
  }
}

TEST_CASE("a broken model file is a located error", "[model]") {
  CHECK_THAT(
      load_error(variant("bandwidth_bytes_per_ns: 23", "bandwidth_bytes_per_ns: -23", "negative")),
      Catch::Matches(".*negative\\.yaml:93:27: error: dma.bandwidth_bytes_per_ns must not be negative \\(got -23\\)"));
  CHECK_THAT(load_error(variant("  fixed_cost_ns: 880", "", "missing")),
             Catch::Matches(".*missing\\.yaml:90:3: error: missing field 'fixed_cost_ns' in dma"));
  CHECK_THAT(load_error(variant("\"max(MIN_II, N)\"                         # ISA\n      activation_reduce",
                                "\"max(MIN_II, Nx)\"                         # ISA\n      activation_reduce", "var")),
             Catch::Matches(".*var\\.yaml:49:32: error: unknown variable 'Nx' in cost formula \\(known: N, P, .*\\)"));
  CHECK_THAT(load_error(variant("\"150 + N\"", "\"150 + * N\"", "syntax")),
             Catch::Matches(".*syntax\\.yaml:\\d+:\\d+: error: unexpected '\\*' in cost formula"));
  CHECK_THAT(load_error(variant("fixed_cost_ns: 880", "fixed_cost_nss: 880", "key")),
             Catch::Contains("unknown field 'fixed_cost_nss' in dma"));
  CHECK_THAT(load_error(variant("      iota: \"150 + N\"                                      # ISA\n", "", "nocost")),
             Catch::Contains("error: opcode 'iota' runs on 'pool' but engines.pool.costs has no entry for it"));
  CHECK_THAT(load_error(variant("clock_ghz: 2.4               # ARCH-v3", "clock_ghz: 0", "clock")),
             Catch::Contains("engines.pe.clock_ghz must be positive"));
  CHECK_THAT(load_error(variant("  fixed_cost_ns: 880",
                                "  efficiency: [{bytes_per_partition: 512, efficiency: 0.6}, "
                                "{bytes_per_partition: 128, efficiency: 0.7}]\n  fixed_cost_ns: 880",
                                "order")),
             Catch::Contains("dma.efficiency points must have increasing bytes_per_partition"));
  CHECK_THAT(load_error(variant("conflicts: []", "conflicts: [{space: sbuf, engines: [dma, pe]}]", "dmaconflict")),
             Catch::Contains("conflicts are between compute engines; 'dma' is not one"));
  CHECK_THAT(load_error(variant("iota:               {class: compute, engines: [pool]}",
                                "iota:               {class: compute, engine: [pool]}", "opfield")),
             Catch::Contains(
                 "unknown field 'engine' in opcodes.iota (did you mean 'engines'?) (known: class, engines, tags)"));
  CHECK_THAT(load_error(variant("queues: 16 ", "queues: 0 ", "noqueues")),
             Catch::Contains("dma.queues must be between 1 and 65536"));
}

TEST_CASE("roles and tags are read from the model, not taken from names", "[model]") {
  auto trn2 = load_target(kModels + "trn2.yaml");
  CHECK(trn2->role_of("dram") == SpaceRole::Dram);
  CHECK(trn2->role_of("sbuf") == SpaceRole::OnChip);
  CHECK(trn2->role_of("psum") == SpaceRole::None);
  CHECK(trn2->role_of("no_such_space") == SpaceRole::None);
  auto gpu = load_target(kModels + "gpu-cu.yaml");
  CHECK(gpu->role_of("global") == SpaceRole::Dram);
  CHECK(gpu->role_of("lds") == SpaceRole::OnChip);
  CHECK(gpu->has_tag("v_wmma_f32_16x16x32_bf16", OpTag::Wmma));
  CHECK(gpu->has_tag("ds_load_b128", OpTag::LdsLoad));
  CHECK_FALSE(gpu->has_tag("global_load_b128", OpTag::LdsLoad));
  CHECK_FALSE(gpu->has_tag("v_add_u32", OpTag::Wmma));
  // Plain-number costs, for wmma-reorder's issue-slot arithmetic.
  CHECK(gpu->engine("wave")->constant_latency("ds_load_b128") == 56.0);
  CHECK(gpu->engine("wave")->constant_cycles("v_wmma_f32_16x16x32_bf16") == 16.0);
  CHECK_FALSE(trn2->engine("pe")->constant_cycles("matmul").has_value());
  CHECK_THAT(load_error(variant("tags: [wmma]", "tags: [wmm]", "tag", "gpu-cu.yaml")),
             Catch::Contains("unknown tag 'wmm'"));
}

TEST_CASE("opcodes are found by name through the index, in a copy and after a change", "[model]") {
  auto trn2 = load_target(kModels + "trn2.yaml");
  const OpcodeInfo* matmul = trn2->opcode("matmul");
  REQUIRE(matmul != nullptr);
  CHECK(matmul == &trn2->opcodes.at("matmul"));  // the index points into the map
  CHECK(trn2->opcode("no_such_opcode") == nullptr);
  // A copy's index would point into the original: it looks its own map up.
  auto copy = std::make_unique<Target>(*trn2);
  CHECK(copy->opcode("matmul") == &copy->opcodes.at("matmul"));
  // Opcodes added after the index was built are found too (the map is looked up), and again
  // through the index once it is rebuilt.
  copy->opcodes["extra_op"] = OpcodeInfo{};
  CHECK(copy->opcode("extra_op") == &copy->opcodes.at("extra_op"));
  copy->index_opcodes();
  CHECK(copy->opcode("extra_op") == &copy->opcodes.at("extra_op"));
  CHECK(copy->opcode("matmul") == &copy->opcodes.at("matmul"));
  // A moved Target finds its own entries (it keeps the index, whose entries moved with the map:
  // the result is the same either way, so this checks only that nothing points into the
  // moved-from one's storage).
  Target moved = std::move(*copy);
  CHECK(moved.opcode("extra_op") == &moved.opcodes.at("extra_op"));
}

TEST_CASE("a model without its timing half is a target for opt; sim asks for the timing", "[model]") {
  const std::string path = (std::filesystem::temp_directory_path() / "model_reader_test_mini.yaml").string();
  std::ofstream(path) << "name: mini\nspaces:\n  dram: {}\n  sbuf: {partitions: 128}\nengines:\n  pe: {kind: tensor}\n"
                         "dma: {queues: 2}\nopcodes:\n  load: {class: load, engines: [dma]}\n"
                         "  matmul: {class: compute, engines: [pe]}\n";
  auto mini = load_target(path);
  CHECK(mini->dma_queues.size() == 2);
  REQUIRE(mini->missing_timing.size() == 7);
  CHECK_THAT(mini->missing_timing[0].what(),
             Catch::Matches(".*mini\\.yaml:1:1: error: missing field 'reference_clock_ghz' in the model"));
  CHECK_THAT(mini->missing_timing[1].what(), Catch::Contains("missing field 'clock_ghz' in engines.pe"));
  CHECK_THAT(mini->missing_timing[6].what(),
             Catch::Contains("opcode 'matmul' runs on 'pe' but engines.pe.costs has no entry for it"));
  CHECK_THROWS_WITH(mini->require_timing(), Catch::Contains("missing field 'reference_clock_ghz'"));
  std::filesystem::remove(path);
}

TEST_CASE("one capacity rule: every buffer takes whole banks where a space has banks", "[model]") {
  auto trn2 = load_target(kModels + "trn2.yaml");
  const SpaceInfo& psum = *trn2->space("psum");
  CHECK(psum.bank_bytes() == 2048);
  CHECK(psum.capacity() == 8);
  CHECK(std::string(psum.capacity_unit()) == "banks");
  CHECK(psum.footprint(1024, 1) == 1);
  CHECK(psum.footprint(1024, 2) == 2);  // not 1: two half-bank buffers do not share a bank
  CHECK(psum.footprint(1024, 3) == 3);
  CHECK(psum.footprint(2049, 2) == 4);
  const SpaceInfo& sbuf = *trn2->space("sbuf");
  CHECK(sbuf.capacity() == 212992);
  CHECK(sbuf.footprint(1000, 3) == 3000);
  CHECK_THAT(load_error(variant("bytes_per_partition: 16384", "bytes_per_partition: 16100", "banks")),
             Catch::Contains("spaces.psum.banks must divide spaces.psum.bytes_per_partition (16100) into equal banks"));
}
