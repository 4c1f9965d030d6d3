#include "sched/target/model_edit.h"

#include "sched/support/error.h"
#include "sched/support/yaml_file.h"

namespace tandem {

namespace {

std::vector<std::string> split_dots(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(path.substr(start, dot - start));
  parts.push_back(path.substr(start));
  return parts;
}

}  // namespace

YAML::Node model_field(const YAML::Node& root, const std::string& path) {
  YAML::Node n;
  n.reset(root);
  for (const std::string& part : split_dots(path)) {
    if (!n.IsMap() || !n[part]) return YAML::Node(YAML::NodeType::Undefined);
    n.reset(n[part]);
  }
  return n;
}

bool is_number(const std::string& text) {
  try {
    size_t used = 0;
    std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

std::string model_edit_problem(const YAML::Node& root, const std::string& model, const ModelEdit& edit) {
  const YAML::Node base = model_field(root, edit.field);
  if (!base) return "'" + printable(edit.field) + "' is not a field of " + model;
  if (!base.IsScalar()) return edit.field + " is not a single value in " + model + "; set one of its fields";
  if (is_number(base.Scalar()) && !is_number(edit.value))
    return edit.field + " must be a number, as in " + model + " (got '" + printable(edit.value) + "')";
  return "";
}

ModelEdit parse_model_edit(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--set needs FIELD=VALUE (a dotted model field such as dma.fixed_cost_ns=440), not '" +
                printable(text) + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string edited_model_yaml(const std::string& model, const std::vector<ModelEdit>& edits) {
  YAML::Node root = YAML::Clone(YamlFile(model).root());
  for (const ModelEdit& e : edits) {
    const std::string problem = model_edit_problem(root, model, e);
    if (!problem.empty()) throw Error("cannot set " + printable(e.field) + ": " + problem);
    const std::vector<std::string> parts = split_dots(e.field);
    YAML::Node n = root;
    for (size_t j = 0; j + 1 < parts.size(); ++j) n.reset(n[parts[j]]);
    n[parts.back()] = e.value;
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string set_options(const std::vector<ModelEdit>& edits) {
  std::string text;
  for (const ModelEdit& e : edits) text += " --set " + e.field + "=" + e.value;
  return text;
}

}  // namespace tandem
