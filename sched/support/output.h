// Outputs are never left half-written: they go to a temporary file beside the target and
// are renamed over it only when complete.
#pragma once

#include <string>

namespace tandem {

// Writes `content` to `path` atomically; throws Error when the file cannot be written.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace tandem
