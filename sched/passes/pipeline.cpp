// Pipeline strings: `step(,step)*` where step = name or name{key=value,flag}. A named
// pipeline (`none`) expands in place.
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "sched/passes/pass_manager.h"
#include "sched/support/error.h"
#include "sched/support/suggest.h"

namespace tandem {

const std::vector<NamedPipeline>& named_pipelines() {
  static const std::vector<NamedPipeline> pipelines = {
      {"none", "", "no pass: program order, one buffer per tensor, every dependence kept"},
      // docs/passes.md, "The default pipeline": (b) prefetch before the scheduler, (c) the
      // split with the gather zero-init, (d) the list scheduler, (e) SBUF rotation, (f)
      // prefetch after the scheduler, (g) the post-schedule physical hoist.
      {"default",
       "prefetch-schedule,separate-load-compute{memset},list-schedule,address-rotation{space=sbuf},"
       "prefetch-schedule{after},separate-load-compute{post-ada}",
       "the pass specification's composition: prefetch-schedule, separate-load-compute{memset}, list-schedule, "
       "address-rotation{space=sbuf}, prefetch-schedule{after}, separate-load-compute{post-ada}"},
      // Work several engines may run goes where its loop's bound falls, before the rings are
      // sized by that bound. No barrier: rotation's edges synchronise per buffer (a load into
      // buffer b waits for b's last reader at distance N, its readers for the load), so loads
      // run ahead as far as the buffers allow (docs/passes.md, auto).
      {"auto", "balance-engines,address-rotation{buffers=model,nested},address-rotation{space=psum,buffers=model}",
       "work more than one engine may run moved off a loop's busiest engine where the loop's bound falls; "
       "per-buffer synchronisation, no barrier: SBUF tiles, then PSUM tiles, over ceil(lifetime / II) + 1 buffers, "
       "II the loop's resource bound per iteration from the model, as many as fit; a loop whose every tile's "
       "writer-to-last-reader chain and whose longest turn of a compute instruction and its transfers fit in its II "
       "stays on one buffer: it is at its bound already"},
      // What the Neuron compiler does to a kernel before it runs, where published timings
      // depend on it (docs/passes.md, compiler): loop-invariant work hoisted, then auto's
      // engine balancing and buffer allocation.
      {"compiler",
       "hoist-invariants,balance-engines,address-rotation{buffers=model,nested},"
       "address-rotation{space=psum,buffers=model}",
       "stands for the Neuron compiler's own transformations: loop-invariant work moved in front of its loop "
       "(hoist-invariants), then auto"},
  };
  return pipelines;
}

namespace {

SourceLoc at_col(size_t offset) { return SourceLoc{intern_file_name("--passes"), 1, static_cast<int>(offset) + 1}; }

// Some option problems show only on the kernel (queues= beyond the target's, an option
// combination a pass checks when it runs): a pass's unlocated Error is about its options, and
// is located at its step in the pipeline.
class LocatedPass : public Pass {
 public:
  LocatedPass(std::unique_ptr<Pass> inner, SourceLoc loc) : inner_(std::move(inner)), loc_(loc) {}
  void run(PassContext& ctx) override {
    try {
      inner_->run(ctx);
    } catch (const Error& e) {
      if (e.loc().valid()) throw;
      throw Error(loc_, printable(e.message(), kEchoMaxChars * 10));
    }
  }

