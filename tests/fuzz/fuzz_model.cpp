// Model YAML files: read and check, as --hw does, then require the timing half as sim does.
#include "fuzz_input.h"
#include "sched/target/target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::string path = tandem_fuzz::write_input(data, size, "model.yaml");
    tandem::read_target(path)->require_timing();
  } catch (const tandem::Error&) {
  }
  return 0;
}
