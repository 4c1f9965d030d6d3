#include "sim/driver/sweep/sweep_spec.h"

#include <glob.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sched/support/yaml_file.h"
#include "sched/target/model_edit.h"
#include "sched/target/target.h"
#include "sim/report/metrics.h"

namespace tandem {

const std::vector<std::string>& sweep_text_metrics() {
  static const std::vector<std::string> names = {"lower_bound_resource", "bound_resource", "recurrence_cause"};
  return names;
}

const std::vector<std::string>& known_sweep_metrics() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> names;
    for (const MetricInfo& m : metric_table())
      if (m.scope == MetricScope::Kernel || m.scope == MetricScope::Loop) names.push_back(m.name);
    names.insert(names.end(), sweep_text_metrics().begin(), sweep_text_metrics().end());
    names.push_back("utilization");  // the unit metric, one column per engine (docs/sweeps.md)
    // The space metrics, one column per bounded space (docs/sweeps.md).
    for (const MetricInfo& m : metric_table())
      if (m.scope == MetricScope::Space) names.push_back(m.name);
    return names;
  }();
  return all;
}

const std::vector<std::string>& efficiency_bound_metrics() {
  static const std::vector<std::string> names = {"span_bound_ns", "bound_resource"};
  return names;
}

namespace {

const std::vector<std::string> kDefaultMetrics = {"total_ns", "total_cycles", "ii_ns", "efficiency",
                                                  "overlap",  "utilization",  "races"};

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string relative_to(const std::string& dir, const std::string& path) {
  return !path.empty() && path[0] == '/' ? path : dir + "/" + path;
}

class SweepReader {
 public:
  explicit SweepReader(const std::string& path) : y_(path, "sweep file") { spec_.file = path; }

  SweepSpec read() {
    const YAML::Node& root = y_.root();
    y_.only_keys(root, {"kernels", "model", "pipeline", "parameters", "points", "metrics", "verify"}, "the sweep");
    read_kernels(y_.required(root, "kernels", "the sweep"));
    if (root["model"]) read_model(root["model"]);
    // Every point simulates on a base model (or an edit of one): a base model that the
    // reader refuses, or that lacks its timing half, is refused now with the reader's own
    // located error, as `tandem opt` and `tandem sim` refuse it.
    for (const std::string& model : base_models()) load_target(model)->require_timing();
    if (root["pipeline"]) {
      spec_.pipeline = y_.str(root["pipeline"], "pipeline");
      check_pipeline(root["pipeline"], spec_.pipeline);
    }
    if (root["parameters"] && root["points"])
      y_.fail(root["points"], "give either parameters (a product) or points (a list), not both");
    if (root["parameters"])
      read_product(root["parameters"]);
    else if (root["points"])
      read_points(root["points"]);
    else
      spec_.points.push_back({});  // no parameter: one point, the base
    read_metrics(root["metrics"]);
    if (root["verify"]) {
      const std::string v = y_.str(root["verify"], "verify");
      if (v != "true" && v != "false")
        y_.fail(root["verify"], "verify must be true or false, not '" + printable(v) + "'");
      spec_.verify = v == "true";
    }
    return spec_;
  }

 private:
  void read_kernels(const YAML::Node& n) {
    std::vector<YAML::Node> patterns;
    if (n.IsScalar())
      patterns.push_back(n);
    else if (n.IsSequence())
      for (const YAML::Node& p : n) patterns.push_back(p);
    if (patterns.empty()) y_.fail(n, "kernels must be a file, a glob or a list of them");
    for (const YAML::Node& p : patterns) {
      const std::string pattern = relative_to(directory_of(spec_.file), y_.str(p, "kernels[]"));
      glob_t g{};
      const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
      std::vector<std::string> found;
      for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) found.push_back(g.gl_pathv[i]);
      ::globfree(&g);
      if (found.empty()) y_.fail(p, "kernel pattern '" + printable(p.Scalar()) + "' matches no file");
      std::sort(found.begin(), found.end());
      for (const std::string& f : found) {
        // A broken kernel is the sweep file's error, found now.
        spec_.kernel_targets.push_back(parse_kernel_file(f).target->file);
        spec_.kernels.push_back(f);
      }
    }
  }

