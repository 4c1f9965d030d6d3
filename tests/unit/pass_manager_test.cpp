#include <catch2/catch.hpp>

#include <sstream>

#include "sched/passes/address_rotation.h"
#include "sched/passes/assign_engines.h"
#include "sched/passes/pass_manager.h"
#include "sched/passes/prefetch_schedule.h"
#include "sched/passes/separate_load_compute.h"
#include "test_util.h"

using namespace tandem;

TEST_CASE("pipelines parse names, options, flags and defaults", "[passes]") {
  auto steps = parse_pipeline("assign-engines{queues=4, policy=balance},assign-engines");
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].pass->name == "assign-engines");
  CHECK(steps[0].options.values().at("queues") == "4");
  CHECK(steps[0].options.values().at("policy") == "balance");
  CHECK(steps[0].text == "assign-engines{queues=4, policy=balance}");
  CHECK(steps[1].options.values().at("queues") == "0");  // the default
  CHECK(steps[1].options.values().at("policy") == "first");
  // Typed, through the pass's option rows.
  const AssignEnginesPass::Options first = typed_options(AssignEnginesPass::option_rows(), steps[0].options);
  CHECK(first.queues == 4);
  CHECK(first.balance);
  const AssignEnginesPass::Options second = typed_options(AssignEnginesPass::option_rows(), steps[1].options);
  CHECK(second.queues == 0);
  CHECK(!second.balance);
}

TEST_CASE("typed options: defaults from the rows, values parsed once, checks in one place", "[passes]") {
  auto text = [](std::map<std::string, std::string> values) { return PassOptions(std::move(values)); };
  const auto rotation = typed_options(AddressRotationPass::option_rows(), PassOptions());
  CHECK(rotation.space == "sbuf");
  CHECK(rotation.buffers.count == 0);
  CHECK(!rotation.buffers.from_model);
  CHECK(rotation.tiles.empty());
  const auto model = typed_options(AddressRotationPass::option_rows(),
                                   text({{"buffers", "model"}, {"tiles", "%a|%b"}, {"nested", "1"}}));
  CHECK(model.buffers.from_model);
  CHECK(model.tiles == std::vector<std::string>{"%a", "%b"});
  CHECK(model.nested);
  CHECK(typed_options(AddressRotationPass::option_rows(), text({{"buffers", "3"}})).buffers.count == 3);
  CHECK_THROWS_WITH(typed_options(AddressRotationPass::option_rows(), text({{"buffers", "1"}})),
                    "error: address-rotation: buffers must be auto or a number from 2 to 16, not '1'");
  const auto prefetch = typed_options(PrefetchSchedulePass::option_rows(), PassOptions());
  CHECK(prefetch.force_incoming_order == -1);
  CHECK(prefetch.prefetch_distance == 0);
  CHECK_THROWS_WITH(
      typed_options(PrefetchSchedulePass::option_rows(), text({{"prefetch-distance", "2"}})),
      "error: prefetch-schedule: prefetch-distance applies after the scheduler (prefetch-schedule{after,...})");
  CHECK_THROWS_WITH(
      typed_options(SeparateLoadComputePass::option_rows(), text({{"memset", "1"}, {"post-ada", "1"}})),
      "error: separate-load-compute: {memset} and {post-ada} are separate variants of the pass; run one at a time");
}

TEST_CASE("the none pipeline runs no pass", "[passes]") {
  CHECK(parse_pipeline("none").empty());
  CHECK(parse_pipeline("none,assign-engines").size() == 1);
}

