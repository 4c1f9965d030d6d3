// Running a sweep (docs/sweeps.md): every (kernel, point) simulated in its own process, N
// at a time, or spread over MPI ranks under mpirun; one CSV row per point as it finishes,
// progress on stderr, resume, the sorted file at the end and, if asked, the HTML report.
#pragma once

#include <string>

namespace tandem {

struct SweepRun {
  std::string file;  // the sweep file
  std::string out;   // the CSV; "" = the sweep file's name with .csv, in the working directory
  int jobs = 1;      // points at once on this machine
  bool resume = false;
  bool progress = false;  // progress lines even off a terminal
  std::string report;     // an HTML report too, if set
  bool verify = false;    // the translation validator checks every point's pipeline (also `verify: true` in the file)
  double point_timeout = 3600;  // seconds a point may run before it is killed (status timeout); 0: no limit
};

// From the rows of the finished CSV: 2 when a point failed with an internal error, else 1
// when a point failed --verify (status miscompiled), else 3 when a point raced (status
// racy), else 0. Error for a bad sweep file or option.
int run_sweep(const SweepRun& run);

}  // namespace tandem
