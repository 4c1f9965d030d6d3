#include "sched/support/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "sched/support/error.h"

namespace tandem {

namespace {
spdlog::level::level_enum g_level = spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> logger(const std::string& component) {
  if (auto existing = spdlog::get(component)) return existing;
  auto log = spdlog::stderr_color_mt(component);
  log->set_pattern("[%n] %l: %v");
  log->set_level(g_level);
  return log;
}

void set_log_level(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw Error("unknown log level '" + printable(level) + "' (use trace, debug, info, warn, error, off)");
  g_level = parsed;
  spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) { l->set_level(parsed); });
}

}  // namespace tandem
