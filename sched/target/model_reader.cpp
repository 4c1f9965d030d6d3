// The one reader of model files (docs/models.md), used by every command. One pass over the
// YAML document, driven by one table of keys per section (as Ramulator declares each
// parameter once): a key's name, whether the file must have it, and the function that reads
// and checks its value. The table is also the "known:" list of the unknown-key error, so a
// key the reader does not use cannot slip through. Keys marked Need::Timing are needed by
// the simulator only: a file without them is a complete target for `tandem opt`, and the
// reader records what is missing (Target::missing_timing) for `tandem sim` to report.
#include <climits>
#include <cstdio>
#include <functional>
#include <mutex>

#include "sched/support/provenance.h"
#include "sched/support/yaml_file.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

enum class Need {
  Optional,  // may be absent (the table's default applies)
  Always,    // every command needs it
  Timing,    // the simulator needs it; `tandem opt` does without
};

class ModelReader;

// What the simulator can time. Every model number has a range, checked by the reader: a time
// is whole picoseconds in 64 bits, and a rate so high that a byte takes under a millionth of
// a picosecond stalls the DMA's completion arithmetic (a bandwidth of 1e16 bytes/ns never
// finishes; 1e15 ns of fixed cost overflows the clock). The ranges leave the real machines
// (0.1 to 100 GB/s per engine, 1 to 3 GHz, microseconds of fixed cost) orders of magnitude of room.
struct Range {
  double min, max;
};
constexpr Range kClockGhz{1e-3, 1e3};    // 1 MHz to 1 THz: a cycle is 1 to 10^6 ps
constexpr Range kBytesPerNs{1e-3, 1e5};  // a byte moves in 10 fs to 1 ms
constexpr Range kBytesPerCycle{1e-3, 1e5};
constexpr Range kNanoseconds{0, 1e6};  // up to 1 ms per transfer
constexpr Range kCycles{0, 1e6};
constexpr Range kFraction{1e-3, 1};  // an efficiency
constexpr Range kBytesPerPartition{0, 1e12};
constexpr int64_t kMaxCount = int64_t{1} << 16;  // partitions, banks, semaphores, queues, lanes
constexpr int64_t kMaxBytes = int64_t{1} << 40;  // bytes per partition

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

template <class T>
struct Key {
  const char* name;
  Need need;
  // Reads the value into `into` and checks it; `what` names it in messages ("dma.engines").
  std::function<void(ModelReader&, const YAML::Node& value, T& into, const std::string& what)> read;
  const char* unit = "";  // of a number, as `tandem models show` prints it
};

template <class T>
using Table = std::vector<Key<T>>;

class ModelReader {
 public:
  explicit ModelReader(const std::string& path) : y_(path) {}

  Target read();

  // ---- value checks shared by the tables ----

  std::string text(const YAML::Node& n, const std::string& what) const { return y_.str(n, what); }

  // An integer in [min, max].
  int64_t count(const YAML::Node& n, const std::string& what, int64_t min = 0, int64_t max = INT64_MAX) const {
    const int64_t v = y_.non_negative_int(n, what);
    if (max != INT64_MAX && (v < min || v > max))
      fail(n, what + " must be between " + std::to_string(min) + " and " + std::to_string(max));
    if (v < min) fail(n, what + " must be at least " + std::to_string(min));
    return v;
  }

  // A number in [min, max]; min > 0 also refuses 0 as "must be positive".
  double number(const YAML::Node& n, const std::string& what, Range range) const {
    const double v = range.min > 0 ? y_.positive_number(n, what) : y_.non_negative_number(n, what);
    if (v < range.min || v > range.max)
      fail(n, what + " must be between " + fmt_number(range.min) + " and " + fmt_number(range.max) + " (got " +
                  n.as<std::string>() + ")");
    return v;
  }

  // A list of engine names; `dma` stands for the DMA queues.
  std::set<std::string> engine_set(const YAML::Node& n, const std::string& what) const {
    std::set<std::string> out;
    if (!n.IsSequence()) fail(n, what + " must be a list of engines");
    for (const auto& e : n) {
      std::string name = y_.str(e, what + "[]");
      if (name != "dma" && !engine_names_.count(name)) fail(e, "unknown engine '" + printable(name) + "' in " + what);
      out.insert(name);
    }
    return out;
  }

