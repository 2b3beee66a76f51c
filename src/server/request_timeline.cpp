#include "server/request_timeline.h"

#include <spdlog/fmt/fmt.h>

#include <utility>
#include <vector>

namespace brook {

namespace {

thread_local CurrentConnection* t_current = nullptr;

}  // namespace

std::string RequestTimeline::describe() const
{
    const std::vector<std::pair<const char*, Clock::time_point>> hops = {
        {"accept", accepted},      {"first-byte", firstByte},    {"read", requestRead},    {"routed", handlerStart},
        {"json", jsonParsed},      {"prompt", promptReady},      {"submitted", submitted}, {"engine-out", firstOutput},
        {"http-woke", firstTaken}, {"sse-written", firstWritten}};
    std::string out;
    Clock::time_point previous{};
    for (const auto& [name, t] : hops) {
        if (t == Clock::time_point{}) continue;
        if (previous == Clock::time_point{}) out += name;
        else out += fmt::format(" -{:.3f}-> {}", std::chrono::duration<double, std::milli>(t - previous).count(), name);
        previous = t;
    }
    out += fmt::format(" (ms); tokenize {:.3f} ms, engine queue {:.3f} ms, engine TTFT {:.3f} ms",
                       tokenizeSeconds * 1e3, engineQueueSeconds * 1e3, engineTtftSeconds * 1e3);
    if (firstByte != Clock::time_point{} && firstWritten != Clock::time_point{})
        out += fmt::format(", first byte to first event {:.3f} ms; first byte at {} ns (steady clock)",
                           std::chrono::duration<double, std::milli>(firstWritten - firstByte).count(),
                           monotonicNanos(firstByte));
    return out;
}

const CurrentConnection* CurrentConnection::get() { return t_current; }

CurrentConnection::Scope::Scope(socket_t socket, const RequestTimeline& timeline)
{
    // One per worker thread at a time: the server routes one request per thread, in order.
    static thread_local CurrentConnection current;
    current.m_socket = socket;
    current.m_timeline = timeline;
    t_current = &current;
}

CurrentConnection::Scope::~Scope() { t_current = nullptr; }

}  // namespace brook
