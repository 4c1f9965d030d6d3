// A model file with some of its fields set to other values: `tandem sim --set FIELD=VALUE`,
// a sweep point's model fields (docs/sweeps.md) and `tandem sim --advise`'s model changes. A
// field is a dotted path into the model document (`dma.fixed_cost_ns`,
// `engines.pe.clock_ghz`); it must already be a single value there, and a number stays a
// number.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace tandem {

struct ModelEdit {
  std::string field;  // dotted path
  std::string value;
};

// The node at a dotted path in a model document, or an undefined node.
YAML::Node model_field(const YAML::Node& root, const std::string& path);

bool is_number(const std::string& text);

// Why `edit` cannot apply to the model document `root` of `model` ("" when it can).
std::string model_edit_problem(const YAML::Node& root, const std::string& model, const ModelEdit& edit);

// "FIELD=VALUE"; throws Error when it is not of that form.
ModelEdit parse_model_edit(const std::string& text);

// The model file `model` with `edits` set, as YAML text; throws Error when an edit cannot
// apply (model_edit_problem).
std::string edited_model_yaml(const std::string& model, const std::vector<ModelEdit>& edits);

// How the edits read on a command line: " --set FIELD=VALUE" each.
std::string set_options(const std::vector<ModelEdit>& edits);

}  // namespace tandem
