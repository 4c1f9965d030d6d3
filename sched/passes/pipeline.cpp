// Pipeline strings: `step(,step)*` where step = name or name{key=value,flag}. A named
// pipeline (`none`) expands in place.
#include <cctype>
#include <sstream>

#include "sched/passes/pass_manager.h"
#include "sched/support/error.h"

namespace tandem {

const std::vector<NamedPipeline>& named_pipelines() {
  static const std::vector<NamedPipeline> pipelines = {
      {"none", "", "no pass: program order, one buffer per tensor, every dependence kept"},
      // Seed 000, "How They Compose": (b) prefetch before the scheduler, (c) the split with the
      // gather zero-init, (d) the list scheduler, (e) SBUF rotation, (f) prefetch after the
      // scheduler, (g) the post-schedule physical hoist.
      {"default",
       "prefetch-schedule,separate-load-compute{memset},list-schedule,address-rotation{space=sbuf},"
       "prefetch-schedule{after},separate-load-compute{post-ada}",
       "seed 000's composition: prefetch-schedule, separate-load-compute{memset}, list-schedule, "
       "address-rotation{space=sbuf}, prefetch-schedule{after}, separate-load-compute{post-ada}"},
  };
  return pipelines;
}

namespace {

SourceLoc at_col(size_t offset) { return SourceLoc{intern_file_name("--passes"), 1, static_cast<int>(offset) + 1}; }

bool is_int(const std::string& s) {
  size_t i = s[0] == '-' ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// Checks one `key[=value]` against the pass's specs; returns the normalised value.
std::string check_option(const PassInfo& pass, const std::string& key, const std::string* value, size_t offset) {
  const PassOptionSpec* spec = nullptr;
  for (const auto& o : pass.options)
    if (o.name == key) spec = &o;
  if (!spec) {
    std::string known;
    for (const auto& o : pass.options) known += (known.empty() ? "" : ", ") + o.name;
    throw Error(at_col(offset), "unknown option '" + key + "' for pass '" + pass.name + "'" +
                                    (known.empty() ? " (it takes none)" : " (options: " + known + ")"));
  }
  switch (spec->type) {
    case PassOptionSpec::Flag:
      if (!value || *value == "true" || *value == "1") return "1";
      if (*value == "false" || *value == "0") return "";
      throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' is a flag; '" + *value +
                                      "' is not true or false");
    case PassOptionSpec::Int:
      if (!value || value->empty() || !is_int(*value))
        throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' needs an integer value" +
                                        (value ? ", not '" + *value + "'" : ""));
      return *value;
    case PassOptionSpec::Choice: {
      if (value)
        for (const auto& c : spec->choices)
          if (c == *value) return *value;
      std::string choices;
      for (const auto& c : spec->choices) choices += (choices.empty() ? "" : "|") + c;
      throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' must be one of " + choices +
                                      (value ? ", not '" + *value + "'" : ""));
    }
    case PassOptionSpec::String:
      if (!value) throw Error(at_col(offset), "option '" + key + "' of pass '" + pass.name + "' needs a value");
      return *value;
  }
  return "";
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
      throw Error(at_col(base + i), i < text.size() ? "expected a pass name, found '" + std::string(1, text[i]) + "'"
                                                    : "expected a pass name after ','");
    const PassInfo* pass = find_pass(name);
    const NamedPipeline* named = nullptr;
    for (const auto& p : named_pipelines())
      if (p.name == name) named = &p;
    if (!pass && !named) {
      std::string known;
      for (const auto& p : named_pipelines()) known += (known.empty() ? "" : ", ") + p.name;
      for (const auto& p : pass_registry()) known += ", " + p.name;
      throw Error(at_col(base + start), "unknown pass '" + name + "' (known: " + known + ")");
    }
    std::map<std::string, std::string> values;
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
        skip_ws();
        std::string value;
        bool has_value = false;
        if (i < text.size() && text[i] == '=') {
          ++i;
          skip_ws();
          size_t vstart = i;
          while (i < text.size() && text[i] != ',' && text[i] != '}' && !std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
          value = text.substr(vstart, i - vstart);
          has_value = true;
        }
        values[key] = check_option(*pass, key, has_value ? &value : nullptr, base + kstart);
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
      out.push_back({pass, PassOptions(values), text.substr(start, i - start)});
    }
    skip_ws();
    if (i == text.size()) break;
    if (text[i] != ',') throw Error(at_col(base + i), "expected ',' between passes, found '" + std::string(1, text[i]) + "'");
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
