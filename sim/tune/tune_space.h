// The space `tandem tune` searches (docs/tune.md): whole pipelines (the seeds) and pass options,
// each dimension a list of values. Derived from the kernel: a dimension is kept only when one
// of its values changes some seed's scheduled kernel. A space file narrows or widens it, with
// the sweep file's conventions and located errors.
#pragma once

#include <string>
#include <vector>

namespace tandem {

struct TuneDimension {
  std::string name;                 // "pipeline" or PASS.OPTION
  std::vector<std::string> values;  // values[0] is the start of the search (a seed, the option's default)
};

struct TuneSpace {
  std::vector<TuneDimension> dims;    // dims[0] is "pipeline"
  std::vector<std::string> left_out;  // derived dimensions dropped, with why (for --explain-space)

  size_t size() const;                             // points in the product (saturates at SIZE_MAX)
  std::vector<size_t> coords(size_t point) const;  // point number -> one value index per dimension, the last fastest
  size_t point(const std::vector<size_t>& coords) const;
  // The point's pipeline: the `pipeline` value with each PASS.OPTION set on every step of PASS
  // that accepts the value; a pass the pipeline lacks is appended when the value is not the
  // option's default. Printed with only the options that differ from their defaults, as the
  // named pipeline when it is one.
  std::string pipeline(const std::vector<size_t>& coords) const;
};

// The seed pipelines, best first when they tie: `auto` when the pass table names it, then
// `default` and `none`. The one place that lists them.
std::vector<std::string> tune_seeds();

// The space derived from the kernel on the model (`hw` "" = the kernel's target).
TuneSpace derive_space(const std::string& kernel, const std::string& hw);

// The derived space with a space file's changes (docs/tune.md); errors name file:line:col.
TuneSpace load_space(const std::string& path, const std::string& kernel, const std::string& hw);

// `derived` with the space file's changes: load_space's second half.
TuneSpace apply_space_file(TuneSpace derived, const std::string& path);

// The pipeline string in its short form (see TuneSpace::pipeline).
std::string short_pipeline(const std::string& pipeline);

// The kernel scheduled by `pipeline`, printed with its dependences: two points with the same
// key simulate the same program, so only one is simulated. Throws the pipeline's Error.
std::string schedule_key(const std::string& kernel, const std::string& hw, const std::string& pipeline);

}  // namespace tandem
