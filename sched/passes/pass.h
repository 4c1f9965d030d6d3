// A pass is a small class with one `run` entry point, declared once in the central table
// (pass_registry.def) with its options, defaults and help.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace spdlog {
class logger;
}

namespace tandem {

struct PassOptionSpec {
  enum Type { Int, Flag, String, Choice };
  std::string name;
  Type type = Int;
  std::string default_value;  // text form; "" for a flag means off
  std::string help;
  std::vector<std::string> choices;  // for Choice
};

// Option values of one pipeline step, already checked against the pass's specs.
class PassOptions {
 public:
  PassOptions() = default;
  PassOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  int64_t get_int(const std::string& name) const;
  bool get_flag(const std::string& name) const;
  std::string get_string(const std::string& name) const;
  // A list of kernel names (`%a|%b`); empty when the option is. Throws a located-free Error
  // naming the option when an entry is not a %name.
  std::vector<std::string> get_names(const std::string& name) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// What a pass did: named counters, printed by --stats, and why it declined, if it did.
struct PassStats {
  std::vector<std::pair<std::string, int64_t>> counters;
  std::vector<std::string> skip_reasons;
  std::vector<std::string> notes;  // a decision bounded by something else (capacity), with why
  void add(const std::string& name, int64_t n = 1);
  int64_t get(const std::string& name) const;
};

struct PassContext {
  Kernel& kernel;
  DepGraph& deps;
  PassStats& stats;
  std::shared_ptr<spdlog::logger> log;
  // The steps of the pipeline that run after this one (pass name, options): a pass may only
  // rely on a later pass to restore what it removes when that pass is sure to run.
  std::vector<std::pair<std::string, PassOptions>> later = {};

  // The graph now differs from what analysis of the accesses derives: print it in full.
  void mark_deps_listed() { kernel.attrs.set_flag(attr::kDepsListed); }
  void skip(const std::string& reason);
  // The whole pass is skipped, decided before it changed anything: the pass manager does not
  // verify the kernel again after it (the verifier's answer cannot have changed).
  void skip_unchanged(const std::string& reason) {
    skip(reason);
    unchanged = true;
  }
  bool unchanged = false;
  void note(const std::string& what);
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual void run(PassContext& ctx) = 0;
};

}  // namespace tandem
