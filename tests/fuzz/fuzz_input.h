// libFuzzer targets for the five inputs users give (docs/robustness.md, Fuzzing): each feeds
// its bytes to the reader as a user's file would, and a tandem::Error (a user error, exit 1)
// is the expected answer to bad input. Anything else escaping, a sanitizer report, a crash
// or a hang is a finding.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include <unistd.h>
#include "sched/support/error.h"

namespace tandem_fuzz {

// A scratch directory laid out like the source tree: models/ and the folders of workloads/
// are links to the source, workloads/sweeps/ is real, so relative paths in a sweep file
// (`../trn/gemm_k.kir`, `../../models/trn2.yaml`) resolve as they do for the bundled sweeps.
inline const std::string& scratch() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/tandem-fuzz.XXXXXX";
    std::string d = mkdtemp(tmpl);
    const std::string src = TANDEM_SOURCE_DIR;
    (void)!symlink((src + "/models").c_str(), (d + "/models").c_str());
    (void)!mkdir((d + "/workloads").c_str(), 0755);
    (void)!mkdir((d + "/workloads/sweeps").c_str(), 0755);
    for (const char* sub : {"trn", "gpu", "generators"})
      (void)!symlink((src + "/workloads/" + sub).c_str(), (d + "/workloads/" + sub).c_str());
    return d;
  }();
  return dir;
}

// Writes the input where a sweep or model file would be; returns its path.
inline std::string write_input(const uint8_t* data, size_t size, const char* name) {
  const std::string path = scratch() + "/workloads/sweeps/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace tandem_fuzz
