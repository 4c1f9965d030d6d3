// Named spdlog loggers, one per component ("sched.separate-load-compute", "sim.dma").
// All write to stderr so that stdout carries only the requested output.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace tandem {

std::shared_ptr<spdlog::logger> logger(const std::string& component);

// "trace".."off"; throws tandem::Error on an unknown level.
void set_log_level(const std::string& level);

}  // namespace tandem
