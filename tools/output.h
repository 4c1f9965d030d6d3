// Shared by the commands: where their text output goes, and its colour on a terminal.
#pragma once

#include <functional>
#include <string>

namespace tandem::cli {

// Writes `text` to stdout, or atomically to `path` when one is given. On a terminal (and
// without NO_COLOR), the first line (the kernel and its time) is bold and race banners red.
void emit(const std::string& text, const std::string& path);
// The same, for text made in parts: `produce` passes each part, in order, to the writer it is
// given (nothing is coloured).
void emit_parts(const std::function<void(const std::function<void(const std::string&)>&)>& produce,
                const std::string& path);

// A message for stderr, its control characters escaped (printable): on a terminal (and
// without NO_COLOR), the location bold and `error:` bold red, as compilers print them.
std::string for_stderr(const std::string& message);

}  // namespace tandem::cli
