// Random valid kernels of the kinds users write, and the pass pipelines to try on them: the
// generated-kernel campaign (docs/checker.md, "The generated-kernel campaign").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {

struct GeneratedKernel {
  std::string text;   // the .kir source
  std::string shape;  // what the generator chose, in a few words (for the counts)
  bool gpu = false;   // written for gpu-cu (wmma-reorder's target), else for trn1/trn2
  int wmmas = 0;      // WMMAs in its first loop, for explicit orders
};

// Kernel `index` of the campaign seeded `seed`: the same pair always gives the same kernel.
// `trip_scale` multiplies the trip count of every loop of a trn kernel (the same kernel
// otherwise): long loops reach the steady state fast-forward skips.
GeneratedKernel generate_kernel(uint64_t seed, int64_t index, int trip_scale = 1);

// The pipelines tried on `k`: the named ones, every pass with each value of each of its
// options, and the compositions users build (the default chain with its options varied).
std::vector<std::string> pipelines_for(const GeneratedKernel& k);

}  // namespace tandem
