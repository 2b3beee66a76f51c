// RequestTimeline: when one HTTP generation request passed each hop of the serving path, from
// the connection's accept to its first token's SSE event leaving the socket (issue 19: at one
// client the HTTP path cost more than the model, and the split says where). The guarded server
// stamps the network hops, the completion handler the rest; the engine reports its own queue
// and time to first token with the first output. At --log-level debug one line per streamed
// request gives the split, with the first byte's time in steady-clock nanoseconds so that it can
// be joined with brook-bench serve's own debug line (same machine, same monotonic clock).
//
// CurrentConnection is how the handler, which cpp-httplib 0.11 calls without the socket, learns
// the socket and the network hops: GuardedHttpServer publishes them in a thread-local scope
// around each request it routes; the handler runs on that same worker thread.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

namespace brook {

struct RequestTimeline {
    using Clock = std::chrono::steady_clock;
    Clock::time_point accepted;      // the connection was handed to a worker, or its previous answer ended
    Clock::time_point firstByte;     // the request's first byte had arrived
    Clock::time_point requestRead;   // head and body in, checked (RequestReader)
    Clock::time_point handlerStart;  // cpp-httplib has parsed and routed it
    Clock::time_point jsonParsed;
    Clock::time_point promptReady;   // fields checked, chat template applied, tokenized
    Clock::time_point submitted;     // Engine::submit returned
    Clock::time_point firstOutput;   // the engine thread handed over the first token
    Clock::time_point firstTaken;    // the HTTP thread woke up with it
    Clock::time_point firstWritten;  // its SSE event was written to the socket
    double tokenizeSeconds = 0;      // of the "prompt" hop: chat template and tokenizer
    double engineQueueSeconds = 0;   // the engine's own: arrival to first scheduled (wake-up, queue)
    double engineTtftSeconds = 0;    // arrival to first token

    // "accept -0.085-> first-byte -0.011-> read ... (ms); engine ...": every hop that was
    // stamped, in order, with the milliseconds between them.
    std::string describe() const;
    static long long monotonicNanos(Clock::time_point t)
    {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    }
};

class CurrentConnection {
public:
    // The socket and timeline of the request this worker thread is routing; null outside one.
    static const CurrentConnection* get();

    // Published for the scope's lifetime (GuardedHttpServer, around process_request).
    class Scope {
    public:
        Scope(socket_t socket, const RequestTimeline& timeline);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
    };

    socket_t socket() const { return m_socket; }
    const RequestTimeline& timeline() const { return m_timeline; }

private:
    socket_t m_socket = INVALID_SOCKET;
    RequestTimeline m_timeline;
};

}  // namespace brook
