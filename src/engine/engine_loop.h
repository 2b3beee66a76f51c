// EngineLoop: the Engine's inside (engine.h is the API). It owns the step-loop thread, which alone
// touches the scheduler, the block manager, the request tracker and the backend (llama.cpp's
// one-inference-thread rule); callers' threads only reach the inbox under m_mutex.
// Internal to src/engine: front ends include engine.h.
#pragma once

#include "engine/backend.h"
#include "engine/block_manager.h"
#include "engine/engine_config.h"
#include "engine/engine_metrics.h"
#include "engine/engine_stats.h"
#include "engine/request.h"
#include "engine/latency_window.h"
#include "engine/request_tracker.h"
#include "engine/result.h"
#include "engine/scheduler.h"
#include "engine/structured/structured_decoding.h"

#include <atomic>
#include <functional>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace brook {

class RequestOutputProcessor;
class Tokenizer;

class EngineLoop {
public:
    // The Engine API, one to one: engine.h says what each call does and which threads may make it.
    EngineLoop(EngineConfig config, std::unique_ptr<Backend> backend, std::shared_ptr<const Tokenizer> tokenizer,
               std::vector<int32_t> eosTokenIds);
    ~EngineLoop();
    EngineLoop(const EngineLoop&) = delete;
    EngineLoop& operator=(const EngineLoop&) = delete;

    Result<RequestId> submit(GenerationRequest request, OutputCallback callback);
    Result<std::vector<RequestId>> submitAll(std::vector<GenerationRequest> requests,
                                             const std::function<OutputCallback(size_t)>& callbackFor);
    void cancel(RequestId id);
    void shutdown();
    Result<std::vector<float>> promptLogits(std::vector<int32_t> tokens);
    EngineStats stats() const;
    std::vector<RequestSnapshot> requests() const;
    const EngineConfig& config() const { return m_config; }                 // thread-safe
    const ModelConfig& modelConfig() const { return m_backend->config(); }  // thread-safe
    const Tokenizer& tokenizer() const { return *m_tokenizer; }             // thread-safe
    std::string backendName() const { return m_backend->name(); }           // thread-safe
    EngineMetrics& metrics() { return m_metrics; }                          // thread-safe

private:
    struct LogitsJob;  // a promptLogits call waiting for the engine thread
    struct Pending {
        std::unique_ptr<Sequence> seq;
        std::unique_ptr<RequestOutputProcessor> processor;
        std::string source;
        std::shared_ptr<structured::GrammarAutomaton> grammar;  // structured output; null: none
    };

    // submit's work on the caller's thread: the prompt's tokens, validation, the grammar.
    Result<Pending> prepare(GenerationRequest request, OutputCallback callback);
    // Makes `pending` visible to the engine thread at once (one step sees all of them).
    Result<void> enqueue(std::vector<Pending> pending);
    void run();
    void step();
    void finishRequest(RequestId id, FinishReason reason);
    void abortRequest(RequestId id);
    void publishStats();
    void maybeLogStats();

    EngineConfig m_config;
    std::unique_ptr<Backend> m_backend;
    std::shared_ptr<const Tokenizer> m_tokenizer;
    std::vector<int32_t> m_eosTokenIds;
    EngineMetrics m_metrics;

    // Engine thread only.
    BlockManager m_blocks;
    Scheduler m_scheduler;
    std::unordered_map<RequestId, std::unique_ptr<RequestOutputProcessor>> m_processors;
    std::vector<BatchSequence> m_batch;
    long long m_promptTokensTotal = 0, m_generationTokensTotal = 0, m_steps = 0;
    long long m_requestsFinished = 0, m_requestsAborted = 0;
    long long m_lastPrefixCacheQueries = 0, m_lastPrefixCacheHits = 0;  // fed to m_metrics so far
    EngineStepTimes m_stepTimes;
    Clock::time_point m_lastStatsLog;
    Clock::time_point m_lastMemoryQuery;  // backend memory is queried at most every 250 ms
    BackendMemory m_memory;
    long long m_lastLoggedPrompt = 0, m_lastLoggedGeneration = 0;
    RequestTracker m_tracker;
    Clock::time_point m_lastRequestsPublish;
    LatencyWindow m_latency;  // thread-safe itself: recorded here, read by stats()
    // Structured outputs: compiles at submit (any thread), masks and advances on the engine thread.
    std::unique_ptr<structured::StructuredDecoding> m_structured;
    std::vector<std::pair<RequestId, int32_t>> m_structuredTokens;  // a step's sampled tokens, reused

    // Shared between callers and the engine thread.
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::vector<Pending> m_inbox;
    std::vector<RequestId> m_cancelled;
    std::vector<std::shared_ptr<LogitsJob>> m_logitsJobs;
    bool m_stopping = false;
    EngineStats m_stats;
    std::vector<RequestSnapshot> m_requests;
    std::atomic<RequestId> m_nextId{1};

    std::thread m_thread;  // last: starts after everything above exists
};

}  // namespace brook
