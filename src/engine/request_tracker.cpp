#include "engine/request_tracker.h"

#include "engine/scheduler.h"

#include <algorithm>
#include <chrono>

namespace brook {

namespace {
double secondsBetween(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}  // namespace

RequestPhase RequestTracker::phaseOf(const Sequence& seq)
{
    if (seq.state != SequenceState::Running)
        return seq.numPreemptions > 0 ? RequestPhase::Preempted : RequestPhase::Queued;
    // A decode has everything but the token sampled last step in the cache; anything further
    // behind is a prompt chunk or the recompute after a preemption.
    if (seq.numOutputTokens() > 0 && seq.numComputedTokens >= seq.numTokens() - 1) return RequestPhase::Decode;
    return RequestPhase::Prefill;
}

void RequestTracker::onArrived(const Sequence& seq, std::string source)
{
    Entry e;
    e.snap.id = seq.id;
    e.snap.source = std::move(source);
    e.snap.promptTokens = seq.numPromptTokens;
    e.arrival = seq.arrivalTime;
    e.lastUpdate = seq.arrivalTime;  // the time before the engine thread saw it was queued too
    m_entries[seq.id] = std::move(e);
}

void RequestTracker::updateOne(const Sequence& seq, Clock::time_point now)
{
    auto it = m_entries.find(seq.id);
    if (it == m_entries.end()) return;
    Entry& e = it->second;
    const RequestPhase next = phaseOf(seq);
    // A step that starts a prompt often finishes it too: split the interval at the moments the
    // sequence records (first scheduled, first token), so queue, prefill and decode each get
    // their share as vLLM defines them, not the phase seen at the previous update.
    Clock::time_point from = e.lastUpdate;
    RequestPhase current = e.snap.phase;
    auto credit = [&](RequestPhase phase, Clock::time_point until) {
        e.snap.phaseSeconds[size_t(phase)] += std::max(0.0, secondsBetween(from, until));
        from = std::max(from, until);
    };
    if (current == RequestPhase::Queued && next != RequestPhase::Queued && seq.wasScheduled() &&
        seq.firstScheduledTime > from && seq.firstScheduledTime < now) {
        credit(RequestPhase::Queued, seq.firstScheduledTime);
        current = RequestPhase::Prefill;
    }
    if (current == RequestPhase::Prefill && next == RequestPhase::Decode && seq.numPreemptions == 0 &&
        seq.firstTokenTime > from && seq.firstTokenTime <= now) {
        credit(RequestPhase::Prefill, seq.firstTokenTime);
        current = RequestPhase::Decode;
    }
    credit(current, now);
    e.lastUpdate = now;
    e.snap.phase = next;
    e.snap.generatedTokens = std::max(0, seq.numOutputTokens());
    e.snap.preemptions = seq.numPreemptions;
}

void RequestTracker::update(const Scheduler& scheduler, Clock::time_point now)
{
    for (const auto& seq : scheduler.runningSequences()) updateOne(*seq, now);
    for (const auto& seq : scheduler.waitingSequences()) updateOne(*seq, now);
}

void RequestTracker::onFinished(RequestId id) { m_entries.erase(id); }

std::vector<RequestSnapshot> RequestTracker::snapshot(Clock::time_point now) const
{
    std::vector<std::pair<Clock::time_point, RequestSnapshot>> ordered;
    ordered.reserve(m_entries.size());
    for (const auto& [id, e] : m_entries) {
        RequestSnapshot s = e.snap;
        // The current phase has lasted since the last update: show it as of now.
        s.phaseSeconds[size_t(s.phase)] += std::max(0.0, secondsBetween(e.lastUpdate, now));
        s.ageSeconds = std::max(0.0, secondsBetween(e.arrival, now));
        ordered.emplace_back(e.arrival, std::move(s));
    }
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : a.second.id < b.second.id;
    });
    std::vector<RequestSnapshot> out;
    out.reserve(ordered.size());
    for (auto& [when, s] : ordered) out.push_back(std::move(s));
    return out;
}

}  // namespace brook
