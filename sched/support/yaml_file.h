// Reading model files: a loaded YAML document plus field accessors whose errors name
// file:line:col of the offending key or value (gem5's "fatal": the user's file is wrong).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sched/support/error.h"

namespace tandem {

class YamlFile {
 public:
  // Loads `path`; an unreadable or malformed file is an Error. `what` names it in messages.
  explicit YamlFile(const std::string& path, const std::string& what = "model file");

  const YAML::Node& root() const { return root_; }
  const std::string& path() const { return path_; }
  SourceLoc loc(const YAML::Node& n) const;
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const;

  YAML::Node required(const YAML::Node& parent, const std::string& key, const std::string& where) const;
  // Every key of the mapping `n` must be one of `known`.
  void only_keys(const YAML::Node& n, const std::vector<std::string>& known, const std::string& where) const;

  int64_t non_negative_int(const YAML::Node& n, const std::string& what) const;
  double positive_number(const YAML::Node& n, const std::string& what) const;
  double non_negative_number(const YAML::Node& n, const std::string& what) const;
  std::string str(const YAML::Node& n, const std::string& what) const;

 private:
  void check_keys(const YAML::Node& root) const;

  std::string path_;
  const char* file_;
  YAML::Node root_;
};

}  // namespace tandem
