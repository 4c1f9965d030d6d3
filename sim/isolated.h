// One simulation per process (SystemC elaborates once): run a job in a forked child and
// bring back the text it produces. A user error in the child comes back as the same Error;
// anything else as an internal error.
#pragma once

#include <functional>
#include <string>

namespace tandem {

std::string run_isolated(const std::function<std::string()>& job);

}  // namespace tandem
