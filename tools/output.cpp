#include "tools/output.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "sched/support/error.h"
#include "sched/support/output.h"

namespace tandem::cli {

namespace {

constexpr const char* kBold = "\033[1m";
constexpr const char* kBoldRed = "\033[1;31m";
constexpr const char* kReset = "\033[0m";

// Colour on descriptor `fd`: a terminal, NO_COLOR unset or empty (no-color.org), TERM not dumb.
bool colour(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !(no_color && *no_color) && !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace

void emit(const std::string& text, const std::string& path) {
  if (!path.empty()) {
    write_file_atomic(path, text);
    return;
  }
  if (!colour(STDOUT_FILENO) || text.rfind("kernel @", 0) != 0) {
    std::cout << text;
    return;
  }
  std::string out;
  size_t at = 0;
  for (bool first = true; at < text.size(); first = false) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    const char* style = first ? kBold : line.rfind("RACES", 0) == 0 ? kBoldRed : nullptr;
    out += style ? style + line + kReset : line;
    if (end < text.size()) out += '\n';
    at = end + 1;
  }
  std::cout << out;
}

void emit_parts(const std::function<void(const std::function<void(const std::string&)>&)>& produce,
                const std::string& path) {
  if (path.empty()) {
    produce([](const std::string& part) { std::cout << part; });
    return;
  }
  OutputFile out(path);
  produce([&](const std::string& part) { out.write(part); });
  out.commit();
}

std::string for_stderr(const std::string& text) {
  const std::string message = printable(text, std::string::npos);
  if (!colour(STDERR_FILENO)) return message;
  for (const char* tag : {"internal error:", "error:"}) {
    const size_t at = message.find(tag);
    // At the start, or after a location's ": ".
    if (at == std::string::npos || (at > 0 && (at < 2 || message.compare(at - 2, 2, ": ") != 0))) continue;
    const std::string where = message.substr(0, at);
    return (where.empty() ? "" : kBold + where + kReset) + kBoldRed + tag + kReset +
           message.substr(at + std::strlen(tag));
  }
  return message;
}

}  // namespace tandem::cli
