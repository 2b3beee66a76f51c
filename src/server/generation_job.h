// GenerationJob: the engine requests behind one API call (n choices, or a batch of prompts),
// merged into one queue the HTTP thread pulls from. Engine callbacks only push and notify, so
// they return at once (the engine-thread rule). Destroying or cancelling the job aborts every
// request still running, which frees its KV blocks within one engine step.
// Thread-safe: the engine thread pushes, one HTTP thread pulls, any thread may cancel.
#pragma once

#include "engine/engine.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace brook {

struct JobEvent {
    int choice = 0;  // index into the submitted requests
    RequestOutput output;
    std::chrono::steady_clock::time_point received;  // when the engine thread handed it over
};

class GenerationJob {
public:
    // Submits every request; when one is refused the others are cancelled and the engine's
    // message returned with the failing request's index. `activeSequences`, when given, counts
    // requests submitted and not yet finished (decremented on the engine thread).
    struct SubmitError {
        size_t index = 0;
        Error error;  // the engine's, code and field kept
    };
    static std::variant<std::unique_ptr<GenerationJob>, SubmitError> start(
        Engine& engine, std::vector<GenerationRequest> requests,
        std::shared_ptr<std::atomic<int>> activeSequences = {});
    ~GenerationJob();

    // The next output of any choice; nullopt after `timeout` or once every choice has finished.
    std::optional<JobEvent> next(std::chrono::milliseconds timeout);
    // Waits up to `timeout` for an output, then moves every output queued at that moment into
    // `out` (appended; one lock for the batch). Outputs that arrive while the caller turns these
    // into events wait for the next call, so the first token is never held back behind later ones.
    // Returns how many were taken.
    size_t takeAll(std::chrono::milliseconds timeout, std::vector<JobEvent>& out);
    bool done() const;  // every final output has been returned by next()
    void cancel();      // aborts every unfinished request; their final "abort" outputs still come
    size_t size() const { return m_ids.size(); }

private:
    struct Channel {
        std::mutex mutex;
        std::condition_variable ready;
        std::deque<JobEvent> queue;
        size_t finalsPushed = 0;
    };
    GenerationJob(Engine& engine) : m_engine(engine), m_channel(std::make_shared<Channel>()) {}

    Engine& m_engine;
    std::shared_ptr<Channel> m_channel;
    std::vector<RequestId> m_ids;
    size_t m_finalsReturned = 0;  // HTTP thread only
};

}  // namespace brook
