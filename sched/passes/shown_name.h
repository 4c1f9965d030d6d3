// An instruction's name in a pass's log line, worked out only when the line is printed:
// Kernel::display_name of an unnamed instruction walks the whole program after an edit, and a
// debug line per loop that nobody reads would make separate-load-compute quadratic in the loops.
#pragma once

#include <string>

#include <fmt/format.h>

#include "sched/ir/kernel.h"

namespace tandem {

struct ShownName {
  const Kernel& kernel;
  InstId id;
};

inline ShownName shown(const Kernel& k, InstId id) { return {k, id}; }

}  // namespace tandem

template <>
struct fmt::formatter<tandem::ShownName> : fmt::formatter<std::string> {
  template <class Context>
  auto format(const tandem::ShownName& n, Context& ctx) const {
    return fmt::formatter<std::string>::format(n.kernel.display_name(n.id), ctx);
  }
};
