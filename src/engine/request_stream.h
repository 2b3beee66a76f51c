// RequestStream: a blocking queue over one request's outputs, for callers that would rather
// pull than be called back (brook-run, brook-bench, server handlers, tests).
#pragma once

#include "engine/engine.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

namespace brook {

class RequestStream {
public:
    // Thread-safe. The error is the engine's validation message.
    static Result<std::shared_ptr<RequestStream>> submit(Engine& engine, GenerationRequest request);

    // Blocks until the next output; nullopt once the final output has been returned.
    std::optional<RequestOutput> next();
    RequestId id() const { return m_id; }
    void cancel();  // thread-safe

private:
    explicit RequestStream(Engine& engine) : m_engine(engine) {}
    void push(const RequestOutput& output);

    Engine& m_engine;
    RequestId m_id = 0;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<RequestOutput> m_queue;
    bool m_done = false;     // the final output was pushed
    bool m_drained = false;  // ... and returned
};

}  // namespace brook
