// RequestTracker: the request inspector's view of the engine: for every live request its source,
// phase (queued, prefill, decode, preempted), token counts and the time it has spent in each
// phase. The phase is read off the scheduler's own state after every step (no hooks inside the
// scheduler): waiting and never run = queued, waiting after a preemption = preempted, running with
// uncomputed prompt (or recompute) tokens = prefill, else decode. The time since the previous
// update is credited to the phase the request was in during it, split at the sequence's own
// first-scheduled and first-token times when it crossed them (vLLM's queue / prefill / decode).
// Engine thread only; the engine publishes snapshot() under its mutex for other threads.
#pragma once

#include "engine/request.h"
#include "engine/sequence.h"

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace brook {

class Scheduler;

class RequestTracker {
public:
    void onArrived(const Sequence& seq, std::string source);
    // Re-reads every live sequence's phase from the scheduler and credits the elapsed time.
    void update(const Scheduler& scheduler, Clock::time_point now);
    void onFinished(RequestId id);
    // Live requests in arrival order, times as of `now`.
    std::vector<RequestSnapshot> snapshot(Clock::time_point now) const;
    size_t size() const { return m_entries.size(); }

    static RequestPhase phaseOf(const Sequence& seq);

private:
    struct Entry {
        RequestSnapshot snap;
        Clock::time_point arrival;
        Clock::time_point lastUpdate;
    };
    void updateOne(const Sequence& seq, Clock::time_point now);

    std::unordered_map<RequestId, Entry> m_entries;
};

}  // namespace brook
