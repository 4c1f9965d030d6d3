// The hardware model: one target's memory spaces (with their roles and capacity rule),
// engines (with clocks and per-opcode cost formulas), DMA system, access conflicts and the
// opcode table (each opcode's class and tags). Read from models/*.yaml by one reader
// (sched/target/model_reader.cpp, which declares every key once); the parser, the passes
// and the simulator all use this struct, so adding an opcode or a target is a data change.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/support/error.h"
#include "sched/support/name_index.h"
#include "sched/target/cost_formula.h"

namespace tandem {

// The classes the passes reason about (separate-load-compute: Load/DMACopy are the load class).
enum class OpClass { Load, IndirectLoad, Store, Memset, Compute, Collective, Barrier, Branch };

const char* op_class_name(OpClass c);
std::optional<OpClass> parse_op_class(const std::string& name);

// True for the classes that move data through DMA queues.
bool is_dma_class(OpClass c);

// What an opcode is, beyond its class, for the passes and the simulator (`tags:` in the
// opcode table). docs/models.md defines each.
enum class OpTag {
  Wmma,     // a matrix multiply-accumulate on registers: wmma-reorder permutes them, the
            // simulator reports their operand waits as WMMA bubbles
  LdsLoad,  // a load from the LDS into registers: wmma-reorder places it before its consumers
};
const char* op_tag_name(OpTag t);
std::optional<OpTag> parse_op_tag(const std::string& name);

// What a memory space is for, where a pass or the simulator needs to know (`role:` of a
// space); a space without a role is plain memory with its capacity and access rules.
enum class SpaceRole {
  None,
  Dram,    // off-chip memory: holds the kernel's inputs and results
  OnChip,  // the on-chip buffer that loads fill and compute engines read (SBUF, LDS)
};
const char* space_role_name(SpaceRole r);
std::optional<SpaceRole> parse_space_role(const std::string& name);

struct OpcodeInfo {
  std::string name;
  OpClass op_class = OpClass::Compute;
  std::vector<std::string> engines;  // engines that may run it; {"dma"} means any DMA queue
  std::set<OpTag> tags;
  SourceLoc loc;

  bool has(OpTag t) const { return tags.count(t) > 0; }
};

struct SpaceInfo {
  std::string name;
  SpaceRole role = SpaceRole::None;
  int64_t partitions = 0;           // > 0: the first tensor dimension is the partition dimension
  int64_t bytes_per_partition = 0;  // capacity per partition (0 = unbounded, e.g. DRAM)
  int64_t banks = 0;                // > 0: capacity is counted in banks (PSUM's accumulation banks)
  int64_t registers = 0;            // register files: number of registers
  int64_t register_bytes = 0;
  std::string register_prefix;    // "v" makes `v[20:23]` a group of this file
  std::set<std::string> readers;  // engines that may read it ("dma": the DMA queues); empty = any
  std::set<std::string> writers;
  // Bytes per cycle (of the reading engine) the space returns into registers; 0 = unlimited.
  // Register loads from it queue on one pipe per engine (gpu-cu: the LDS).
  double bandwidth_bytes_per_cycle = 0;
  // > 0: an address into the space is a register plus an unsigned offset of at most this
  // many bytes (gfx11's ds_load offset field), so a register-relative offset must lie in
  // [0, address_offset_max]; 0 = any offset.
  int64_t address_offset_max = 0;

  bool is_register_file() const { return !register_prefix.empty(); }
  // May `unit` ("dma" for any DMA queue) write (or read) this space?
  bool allows(const std::string& unit, bool write) const {
    const std::set<std::string>& allowed = write ? writers : readers;
    return allowed.empty() || allowed.count(unit) > 0;
  }