  void read_model(const YAML::Node& n) { spec_.model = model_file(n); }

  // A model name (resolve_model's rule) or a file relative to the sweep file.
  std::string model_file(const YAML::Node& n) {
    const std::string m = y_.str(n, "model");
    std::string path;
    try {
      path = is_model_name(m) ? resolve_model_file(m) : relative_to(directory_of(spec_.file), m);
    } catch (const Error& e) {
      y_.fail(n, e.message());
    }
    if (!std::ifstream(path)) y_.fail(n, "model '" + printable(m) + "': cannot open " + path);
    return path;
  }

  void check_pipeline(const YAML::Node& at, const std::string& text) { check_pipeline_value(y_, at, text); }

  // Classifies and checks a parameter name against the base models and passes.
  SweepParameter classify(const YAML::Node& key) {
    SweepParameter p;
    p.name = key.as<std::string>();
    if (p.name == "pipeline") {
      p.kind = SweepParameter::Pipeline;
      return p;
    }
    if (p.name == "model") {
      p.kind = SweepParameter::Model;
      return p;
    }
    if (names_a_pass(p.name)) {
      check_pass_option_name(y_, key);
      p.kind = SweepParameter::PassOption;
      return p;
    }
    p.kind = SweepParameter::ModelField;
    for (const std::string& model : base_models())
      if (!model_field(YamlFile(model).root(), p.name))
        y_.fail(key, "unknown parameter '" + printable(p.name) + "': neither a field of " + model +
                         " nor PASS.OPTION of a known pass");
    return p;
  }

  std::vector<std::string> base_models() const { return sweep_base_models(spec_); }

  // The values of a `model` parameter, read before the other parameters: the model fields
  // are checked against every model the points use.
  void read_model_values(const YAML::Node& values) {
    if (spec_.model.size()) y_.fail(values, "the sweep names a model and varies `model`; give one or the other");
    for (const YAML::Node& v : values) {
      const std::string m = y_.str(v, "model");
      spec_.model_files[m] = model_file(v);
      load_target(spec_.model_files[m])->require_timing();
    }
  }

  // Checks one value of parameter `p` at `node`.
  std::string value(const SweepParameter& p, const YAML::Node& node) {
    if (!node.IsScalar()) y_.fail(node, p.name + " values must be scalars");
    const std::string v = node.Scalar();
    if (p.kind == SweepParameter::Pipeline) {
      check_pipeline(node, v);
    } else if (p.kind == SweepParameter::Model) {
      // read_model_values has resolved it.
    } else if (p.kind == SweepParameter::PassOption) {
      check_pass_option_value(y_, node, p.name, v);
    } else {
      for (const std::string& model : base_models()) {
        const YAML::Node base = model_field(YamlFile(model).root(), p.name);
        if (!base.IsScalar())
          y_.fail(node, p.name + " is not a single value in " + model + "; sweep one of its fields");
        if (is_number(base.Scalar()) && !is_number(v))
          y_.fail(node, p.name + " values must be numbers, as in " + model + " (got '" + printable(v) + "')");
      }
    }
    return v;
  }