TEST_CASE("pipeline errors point at the column of the problem", "[passes]") {
  auto error_at = [](const std::string& text) {
    try {
      parse_pipeline(text);
    } catch (const Error& e) {
      return std::make_pair(e.loc().col, e.message());
    }
    return std::make_pair(0, std::string("no error"));
  };
  CHECK(error_at("assign-engines,nope") ==
        std::make_pair(16,
                       std::string("unknown pass 'nope' (did you mean 'none'?) (known: none, default, auto, compiler, "
                                   "assign-engines, prefetch-schedule, "
                                   "separate-load-compute, list-schedule, address-rotation, wmma-reorder, "
                                   "balance-engines, hoist-invariants)")));
  CHECK(error_at("assign-engines{x=1}").first == 16);
  CHECK(error_at("assign-engines{queues=}").second ==
        "option 'queues' of pass 'assign-engines' needs an integer value, not ''");
  CHECK(error_at("assign-engines{queues=1").second == "expected ',' or '}' in the options of 'assign-engines'");
  CHECK(error_at("").second == "empty pipeline (use --passes=none to run no pass)");
  CHECK(error_at("assign-engines,").second == "expected a pass name after ','");
}

TEST_CASE("every pass in the table is described with its options", "[passes]") {
  std::string text = describe_passes();
  for (const auto& p : pass_registry()) {
    CHECK_THAT(text, Catch::Contains(p.name));
    for (const auto& o : p.options) CHECK_THAT(text, Catch::Contains(o.name));
  }
  CHECK_THAT(text, Catch::Contains("none"));
}

TEST_CASE("running a pipeline applies its passes and reports statistics", "[passes]") {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  DepGraph g = build_dep_graph(k);
  std::ostringstream diag;
  RunOptions opts;
  opts.stats = true;
  opts.print_after = {"assign-engines"};
  run_pipeline(k, g, parse_pipeline("assign-engines{queues=1}"), opts, diag);
  CHECK(k.insts[k.find_inst("mm")].engine == "pe");
  CHECK(k.insts[k.find_inst("la")].engine == "q0");
  CHECK(k.insts[k.find_inst("lb")].engine == "q0");
  // One queue for both loads: they are now ordered (in addition to their data edges).
  CHECK(test::edge(k, g, "la", "lb")->kind == DepKind::Ordered);
  CHECK(test::edge(k, g, "lb", "la", 1)->kind == DepKind::Ordered);
  CHECK_THAT(diag.str(), Catch::Contains("queues_assigned: 3"));
  CHECK_THAT(diag.str(), Catch::Contains("# IR after assign-engines{queues=1}"));
}

TEST_CASE("the kernel is verified after every pass but one skipped whole before changing it", "[passes]") {
  // A pass that breaks the kernel (an access to an undeclared tensor) and then says it
  // skipped: the verifier catches it after a plain skip; a whole skip is taken at its word.
  struct Breaker : Pass {
    explicit Breaker(bool whole) : whole(whole) {}
    void run(PassContext& ctx) override {
      ctx.kernel.insts[ctx.kernel.find_inst("mm")].reads[0].tensor_id = 1000;
      if (whole)
        ctx.skip_unchanged("nothing to do");
      else
        ctx.skip("nothing to do");
    }
    bool whole;
  };
  const auto run = [](bool whole) {
    Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
    DepGraph g = build_dep_graph(k);
    const PassInfo breaker{"breaker", "", {}, [whole](const PassOptions&) { return std::make_unique<Breaker>(whole); }};
    std::ostringstream diag;
    run_pipeline(k, g, {PipelineStep{&breaker, {}, "breaker"}}, RunOptions{}, diag);
  };
  CHECK_THROWS_WITH(run(false), Catch::Contains("pass 'breaker' broke the kernel") && Catch::Contains("not declared"));
  CHECK_NOTHROW(run(true));
}

TEST_CASE("a pass on a graph edited by earlier passes adds only queue order", "[passes]") {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  DepGraph g = build_dep_graph(k);
  // Stand-in for an earlier pass that cut an edge analysis would derive.
  REQUIRE(g.remove(k.find_inst("mm"), k.find_inst("la"), 1, 0));
  k.attrs.set_flag("deps_listed");
  std::ostringstream diag;
  run_pipeline(k, g, parse_pipeline("assign-engines{queues=1}"), RunOptions{}, diag);
  CHECK_FALSE(test::edge(k, g, "mm", "la", 1));  // the cut stays cut
  CHECK(test::edge(k, g, "la", "lb")->kind == DepKind::Ordered);
}
