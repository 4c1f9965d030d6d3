// The metric table is the one source of the JSON fields and of docs/metrics.md: these fail
// when a field is added, renamed or redefined in one place and not the other.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sim/driver/simulator.h"
#include "sim/report/metrics.h"
#include "sim/report/report.h"

using namespace tandem;

namespace {

// Numeric fields of one JSON object (not descending into arrays or `stalls`).
void numeric_fields(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    if (v.is_number())
      out.insert(prefix + k);
    else if (v.is_object() && k != "stalls" && k != "timeline")
      numeric_fields(v, prefix + k + ".", out);
  }
}

std::set<std::string> table_names(MetricScope scope) {
  std::set<std::string> out;
  for (const MetricInfo& m : metric_table())
    if (m.scope == scope) out.insert(m.name);
  return out;
}

}  // namespace

TEST_CASE("docs/metrics.md gives every metric of the table with its unit and definition", "[metrics]") {
  std::ifstream in(std::string(TANDEM_SOURCE_DIR) + "/docs/metrics.md");
  std::stringstream doc;
  doc << in.rdbuf();
  REQUIRE(!doc.str().empty());
  for (const MetricInfo& m : metric_table()) {
    const std::string row = std::string("| `") + m.name + "` | " + m.unit + " | " + m.definition + " |";
    INFO(metric_scope_name(m.scope) << " metric " << m.name << ": docs/metrics.md needs the row\n" << row);
    CHECK(doc.str().find(row) != std::string::npos);
  }
}

TEST_CASE("the JSON document's numeric fields are the metric table's, and it reads back unchanged", "[metrics]") {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  DepGraph g = build_dep_graph(k);
  run_pipeline(k, g, parse_pipeline("default,assign-engines"), RunOptions{}, std::cerr);
  SimOptions options;
  options.capture_timeline = true;
  const SimResult r = simulate(lower_for_simulation(k, g), options);
  const std::string json = format_json(r);
  const nlohmann::json doc = nlohmann::json::parse(json);

  std::set<std::string> kernel;
  numeric_fields(doc, "", kernel);
  kernel.erase("reference_clock_ghz");  // a model input, echoed
  CHECK(kernel == table_names(MetricScope::Kernel));

  REQUIRE(!doc.at("engines").empty());
  REQUIRE(!doc.at("dma").at("queues").empty());
  std::set<std::string> engine, queue;
  numeric_fields(doc.at("engines")[0], "", engine);
  numeric_fields(doc.at("dma").at("queues")[0], "", queue);
  std::set<std::string> unit = table_names(MetricScope::Unit);
  CHECK(queue == unit);
  unit.erase("bytes");  // queues only
  CHECK(engine == unit);

  REQUIRE(!doc.at("loops").empty());
  std::set<std::string> loop, iteration;
  numeric_fields(doc.at("loops")[0], "", loop);
  CHECK(loop == table_names(MetricScope::Loop));
  REQUIRE(!doc.at("loops")[0].at("iterations").empty());
  numeric_fields(doc.at("loops")[0].at("iterations")[0], "", iteration);
  CHECK(iteration == table_names(MetricScope::Iteration));

  REQUIRE(!doc.at("loops")[0].at("speed_of_light").empty());
  std::set<std::string> resource, dma_engine;
  numeric_fields(doc.at("loops")[0].at("speed_of_light")[0], "", resource);
  CHECK(resource == table_names(MetricScope::Resource));
  REQUIRE(!doc.at("dma").at("engine_work").empty());
  numeric_fields(doc.at("dma").at("engine_work")[0], "", dma_engine);
  CHECK(dma_engine == table_names(MetricScope::DmaEngine));

  REQUIRE(!doc.at("spaces").empty());
  std::set<std::string> space, inst;
  numeric_fields(doc.at("spaces")[0], "", space);
  CHECK(space == table_names(MetricScope::Space));
  REQUIRE(!doc.at("profile").empty());
  numeric_fields(doc.at("profile")[0], "", inst);
  CHECK(inst == table_names(MetricScope::Instruction));

  // The reports of other processes (A/B, HTML) read this document back.
  CHECK(format_json(parse_sim_json(json)) == json);
}