  void read_product(const YAML::Node& n) {
    if (!n.IsMap() || n.size() == 0) y_.fail(n, "parameters must map each parameter to its list of values");
    if (n["model"] && n["model"].IsSequence()) read_model_values(n["model"]);
    std::vector<std::vector<std::string>> lists;
    for (const auto& kv : n) {
      SweepParameter p = classify(kv.first);
      if (!kv.second.IsSequence() || kv.second.size() == 0)
        y_.fail(kv.second, "parameter '" + p.name + "' needs a non-empty list of values");
      std::vector<std::string> values;
      for (const YAML::Node& v : kv.second) values.push_back(value(p, v));
      spec_.parameters.push_back(p);
      lists.push_back(values);
    }
    // The product, the first parameter varying slowest.
    std::vector<size_t> at(lists.size(), 0);
    for (bool more = true; more;) {
      std::vector<std::string> point;
      for (size_t i = 0; i < lists.size(); ++i) point.push_back(lists[i][at[i]]);
      spec_.points.push_back(point);
      more = false;
      for (size_t i = lists.size(); i-- > 0;) {
        if (++at[i] < lists[i].size()) {
          more = true;
          break;
        }
        at[i] = 0;
      }
    }
    check_passes_present(n);
  }

  void read_points(const YAML::Node& n) {
    if (!n.IsSequence() || n.size() == 0) y_.fail(n, "points must be a non-empty list of {parameter: value} mappings");
    if (!n[0].IsMap() || n[0].size() == 0) y_.fail(n[0], "a point must be a {parameter: value} mapping");
    std::vector<YAML::Node> models;
    for (const YAML::Node& point : n)
      if (point.IsMap() && point["model"]) models.push_back(point["model"]);
    if (!models.empty()) read_model_values(YAML::Node(models));
    for (const auto& kv : n[0]) spec_.parameters.push_back(classify(kv.first));
    for (const YAML::Node& point : n) {
      if (!point.IsMap() || point.size() != spec_.parameters.size())
        y_.fail(point, "every point must set the same parameters as the first");
      std::vector<std::string> values;
      for (const SweepParameter& p : spec_.parameters) {
        if (!point[p.name]) y_.fail(point, "this point does not set '" + p.name + "', which the first point sets");
        values.push_back(value(p, point[p.name]));
      }
      spec_.points.push_back(values);
    }
    check_passes_present(n);
  }

  // A pass option must find its pass in every pipeline it would apply to.
  void check_passes_present(const YAML::Node& at) {
    for (const auto& point : spec_.points) {
      std::string pipeline = spec_.pipeline;
      for (size_t i = 0; i < spec_.parameters.size(); ++i)
        if (spec_.parameters[i].kind == SweepParameter::Pipeline) pipeline = point[i];
      const std::vector<PipelineStep> steps = parse_pipeline(pipeline);
      for (const SweepParameter& p : spec_.parameters) {
        if (p.kind != SweepParameter::PassOption) continue;
        const std::string pass = p.name.substr(0, p.name.find('.'));
        if (std::none_of(steps.begin(), steps.end(), [&](const PipelineStep& s) { return s.pass->name == pass; }))
          y_.fail(at, p.name + ": pipeline '" + printable(pipeline) + "' has no " + pass + " step to set it on");
      }
    }
  }

  // Efficiency is a quotient: the bound it divides by and the resource that sets that bound
  // follow it, unless the list names them elsewhere.
  void add_efficiency_bound() {
    std::vector<std::string>& m = spec_.metrics;
    auto at = std::find(m.begin(), m.end(), "efficiency");
    if (at == m.end()) return;
    for (const std::string& bound : efficiency_bound_metrics())
      if (std::find(m.begin(), m.end(), bound) == m.end()) at = m.insert(at + 1, bound);
  }

  void read_metrics(const YAML::Node& n) {
    if (!n) {
      spec_.metrics = kDefaultMetrics;
      add_efficiency_bound();
      return;
    }
    if (!n.IsSequence() || n.size() == 0) y_.fail(n, "metrics must be a non-empty list");
    for (const YAML::Node& m : n) {
      const std::string name = y_.str(m, "metrics[]");
      const auto& known = known_sweep_metrics();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        y_.fail(m, "unknown metric '" + printable(name) + "' (known: " + list + ")");
      }
      spec_.metrics.push_back(name);
    }
    add_efficiency_bound();
    // Whether a point raced is always recorded: a racing point's figures are not a result.
    if (std::find(spec_.metrics.begin(), spec_.metrics.end(), "races") == spec_.metrics.end())
      spec_.metrics.push_back("races");
  }

  YamlFile y_;
  SweepSpec spec_;
};

}  // namespace

