// Shared by the commands: where their text output goes.
#pragma once

#include <string>

namespace tandem::cli {

// Writes `text` to stdout, or atomically to `path` when one is given.
void emit(const std::string& text, const std::string& path);

}  // namespace tandem::cli
