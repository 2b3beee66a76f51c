#include "engine/scheduler.h"

#include <algorithm>
#include <cassert>

namespace brook {

namespace {
// A decode computes exactly the one token sampled last step; anything else is prefill
// (a prompt chunk or the recompute of a preempted sequence).
bool isDecode(const Sequence& seq, int numNew)
{
    return numNew == 1 && seq.numOutputTokens() > 0 && seq.numComputedTokens == seq.numTokens() - 1;
}
}  // namespace

Scheduler::Scheduler(SchedulerConfig config, BlockManager& blocks) : m_config(config), m_blocks(blocks)
{
    assert(m_config.maxNumSeqs > 0 && m_config.maxNumBatchedTokens > 0);
}

bool Scheduler::runsBefore(const Sequence& a, const Sequence& b) const
{
    if (m_config.policy == SchedulingPolicy::Priority && a.priority != b.priority) return a.priority < b.priority;
    if (a.arrivalTime != b.arrivalTime) return a.arrivalTime < b.arrivalTime;
    return a.id < b.id;
}

void Scheduler::add(std::unique_ptr<Sequence> seq)
{
    seq->state = SequenceState::Waiting;
    insertWaiting(std::move(seq), false);
}

void Scheduler::insertWaiting(std::unique_ptr<Sequence> seq, bool atFront)
{
    if (m_config.policy == SchedulingPolicy::Fcfs) {
        // Preempted sequences arrived earlier than anything waiting: they go back to the head.
        if (atFront) m_waiting.push_front(std::move(seq));
        else m_waiting.push_back(std::move(seq));
        return;
    }
    auto pos =
        std::find_if(m_waiting.begin(), m_waiting.end(), [&](const auto& other) { return runsBefore(*seq, *other); });
    m_waiting.insert(pos, std::move(seq));
}

void Scheduler::preempt(Sequence* seq)
{
    auto it = std::find_if(m_running.begin(), m_running.end(), [&](const auto& s) { return s.get() == seq; });
    assert(it != m_running.end());
    std::unique_ptr<Sequence> owned = std::move(*it);
    m_running.erase(it);
    m_blocks.release(*owned);
    owned->numComputedTokens = 0;  // recompute prompt + output when it runs again
    owned->state = SequenceState::Waiting;
    ++owned->numPreemptions;
    ++m_numPreemptions;
    insertWaiting(std::move(owned), true);
}

SchedulerOutput Scheduler::schedule()
{
    SchedulerOutput out;
    int budget = m_config.maxNumBatchedTokens;

    // 1. Running sequences, highest priority first. If one cannot get its blocks, preempt
    //    from the back (lowest priority) until it can, or until it is itself the victim.
    for (size_t i = 0; i < m_running.size() && budget > 0;) {
        Sequence* seq = m_running[i].get();
        const int numNew = std::min(seq->numUncomputedTokens(), budget);
        assert(numNew > 0);
        bool selfPreempted = false;
        while (!m_blocks.canAllocate(*seq, numNew)) {
            // The back is never already scheduled: scheduled ones sit before index i.
            Sequence* victim = m_running.back().get();
            preempt(victim);
            out.preempted.push_back(victim);
            if (victim == seq) {
                selfPreempted = true;
                break;
            }
        }
        if (selfPreempted) break;
        m_blocks.allocate(*seq, numNew);
        const bool sample = seq->numComputedTokens + numNew == seq->numTokens();
        out.scheduled.push_back({seq, numNew, sample});
        out.numScheduledTokens += numNew;
        if (!isDecode(*seq, numNew)) out.numPrefillTokens += numNew;
        budget -= numNew;
        ++i;
    }

    // 2. Waiting sequences, in order, while budget, seats and blocks last. Nothing new is
    //    admitted in a step that had to preempt: memory is already short.
    if (out.preempted.empty()) {
        while (!m_waiting.empty() && budget > 0 && static_cast<int>(m_running.size()) < m_config.maxNumSeqs) {
            Sequence* seq = m_waiting.front().get();
            // Whatever of its tokens the prefix cache holds is not computed again (whole blocks).
            const std::vector<int32_t> cached = m_blocks.findCachedPrefix(*seq);
            const int numCached = int(cached.size()) * m_blocks.blockSize();
            const int numNew = std::min(seq->numTokens() - numCached, budget);
            if (!m_blocks.allocateWithPrefix(*seq, cached, numNew)) break;  // FCFS: nobody jumps the queue
            if (seq->numCachedPromptTokens < 0) {
                // Counted once per request, in tokens, as vLLM counts queries and hits; a
                // preempted sequence finding its own blocks again is not a new query.
                seq->numCachedPromptTokens = numCached;
                m_prefixCacheQueries += seq->numPromptTokens;
                m_prefixCacheHits += numCached;
            }
            std::unique_ptr<Sequence> owned = std::move(m_waiting.front());
            m_waiting.pop_front();
            owned->state = SequenceState::Running;
            if (!owned->wasScheduled()) owned->firstScheduledTime = Clock::now();
            const bool sample = owned->numComputedTokens + numNew == owned->numTokens();
            out.scheduled.push_back({seq, numNew, sample});
            out.numScheduledTokens += numNew;
            if (!isDecode(*seq, numNew)) out.numPrefillTokens += numNew;
            budget -= numNew;
            m_running.push_back(std::move(owned));
        }
    }
    return out;
}

void Scheduler::postStep(const SchedulerOutput& output)
{
    for (const ScheduledSequence& s : output.scheduled) {
        s.seq->numComputedTokens += s.numNewTokens;
        assert(s.seq->numComputedTokens <= s.seq->numTokens());
        // Only now, with their K/V written, may full blocks be found by others.
        m_blocks.cacheFullBlocks(*s.seq);
    }
}

std::unique_ptr<Sequence> Scheduler::finish(RequestId id)
{
    auto running = std::find_if(m_running.begin(), m_running.end(), [&](const auto& s) { return s->id == id; });
    std::unique_ptr<Sequence> owned;
    if (running != m_running.end()) {
        owned = std::move(*running);
        m_running.erase(running);
    } else {
        auto waiting = std::find_if(m_waiting.begin(), m_waiting.end(), [&](const auto& s) { return s->id == id; });
        if (waiting == m_waiting.end()) return nullptr;
        owned = std::move(*waiting);
        m_waiting.erase(waiting);
    }
    m_blocks.release(*owned);
    owned->state = SequenceState::Finished;
    return owned;
}

Sequence* Scheduler::find(RequestId id)
{
    for (auto& s : m_running)
        if (s->id == id) return s.get();
    for (auto& s : m_waiting)
        if (s->id == id) return s.get();
    return nullptr;
}

}  // namespace brook