  CostFormula formula(const YAML::Node& n, const std::string& what) const {
    std::string text = y_.str(n, what);
    SourceLoc at = y_.loc(n);
    // A quoted scalar starts one column after its mark.
    if (n.Tag() == "!" && at.col > 0) at.col += 1;
    return CostFormula::parse(text, cost_variables(), at);
  }

  // Reads the mapping `map` by `table`: unknown keys first, then each key in table order.
  // `where` names the section in messages ("dma", "spaces.psum"); `prefix` goes before a
  // key to name its value ("dma.").
  template <class T>
  void section(const YAML::Node& map, const Table<T>& table, T& into, const std::string& where,
               const std::string& prefix) {
    if (!map.IsNull()) {  // an empty entry (`dram:`) is an empty mapping
      std::vector<std::string> known;
      for (const Key<T>& k : table) known.push_back(k.name);
      y_.only_keys(map, known, where);
    }
    for (const Key<T>& k : table) {
      const YAML::Node v = map.IsMap() ? map[k.name] : YAML::Node(YAML::NodeType::Undefined);
      if (!v) {
        const std::string msg = "missing field '" + std::string(k.name) + "' in " + where;
        if (k.need == Need::Always) fail(map, msg);
        if (k.need == Need::Timing) missing_timing_.emplace_back(y_.loc(map), msg);
        continue;
      }
      k.read(*this, v, into, prefix + k.name);
      record(v, prefix + k.name, k.unit);
    }
  }

  // Records a value the file sets (a scalar or a list of scalars) for `tandem models show`
  // and `diff`.
  void record(const YAML::Node& v, const std::string& path, const std::string& unit) {
    std::string text;
    if (v.IsScalar()) {
      text = v.Scalar();
    } else if (v.IsSequence() && v.size() > 0 &&
               std::all_of(v.begin(), v.end(), [](const YAML::Node& e) { return e.IsScalar(); })) {
      for (const YAML::Node& e : v) text += (text.empty() ? "" : ", ") + e.Scalar();
      text = "[" + text + "]";
    } else {
      return;
    }
    parameters_.push_back({path, text, unit, y_.loc(v).line});
  }

  // A mapping of name -> entry, each entry read by `table` into a fresh T named by its key.
  template <class T>
  std::map<std::string, T> named(const YAML::Node& n, const Table<T>& table, const std::string& what,
                                 const std::string& of) {
    if (!n.IsMap()) fail(n, "'" + what + "' must be a mapping of " + of + " name to fields");
    std::map<std::string, T> out;
    for (const auto& kv : n) {
      T entry;
      entry.name = kv.first.as<std::string>();
      set_loc(entry, kv.first);
      section(kv.second, table, entry, what + "." + entry.name, what + "." + entry.name + ".");
      out.emplace(entry.name, std::move(entry));
    }
    return out;
  }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const { y_.fail(n, msg); }
  SourceLoc loc(const YAML::Node& n) const { return y_.loc(n); }
  std::vector<ModelParameter> take_parameters() {
    std::stable_sort(parameters_.begin(), parameters_.end(),
                     [](const ModelParameter& a, const ModelParameter& b) { return a.line < b.line; });
    return std::move(parameters_);
  }

  std::set<std::string> engine_names_, space_names_, opcode_names_;
  bool has_dma_ = false;

 private:
  template <class T>
  void set_loc(T&, const YAML::Node&) {}
  void set_loc(OpcodeInfo& op, const YAML::Node& key) { op.loc = y_.loc(key); }

  std::vector<Error> missing_timing_;
  std::vector<ModelParameter> parameters_;
  YamlFile y_;
};

using R = ModelReader;
using Node = YAML::Node;

// ---- field readers: one per value type, each with its check ----

template <class T>
auto text_field(std::string T::*f) {
  return [f](R& r, const Node& n, T& into, const std::string& what) { into.*f = r.text(n, what); };
}
template <class T>
auto count_field(int64_t T::*f, int64_t min = 0, int64_t max = kMaxCount) {
  return [=](R& r, const Node& n, T& into, const std::string& what) { into.*f = r.count(n, what, min, max); };
}
template <class T>
auto number_field(double T::*f, Range range) {
  return [=](R& r, const Node& n, T& into, const std::string& what) { into.*f = r.number(n, what, range); };
}
template <class T>
auto engines_field(std::set<std::string> T::*f) {
  return [f](R& r, const Node& n, T& into, const std::string& what) { into.*f = r.engine_set(n, what); };
}

