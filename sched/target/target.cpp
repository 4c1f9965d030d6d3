#include "sched/target/target.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "sched/support/error.h"
#include "sched/support/provenance.h"

namespace tandem {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::Load:
      return "load";
    case OpClass::IndirectLoad:
      return "indirect_load";
    case OpClass::Store:
      return "store";
    case OpClass::Memset:
      return "memset";
    case OpClass::Compute:
      return "compute";
    case OpClass::Collective:
      return "collective";
    case OpClass::Barrier:
      return "barrier";
    case OpClass::Branch:
      return "branch";
  }
  return "?";
}

std::optional<OpClass> parse_op_class(const std::string& name) {
  for (OpClass c : {OpClass::Load, OpClass::IndirectLoad, OpClass::Store, OpClass::Memset, OpClass::Compute,
                    OpClass::Collective, OpClass::Barrier, OpClass::Branch})
    if (name == op_class_name(c)) return c;
  return std::nullopt;
}

bool is_dma_class(OpClass c) { return c == OpClass::Load || c == OpClass::IndirectLoad || c == OpClass::Store; }

const char* op_tag_name(OpTag t) {
  switch (t) {
    case OpTag::Wmma:
      return "wmma";
    case OpTag::LdsLoad:
      return "lds_load";
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
    case SpaceRole::None:
      return "none";
    case SpaceRole::Dram:
      return "dram";
    case SpaceRole::OnChip:
      return "onchip";
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
  static const std::vector<std::string> vars = {
      "N",          "P",      "N_stationary", "N_moving",           "is_fp32",   "bytes",
      "elem_bytes", "MIN_II", "ranks",        "accumulator_inputs", "all_16bit", "double_row"};
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
  // A scan of a short table (a length test rejects most rows): asked per tensor per query.
  static constexpr std::pair<std::string_view, size_t> kSizes[] = {
      {"f8", 1},  {"fp8", 1},  {"i8", 1},   {"u8", 1},  {"bf16", 2}, {"f16", 2}, {"fp16", 2}, {"i16", 2}, {"u16", 2},
      {"f32", 4}, {"fp32", 4}, {"tf32", 4}, {"i32", 4}, {"u32", 4},  {"b32", 4}, {"f64", 8},  {"i64", 8}, {"u64", 8}};
  for (const auto& [name, bytes] : kSizes)
    if (name == t) return bytes;
  return 0;
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

bool is_model_name(const std::string& name_or_file) {
  const auto ends_with = [&](const std::string& suffix) {
    return name_or_file.size() >= suffix.size() &&
           name_or_file.compare(name_or_file.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return !name_or_file.empty() && name_or_file.find_first_of("/\\") == std::string::npos && !ends_with(".yaml") &&
         !ends_with(".yml");
}

std::string resolve_model_file(const std::string& name_or_file, SourceLoc where) {
  if (!is_model_name(name_or_file)) return name_or_file;
  std::string path = model_path_for(name_or_file);
  if (path.empty()) {
    std::string looked;
    for (const std::string& d : model_dirs()) looked += (looked.empty() ? "" : ", ") + d;
    throw Error(where, "unknown model '" + printable(name_or_file) + "': no " + printable(name_or_file) + ".yaml in " +
                           (looked.empty() ? std::string("any model directory") : looked) +
                           " (set TANDEM_MODELS_DIR or pass --hw FILE)");
  }
  return path;
}

std::shared_ptr<const Target> find_target(const std::string& name, SourceLoc where) {
  if (!is_model_name(name))
    throw Error(
        where, "unknown target '" + printable(name) + "': a target is a model name (trn2), not a file; pass --hw FILE");
  return load_target(resolve_model_file(name, where));
}

std::shared_ptr<const Target> resolve_model(const std::string& name_or_file, SourceLoc where) {
  return load_target(resolve_model_file(name_or_file, where));
}

namespace {

// The column of a line's comment ('#' at its start or after a space, outside quotes), or npos.
size_t comment_column(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return i;
    }
  }
  return std::string::npos;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t#"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos || b < a ? "" : s.substr(a, b - a + 1);
}

// Each line's comment (1-based), where a value's source is cited: the text after its '#',
// joined with the comment-only lines right below that continue it (their '#' further right
// than the line's first character); for an indented line without one, the comment-only
// lines right above it at its indentation.
std::vector<std::string> line_comments(const std::string& file) {
  std::vector<std::string> lines{""};
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto comment_only = [&](size_t j) {
    const size_t at = comment_column(lines[j]);
    return at != std::string::npos && at == lines[j].find_first_not_of(' ') ? at : std::string::npos;
  };
  std::vector<std::string> comments(lines.size());
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t indent = lines[i].find_first_not_of(' ');
    if (indent == std::string::npos || comment_only(i) != std::string::npos) continue;
    const size_t at = comment_column(lines[i]);
    std::string text;
    if (at != std::string::npos) {
      text = trimmed(lines[i].substr(at));
      for (size_t j = i + 1; j < lines.size() && comment_only(j) != std::string::npos && comment_only(j) > indent; ++j)
        text += " " + trimmed(lines[j].substr(comment_only(j)));
    } else if (indent > 0) {  // (the file's own header is not a value's source)
      size_t first = i;
      while (first > 1 && comment_only(first - 1) == indent) --first;
      for (size_t j = first; j < i; ++j) text += (text.empty() ? "" : " ") + trimmed(lines[j].substr(indent));
    }
    comments[i] = text;
  }
  return comments;
}

// `text` padded to `width` and a two-space gap (a longer text keeps the gap).
std::string column(const std::string& text, size_t width) {
  return text + std::string(std::max(width, text.size()) - text.size() + 2, ' ');
}

}  // namespace

std::string describe_parameters(const Target& t) {
  const std::vector<std::string> comments = line_comments(t.file);
  size_t width = 0, value_width = 0;
  for (const ModelParameter& p : t.parameters) {
    width = std::max(width, p.path.size());
    value_width = std::min<size_t>(std::max(value_width, p.value.size()), 24);
  }
  std::ostringstream o;
  o << column("parameter", width) << column("value", value_width) << column("unit", 10)
    << "source (the file's comment)\n";
  for (const ModelParameter& p : t.parameters) {
    if (p.path.rfind("opcodes.", 0) == 0) continue;  // the opcode table below
    const size_t line = static_cast<size_t>(p.line);
    const std::string comment = line < comments.size() ? comments[line] : "";
    o << column(p.path, width) << column(p.value, value_width) << column(p.unit.empty() ? "-" : p.unit, 10)
      << (comment.empty() ? "-" : comment) << "\n";
  }
  return o.str();
}

std::string diff_models(const Target& a, const Target& b) {
  std::map<std::string, std::pair<const ModelParameter*, const ModelParameter*>> by_path;
  std::vector<std::string> order;
  for (const ModelParameter& p : a.parameters) {
    if (!by_path.count(p.path)) order.push_back(p.path);
    by_path[p.path].first = &p;
  }
  for (const ModelParameter& p : b.parameters) {
    if (!by_path.count(p.path)) order.push_back(p.path);
    by_path[p.path].second = &p;
  }
  std::vector<std::array<std::string, 4>> rows;
  for (const std::string& path : order) {
    const auto [pa, pb] = by_path.at(path);
    if (pa && pb && pa->value == pb->value) continue;
    rows.push_back({path, pa ? pa->value : "(unset)", pb ? pb->value : "(unset)", (pa ? pa : pb)->unit});
  }
  std::ostringstream o;
  o << "A: " << a.name << ": " << a.file << " (" << a.file_hash << ")\n";
  o << "B: " << b.name << ": " << b.file << " (" << b.file_hash << ")\n";
  if (rows.empty()) return o.str() + "no parameter differs\n";
  std::array<size_t, 3> width{};
  for (const auto& r : rows)
    for (size_t i = 0; i < 3; ++i) width[i] = std::min<size_t>(std::max(width[i], r[i].size()), 32);
  o << "\n" << column("parameter", width[0]) << column("A", width[1]) << column("B", width[2]) << "unit\n";
  for (const auto& r : rows)
    o << column(r[0], width[0]) << column(r[1], width[1]) << column(r[2], width[2]) << (r[3].empty() ? "-" : r[3])
      << "\n";
  o << "\n" << rows.size() << (rows.size() == 1 ? " parameter differs" : " parameters differ") << "\n";
  return o.str();
}

std::string describe_model(const Target& t) {
  std::ostringstream o;
  o << "model " << t.name << ": " << t.file << " (" << t.file_hash << ")\n";
  o << "engines:";
  for (const auto& [name, e] : t.engines) o << " " << name << (e.kind.empty() ? "" : " (" + e.kind + ")");
  o << "\nDMA: " << t.dma_queues.size() << " queues on " << t.dma.engines << " engines\n\n";
  o << describe_parameters(t) << "\n";
  size_t width = 6, class_width = 5;
  for (const auto& [name, op] : t.opcodes) {
    width = std::max(width, name.size());
    class_width = std::max(class_width, std::string(op_class_name(op.op_class)).size());
  }
  o << std::left << std::setw(static_cast<int>(width) + 2) << "opcode" << std::setw(static_cast<int>(class_width) + 2)
    << "class"
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
