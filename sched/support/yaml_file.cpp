#include "sched/support/yaml_file.h"

#include "sched/support/suggest.h"

#include <cmath>
#include <map>
#include <set>

#include "sched/support/output.h"

namespace tandem {

YamlFile::YamlFile(const std::string& path, const std::string& what) : path_(path), file_(intern_file_name(path)) {
  const std::string text = read_input_file(path_, what);  // an Error for a directory, too
  try {
    root_ = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw Error(SourceLoc{file_, e.mark.line + 1, e.mark.column + 1},
                "malformed YAML: " + printable(e.msg, kEchoMaxChars * 10));
  }
  if (!root_.IsMap()) throw Error(SourceLoc{file_, 1, 1}, what + " must be a YAML mapping");
  check_keys(root_);
}

// Every reader takes a mapping key as a name; a key that is itself a list or mapping
// (`{{}: 1}`) is the user's error, and so is a key that repeats in its mapping (YAML 1.2
// requires unique keys; yaml-cpp keeps both, and a reader would see only the first), each
// located here once for all readers. A node is checked once
// (aliases share nodes: `*a` repeated must not make the walk exponential); yaml-cpp bounds
// the nesting depth while parsing.
void YamlFile::check_keys(const YAML::Node& root) const {
  std::set<size_t> seen;  // nodes are told apart by where they start in the text
  std::vector<YAML::Node> todo{root};
  while (!todo.empty()) {
    const YAML::Node n = todo.back();
    todo.pop_back();
    if (!(n.IsSequence() || n.IsMap()) || !seen.insert(n.Mark().pos).second) continue;
    if (n.IsSequence())
      for (const auto& e : n) todo.push_back(e);
    if (n.IsMap()) {
      std::map<std::string, YAML::Node> keys;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) fail(kv.first, "a mapping key must be a name, not a list or mapping");
        const auto [first, fresh] = keys.emplace(kv.first.Scalar(), kv.first);
        if (!fresh)
          fail(kv.first, "key '" + printable(kv.first.Scalar()) + "' repeats in this mapping (first at line " +
                             std::to_string(loc(first->second).line) + "); give each key once");
        todo.push_back(kv.second);
      }
    }
  }
}

SourceLoc YamlFile::loc(const YAML::Node& n) const {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return {file_, 0, 0};
  return {file_, m.line + 1, m.column + 1};
}

void YamlFile::fail(const YAML::Node& n, const std::string& msg) const { throw Error(loc(n), msg); }

YAML::Node YamlFile::required(const YAML::Node& parent, const std::string& key, const std::string& where) const {
  if (!parent.IsMap()) fail(parent, where + " must be a mapping");
  YAML::Node n = parent[key];
  if (!n) fail(parent, "missing field '" + key + "' in " + where);
  return n;
}

void YamlFile::only_keys(const YAML::Node& n, const std::vector<std::string>& known, const std::string& where) const {
  if (!n.IsMap()) fail(n, where + " must be a mapping");
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    bool ok = false;
    std::string list;
    for (const std::string& k : known) {
      ok |= key == k;
      list += (list.empty() ? "" : ", ") + k;
    }
    if (!ok)
      fail(kv.first,
           "unknown field '" + printable(key) + "' in " + where + did_you_mean(key, known) + " (known: " + list + ")");
  }
}

int64_t YamlFile::non_negative_int(const YAML::Node& n, const std::string& what) const {
  int64_t v = 0;
  try {
    v = n.as<int64_t>();
  } catch (const YAML::Exception&) {
    fail(n, what + " must be an integer");
  }
  if (v < 0) fail(n, what + " must not be negative (got " + std::to_string(v) + ")");
  return v;
}

double YamlFile::non_negative_number(const YAML::Node& n, const std::string& what) const {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    fail(n, what + " must be a number");
  }
  if (!std::isfinite(v)) fail(n, what + " must be finite");
  if (v < 0) fail(n, what + " must not be negative (got " + n.as<std::string>() + ")");
  return v;
}

double YamlFile::positive_number(const YAML::Node& n, const std::string& what) const {
  double v = non_negative_number(n, what);
  if (v == 0) fail(n, what + " must be positive");
  return v;
}

std::string YamlFile::str(const YAML::Node& n, const std::string& what) const {
  if (!n.IsScalar()) fail(n, what + " must be a string");
  return n.as<std::string>();
}

}  // namespace tandem