// ---- the tables, one per section of docs/models.md ----

const Table<OpCost>& cost_table() {  // engines.<e>.costs.<op> written as {cycles, latency}
  static const Table<OpCost> t = {
      {"cycles", Need::Always, [](R& r, const Node& n, OpCost& c, const std::string& w) { c.cycles = r.formula(n, w); },
       "cycles"},
      {"latency", Need::Optional,
       [](R& r, const Node& n, OpCost& c, const std::string& w) { c.latency = r.formula(n, w); }, "cycles"},
  };
  return t;
}

void read_costs(R& r, const Node& n, EngineInfo& e, const std::string& what) {
  if (!n.IsMap()) r.fail(n, what + " must be a mapping of opcode to cost formula");
  for (const auto& c : n) {
    const std::string op = c.first.as<std::string>();
    const std::string cwhat = what + "." + op;
    if (!r.opcode_names_.count(op)) r.fail(c.first, "unknown opcode '" + printable(op) + "' in " + what);
    OpCost cost{CostFormula{}, std::nullopt};
    if (c.second.IsScalar()) {  // `op: "FORMULA"`
      cost.cycles = r.formula(c.second, cwhat);
      r.record(c.second, cwhat, "cycles");
    } else
      r.section(c.second, cost_table(), cost, cwhat, cwhat + ".");
    e.costs.emplace(op, std::move(cost));
  }
}

const Table<EngineInfo>& engine_table() {
  static const Table<EngineInfo> t = {
      {"kind", Need::Optional, text_field(&EngineInfo::kind)},
      {"clock_ghz", Need::Timing, number_field(&EngineInfo::clock_ghz, kClockGhz), "GHz"},
      {"min_ii_cycles", Need::Optional, number_field(&EngineInfo::min_ii_cycles, kCycles), "cycles"},
      {"lanes", Need::Optional, count_field(&EngineInfo::lanes, 1), "lanes"},
      {"costs", Need::Optional, read_costs},
  };
  return t;
}

const Table<SpaceInfo>& space_table() {
  static const Table<SpaceInfo> t = {
      {"role", Need::Optional,
       [](R& r, const Node& n, SpaceInfo& s, const std::string& w) {
         auto role = parse_space_role(r.text(n, w));
         if (!role) r.fail(n, "unknown role '" + printable(n.as<std::string>()) + "' in " + w + " (use dram, onchip)");
         s.role = *role;
       }},
      {"partitions", Need::Optional, count_field(&SpaceInfo::partitions), "partitions"},
      {"bytes_per_partition", Need::Optional, count_field(&SpaceInfo::bytes_per_partition, 0, kMaxBytes), "bytes"},
      {"banks", Need::Optional, count_field(&SpaceInfo::banks), "banks"},
      {"register_prefix", Need::Optional, text_field(&SpaceInfo::register_prefix)},
      {"registers", Need::Optional, count_field(&SpaceInfo::registers), "registers"},
      {"register_bytes", Need::Optional, count_field(&SpaceInfo::register_bytes, 0, kMaxBytes), "bytes"},
      {"readers", Need::Optional, engines_field(&SpaceInfo::readers)},
      {"writers", Need::Optional, engines_field(&SpaceInfo::writers)},
      {"bandwidth_bytes_per_cycle", Need::Optional, number_field(&SpaceInfo::bandwidth_bytes_per_cycle, kBytesPerCycle),
       "bytes/cycle"},
      {"address_offset_max", Need::Optional, count_field(&SpaceInfo::address_offset_max, 0, kMaxBytes), "bytes"},
  };
  return t;
}

// What one key cannot say alone: a register file needs its size, and banks split the
// capacity into equal whole banks.
void check_space(R& r, const Node& n, const SpaceInfo& s) {
  const std::string where = "spaces." + s.name;
  if (s.is_register_file())
    for (const char* k : {"registers", "register_bytes"})
      if (!n[k]) r.fail(n, "missing field '" + std::string(k) + "' in " + where);
  if (s.banks > 0 && (s.bytes_per_partition == 0 || s.bytes_per_partition % s.banks != 0))
    r.fail(n["banks"], where + ".banks must divide " + where + ".bytes_per_partition (" +
                           std::to_string(s.bytes_per_partition) + ") into equal banks");
}

