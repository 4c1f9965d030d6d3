// tandem tune (docs/tune.md): the simulator as the cost function of a search over the
// schedules of one kernel. Points run as sweep points do (each in its own process, -j at once,
// or over MPI ranks); only race-free schedules that pass the translation validator count.
#pragma once

#include <string>

namespace tandem {

struct TuneRun {
  std::string kernel;
  std::string hw;     // "" = the kernel's target model
  std::string space;  // a space file; "" = the derived space
  int jobs = 1;
  std::string budget;          // "" = no limit; N points; or a time: 30s, 2m, 1h
  int top = 5;                 // configurations listed
  std::string report;          // an HTML report too, if set
  std::string out;             // the best scheduled kernel, if set
  double point_timeout = 600;  // seconds one point may run (status timeout); 0: no limit
  bool explain_space = false;  // also print the dimensions derived and those left out
  bool list_points = false;    // print every point's pipeline, one a line, and search nothing
  std::string log;             // every evaluated point appended here, if set
  bool resume = false;         // take the points already in `log` as evaluated
  bool json = false;           // print the tandem.tune/1 document instead of the text
};

// Exhaustive up to this many points (or the --budget N given, when larger); above it,
// coordinate descent (docs/tune.md).
constexpr size_t kTuneExhaustiveLimit = 64;

// Prints the result on stdout. Returns 0; 130 when interrupted (SIGINT) after printing and
// writing what was found. Throws Error for bad input or when no point is clean.
int run_tune(const TuneRun& run);

}  // namespace tandem
