#include "sched/target/hardware_model.h"

#include <algorithm>

#include "sched/support/yaml_file.h"

namespace tandem {

const std::vector<std::string>& cost_variables() {
  static const std::vector<std::string> vars = {"N",     "P",         "N_stationary", "N_moving", "is_fp32",
                                                "bytes", "elem_bytes", "MIN_II",       "ranks"};
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

const EngineModel* HardwareModel::engine(const std::string& n) const {
  auto it = engines.find(n);
  return it == engines.end() ? nullptr : &it->second;
}

namespace {

class HardwareModelReader {
 public:
  explicit HardwareModelReader(const std::string& path) : y_(path) {}

  HardwareModel read() {
    const YAML::Node& root = y_.root();
    y_.only_keys(root,
                 {"name", "reference_clock_ghz", "spaces", "engines", "dma", "collective", "conflicts", "semaphores", "opcodes"},
                 "the model");
    HardwareModel m;
    m.target = load_target(y_.path());
    m.name = m.target->name;
    m.reference_clock_ghz = y_.positive_number(y_.required(root, "reference_clock_ghz", "the model"), "reference_clock_ghz");
    if (root["semaphores"]) m.semaphores = y_.non_negative_int(root["semaphores"], "semaphores");
    read_spaces(m);
    read_engines(m);
    if (root["dma"]) read_dma(m, root["dma"]);
    if (root["conflicts"]) read_conflicts(m, root["conflicts"]);
    if (YAML::Node c = root["collective"]) {
      y_.only_keys(c, {"link_bandwidth_bytes_per_ns"}, "collective");
      m.collective.link_bandwidth_bytes_per_ns = y_.positive_number(
          y_.required(c, "link_bandwidth_bytes_per_ns", "collective"), "collective.link_bandwidth_bytes_per_ns");
      if (!root["dma"]) y_.fail(c, "collectives move their data through the DMA engines: the model needs a dma section");
    }
    check_costs(m);
    return m;
  }

 private:
  void read_spaces(HardwareModel& m) {
    for (const auto& kv : y_.root()["spaces"]) {
      const std::string name = kv.first.as<std::string>();
      const std::string where = "spaces." + name;
      SpaceAccess access;
      if (kv.second.IsMap()) {
        y_.only_keys(kv.second, {"partitions", "bytes_per_partition", "banks", "register_prefix", "registers",
                                 "register_bytes", "readers", "writers", "bandwidth_bytes_per_cycle"},
                     where);
        access.readers = engine_set(m, kv.second["readers"], where + ".readers");
        access.writers = engine_set(m, kv.second["writers"], where + ".writers");
        if (kv.second["bandwidth_bytes_per_cycle"])
          access.bandwidth_bytes_per_cycle =
              y_.positive_number(kv.second["bandwidth_bytes_per_cycle"], where + ".bandwidth_bytes_per_cycle");
      }
      m.access[name] = access;
    }
  }

  std::set<std::string> engine_set(const HardwareModel& m, const YAML::Node& n, const std::string& where) {
    std::set<std::string> out;
    if (!n) return out;
    if (!n.IsSequence()) y_.fail(n, where + " must be a list of engines");
    for (const auto& e : n) {
      std::string name = y_.str(e, where + "[]");
      if (name != "dma" && !m.target->engines.count(name)) y_.fail(e, "unknown engine '" + name + "' in " + where);
      out.insert(name);
    }
    return out;
  }

  void read_engines(HardwareModel& m) {
    for (const auto& kv : y_.root()["engines"]) {
      EngineModel e;
      e.name = kv.first.as<std::string>();
      const std::string where = "engines." + e.name;
      const YAML::Node& f = kv.second;
      y_.only_keys(f, {"kind", "clock_ghz", "min_ii_cycles", "lanes", "costs"}, where);
      if (f["lanes"]) e.lanes = static_cast<int64_t>(y_.positive_number(f["lanes"], where + ".lanes"));
      e.clock_ghz = y_.positive_number(y_.required(f, "clock_ghz", where), where + ".clock_ghz");
      if (f["min_ii_cycles"]) e.min_ii_cycles = y_.non_negative_number(f["min_ii_cycles"], where + ".min_ii_cycles");
      if (YAML::Node costs = f["costs"]) {
        if (!costs.IsMap()) y_.fail(costs, where + ".costs must be a mapping of opcode to cost formula");
        for (const auto& c : costs) {
          const std::string op = c.first.as<std::string>();
          const std::string cwhere = where + ".costs." + op;
          if (!m.target->opcode(op)) y_.fail(c.first, "unknown opcode '" + op + "' in " + where + ".costs");
          if (c.second.IsScalar()) {
            e.costs.emplace(op, OpCost{formula(c.second, cwhere), std::nullopt});
          } else {
            y_.only_keys(c.second, {"cycles", "latency"}, cwhere);
            OpCost cost{formula(y_.required(c.second, "cycles", cwhere), cwhere + ".cycles"), std::nullopt};
            if (c.second["latency"]) cost.latency = formula(c.second["latency"], cwhere + ".latency");
            e.costs.emplace(op, std::move(cost));
          }
        }
      }
      m.engines[e.name] = std::move(e);
    }
  }

  CostFormula formula(const YAML::Node& n, const std::string& where) {
    std::string text = y_.str(n, where);
    SourceLoc at = y_.loc(n);
    // A quoted scalar starts one column after its mark.
    if (n.Tag() == "!" && at.col > 0) at.col += 1;
    return CostFormula::parse(text, cost_variables(), at);
  }

  void read_dma(HardwareModel& m, const YAML::Node& d) {
    y_.only_keys(d, {"engines", "queues", "partitions_per_engine", "bandwidth_bytes_per_ns", "fixed_cost_ns", "efficiency"},
                 "dma");
    m.dma.engines = y_.non_negative_int(y_.required(d, "engines", "dma"), "dma.engines");
    if (m.dma.engines == 0 || m.dma.engines > 64) y_.fail(d["engines"], "dma.engines must be between 1 and 64");
    m.dma.partitions_per_engine = y_.non_negative_int(y_.required(d, "partitions_per_engine", "dma"), "dma.partitions_per_engine");
    if (m.dma.partitions_per_engine == 0) y_.fail(d["partitions_per_engine"], "dma.partitions_per_engine must be at least 1");
    m.dma.bandwidth_bytes_per_ns = y_.positive_number(y_.required(d, "bandwidth_bytes_per_ns", "dma"), "dma.bandwidth_bytes_per_ns");
    m.dma.fixed_cost_ns = y_.non_negative_number(y_.required(d, "fixed_cost_ns", "dma"), "dma.fixed_cost_ns");
    if (YAML::Node eff = d["efficiency"]) {
      if (!eff.IsSequence()) y_.fail(eff, "dma.efficiency must be a list of {bytes_per_partition, efficiency}");
      double last = -1;
      for (const auto& p : eff) {
        y_.only_keys(p, {"bytes_per_partition", "efficiency"}, "dma.efficiency[]");
        double x = y_.non_negative_number(y_.required(p, "bytes_per_partition", "dma.efficiency[]"), "bytes_per_partition");
        double e = y_.positive_number(y_.required(p, "efficiency", "dma.efficiency[]"), "efficiency");
        if (e > 1) y_.fail(p["efficiency"], "efficiency must be at most 1");
        if (x <= last) y_.fail(p["bytes_per_partition"], "dma.efficiency points must have increasing bytes_per_partition");
        last = x;
        m.dma.efficiency.emplace_back(x, e);
      }
    }
  }

  void read_conflicts(HardwareModel& m, const YAML::Node& c) {
    if (!c.IsSequence()) y_.fail(c, "conflicts must be a list of {space, engines}");
    for (const auto& r : c) {
      y_.only_keys(r, {"space", "engines"}, "conflicts[]");
      ConflictRule rule;
      const YAML::Node& sp = y_.required(r, "space", "conflicts[]");
      rule.space = y_.str(sp, "conflicts[].space");
      if (!m.target->space(rule.space)) y_.fail(sp, "unknown space '" + rule.space + "' in conflicts");
      std::set<std::string> engines = engine_set(m, y_.required(r, "engines", "conflicts[]"), "conflicts[].engines");
      if (engines.count("dma")) y_.fail(r["engines"], "conflicts are between compute engines; 'dma' is not one");
      if (engines.size() < 2) y_.fail(r, "a conflict needs at least two engines");
      rule.engines.assign(engines.begin(), engines.end());
      m.conflicts.push_back(rule);
    }
  }

  // Every engine an opcode may run on needs a cost for it.
  void check_costs(const HardwareModel& m) {
    const YAML::Node& opcodes = y_.root()["opcodes"];
    for (const auto& kv : opcodes) {
      const std::string op = kv.first.as<std::string>();
      const OpcodeInfo* info = m.target->opcode(op);
      for (const auto& e : info->engines) {
        if (e == "dma") {
          if (!y_.root()["dma"]) y_.fail(kv.first, "opcode '" + op + "' runs on dma but the model has no dma section");
          continue;
        }
        const EngineModel* em = m.engine(e);
        if (!em) y_.fail(kv.first, "opcode '" + op + "' runs on '" + e + "', which has no timing in engines");
        if (!em->costs.count(op))
          y_.fail(kv.first, "opcode '" + op + "' runs on '" + e + "' but engines." + e + ".costs has no entry for it");
      }
    }
  }

  YamlFile y_;
};

}  // namespace

std::shared_ptr<const HardwareModel> load_hardware_model(const std::string& path) {
  return std::make_shared<const HardwareModel>(HardwareModelReader(path).read());
}

}  // namespace tandem
