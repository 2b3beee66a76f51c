#include "platform/stop_signals.h"

#include <system_error>
#include <thread>
#include <utility>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <cerrno>
#include <csignal>
#include <cstring>
#include <unistd.h>
#endif

namespace brook {
namespace {

std::function<void(const std::string&)> g_onStop;

#ifdef _WIN32

BOOL WINAPI onConsoleEvent(DWORD event)
{
    const char* name = nullptr;
    switch (event) {
    case CTRL_C_EVENT: name = "CTRL_C"; break;
    case CTRL_BREAK_EVENT: name = "CTRL_BREAK"; break;
    case CTRL_CLOSE_EVENT: name = "CTRL_CLOSE"; break;
    case CTRL_SHUTDOWN_EVENT: name = "CTRL_SHUTDOWN"; break;
    default: return FALSE;
    }
    g_onStop(name);
    return TRUE;
}

#else

int g_signalPipe[2] = {-1, -1};

void onSignal(int signal)
{
    const char byte = char(signal);
    [[maybe_unused]] ssize_t written = ::write(g_signalPipe[1], &byte, 1);
}

void watchSignals()
{
    for (;;) {
        char signal = 0;
        if (::read(g_signalPipe[0], &signal, 1) != 1) continue;
        g_onStop(signal == SIGINT ? "SIGINT" : "SIGTERM");
    }
}

#endif

}  // namespace

std::string installStopSignals(std::function<void(const std::string& signalName)> onStop)
{
    g_onStop = std::move(onStop);
#ifdef _WIN32
    if (!SetConsoleCtrlHandler(onConsoleEvent, TRUE)) return "cannot install the console control handler";
#else
    if (::pipe(g_signalPipe) != 0) return std::string("cannot create the signal pipe: ") + std::strerror(errno);
    try {
        std::thread(watchSignals).detach();
    } catch (const std::system_error& e) {
        return std::string("cannot start the signal thread: ") + e.what();
    }
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
#endif
    return {};
}

}  // namespace brook
