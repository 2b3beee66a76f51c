// StopSignals: turns the operating system's "please stop" into a call on an ordinary thread.
// POSIX: SIGINT and SIGTERM (also when started in the background with SIGINT ignored); the handler
// only writes the signal into a pipe (async-signal-safe, and it may run on any thread, including
// ones libraries started before main). Windows: Ctrl+C, Ctrl+Break and closing the console window
// (the console control handler already runs on a thread of its own).
// Install once per process; onStop runs on a watcher thread, once per signal, with the signal's
// name ("SIGINT", "SIGTERM", "CTRL_C", ...).
#pragma once

#include <functional>
#include <string>

namespace brook {

// Returns an empty string on success, else why the handlers could not be installed.
std::string installStopSignals(std::function<void(const std::string& signalName)> onStop);

}  // namespace brook
