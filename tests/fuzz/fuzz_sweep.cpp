// Sweep YAML files: read and check every point, as `tandem sweep` does before running one.
#include "fuzz_input.h"
#include "sim/driver/sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tandem::load_sweep(tandem_fuzz::write_input(data, size, "fuzz.yaml"));
  } catch (const tandem::Error&) {
  }
  return 0;
}
