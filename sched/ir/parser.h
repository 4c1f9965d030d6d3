// Reads the .kir text format (docs/ir.md) into a Kernel, checking it against its target:
// every error is a tandem::Error located at file:line:col.
#pragma once

#include <memory>
#include <string>

#include "sched/ir/kernel.h"

namespace tandem {

struct Target;

struct ParseOptions {
  // Use this target instead of the one the kernel names (for --hw and sweeps over models).
  std::shared_ptr<const Target> target_override;
};

Kernel parse_kernel(const std::string& source, const std::string& file_name, const ParseOptions& opts = {});
Kernel parse_kernel_file(const std::string& path, const ParseOptions& opts = {});

}  // namespace tandem
