#include "sched/target/target.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "sched/support/error.h"
#include "sched/support/provenance.h"

namespace tandem {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::Load: return "load";
    case OpClass::IndirectLoad: return "indirect_load";
    case OpClass::Store: return "store";
    case OpClass::Memset: return "memset";
    case OpClass::Compute: return "compute";
    case OpClass::Collective: return "collective";
    case OpClass::Barrier: return "barrier";
    case OpClass::Branch: return "branch";
  }
  return "?";
}

std::optional<OpClass> parse_op_class(const std::string& name) {
  for (OpClass c : {OpClass::Load, OpClass::IndirectLoad, OpClass::Store, OpClass::Memset,
                    OpClass::Compute, OpClass::Collective, OpClass::Barrier, OpClass::Branch})
    if (name == op_class_name(c)) return c;
  return std::nullopt;
}

bool is_dma_class(OpClass c) {
  return c == OpClass::Load || c == OpClass::IndirectLoad || c == OpClass::Store;
}

const char* op_tag_name(OpTag t) {
  switch (t) {
    case OpTag::Wmma: return "wmma";
    case OpTag::LdsLoad: return "lds_load";
  }
  return "?";
}

std::optional<OpTag> parse_op_tag(const std::string& name) {
  for (OpTag t : {OpTag::Wmma, OpTag::LdsLoad})
    if (name == op_tag_name(t)) return t;
  return std::nullopt;
}

const char* space_role_name(SpaceRole r) {
  switch (r) {
    case SpaceRole::None: return "none";
    case SpaceRole::Dram: return "dram";
    case SpaceRole::OnChip: return "onchip";
  }
  return "?";
}

std::optional<SpaceRole> parse_space_role(const std::string& name) {
  for (SpaceRole r : {SpaceRole::Dram, SpaceRole::OnChip})
    if (name == space_role_name(r)) return r;
  return std::nullopt;
}

const OpcodeInfo* Target::opcode(const std::string& n) const {
  const auto& entries = opcode_index_.entries;
  if (entries.size() == opcodes.size()) {
    const int i = opcode_index_.positions.find(n, opcode_index_.name_of());
    return i < 0 ? nullptr : &entries[static_cast<size_t>(i)]->second;
  }
  auto it = opcodes.find(n);
  return it == opcodes.end() ? nullptr : &it->second;
}

void Target::index_opcodes() {
  OpcodeIndex& index = opcode_index_;
  index.entries.clear();
  index.positions.clear();
  index.positions.reserve(opcodes.size());
  for (const auto& entry : opcodes) {
    index.positions.insert(entry.first, static_cast<int>(index.entries.size()), index.name_of());
    index.entries.push_back(&entry);
  }
}

const SpaceInfo* Target::space(const std::string& n) const {
  auto it = spaces.find(n);
  return it == spaces.end() ? nullptr : &it->second;
}

const SpaceInfo* Target::register_file(const std::string& prefix) const {
  for (const auto& [n, s] : spaces)
    if (s.register_prefix == prefix) return &s;
  return nullptr;
}

bool Target::is_dma_queue(const std::string& n) const {
  return std::find(dma_queues.begin(), dma_queues.end(), n) != dma_queues.end();
}

const OpcodeInfo* Target::first_of_class(OpClass c) const {
  for (const auto& [n, op] : opcodes)
    if (op.op_class == c) return &op;
  return nullptr;
}

bool Target::can_run(const OpcodeInfo& op, const std::string& engine) const {
  for (const auto& e : op.engines) {
    if (e == engine) return true;
    if (e == "dma" && is_dma_queue(engine)) return true;
  }
  return false;
}

bool Target::has_tag(const std::string& op, OpTag t) const {
  const OpcodeInfo* info = opcode(op);
  return info && info->has(t);
}

SpaceRole Target::role_of(const std::string& n) const {
  const SpaceInfo* s = space(n);
  return s ? s->role : SpaceRole::None;
}

const EngineInfo* Target::engine(const std::string& n) const {
  auto it = engines.find(n);
  return it == engines.end() ? nullptr : &it->second;
}

void Target::require_timing() const {
  if (!missing_timing.empty()) throw missing_timing.front();
}

int64_t SpaceInfo::footprint(int64_t bytes_per_buffer, int64_t buffers) const {
  const int64_t bank = bank_bytes();
  return bank > 0 ? buffers * ((bytes_per_buffer + bank - 1) / bank) : buffers * bytes_per_buffer;
}

namespace {
std::optional<double> constant_of(const std::map<std::string, OpCost>& costs, const std::string& op, bool latency) {
  auto it = costs.find(op);
  if (it == costs.end()) return std::nullopt;
  const CostFormula& f = latency && it->second.latency ? *it->second.latency : it->second.cycles;
  return f.constant();
}
}  // namespace