  // The capacity rule, the one both address-rotation and the simulator's capacity check use
  // (docs/models.md, "Capacity"). In a space with banks every buffer of a tensor takes whole
  // banks of its own (an accumulation group never shares a bank), and the space holds
  // `banks` of them; otherwise buffers take their bytes per partition, and the space holds
  // `bytes_per_partition`. Units: banks, or bytes per partition (capacity_unit()).
  int64_t bank_bytes() const { return banks > 0 ? bytes_per_partition / banks : 0; }
  int64_t footprint(int64_t bytes_per_buffer, int64_t buffers) const;
  int64_t capacity() const { return banks > 0 ? banks : bytes_per_partition; }  // 0: unbounded
  const char* capacity_unit() const { return banks > 0 ? "banks" : "bytes per partition"; }
};

// Inputs of every cost formula, in the order CostFormula::eval() takes them (docs/models.md
// defines each).
const std::vector<std::string>& cost_variables();

struct OpCost {
  CostFormula cycles;                  // engine occupancy (issue cycles)
  std::optional<CostFormula> latency;  // completion after start; default = cycles
};

struct EngineInfo {
  std::string name;
  std::string kind;      // descriptive only
  double clock_ghz = 0;  // 0 only in a model without timing (Target::require_timing)
  double min_ii_cycles = 0;
  int64_t lanes = 1;                    // a register load moves its registers' bytes once per lane (a GPU wave)
  std::map<std::string, OpCost> costs;  // opcode -> cost on this engine

  // The cost of `op` when its formula is a plain number of cycles (`{cycles: "16", latency:
  // "32"}`), for passes that reason in issue slots (wmma-reorder's default distance).
  std::optional<double> constant_cycles(const std::string& op) const;
  std::optional<double> constant_latency(const std::string& op) const;
};

struct DmaModel {
  int64_t engines = 0;
  int64_t partitions_per_engine = 1;
  double bandwidth_bytes_per_ns = 1;  // per DMA engine
  // The queue's setup stage (descriptor generation, synchronisation): one transfer at a time
  // per queue, overlapping the previous transfer's data (docs/models.md, "dma").
  double fixed_cost_ns = 0;
  double engine_overhead_ns = 0;      // engine time per transfer, on every engine it uses
  double descriptor_overhead_ns = 0;  // engine time per descriptor (a contiguous run of a partition)
  // Fraction of the bandwidth a transfer achieves, by bytes per partition; linear between
  // points, flat beyond the ends.
  std::vector<std::pair<double, double>> efficiency;

  double efficiency_at(double bytes_per_partition) const;
};

// Engines that cannot use `space` at the same time.
struct ConflictRule {
  std::string space;
  std::vector<std::string> engines;
};

struct CollectiveModel {
  double link_bandwidth_bytes_per_ns = 0;  // 0: collectives move no data (start-up only)
};

// A value a model file sets, as written, with its unit ("" for a name or a list).
struct ModelParameter {
  std::string path;  // "dma.fixed_cost_ns", "engines.pe.costs.matmul"
  std::string value;
  std::string unit;
  int line = 0;  // in the model file
};

struct Target {
  std::string name;
  std::string file;                // the model file it was read from
  std::string file_hash;           // content_hash of its bytes (sched/support/provenance.h)
  double reference_clock_ghz = 0;  // cycles are reported at this clock
  int64_t semaphores = 0;
  std::map<std::string, SpaceInfo> spaces;
  std::map<std::string, EngineInfo> engines;  // compute engines, in name order
  std::vector<std::string> dma_queues;        // "q0".."qN-1"
  DmaModel dma;
  CollectiveModel collective;
  std::vector<ConflictRule> conflicts;
  std::map<std::string, OpcodeInfo> opcodes;  // in name order (listings, first_of_class)
  // The keys `tandem sim` needs and this file lacks (docs/models.md, "required: sim"), in
  // the order the reader met them; `tandem opt` does without them.
  std::vector<Error> missing_timing;
  std::vector<ModelParameter> parameters;  // every value the file sets, in file order

