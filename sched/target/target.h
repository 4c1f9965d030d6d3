// What a hardware target offers the IR: memory spaces, engines, DMA queues and the opcode
// table with each opcode's class. Read from the target's model file in models/, so adding an
// opcode is a data change. (The simulator reads the timing half of the same file.)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/support/error.h"

namespace tandem {

// The classes the passes reason about (seed 000: Load/DMACopy are the load class).
enum class OpClass { Load, IndirectLoad, Store, Memset, Compute, Collective, Barrier, Branch };

const char* op_class_name(OpClass c);
std::optional<OpClass> parse_op_class(const std::string& name);

// True for the classes that move data through DMA queues.
bool is_dma_class(OpClass c);

struct OpcodeInfo {
  std::string name;
  OpClass op_class = OpClass::Compute;
  std::vector<std::string> engines;  // engines that may run it; {"dma"} means any DMA queue
  SourceLoc loc;
};

struct SpaceInfo {
  std::string name;
  int64_t partitions = 0;           // SBUF/PSUM: size of the partition dimension; 0 = none
  int64_t bytes_per_partition = 0;  // capacity per partition (0 = unbounded, e.g. DRAM)
  int64_t banks = 0;                // PSUM accumulation banks
  int64_t registers = 0;            // register files: number of registers
  int64_t register_bytes = 0;
  std::string register_prefix;      // "v" makes `v[20:23]` a group of this file
  bool is_register_file() const { return !register_prefix.empty(); }
};

struct EngineInfo {
  std::string name;
  std::string kind;
  // Costs whose formula is a plain number of cycles (`{cycles: "16", latency: "32"}`), for
  // passes that reason in issue slots (wmma-reorder's default distance). The simulator
  // evaluates every formula itself.
  std::map<std::string, int64_t> constant_cycles;
  std::map<std::string, int64_t> constant_latency;
};

struct Target {
  std::string name;
  std::string file;  // the model file it was read from
  std::map<std::string, SpaceInfo> spaces;
  std::map<std::string, EngineInfo> engines;   // compute engines, in name order
  std::vector<std::string> dma_queues;         // "q0".."qN-1"
  std::map<std::string, OpcodeInfo> opcodes;

  const OpcodeInfo* opcode(const std::string& name) const;
  const SpaceInfo* space(const std::string& name) const;
  const SpaceInfo* register_file(const std::string& prefix) const;
  bool is_dma_queue(const std::string& name) const;
  // The first opcode of a class in name order (core_barrier, memset), or nullptr.
  const OpcodeInfo* first_of_class(OpClass c) const;
  // May `engine` (an engine or a DMA queue name) run `op`?
  bool can_run(const OpcodeInfo& op, const std::string& engine) const;
};

// Reads a model file; a missing or malformed field is an Error naming file:line:col.
std::shared_ptr<const Target> load_target(const std::string& path);

// Resolves a target name ("trn2") to models/<name>.yaml: first in $TANDEM_MODELS_DIR, then
// in the source tree's models/. Cached per path.
std::shared_ptr<const Target> find_target(const std::string& name, SourceLoc where = {});

// Where find_target looks for `name`, or "" when not found.
std::string model_path_for(const std::string& name);

size_t dtype_bytes(const std::string& dtype);  // 0 for an unknown dtype

}  // namespace tandem
