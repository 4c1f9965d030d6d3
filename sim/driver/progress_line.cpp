#include "sim/driver/progress_line.h"

#include <cstdio>

#include <unistd.h>

namespace tandem {

ProgressLine::ProgressLine(bool on) : tty_(::isatty(STDERR_FILENO)), on_(on) {}

double ProgressLine::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::show(const std::string& text, bool last) {
  if (!on_) return;
  const double s = seconds();
  if (!tty_ && !last && printed_ >= 0 && s - printed_ < 1.0) return;
  printed_ = s;
  // Trailing spaces wipe what a longer previous line left on a terminal.
  std::fprintf(stderr, "%s%s%s", tty_ ? "\r" : "", text.c_str(), tty_ ? "   " : "\n");
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::finish() {
  if (on_ && tty_ && shown_) std::fputc('\n', stderr);
  shown_ = false;
}

}  // namespace tandem