bool names_a_pass(const std::string& name) {
  const size_t dot = name.find('.');
  return dot != std::string::npos && find_pass(name.substr(0, dot));
}

void check_pass_option_name(const YamlFile& y, const YAML::Node& key) {
  const std::string name = key.as<std::string>();
  const size_t dot = name.find('.');
  const PassInfo* pass = find_pass(name.substr(0, dot));
  const std::string option = name.substr(dot + 1);
  std::string known;
  for (const auto& o : pass->options) {
    if (o.name == option) return;
    known += (known.empty() ? "" : ", ") + o.name;
  }
  y.fail(key, "pass '" + pass->name + "' has no option '" + printable(option) +
                  "' (options: " + (known.empty() ? "none" : known) + ")");
}

void check_pipeline_value(const YamlFile& y, const YAML::Node& at, const std::string& text) {
  try {
    parse_pipeline(text);
  } catch (const Error& e) {
    y.fail(at, "pipeline '" + printable(text) + "': " + e.message());
  }
}

void check_pass_option_value(const YamlFile& y, const YAML::Node& at, const std::string& name,
                             const std::string& value) {
  const size_t dot = name.find('.');
  try {
    parse_pipeline(name.substr(0, dot) + "{" + name.substr(dot + 1) + "=" + value + "}");
  } catch (const Error& e) {
    y.fail(at, name + ": " + e.message());
  }
}

SweepSpec load_sweep(const std::string& path) { return SweepReader(path).read(); }

std::string sweep_base_model(const SweepSpec& spec, size_t kernel, const std::vector<std::string>& values) {
  for (size_t i = 0; i < spec.parameters.size(); ++i)
    if (spec.parameters[i].kind == SweepParameter::Model) return spec.model_files.at(values[i]);
  return spec.model.empty() ? spec.kernel_targets[kernel] : spec.model;
}

std::vector<std::string> sweep_base_models(const SweepSpec& spec) {
  std::set<std::string> models;
  for (const auto& [value, file] : spec.model_files) models.insert(file);
  if (models.empty())
    for (size_t k = 0; k < spec.kernels.size(); ++k)
      models.insert(spec.model.empty() ? spec.kernel_targets[k] : spec.model);
  return {models.begin(), models.end()};
}

std::string point_pipeline(const SweepSpec& spec, const std::vector<std::string>& values) {
  std::string text = spec.pipeline;
  for (size_t i = 0; i < spec.parameters.size(); ++i)
    if (spec.parameters[i].kind == SweepParameter::Pipeline) text = values[i];
  std::vector<PipelineStep> steps = parse_pipeline(text);
  for (size_t i = 0; i < spec.parameters.size(); ++i) {
    const SweepParameter& p = spec.parameters[i];
    if (p.kind != SweepParameter::PassOption) continue;
    const size_t dot = p.name.find('.');
    for (PipelineStep& step : steps) {
      if (step.pass->name != p.name.substr(0, dot)) continue;
      // The option's value as the pipeline parser normalises it (flags: "1" or "").
      const std::string option = p.name.substr(dot + 1);
      const PipelineStep one = parse_pipeline(step.pass->name + "{" + option + "=" + values[i] + "}")[0];
      std::map<std::string, std::string> options = step.options.values();
      options[option] = one.options.values().at(option);
      step.options = PassOptions(options);
    }
  }
  return format_pipeline(steps);
}

std::string point_model_yaml(const SweepSpec& spec, const std::string& base_model,
                             const std::vector<std::string>& values) {
  std::vector<ModelEdit> edits;
  for (size_t i = 0; i < spec.parameters.size(); ++i)
    if (spec.parameters[i].kind == SweepParameter::ModelField) edits.push_back({spec.parameters[i].name, values[i]});
  return edits.empty() ? "" : edited_model_yaml(base_model, edits);
}

}  // namespace tandem