const Table<OpcodeInfo>& opcode_table() {
  static const Table<OpcodeInfo> t = {
      {"class", Need::Always,
       [](R& r, const Node& n, OpcodeInfo& op, const std::string& w) {
         auto c = parse_op_class(r.text(n, w));
         if (!c)
           r.fail(n, "unknown opcode class '" + printable(n.as<std::string>()) +
                         "' (use load, indirect_load, store, memset, compute, collective, barrier, branch)");
         op.op_class = *c;
       }},
      {"engines", Need::Optional,
       [](R& r, const Node& n, OpcodeInfo& op, const std::string& w) {
         if (!n.IsSequence()) r.fail(n, w + " must be a list");
         for (const auto& e : n) {
           std::string name = r.text(e, w + "[]");
           if (name == "dma") {
             if (!r.has_dma_) r.fail(e, "opcodes." + op.name + " runs on dma but the model has no 'dma' section");
           } else if (!r.engine_names_.count(name)) {
             r.fail(e, "unknown engine '" + printable(name) + "' in " + w);
           }
           op.engines.push_back(name);
         }
       }},
      {"tags", Need::Optional,
       [](R& r, const Node& n, OpcodeInfo& op, const std::string& w) {
         if (!n.IsSequence()) r.fail(n, w + " must be a list");
         for (const auto& e : n) {
           auto tag = parse_op_tag(r.text(e, w + "[]"));
           if (!tag)
             r.fail(e, "unknown tag '" + printable(e.as<std::string>()) + "' in " + w + " (use wmma, lds_load)");
           op.tags.insert(*tag);
         }
       }},
  };
  return t;
}

const Table<std::pair<double, double>>& efficiency_point_table() {  // dma.efficiency[]
  static const Table<std::pair<double, double>> t = {
      {"bytes_per_partition", Need::Always,
       [](R& r, const Node& n, std::pair<double, double>& p, const std::string& w) {
         p.first = r.number(n, w, kBytesPerPartition);
       },
       "bytes"},
      {"efficiency", Need::Always,
       [](R& r, const Node& n, std::pair<double, double>& p, const std::string& w) {
         p.second = r.number(n, w, kFraction);
       },
       "fraction"},
  };
  return t;
}

const Table<Target>& dma_table() {
  static const Table<Target> t = {
      {"engines", Need::Timing,
       [](R& r, const Node& n, Target& m, const std::string& w) { m.dma.engines = r.count(n, w, 1, 64); }, "engines"},
      {"queues", Need::Always,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         const int64_t queues = r.count(n, w, 1, kMaxCount);
         for (int64_t q = 0; q < queues; ++q) m.dma_queues.push_back("q" + std::to_string(q));
       },
       "queues"},
      {"partitions_per_engine", Need::Timing,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.dma.partitions_per_engine = r.count(n, w, 1, kMaxCount);
       },
       "partitions"},
      {"bandwidth_bytes_per_ns", Need::Timing,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.dma.bandwidth_bytes_per_ns = r.number(n, w, kBytesPerNs);
       },
       "bytes/ns"},
      {"fixed_cost_ns", Need::Timing,
       [](R& r, const Node& n, Target& m, const std::string& w) { m.dma.fixed_cost_ns = r.number(n, w, kNanoseconds); },
       "ns"},
      {"engine_overhead_ns", Need::Optional,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.dma.engine_overhead_ns = r.number(n, w, kNanoseconds);
       },
       "ns"},
      {"descriptor_overhead_ns", Need::Optional,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.dma.descriptor_overhead_ns = r.number(n, w, kNanoseconds);
       },
       "ns"},
      {"efficiency", Need::Optional,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         if (!n.IsSequence()) r.fail(n, w + " must be a list of {bytes_per_partition, efficiency}");
         for (const auto& point : n) {
           std::pair<double, double> p;
           r.section(point, efficiency_point_table(), p, w + "[]",
                     w + "[" + std::to_string(m.dma.efficiency.size()) + "].");
           if (!m.dma.efficiency.empty() && p.first <= m.dma.efficiency.back().first)
             r.fail(point["bytes_per_partition"], w + " points must have increasing bytes_per_partition");
           m.dma.efficiency.push_back(p);
         }
       }},
  };
  return t;
}

