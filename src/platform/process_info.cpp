#include "platform/process_info.h"

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// psapi.h after windows.h: it uses its types.
#include <psapi.h>
#else
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace brook {

#ifdef _WIN32

std::string hostName()
{
    char name[MAX_COMPUTERNAME_LENGTH + 1] = {};
    DWORD size = sizeof name;
    return GetComputerNameA(name, &size) ? std::string(name, size) : std::string();
}

uint64_t processId() { return GetCurrentProcessId(); }

double peakResidentMiB()
{
    PROCESS_MEMORY_COUNTERS counters{};
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return 0;
    return double(counters.PeakWorkingSetSize) / (1024.0 * 1024.0);
}

const char* nullDeviceRedirect() { return "2>nul"; }

#else

std::string hostName()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return {};
    return name;
}

uint64_t processId() { return uint64_t(::getpid()); }

double peakResidentMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

const char* nullDeviceRedirect() { return "2>/dev/null"; }

#endif

}  // namespace brook
