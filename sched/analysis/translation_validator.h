// The translation validator: does a transformed kernel compute what the original did?
// Both run symbolically in program order. Every range of a kernel input (memory nobody wrote)
// reads as a symbol of its tensor and range; an instruction's result is a hash of its opcode,
// its meaningful attributes and everything it read; a write stores that result over its
// range. The kernel's outputs are the DRAM tensors it writes and the registers its
// `live_out` attribute names; the two kernels agree when every output range holds the same
// symbols. Scheduling attributes (order, issue and latency cycles, the barrier and zero-init
// marks) and rotation (each iteration's buffer is its own) do not change meaning.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "sched/ir/kernel.h"

namespace tandem {

// Empty when `transformed` computes what `original` does; otherwise the first output range
// that differs, in words.
std::optional<std::string> find_translation_difference(const Kernel& original, const Kernel& transformed);

// The original kernel run once (it keeps its own copy), to compare several transformed
// kernels with: the pass manager checks the pipeline's result and, only when that differs,
// the kernel after each pass to name the first that changed it.
class TranslationReference {
 public:
  explicit TranslationReference(const Kernel& original);
  ~TranslationReference();
  TranslationReference(const TranslationReference&) = delete;
  TranslationReference& operator=(const TranslationReference&) = delete;

  // As find_translation_difference(original, transformed).
  std::optional<std::string> difference(const Kernel& transformed) const;

 private:
  struct Run;
  std::unique_ptr<Run> original_;
};

}  // namespace tandem