 private:
  std::unique_ptr<Pass> inner_;
  SourceLoc loc_;
};

// The table entry of `pass` for a step at column `col`: the same pass, run as a LocatedPass.
// One entry per pass and column, kept for the process (steps point to it).
const PassInfo* located_pass(const PassInfo& pass, size_t col) {
  static std::mutex mu;
  static std::map<std::pair<const PassInfo*, size_t>, PassInfo> table;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = table.try_emplace({&pass, col}, pass);
  if (inserted) {
    const SourceLoc loc = at_col(col);
    it->second.create = [create = pass.create, loc](const PassOptions& o) -> std::unique_ptr<Pass> {
      return std::make_unique<LocatedPass>(create(o), loc);
    };
  }
  return &it->second;
}

bool is_int(const std::string& s) {
  size_t i = s[0] == '-' ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// Integer options fit in 32 bits (queues, distances, byte thresholds): a larger value is an
// error located at the option, never a wrapped or internal one.
bool int_in_range(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return errno != ERANGE && *end == '\0' && v >= INT_MIN && v <= INT_MAX;
}

// Checks one `key[=value]` against the pass's specs; returns the normalised value.
std::string check_option(const PassInfo& pass, const std::string& key, const std::string* value, size_t offset) {
  const PassOptionSpec* spec = nullptr;
  for (const auto& o : pass.options)
    if (o.name == key) spec = &o;
  if (!spec) {
    std::string known;
    std::vector<std::string> names;
    for (const auto& o : pass.options) {
      known += (known.empty() ? "" : ", ") + o.name;
      names.push_back(o.name);
    }
    throw Error(at_col(offset), "unknown option '" + printable(key) + "' for pass '" + pass.name + "'" +
                                    did_you_mean(key, names) +
                                    (known.empty() ? " (it takes none)" : " (options: " + known + ")"));
  }
  switch (spec->type) {
    case PassOptionSpec::Flag:
      if (!value || *value == "true" || *value == "1") return "1";
      if (*value == "false" || *value == "0") return "";
      throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' is a flag; '" + printable(*value) +
                                      "' is not true or false");
    case PassOptionSpec::Int:
      if (!value || value->empty() || !is_int(*value))
        throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' needs an integer value" +
                                        (value ? ", not '" + printable(*value) + "'" : ""));
      if (!int_in_range(*value))
        throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' is out of range: '" +
                                        printable(*value) + "' (integers are from " + std::to_string(INT_MIN) + " to " +
                                        std::to_string(INT_MAX) + ")");
      return *value;
    case PassOptionSpec::Choice: {
      if (value)
        for (const auto& c : spec->choices)
          if (c == *value) return *value;
      std::string choices;
      for (const auto& c : spec->choices) choices += (choices.empty() ? "" : "|") + c;
      throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' must be one of " + choices +
                                      (value ? ", not '" + printable(*value) + "'" : ""));
    }
    case PassOptionSpec::String:
      if (!value) throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' needs a value");
      return *value;
  }
  return "";
}

// What a pass's constructor says about its option values (a range, a combination), located
// in the pipeline: at the option that alone makes it fail, else at the pass's name.
void check_values(const PassInfo& pass, const std::map<std::string, std::string>& values,
                  const std::vector<std::pair<std::string, size_t>>& given, size_t pass_col) {
  auto problem = [&](const std::map<std::string, std::string>& v) -> std::optional<std::string> {
    try {
      pass.create(PassOptions(v));
    } catch (const Error& e) {
      return e.message();
    }
    return std::nullopt;
  };
  const std::optional<std::string> message = problem(values);
  if (!message) return;
  std::map<std::string, std::string> defaults;
  for (const auto& o : pass.options) defaults[o.name] = o.default_value;
  // The pass's message may quote a value as written.
  const std::string text = printable(*message, kEchoMaxChars * 10);
  for (const auto& [key, col] : given) {
    std::map<std::string, std::string> alone = defaults;
    alone[key] = values.at(key);
    if (problem(alone)) throw Error(at_col(col), text);
  }
  throw Error(at_col(pass_col), text);
}

