#include "sched/target/target.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "sched/support/yaml_file.h"

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

const OpcodeInfo* Target::opcode(const std::string& n) const {
  auto it = opcodes.find(n);
  return it == opcodes.end() ? nullptr : &it->second;
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

size_t dtype_bytes(const std::string& t) {
  static const std::map<std::string, size_t> sizes = {
      {"f8", 1}, {"fp8", 1}, {"i8", 1}, {"u8", 1},
      {"bf16", 2}, {"f16", 2}, {"fp16", 2}, {"i16", 2}, {"u16", 2},
      {"f32", 4}, {"fp32", 4}, {"tf32", 4}, {"i32", 4}, {"u32", 4}, {"b32", 4},
      {"f64", 8}, {"i64", 8}, {"u64", 8}};
  auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

namespace {

// A YAML scalar holding a plain non-negative integer ("56"), else nothing.
std::optional<int64_t> plain_integer(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::nullopt;
  const std::string text = n.Scalar();
  if (text.empty() || text.size() > 12 || !std::all_of(text.begin(), text.end(), ::isdigit)) return std::nullopt;
  return std::stoll(text);
}

class ModelReader {
 public:
  explicit ModelReader(const std::string& path) : y_(path) {}

  Target read() {
    const YAML::Node& root = y_.root();
    Target t;
    t.file = y_.path();
    t.name = str(required(root, "name", "the model"), "name");
    YAML::Node spaces = required(root, "spaces", "the model");
    if (!spaces.IsMap()) fail(spaces, "'spaces' must be a mapping of space name to fields");
    for (const auto& kv : spaces) {
      SpaceInfo s;
      s.name = kv.first.as<std::string>();
      const YAML::Node& f = kv.second;
      const std::string where = "spaces." + s.name;
      if (f.IsMap()) {
        if (f["partitions"]) s.partitions = non_negative_int(f["partitions"], where + ".partitions");
        if (f["bytes_per_partition"])
          s.bytes_per_partition = non_negative_int(f["bytes_per_partition"], where + ".bytes_per_partition");
        if (f["banks"]) s.banks = non_negative_int(f["banks"], where + ".banks");
        if (f["register_prefix"]) {
          s.register_prefix = str(f["register_prefix"], where + ".register_prefix");
          s.registers = non_negative_int(required(f, "registers", where), where + ".registers");
          s.register_bytes = non_negative_int(required(f, "register_bytes", where), where + ".register_bytes");
        }
      } else if (!f.IsNull()) {
        fail(f, where + " must be a mapping");
      }
      t.spaces[s.name] = s;
    }

    YAML::Node engines = required(root, "engines", "the model");
    if (!engines.IsMap()) fail(engines, "'engines' must be a mapping of engine name to fields");
    for (const auto& kv : engines) {
      EngineInfo e;
      e.name = kv.first.as<std::string>();
      if (kv.second.IsMap() && kv.second["kind"]) e.kind = str(kv.second["kind"], "engines." + e.name + ".kind");
      if (kv.second.IsMap() && kv.second["costs"] && kv.second["costs"].IsMap())
        for (const auto& cost : kv.second["costs"]) {
          if (!cost.second.IsMap()) continue;  // the simulator reports malformed costs
          const std::string op = cost.first.as<std::string>();
          if (auto n = plain_integer(cost.second["cycles"])) e.constant_cycles[op] = *n;
          if (auto n = plain_integer(cost.second["latency"])) e.constant_latency[op] = *n;
        }
      t.engines[e.name] = e;
    }

    if (YAML::Node dma = root["dma"]) {
      int64_t queues = non_negative_int(required(dma, "queues", "dma"), "dma.queues");
      if (queues == 0) fail(dma["queues"], "dma.queues must be at least 1");
      for (int64_t q = 0; q < queues; ++q) t.dma_queues.push_back("q" + std::to_string(q));
    }

    YAML::Node opcodes = required(root, "opcodes", "the model");
    if (!opcodes.IsMap()) fail(opcodes, "'opcodes' must be a mapping of opcode name to fields");
    for (const auto& kv : opcodes) {
      OpcodeInfo op;
      op.name = kv.first.as<std::string>();
      op.loc = loc(kv.first);
      const std::string where = "opcodes." + op.name;
      y_.only_keys(kv.second, {"class", "engines"}, where);
      YAML::Node cls = required(kv.second, "class", where);
      auto c = parse_op_class(str(cls, where + ".class"));
      if (!c)
        fail(cls, "unknown opcode class '" + cls.as<std::string>() +
                      "' (use load, indirect_load, store, memset, compute, collective, barrier, branch)");
      op.op_class = *c;
      if (YAML::Node en = kv.second["engines"]) {
        if (!en.IsSequence()) fail(en, where + ".engines must be a list");
        for (const auto& e : en) {
          std::string name = str(e, where + ".engines[]");
          if (name == "dma") {
            if (t.dma_queues.empty()) fail(e, where + " runs on dma but the model has no 'dma' section");
          } else if (!t.engines.count(name)) {
            fail(e, "unknown engine '" + name + "' in " + where + ".engines");
          }
          op.engines.push_back(name);
        }
      }
      t.opcodes[op.name] = op;
    }
    return t;
  }

 private:
  SourceLoc loc(const YAML::Node& n) const { return y_.loc(n); }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const { y_.fail(n, msg); }
  YAML::Node required(const YAML::Node& p, const std::string& k, const std::string& w) const { return y_.required(p, k, w); }
  int64_t non_negative_int(const YAML::Node& n, const std::string& w) const { return y_.non_negative_int(n, w); }
  std::string str(const YAML::Node& n, const std::string& w) const { return y_.str(n, w); }

  YamlFile y_;
};

}  // namespace

std::shared_ptr<const Target> load_target(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Target>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto t = std::make_shared<const Target>(ModelReader(path).read());
  cache[path] = t;
  return t;
}

std::string model_path_for(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TANDEM_MODELS_DIR")) dirs.push_back(env);
  dirs.push_back(TANDEM_MODELS_DIR);
  for (const auto& d : dirs) {
    std::string p = d + "/" + name + ".yaml";
    if (std::ifstream(p).good()) return p;
  }
  return "";
}

std::shared_ptr<const Target> find_target(const std::string& name, SourceLoc where) {
  bool plain = !name.empty() && name.find_first_of("/\\.") == std::string::npos;
  std::string path = plain ? model_path_for(name) : "";
  if (path.empty()) throw Error(where, "unknown target '" + name + "' (no models/" + name + ".yaml)");
  return load_target(path);
}

}  // namespace tandem
