// Command-line tools log to stderr so their stdout stays clean for answers and JSON.
#pragma once

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

namespace brook {

inline void setUpCliLogging(const std::string& level)
{
    auto logger = spdlog::stderr_color_mt("brook");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace brook