void parse_into(const std::string& text, size_t base, std::vector<PipelineStep>& out, int depth) {
  size_t i = 0;
  auto skip_ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_ws();
  if (i == text.size()) {
    if (depth == 0) throw Error(at_col(base), "empty pipeline (use --passes=none to run no pass)");
    return;
  }
  while (true) {
    skip_ws();
    size_t start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-' || text[i] == '_'))
      ++i;
    std::string name = text.substr(start, i - start);
    if (name.empty())
      throw Error(at_col(base + i), i < text.size()
                                        ? "expected a pass name, found '" + printable(std::string(1, text[i])) + "'"
                                        : "expected a pass name after ','");
    const PassInfo* pass = find_pass(name);
    const NamedPipeline* named = nullptr;
    for (const auto& p : named_pipelines())
      if (p.name == name) named = &p;
    if (!pass && !named) {
      std::string known;
      std::vector<std::string> names;
      for (const auto& p : named_pipelines()) {
        known += (known.empty() ? "" : ", ") + p.name;
        names.push_back(p.name);
      }
      for (const auto& p : pass_registry()) {
        known += ", " + p.name;
        names.push_back(p.name);
      }
      throw Error(at_col(base + start),
                  "unknown pass '" + printable(name) + "'" + did_you_mean(name, names) + " (known: " + known + ")");
    }
    std::map<std::string, std::string> values;
    std::vector<std::pair<std::string, size_t>> given;  // options written, with their columns
    if (pass)
      for (const auto& o : pass->options) values[o.name] = o.default_value;
    skip_ws();
    if (i < text.size() && text[i] == '{') {
      if (named) throw Error(at_col(base + i), "named pipeline '" + name + "' takes no options");
      ++i;
      while (true) {
        skip_ws();
        size_t kstart = i;
        while (i < text.size() && text[i] != '=' && text[i] != ',' && text[i] != '}' &&
               !std::isspace(static_cast<unsigned char>(text[i])))
          ++i;
        std::string key = text.substr(kstart, i - kstart);
        if (key.empty()) throw Error(at_col(base + i), "expected an option name in '" + name + "{...}'");
        const size_t key_col = base + kstart;
        skip_ws();
        std::string value;
        bool has_value = false;
        if (i < text.size() && text[i] == '=') {
          ++i;
          skip_ws();
          size_t vstart = i;
          while (i < text.size() && text[i] != ',' && text[i] != '}' &&
                 !std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
          value = text.substr(vstart, i - vstart);
          has_value = true;
        }
        values[key] = check_option(*pass, key, has_value ? &value : nullptr, key_col);
        given.emplace_back(key, key_col);
        skip_ws();
        if (i < text.size() && text[i] == ',') {
          ++i;
          continue;
        }
        if (i < text.size() && text[i] == '}') {
          ++i;
          break;
        }
        throw Error(at_col(base + i), "expected ',' or '}' in the options of '" + name + "'");
      }
    }
    if (named) {
      parse_into(named->expansion, base + start, out, depth + 1);
    } else {
      check_values(*pass, values, given, base + start);
      out.push_back({located_pass(*pass, base + start), PassOptions(values), text.substr(start, i - start)});
    }
    skip_ws();
    if (i == text.size()) break;
    if (text[i] != ',')
      throw Error(at_col(base + i), "expected ',' between passes, found '" + printable(std::string(1, text[i])) + "'");
    ++i;
  }
}

}  // namespace

std::vector<PipelineStep> parse_pipeline(const std::string& text) {
  std::vector<PipelineStep> steps;
  parse_into(text, 0, steps, 0);
  return steps;
}

std::string describe_passes() {
  std::ostringstream out;
  out << "Named pipelines:\n";
  for (const auto& p : named_pipelines()) out << "  " << p.name << "\n      " << p.help << "\n";
  out << "Passes (options as name{key=value,flag}):\n";
  for (const auto& p : pass_registry()) {
    out << "  " << p.name << "\n      " << p.help << "\n";
    for (const auto& o : p.options) {
      out << "      " << o.name;
      if (o.type == PassOptionSpec::Flag)
        out << " (flag)";
      else if (o.type == PassOptionSpec::Choice) {
        out << "=";
        for (size_t c = 0; c < o.choices.size(); ++c) out << (c ? "|" : "") << o.choices[c];
      } else
        out << "=" << (o.type == PassOptionSpec::Int ? "N" : "TEXT");
      if (!o.default_value.empty()) out << " [default " << o.default_value << "]";
      out << ": " << o.help << "\n";
    }
  }
  return out.str();
}

std::string format_pipeline(const std::vector<PipelineStep>& steps) {
  if (steps.empty()) return "none";
  std::string out;
  for (const PipelineStep& step : steps) {
    if (!out.empty()) out += ",";
    out += step.pass->name;
    std::string opts;
    for (const auto& [key, value] : step.options.values()) {
      const PassOptionSpec* spec = nullptr;
      for (const auto& o : step.pass->options)
        if (o.name == key) spec = &o;
      if (spec && spec->type == PassOptionSpec::Flag) {
        if (!value.empty()) opts += (opts.empty() ? "" : ",") + key;
      } else {
        opts += (opts.empty() ? "" : ",") + key + "=" + value;
      }
    }
    if (!opts.empty()) out += "{" + opts + "}";
  }
  return out;
}

}  // namespace tandem
