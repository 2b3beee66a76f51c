// Facts about this process and machine that benchmarks record, the same on Linux and Windows.
#pragma once

#include <cstdint>
#include <string>

namespace brook {

std::string hostName();  // "" when unknown
uint64_t processId();
double peakResidentMiB();          // the process's peak resident set (Windows: peak working set)
const char* nullDeviceRedirect();  // a shell suffix that discards stderr: "2>/dev/null" or "2>nul"

}  // namespace brook
