// A sweep file (docs/sweeps.md): kernels, a base model and pipeline, the parameters to vary
// (model fields by path, pass options as pass.option, whole pipelines) as a cartesian
// product or an explicit list of points, and the metrics to record. Everything is checked
// when the file is read; errors name file:line:col.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sched/support/yaml_file.h"

namespace tandem {

struct SweepParameter {
  enum Kind { ModelField, PassOption, Pipeline, Model };
  Kind kind = ModelField;
  std::string name;  // as written: "dma.queues", "address-rotation.buffers", "pipeline", "model"
};

struct SweepSpec {
  std::string file;
  std::vector<std::string> kernels;                // paths, each glob's matches sorted
  std::vector<std::string> kernel_targets;         // each kernel's own target model file
  std::string model;                               // base model file; "" = each kernel's target model
  std::map<std::string, std::string> model_files;  // each value of a `model` parameter -> its file
  std::string pipeline = "default";                // base pipeline
  std::vector<SweepParameter> parameters;
  std::vector<std::vector<std::string>> points;  // one value per parameter
  std::vector<std::string> metrics;              // `races` always among them (added last when not listed)
  bool verify = false;  // `verify: true`: the translation validator checks every point's pipeline

  size_t size() const { return kernels.size() * points.size(); }
};

SweepSpec load_sweep(const std::string& path);

// The metric names a sweep may record: the metric table's kernel and loop figures, the text
// figures (sweep_text_metrics), `utilization` (a column per engine) and the space figures
// (a column per bounded space: `sbuf.headroom`).
const std::vector<std::string>& known_sweep_metrics();
// The metrics whose cells are text: the resource or the dependence cycle that sets a bound.
const std::vector<std::string>& sweep_text_metrics();
// What `efficiency` divides by: recorded right after it unless the sweep names them.
const std::vector<std::string>& efficiency_bound_metrics();

// The base model file of kernel number `kernel` at a point: the point's `model`, else the
// sweep's, else the kernel's own target.
std::string sweep_base_model(const SweepSpec& spec, size_t kernel, const std::vector<std::string>& values);
// Every base model file the sweep's points use.
std::vector<std::string> sweep_base_models(const SweepSpec& spec);

// The pipeline of a point: the base (or the point's `pipeline`) with its pass options set.
std::string point_pipeline(const SweepSpec& spec, const std::vector<std::string>& values);

// The base model's YAML text with the point's model fields set; "" when the point sets none.
std::string point_model_yaml(const SweepSpec& spec, const std::string& base_model,
                             const std::vector<std::string>& values);

// The parameter checks sweep files and tune's space files share, each failing at its node:
// whether `name` is PASS.OPTION of a known pass (by its pass); that the pass has the option;
// a whole pipeline; one value of PASS.OPTION.
bool names_a_pass(const std::string& name);
void check_pass_option_name(const YamlFile& y, const YAML::Node& key);
void check_pipeline_value(const YamlFile& y, const YAML::Node& at, const std::string& text);
void check_pass_option_value(const YamlFile& y, const YAML::Node& at, const std::string& name,
                             const std::string& value);

}  // namespace tandem