const Table<ConflictRule>& conflict_table() {  // conflicts[]
  static const Table<ConflictRule> t = {
      {"space", Need::Always,
       [](R& r, const Node& n, ConflictRule& c, const std::string& w) {
         c.space = r.text(n, w);
         if (!r.space_names_.count(c.space)) r.fail(n, "unknown space '" + printable(c.space) + "' in conflicts");
       }},
      {"engines", Need::Always,
       [](R& r, const Node& n, ConflictRule& c, const std::string& w) {
         std::set<std::string> engines = r.engine_set(n, w);
         if (engines.count("dma")) r.fail(n, "conflicts are between compute engines; 'dma' is not one");
         c.engines.assign(engines.begin(), engines.end());
       }},
  };
  return t;
}

const Table<Target>& collective_table() {
  static const Table<Target> t = {
      {"link_bandwidth_bytes_per_ns", Need::Always,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.collective.link_bandwidth_bytes_per_ns = r.number(n, w, kBytesPerNs);
       },
       "bytes/ns"},
  };
  return t;
}

const Table<Target>& model_table() {  // the top level
  static const Table<Target> t = {
      {"name", Need::Always, text_field(&Target::name)},
      {"reference_clock_ghz", Need::Timing, number_field(&Target::reference_clock_ghz, kClockGhz), "GHz"},
      {"spaces", Need::Always,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.spaces = r.named(n, space_table(), w, "space");
         for (const auto& kv : n) check_space(r, kv.second, m.spaces.at(kv.first.as<std::string>()));
       }},
      {"engines", Need::Always,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.engines = r.named(n, engine_table(), w, "engine");
       }},
      {"dma", Need::Optional,
       [](R& r, const Node& n, Target& m, const std::string& w) { r.section(n, dma_table(), m, w, w + "."); }},
      {"collective", Need::Optional,
       [](R& r, const Node& n, Target& m, const std::string& w) { r.section(n, collective_table(), m, w, w + "."); }},
      {"conflicts", Need::Optional,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         if (!n.IsSequence()) r.fail(n, w + " must be a list of {space, engines}");
         for (const auto& rule : n) {
           ConflictRule c;
           r.section(rule, conflict_table(), c, w + "[]", w + "[" + std::to_string(m.conflicts.size()) + "].");
           if (c.engines.size() < 2) r.fail(rule, "a conflict needs at least two engines");
           m.conflicts.push_back(std::move(c));
         }
       }},
      {"semaphores", Need::Optional, count_field(&Target::semaphores), "semaphores"},
      {"opcodes", Need::Always,
       [](R& r, const Node& n, Target& m, const std::string& w) {
         m.opcodes = r.named(n, opcode_table(), w, "opcode");
       }},
  };
  return t;
}

std::set<std::string> keys_of(const Node& n) {
  std::set<std::string> out;
  if (n && n.IsMap())
    for (const auto& kv : n) out.insert(kv.first.as<std::string>());
  return out;
}

Target ModelReader::read() {
  const Node& root = y_.root();
  // Names a section may refer to before the section that declares them is read.
  engine_names_ = keys_of(root["engines"]);
  space_names_ = keys_of(root["spaces"]);
  opcode_names_ = keys_of(root["opcodes"]);
  has_dma_ = static_cast<bool>(root["dma"]);

  Target t;
  t.file = y_.path();
  section(root, model_table(), t, "the model", "");

  if (root["collective"] && !has_dma_)
    fail(root["collective"], "collectives move their data through the DMA engines: the model needs a dma section");

  // The simulator times an instruction by its engine's cost: every engine an opcode may run
  // on needs one.
  for (const auto& [name, op] : t.opcodes)
    for (const std::string& e : op.engines)
      if (e != "dma" && !t.engines.at(e).costs.count(name))
        missing_timing_.emplace_back(
            op.loc, "opcode '" + name + "' runs on '" + e + "' but engines." + e + ".costs has no entry for it");
  t.missing_timing = std::move(missing_timing_);
  t.parameters = take_parameters();
  t.index_opcodes();
  return t;
}

}  // namespace

std::shared_ptr<const Target> load_target(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Target>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto t = read_target(path);
  cache[path] = t;
  return t;
}

std::shared_ptr<const Target> read_target(const std::string& path) {
  Target read = ModelReader(path).read();
  read.file_hash = file_hash(path);
  return std::make_shared<const Target>(std::move(read));
}

}  // namespace tandem
