#include "sim/tune/tune_space.h"

#include <algorithm>
#include <climits>
#include <map>

#include "sched/driver/schedule_file.h"
#include "sched/ir/printer.h"
#include "sched/passes/pass_manager.h"
#include "sched/support/yaml_file.h"
#include "sim/driver/sweep/sweep_spec.h"

namespace tandem {

namespace {

// The options worth searching, with the values tried (docs/tune.md): the derivation keeps those
// that change the kernel. Values past these (buffers=8, distance=6) come from a space file.
const std::vector<TuneDimension>& candidate_dimensions() {
  static const std::vector<TuneDimension> dims = {
      {"address-rotation.buffers", {"auto", "2", "3", "4"}},
      {"prefetch-schedule.prefetch-distance", {"0", "1", "2", "3"}},
      {"prefetch-schedule.cc-dma-alignment", {"0", "1", "2"}},
      {"prefetch-schedule.force-incoming-order", {"-1", "0"}},
      {"list-schedule.priority", {"critical-path", "program-order"}},
      {"assign-engines.policy", {"first", "balance"}},
      {"wmma-reorder.mode", {"vgpr", "reverse"}},
      {"wmma-reorder.distance", {"-1", "0", "1", "2", "3", "4"}},
  };
  return dims;
}

// Passes no seed runs that a point may add at their defaults (as pipeline values `SEED,PASS`)
// when that changes the kernel: wmma-reorder on kernels with WMMA loops.
const std::vector<std::string> kAddedPasses = {"wmma-reorder"};

const PassOptionSpec* option_spec(const PassInfo& pass, const std::string& option) {
  for (const auto& o : pass.options)
    if (o.name == option) return &o;
  return nullptr;
}

// The value as the pipeline parser normalises it (flags: "1" or ""); values are checked when
// the space is read.
std::string normalised(const PassOptionSpec& spec, const std::string& value) {
  if (spec.type != PassOptionSpec::Flag) return value;
  return value == "true" || value == "1" ? "1" : "";
}

bool accepts(const PassInfo& pass, const std::map<std::string, std::string>& values) {
  try {
    pass.create(PassOptions(values));
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string format_short(const std::vector<PipelineStep>& steps) {
  std::string out;
  for (const PipelineStep& step : steps) {
    out += (out.empty() ? "" : ",") + step.pass->name;
    std::string opts;
    for (const auto& [key, value] : step.options.values()) {
      const PassOptionSpec* spec = option_spec(*step.pass, key);
      if (spec && value == spec->default_value) continue;
      if (spec && spec->type == PassOptionSpec::Flag) {
        if (!value.empty()) opts += (opts.empty() ? "" : ",") + key;
      } else {
        opts += (opts.empty() ? "" : ",") + key + "=" + value;
      }
    }
    if (!opts.empty()) out += "{" + opts + "}";
  }
  return out.empty() ? "none" : out;
}

// The pipeline with PASS.OPTION = value, as TuneSpace::pipeline describes.
void set_option(std::vector<PipelineStep>& steps, const std::string& name, const std::string& value) {
  const size_t dot = name.find('.');
  const PassInfo* pass = find_pass(name.substr(0, dot));
  const std::string option = name.substr(dot + 1);
  const PassOptionSpec& spec = *option_spec(*pass, option);
  const std::string v = normalised(spec, value);
  bool present = false;
  for (PipelineStep& step : steps) {
    if (step.pass->name != pass->name) continue;
    present = true;
    std::map<std::string, std::string> values = step.options.values();
    values[option] = v;
    if (accepts(*pass, values)) step.options = PassOptions(values);
  }
  if (present || v == spec.default_value) return;
  std::map<std::string, std::string> values;
  for (const auto& o : pass->options) values[o.name] = o.default_value;
  values[option] = v;
  if (accepts(*pass, values)) steps.push_back({pass, PassOptions(values), pass->name});
}

// A value of PASS.OPTION in a space file: as in a sweep file, except that a value valid only
// beside one of the pass's flags (prefetch-distance beside `after`) is valid, since a point
// sets it on the steps that accept it.
void check_value(const YamlFile& y, const YAML::Node& at, const std::string& name, const std::string& value) {
  const size_t dot = name.find('.');
  const PassInfo& pass = *find_pass(name.substr(0, dot));
  const std::string option = name.substr(dot + 1);
  std::vector<std::string> with = {""};
  for (const auto& o : pass.options)
    if (o.type == PassOptionSpec::Flag && o.name != option) with.push_back(o.name + ",");
  for (const std::string& flag : with) {
    try {
      parse_pipeline(pass.name + "{" + flag + option + "=" + value + "}");
      return;
    } catch (const Error&) {
    }
  }
  check_pass_option_value(y, at, name, value);  // fails with the sweep file's message
}

}  // namespace

std::vector<std::string> tune_seeds() {
  std::vector<std::string> seeds;
  const auto& named = named_pipelines();
  auto known = [&](const std::string& name) {
    return find_pass(name) ||
           std::any_of(named.begin(), named.end(), [&](const NamedPipeline& p) { return p.name == name; });
  };
  for (const char* s : {"auto", "default", "none"})
    if (known(s)) seeds.push_back(s);
  return seeds;
}

std::string short_pipeline(const std::string& pipeline) {
  const std::string text = format_short(parse_pipeline(pipeline));
  // A named pipeline's steps at the start are written as its name.
  for (const NamedPipeline& p : named_pipelines()) {
    if (p.expansion.empty()) continue;
    const std::string named = format_short(parse_pipeline(p.expansion));
    if (text == named) return p.name;
    if (text.compare(0, named.size() + 1, named + ",") == 0) return p.name + text.substr(named.size());
  }
  return text;
}

std::string schedule_key(const std::string& kernel, const std::string& hw, const std::string& pipeline) {
  KernelInput in = read_and_schedule(kernel, hw, pipeline, RunOptions{});
  return print_kernel(in.kernel, &in.deps) + print_deps(in.kernel, in.deps);
}

size_t TuneSpace::size() const {
  size_t n = 1;
  for (const TuneDimension& d : dims)
    n = n > SIZE_MAX / std::max<size_t>(1, d.values.size()) ? SIZE_MAX : n * d.values.size();
  return n;
}

std::vector<size_t> TuneSpace::coords(size_t point) const {
  std::vector<size_t> at(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    at[i] = point % dims[i].values.size();
    point /= dims[i].values.size();
  }
  return at;
}

size_t TuneSpace::point(const std::vector<size_t>& coords) const {
  size_t p = 0;
  for (size_t i = 0; i < dims.size(); ++i) p = p * dims[i].values.size() + coords[i];
  return p;
}

std::string TuneSpace::pipeline(const std::vector<size_t>& at) const {
  std::vector<PipelineStep> steps = parse_pipeline(dims[0].values[at[0]]);
  for (size_t i = 1; i < dims.size(); ++i) set_option(steps, dims[i].name, dims[i].values[at[i]]);
  const std::string text = format_short(steps);
  return text == "none" ? text : short_pipeline(text);
}

TuneSpace derive_space(const std::string& kernel, const std::string& hw) {
  TuneSpace space;
  // Each seed's scheduled kernel; a seed the kernel refuses, or that a pass fails on, is still
  // a point: the search rejects it with its status (error, internal-error) and goes on.
  auto key = [&](const std::string& pipeline) -> std::string {
    try {
      return schedule_key(kernel, hw, pipeline);
    } catch (const std::exception&) {
      return "";
    }
  };
  std::vector<std::string> seeds = tune_seeds();
  std::map<std::string, std::string> seed_keys;
  for (const std::string& s : seeds) seed_keys[s] = key(s);
  for (const std::string& added : kAddedPasses)
    for (const std::string& s : tune_seeds()) {
      const std::string p = s == "none" ? added : s + "," + added;
      const std::string k = key(p);
      if (!k.empty() && k != seed_keys[s]) {
        seeds.push_back(p);
        seed_keys[p] = k;
      }
    }
  // Each step of a named pipeline, alone, when its schedule is one no value above gives (the
  // list scheduler alone may beat every composition that holds it).
  for (const NamedPipeline& named : named_pipelines()) {
    if (named.expansion.empty()) continue;
    for (const PipelineStep& step : parse_pipeline(named.expansion)) {
      const std::string p = format_short({step});
      if (seed_keys.count(p)) continue;
      const std::string k = key(p);
      const bool known =
          std::any_of(seed_keys.begin(), seed_keys.end(), [&](const auto& sk) { return sk.second == k; });
      if (!k.empty() && !known) {
        seeds.push_back(p);
        seed_keys[p] = k;
      }
    }
  }
  space.dims.push_back({"pipeline", seeds});
  // A dimension applies when one of its values changes a seed's kernel, alone or beside one
  // value of a dimension found to apply (wmma-reorder's distance matters once its mode
  // reorders): two rounds, so that such pairs are found without trying the whole product.
  std::vector<bool> kept(candidate_dimensions().size(), false);
  auto changes = [&](const TuneDimension& d, const std::vector<TuneDimension>& context) {
    for (const std::string& s : seeds) {
      TuneSpace one;
      one.dims = {{"pipeline", {s}}};
      for (const TuneDimension& c : context) one.dims.push_back(c);
      one.dims.push_back(d);
      for (size_t c = 0; c < std::max<size_t>(1, context.empty() ? 1 : context[0].values.size()); ++c) {
        std::vector<size_t> at(one.dims.size(), 0);
        if (!context.empty()) at[1] = c;
        const std::string base = key(one.pipeline(at));
        for (size_t v = 1; v < d.values.size(); ++v) {
          at.back() = v;
          const std::string k = key(one.pipeline(at));
          if (!k.empty() && k != base) return true;
        }
      }
    }
    return false;
  };
  for (size_t i = 0; i < kept.size(); ++i) kept[i] = changes(candidate_dimensions()[i], {});
  for (size_t i = 0; i < kept.size(); ++i)
    for (size_t j = 0; j < kept.size() && !kept[i]; ++j)
      if (kept[j] && j != i) kept[i] = changes(candidate_dimensions()[i], {candidate_dimensions()[j]});
  for (size_t i = 0; i < kept.size(); ++i) {
    const TuneDimension& d = candidate_dimensions()[i];
    if (kept[i])
      space.dims.push_back(d);
    else
      space.left_out.push_back(d.name + ": no value changes the scheduled kernel under any seed");
  }
  return space;
}

TuneSpace load_space(const std::string& path, const std::string& kernel, const std::string& hw) {
  return apply_space_file(derive_space(kernel, hw), path);
}

TuneSpace apply_space_file(TuneSpace space, const std::string& path) {
  YamlFile y(path, "space file");
  const YAML::Node& root = y.root();
  if (!root.IsMap()) y.fail(root, "a space file is a mapping: derive (true or false) and parameters");
  y.only_keys(root, {"derive", "parameters"}, "the space");
  if (root["derive"]) {
    const std::string v = y.str(root["derive"], "derive");
    if (v != "true" && v != "false") y.fail(root["derive"], "derive must be true or false, not '" + printable(v) + "'");
    // derive: false starts from the seeds alone; the file's parameters are the whole space.
    if (v == "false") {
      space.dims.resize(1);
      space.left_out.clear();
    }
  }
  if (!root["parameters"]) return space;
  const YAML::Node& params = root["parameters"];
  if (!params.IsMap() || params.size() == 0) y.fail(params, "parameters must map each parameter to its list of values");
  for (const auto& kv : params) {
    if (!kv.first.IsScalar()) y.fail(kv.first, "a parameter name must be a scalar");
    const std::string name = kv.first.Scalar();
    if (name != "pipeline") {
      if (!names_a_pass(name))
        y.fail(kv.first, "unknown parameter '" + name +
                             "': tune varies the pipeline and PASS.OPTION of a known pass "
                             "(model fields are sweep parameters)");
      check_pass_option_name(y, kv.first);
    }
    if (!kv.second.IsSequence() || kv.second.size() == 0)
      y.fail(kv.second, "parameter '" + name + "' needs a non-empty list of values");
    TuneDimension d{name, {}};
    for (const YAML::Node& v : kv.second) {
      if (!v.IsScalar()) y.fail(v, name + " values must be scalars");
      if (name == "pipeline")
        check_pipeline_value(y, v, v.Scalar());
      else
        check_value(y, v, name, v.Scalar());
      if (std::find(d.values.begin(), d.values.end(), v.Scalar()) != d.values.end())
        y.fail(v, name + " lists '" + printable(v.Scalar()) + "' twice");
      d.values.push_back(v.Scalar());
    }
    auto same =
        std::find_if(space.dims.begin(), space.dims.end(), [&](const TuneDimension& o) { return o.name == name; });
    if (same != space.dims.end())
      *same = d;
    else
      space.dims.push_back(d);
  }
  return space;
}

}  // namespace tandem
