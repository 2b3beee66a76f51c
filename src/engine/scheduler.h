// Scheduler: decides, each engine step, which sequences compute how many tokens (vLLM V1's
// unified scheduler, nano-vllm's shape). One token budget per step (max_num_batched_tokens)
// is spent first on running sequences (decodes and unfinished prefill chunks), then on
// waiting ones in FCFS (or priority) order, each prompt chunked to what the budget leaves.
// When KV blocks run out, the lowest-priority running sequence is preempted by recompute:
// its blocks are freed and it goes back to the head of the waiting queue.
// With prefix caching (block_manager.h), a waiting sequence starts from the longest cached prefix
// of its tokens: those whole blocks count as computed, and only the rest is scheduled.
// It only decides; the engine runs the step and reports back with postStep(). Engine thread only.
#pragma once

#include "engine/block_manager.h"
#include "engine/sequence.h"
#include "engine/serving_settings.h"  // SchedulingPolicy

#include <deque>
#include <memory>
#include <vector>

namespace brook {

struct SchedulerConfig {
    int maxNumSeqs = 256;
    int maxNumBatchedTokens = 8192;
    SchedulingPolicy policy = SchedulingPolicy::Fcfs;
};

struct ScheduledSequence {
    Sequence* seq = nullptr;
    int numNewTokens = 0;  // tokens [numComputedTokens, numComputedTokens + numNewTokens)
    bool sample = false;   // this chunk reaches the end of the sequence: sample the next token
};

struct SchedulerOutput {
    std::vector<ScheduledSequence> scheduled;
    std::vector<Sequence*> preempted;  // preempted during this schedule() call
    int numScheduledTokens = 0;
    int numPrefillTokens = 0;  // of which prompt (or recompute) tokens
    bool empty() const { return scheduled.empty(); }
};

class Scheduler {
public:
    Scheduler(SchedulerConfig config, BlockManager& blocks);

    void add(std::unique_ptr<Sequence> seq);
    SchedulerOutput schedule();
    // After the backend ran `output`: advances computed counts. Sampled tokens are appended
    // by the engine before calling finish() on those that end.
    void postStep(const SchedulerOutput& output);
    // Removes a sequence (finished or aborted), frees its blocks and returns ownership.
    std::unique_ptr<Sequence> finish(RequestId id);

    Sequence* find(RequestId id);
    bool hasWork() const { return !m_waiting.empty() || !m_running.empty(); }
    int numWaiting() const { return static_cast<int>(m_waiting.size()); }
    int numRunning() const { return static_cast<int>(m_running.size()); }
    long long numPreemptions() const { return m_numPreemptions; }
    // Prefix cache lookups since start, in prompt tokens (vLLM's prefix_cache_queries / _hits):
    // each request's prompt is looked up once, when it is first scheduled.
    long long prefixCacheQueries() const { return m_prefixCacheQueries; }
    long long prefixCacheHits() const { return m_prefixCacheHits; }
    const SchedulerConfig& config() const { return m_config; }
    // What it holds, for the request inspector (read only; engine thread only).
    const std::deque<std::unique_ptr<Sequence>>& waitingSequences() const { return m_waiting; }
    const std::vector<std::unique_ptr<Sequence>>& runningSequences() const { return m_running; }

private:
    void preempt(Sequence* seq);
    void insertWaiting(std::unique_ptr<Sequence> seq, bool atFront);
    bool runsBefore(const Sequence& a, const Sequence& b) const;

    SchedulerConfig m_config;
    BlockManager& m_blocks;
    std::deque<std::unique_ptr<Sequence>> m_waiting;
    std::vector<std::unique_ptr<Sequence>> m_running;  // in priority order: last is preempted first
    long long m_numPreemptions = 0;
    long long m_prefixCacheQueries = 0, m_prefixCacheHits = 0;
};

}  // namespace brook
