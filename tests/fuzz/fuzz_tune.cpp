// Tune space files (tandem tune --space): the file's changes to the space derived once from a
// bundled kernel, then the pipeline of the space's first points built and parsed, as tune
// does before it simulates a point.
#include "fuzz_input.h"
#include "sched/passes/pass_manager.h"
#include "sim/tune/tune_space.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tandem::TuneSpace derived =
      tandem::derive_space(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir", "");
  try {
    const tandem::TuneSpace space =
        tandem::apply_space_file(derived, tandem_fuzz::write_input(data, size, "space.yaml"));
    const size_t points = space.size();
    for (size_t p = 0; p < points && p < 8; ++p) (void)tandem::parse_pipeline(space.pipeline(space.coords(p)));
    if (points > 8) (void)tandem::parse_pipeline(space.pipeline(space.coords(points - 1)));
  } catch (const tandem::Error&) {
  }
  return 0;
}
