// Which engine settings each backend honours, in one table (docs/server.md, "Flags per backend").
//
// Every engine flag brook-serve, brook-run and brook-bench accept (and the YAML key of the same
// name) has a row here. A setting a backend does not honour is either refused with an error that
// says so, or, where vLLM itself only warns or silently ignores it, accepted with a one-line
// warning. test_backend_support checks that every flag the tools define has a row, so a new
// flag cannot be ignored without a word.
//
// "Given" means different from ServingSettings' default: the launcher sees the merged options,
// not where they came from (a flag, a YAML key or the app's panel), and a default value asks for
// nothing a backend could fail to do.
#pragma once

#include "engine/result.h"
#include "launch/launch_options.h"

#include <string>
#include <vector>

namespace brook {

enum class WhenUnsupported {
    Warn,    // accepted; a one-line warning names the flag and what the backend does instead
    Refuse,  // the launch fails with an InvalidArgument naming the flag
};

struct EngineSettingSupport {
    const char* flag;  // the command-line spelling, "--gpu-memory-utilization"
    bool onCpu;        // honoured by the CPU backend
    bool onCuda;       // honoured by the CUDA backend
    WhenUnsupported whenUnsupported;
    const char* unsupportedWhy;                // the rest of the warning or error ("" when honoured by both)
    bool (*given)(const LaunchOptions& options);  // set to something other than the default
};

const std::vector<EngineSettingSupport>& engineSettingSupport();
const EngineSettingSupport* findEngineSetting(const std::string& flag);

// The warnings a launch on `device` logs for settings that backend ignores, or the error for
// the first one it refuses (its field is the setting, as launchErrorForCli expects).
Result<std::vector<std::string>> checkSettingsForBackend(const LaunchOptions& options, Device device);

}  // namespace brook
