// A pass is a small class with one `run` entry point, declared once in the central table
// (pass_registry.def); its options are declared once, as rows (OptionRow: name, type,
// default, help, and the typed member each fills).
#pragma once

#include <cstdint>
#include <functional>
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

// The option values of one pipeline step as text, already checked against the pass's specs
// (what format_pipeline prints); a pass reads them typed, through its option rows.
class PassOptions {
 public:
  PassOptions() = default;
  PassOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  // The value given for `spec`, else its default.
  const std::string& value_of(const PassOptionSpec& spec) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// One option of a pass, declared once: its spec (name, type, default, help) and how its text
// value fills the member of the pass's typed options struct. Made by the *_option functions
// below; a pass lists its rows in `option_rows()`.
template <class Options>
struct OptionRow {
  PassOptionSpec spec;
  std::function<void(Options&, const std::string&)> fill;
};

// A flag: on when given (default off).
template <class O>
OptionRow<O> flag_option(std::string name, bool O::*member, std::string help) {
  return {{std::move(name), PassOptionSpec::Flag, "", std::move(help), {}},
          [member](O& o, const std::string& v) { o.*member = !v.empty(); }};
}

// An integer (parse_pipeline has checked it fits 32 bits).
template <class O>
OptionRow<O> int_option(std::string name, int64_t O::*member, int64_t default_value, std::string help) {
  return {{std::move(name), PassOptionSpec::Int, std::to_string(default_value), std::move(help), {}},
          [member](O& o, const std::string& v) { o.*member = v.empty() ? 0 : std::stoll(v); }};
}

// One of named values, each standing for a value of the member's type.
template <class O, class T>
OptionRow<O> choice_option(std::string name, T O::*member, std::vector<std::pair<std::string, T>> choices,
                           std::string default_value, std::string help) {
  std::vector<std::string> names;
  for (const auto& c : choices) names.push_back(c.first);
  return {{std::move(name), PassOptionSpec::Choice, std::move(default_value), std::move(help), std::move(names)},
          [member, choices](O& o, const std::string& v) {
            for (const auto& c : choices)
              if (c.first == v) o.*member = c.second;
          }};
}

// One of the names in `choices`, kept as text.
template <class O>
OptionRow<O> text_choice_option(std::string name, std::string O::*member, std::vector<std::string> choices,
                                std::string default_value, std::string help) {
  return {{std::move(name), PassOptionSpec::Choice, std::move(default_value), std::move(help), std::move(choices)},
          [member](O& o, const std::string& v) { o.*member = v; }};
}

// Text, read by `parse` (which throws Error for a value it refuses).
template <class O, class T>
OptionRow<O> text_option(std::string name, T O::*member, std::string default_value, std::string help,
                         std::function<T(const std::string&)> parse) {
  return {{std::move(name), PassOptionSpec::String, std::move(default_value), std::move(help), {}},
          [member, parse](O& o, const std::string& v) { o.*member = parse(v); }};
}

// Text, as written.
template <class O>
OptionRow<O> text_option(std::string name, std::string O::*member, std::string default_value, std::string help) {
  return {{std::move(name), PassOptionSpec::String, std::move(default_value), std::move(help), {}},
          [member](O& o, const std::string& v) { o.*member = v; }};
}

// A list of kernel names, `%a|%b` (empty: none). An entry that is not a %name is an Error
// naming the option.
std::vector<std::string> parse_names(const std::string& option, const std::string& text);
template <class O>
OptionRow<O> names_option(std::string name, std::vector<std::string> O::*member, std::string help) {
  return {{name, PassOptionSpec::String, "", std::move(help), {}},
          [member, name](O& o, const std::string& v) { o.*member = parse_names(name, v); }};
}

template <class O>
std::vector<PassOptionSpec> option_specs(const std::vector<OptionRow<O>>& rows) {
  std::vector<PassOptionSpec> specs;
  for (const auto& r : rows) specs.push_back(r.spec);
  return specs;
}

// A step's options, typed: every row filled from its value (or default), then the options'
// own check of ranges and combinations (`check()`, which throws Error).
template <class O>
O typed_options(const std::vector<OptionRow<O>>& rows, const PassOptions& text) {
  O o{};
  for (const auto& r : rows) r.fill(o, text.value_of(r.spec));
  o.check();
  return o;
}

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
  // rely on a later pass to restore what it removes when that pass is sure to run. Asked
  // through the questions below.
  std::vector<std::pair<std::string, PassOptions>> later = {};
  // Does an address-rotation over `space` run later?
  bool rotates_later(const std::string& space) const;
  // Does a separate-load-compute{post-ada} run later (moving the loads)?
  bool moves_loads_later() const;
  // Does list-schedule run later?
  bool schedules_later() const;

  // The graph now differs from what analysis of the accesses derives: print it in full.
  void mark_deps_listed() { kernel.attrs.set_flag(attr::kDepsListed); }
  void skip(const std::string& reason);
  // The whole pass is skipped, decided before it changed anything: the pass manager does not
  // verify the kernel again after it (the verifier's answer cannot have changed).
  void skip_unchanged(const std::string& reason) {
    skip(reason);
    unchanged = true;
  }
  // Nothing the structural checks read has changed (the pass was skipped, moved nothing, or
  // changed only what no check reads): the pass manager does not check the kernel after it.
  bool unchanged = false;
  void note(const std::string& what);
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual void run(PassContext& ctx) = 0;
};

}  // namespace tandem
