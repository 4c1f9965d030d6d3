// One simulation per process (SystemC elaborates once): run a job in a forked child and
// bring back the text it produces. A user error in the child comes back as the same Error;
// anything else as an internal error. A child dies with the process that forked it (it never
// outlives an interrupted sweep).
#pragma once

#include <functional>
#include <string>

namespace tandem {

std::string run_isolated(const std::function<std::string()>& job);

struct IsolatedOutcome {
  bool ok = false;
  std::string output;  // when ok
  std::string error;   // else: "file:line:col: error: message", or an internal error
  bool internal = false;
  bool timed_out = false;  // killed at its deadline; `error` says after how long
};

// What `produce` returns, or the error it throws, as an outcome.
IsolatedOutcome outcome_of(const std::function<std::string()>& produce);

// Runs job(i) for every i below `count` in forked children, at most `parallel` at a time, and
// calls done(i, outcome) here as each one finishes (in completion order). A child still
// running `timeout_s` seconds after it started (0: no limit) is killed; its outcome is
// timed_out. `stop`, when given, is asked before children start and after each wait (a signal
// ends the wait): once it answers true, the running children are killed without an outcome
// and the pool returns, leaving the jobs not started.
void run_isolated_pool(size_t count, int parallel, const std::function<std::string(size_t)>& job,
                       const std::function<void(size_t, const IsolatedOutcome&)>& done, double timeout_s = 0,
                       const std::function<bool()>& stop = nullptr);

// One job in a forked child, as an outcome, with the same time limit.
IsolatedOutcome run_isolated_outcome(const std::function<std::string()>& job, double timeout_s);

}  // namespace tandem
