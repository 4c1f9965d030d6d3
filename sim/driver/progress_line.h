// A progress line on stderr for long work (sweeps, tune searches, long simulations): on a
// terminal it is rewritten in place; elsewhere (under mpirun, or when asked for) a new line at
// most every second, so that logs stay readable. Nothing is printed when it is off.
#pragma once

#include <chrono>
#include <string>

namespace tandem {

class ProgressLine {
 public:
  explicit ProgressLine(bool on);
  bool on() const { return on_; }
  // Seconds since the line was created.
  double seconds() const;
  // `last`: the final state, printed even off a terminal within a second of the previous line.
  void show(const std::string& text, bool last = false);
  // Ends a line rewritten in place, so that what follows starts on a line of its own.
  void finish();

 private:
  bool tty_, on_;
  bool shown_ = false;
  double printed_ = -1;  // seconds() when the last line was printed
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tandem