  const OpcodeInfo* opcode(const std::string& name) const;
  const SpaceInfo* space(const std::string& name) const;
  const EngineInfo* engine(const std::string& name) const;
  const SpaceInfo* register_file(const std::string& prefix) const;
  bool is_dma_queue(const std::string& name) const;
  // The first opcode of a class in name order (core_barrier, memset), or nullptr.
  const OpcodeInfo* first_of_class(OpClass c) const;
  // May `engine` (an engine or a DMA queue name) run `op`?
  bool can_run(const OpcodeInfo& op, const std::string& engine) const;
  // Does the opcode named `op` carry tag `t`? (false for an opcode the target lacks)
  bool has_tag(const std::string& op, OpTag t) const;
  // The role of the space named `space` (None for a space the target lacks).
  SpaceRole role_of(const std::string& space) const;

  // Throws the first of missing_timing: a model for `tandem sim` needs its timing half.
  void require_timing() const;

  // Indexes `opcodes` by name for opcode(): the passes, the analysis and the verifier look an
  // opcode up per instruction, so a look-up must not walk the map's string compares. The model
  // reader calls it once `opcodes` is complete.
  void index_opcodes();

 private:
  // `opcodes`' entries in name order and a NameIndex of their positions. The entries point into
  // `opcodes`: a moved Target keeps them (a map's nodes move with it), a copied one starts
  // without (they would be the original's), and one whose opcodes have changed in number since
  // looks the map up.
  struct OpcodeIndex {
    std::vector<const std::pair<const std::string, OpcodeInfo>*> entries;
    NameIndex positions;
    // NameIndex's names: the entries' keys.
    auto name_of() const {
      return [this](int id) -> const std::string& { return entries[static_cast<size_t>(id)]->first; };
    }
    OpcodeIndex() = default;
    OpcodeIndex(const OpcodeIndex&) {}
    OpcodeIndex(OpcodeIndex&&) = default;
    OpcodeIndex& operator=(const OpcodeIndex&) {
      entries.clear();
      positions.clear();
      return *this;
    }
    OpcodeIndex& operator=(OpcodeIndex&&) = default;
  } opcode_index_;
};

// Reads and checks a model file (cached per path): an unknown key, a value of the wrong
// type or out of range, a cost formula that does not parse, an unknown engine, space or
// opcode named in a list: each an Error at file:line:col, for every command alike. Keys only
// the simulator needs may be missing (see Target::missing_timing).
std::shared_ptr<const Target> load_target(const std::string& path);
// The same, read afresh every time (the fuzz target reads one path over and over).
std::shared_ptr<const Target> read_target(const std::string& path);

// Resolves a target name ("trn2") to <name>.yaml: first in $TANDEM_MODELS_DIR, then in the
// running binary's share directory (bin/../share/tandem/models). Cached per path.
std::shared_ptr<const Target> find_target(const std::string& name, SourceLoc where = {});

// The one rule for a model given by the user (--hw, a sweep's `model`, Python's `hw=`): a
// value with no path separator that does not end in .yaml or .yml is a model name, found as
// find_target finds it; anything else is a model file.
bool is_model_name(const std::string& name_or_file);
std::shared_ptr<const Target> resolve_model(const std::string& name_or_file, SourceLoc where = {});
// The file resolve_model reads (a name's <name>.yaml, or the file as given).
std::string resolve_model_file(const std::string& name_or_file, SourceLoc where = {});

// Where find_target looks for `name`, or "" when not found.
std::string model_path_for(const std::string& name);
// The directories find_target searches, in order.
std::vector<std::string> model_dirs();

size_t dtype_bytes(const std::string& dtype);  // 0 for an unknown dtype

// `tandem models show`: the model's file and hash, its engines and DMA queues, and a table of
// the opcodes it offers (class, engines, tags, cost per engine).
std::string describe_model(const Target& t);
// Every value the file sets: path, value, unit and the file's comment on its line (its source).
std::string describe_parameters(const Target& t);
// `tandem models diff`: the values that differ between two models, or that one sets alone.
std::string diff_models(const Target& a, const Target& b);

}  // namespace tandem