std::optional<double> EngineInfo::constant_cycles(const std::string& op) const { return constant_of(costs, op, false); }
std::optional<double> EngineInfo::constant_latency(const std::string& op) const { return constant_of(costs, op, true); }

const std::vector<std::string>& cost_variables() {
  static const std::vector<std::string> vars = {"N",     "P",          "N_stationary", "N_moving", "is_fp32",
                                                "bytes", "elem_bytes", "MIN_II",       "ranks",    "accumulator_inputs",
                                                "all_16bit"};
  return vars;
}

double DmaModel::efficiency_at(double bpp) const {
  if (efficiency.empty()) return 1.0;
  if (bpp <= efficiency.front().first) return efficiency.front().second;
  for (size_t i = 1; i < efficiency.size(); ++i) {
    const auto& [x1, y1] = efficiency[i];
    if (bpp <= x1) {
      const auto& [x0, y0] = efficiency[i - 1];
      return y0 + (y1 - y0) * (bpp - x0) / (x1 - x0);
    }
  }
  return efficiency.back().second;
}

size_t dtype_bytes(const std::string& t) {
  static const std::map<std::string, size_t> sizes = {
      {"f8", 1}, {"fp8", 1}, {"i8", 1}, {"u8", 1},
      {"bf16", 2}, {"f16", 2}, {"fp16", 2}, {"i16", 2}, {"u16", 2},
      {"f32", 4}, {"fp32", 4}, {"tf32", 4}, {"i32", 4}, {"u32", 4}, {"b32", 4},
      {"f64", 8}, {"i64", 8}, {"u64", 8}};
  auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

std::vector<std::string> model_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TANDEM_MODELS_DIR"); env && *env) dirs.push_back(env);
  // The binary's share directory: bin/../share/tandem/models, installed or in the build tree
  // (a link to the checkout's models/ there).
  const std::string bin = executable_dir();
  if (!bin.empty()) dirs.push_back(std::filesystem::path(bin + "/../share/tandem/models").lexically_normal().string());
  return dirs;
}

std::string model_path_for(const std::string& name) {
  const std::vector<std::string> dirs = model_dirs();
  for (const auto& d : dirs) {
    std::string p = d + "/" + name + ".yaml";
    if (std::ifstream(p).good()) return p;
  }
  return "";
}

std::shared_ptr<const Target> find_target(const std::string& name, SourceLoc where) {
  bool plain = !name.empty() && name.find_first_of("/\\.") == std::string::npos;
  std::string path = plain ? model_path_for(name) : "";
  if (path.empty()) {
    std::string looked;
    for (const std::string& d : model_dirs()) looked += (looked.empty() ? "" : ", ") + d;
    throw Error(where, "unknown target '" + name + "': no " + name + ".yaml in " +
                           (looked.empty() ? std::string("any model directory") : looked) +
                           " (set TANDEM_MODELS_DIR or pass --hw FILE)");
  }
  return load_target(path);
}

std::string describe_model(const Target& t) {
  std::ostringstream o;
  o << "model " << t.name << ": " << t.file << " (" << t.file_hash << ")\n";
  o << "engines:";
  for (const auto& [name, e] : t.engines) o << " " << name << (e.kind.empty() ? "" : " (" + e.kind + ")");
  o << "\nDMA: " << t.dma_queues.size() << " queues on " << t.dma.engines << " engines\n\n";
  size_t width = 6, class_width = 5;
  for (const auto& [name, op] : t.opcodes) {
    width = std::max(width, name.size());
    class_width = std::max(class_width, std::string(op_class_name(op.op_class)).size());
  }
  o << std::left << std::setw(static_cast<int>(width) + 2) << "opcode" << std::setw(static_cast<int>(class_width) + 2) << "class"
    << "engines and cycles (tags)\n";
  for (const auto& [name, op] : t.opcodes) {
    o << std::setw(static_cast<int>(width) + 2) << name << std::setw(static_cast<int>(class_width) + 2)
      << op_class_name(op.op_class);
    for (size_t i = 0; i < op.engines.size(); ++i) {
      const std::string& e = op.engines[i];
      o << (i ? ", " : "") << e;
      const EngineInfo* engine = t.engine(e);
      if (engine && engine->costs.count(name)) o << " [" << engine->costs.at(name).cycles.text() << "]";
    }
    if (!op.tags.empty()) {
      o << " (";
      bool first = true;
      for (OpTag tag : op.tags) {
        o << (first ? "" : ", ") << op_tag_name(tag);
        first = false;
      }
      o << ")";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace tandem
