// EngineMetrics: vLLM's metric names, types, labels and buckets (listed in docs/server.md, "Metrics"),
// fed by the engine thread and rendered by /metrics. Labels on every series: model_name, engine.
// Thread-safe (the registry is).
#pragma once

#include "engine/metrics_registry.h"
#include "engine/request.h"

#include <mutex>
#include <string>

namespace brook {

struct FinishedRequestTimings {
    double e2eSeconds = 0;        // arrival -> finish
    double queueSeconds = 0;      // arrival -> first scheduled
    double prefillSeconds = 0;    // first scheduled -> first token
    double decodeSeconds = 0;     // first token -> finish
    double inferenceSeconds = 0;  // first scheduled -> finish
    int promptTokens = 0;
    int generationTokens = 0;
    int maxTokensParam = 0;
    int n = 1;
};

class EngineMetrics {
public:
    EngineMetrics(std::string modelName, int maxModelLen, std::string engineId = "0");

    void setSchedulerState(int running, int waiting, double kvCacheUsage);  // kv usage 0..1
    void onStep(int promptTokens, int generationTokens);                    // tokens computed in one engine step
    void onPreemption(int count = 1);
    void onPrefixCacheLookups(long long queriedTokens, long long hitTokens);  // in tokens, vLLM's counting
    void onFirstToken(double ttftSeconds);
    void onInterTokenLatency(double seconds);
    void onRequestFinished(FinishReason reason, const FinishedRequestTimings& timings);
    void setCacheConfig(int blockSize, int numBlocks, double gpuMemoryUtilization, const std::string& cacheDtype);

    std::string renderPrometheus() const;
    MetricsRegistry& registry() { return m_registry; }

private:
    MetricsRegistry m_registry;
    Labels m_labels;
    // Handles into m_registry, created in the constructor.
    MetricsRegistry::Gauge* m_running;
    MetricsRegistry::Gauge* m_waiting;
    MetricsRegistry::Gauge* m_kvUsage;
    MetricsRegistry::Gauge* m_gpuCacheUsage;  // deprecated alias still read by older dashboards
    MetricsRegistry::Counter* m_prefixCacheQueries;
    MetricsRegistry::Counter* m_prefixCacheHits;
    MetricsRegistry::Counter* m_preemptions;
    MetricsRegistry::Counter* m_promptTokens;
    MetricsRegistry::Counter* m_generationTokens;
    MetricsRegistry::Counter* m_successStop;
    MetricsRegistry::Counter* m_successLength;
    MetricsRegistry::Counter* m_successAbort;
    MetricsRegistry::Histogram* m_iterationTokens;
    MetricsRegistry::Histogram* m_requestPromptTokens;
    MetricsRegistry::Histogram* m_requestGenerationTokens;
    MetricsRegistry::Histogram* m_requestMaxGenerationTokens;
    MetricsRegistry::Histogram* m_requestParamsMaxTokens;
    MetricsRegistry::Histogram* m_requestParamsN;
    MetricsRegistry::Histogram* m_ttft;
    MetricsRegistry::Histogram* m_itl;
    MetricsRegistry::Histogram* m_tpot;
    MetricsRegistry::Histogram* m_e2e;
    MetricsRegistry::Histogram* m_queueTime;
    MetricsRegistry::Histogram* m_inferenceTime;
    MetricsRegistry::Histogram* m_prefillTime;
    MetricsRegistry::Histogram* m_decodeTime;
    std::string m_modelName;
    std::string m_engineId;
    std::mutex m_cacheConfigMutex;  // guards m_cacheConfigLabels
    Labels m_cacheConfigLabels;     // labels of the current vllm:cache_config_info series
};

}  // namespace brook
