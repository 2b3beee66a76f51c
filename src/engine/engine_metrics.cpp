// EngineMetrics: the vLLM v1 metric set (names, help strings, types, buckets and label order of
// vllm/v1/metrics/loggers.py) over a MetricsRegistry, so a vLLM Grafana dashboard or scraper
// reads Brook's /metrics unchanged. Families are registered in vLLM's order; every series is
// created up front so a fresh server already exposes zeros (request_success for all three
// reasons included), as prometheus_client does for pre-labelled children.
#include "engine/engine_metrics.h"

#include <utility>
#include <vector>

namespace brook {

namespace {

// vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... while the value is <= maxValue; stops at
// the first mantissa that overshoots.
std::vector<double> oneTwoFiveBuckets(int maxValue)
{
    std::vector<double> buckets;
    for (long long scale = 1;; scale *= 10) {
        for (int mantissa : {1, 2, 5}) {
            const long long value = mantissa * scale;
            if (value > maxValue) return buckets;
            buckets.push_back(static_cast<double>(value));
        }
    }
}

const std::vector<double> kIterationTokenBuckets = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
const std::vector<double> kNBuckets = {1, 2, 5, 10, 20};
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
                                          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kTokenLatencyBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                                  0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kRequestLatencyBuckets = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                                    5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                                    60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

}  // namespace

EngineMetrics::EngineMetrics(std::string modelName, int maxModelLen, std::string engineId)
    : m_labels{{"model_name", modelName}, {"engine", engineId}},
      m_modelName(std::move(modelName)), m_engineId(std::move(engineId))
{
    MetricsRegistry& r = m_registry;
    const Labels& l = m_labels;

    m_running = &r.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", l);
    m_waiting = &r.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", l);
    m_gpuCacheUsage = &r.gauge("vllm:gpu_cache_usage_perc",
                               "GPU KV-cache usage. 1 means 100 percent usage."
                               "DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
                               l);
    m_kvUsage = &r.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", l);
    m_prefixCacheQueries =
        &r.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", l);
    m_prefixCacheHits =
        &r.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", l);

    m_preemptions = &r.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", l);
    m_promptTokens = &r.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", l);
    m_generationTokens = &r.counter("vllm:generation_tokens", "Number of generation tokens processed.", l);
    auto withReason = [&](FinishReason reason) {
        Labels labels = l;
        labels.emplace_back("finished_reason", finishReasonName(reason));
        return &r.counter("vllm:request_success", "Count of successfully processed requests.", labels);
    };
    m_successStop = withReason(FinishReason::Stop);
    m_successLength = withReason(FinishReason::Length);
    m_successAbort = withReason(FinishReason::Abort);

    const std::vector<double> lengthBuckets = oneTwoFiveBuckets(maxModelLen);
    m_requestPromptTokens =
        &r.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", l, lengthBuckets);
    m_requestGenerationTokens =
        &r.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", l, lengthBuckets);
    m_iterationTokens = &r.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", l,
                                     kIterationTokenBuckets);
    m_requestMaxGenerationTokens =
        &r.histogram("vllm:request_max_num_generation_tokens",
                     "Histogram of maximum number of requested generation tokens.", l, lengthBuckets);
    m_requestParamsN = &r.histogram("vllm:request_params_n", "Histogram of the n request parameter.", l, kNBuckets);
    m_requestParamsMaxTokens = &r.histogram("vllm:request_params_max_tokens",
                                            "Histogram of the max_tokens request parameter.", l, lengthBuckets);

    m_ttft = &r.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", l,
                          kTtftBuckets);
    m_itl = &r.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", l,
                         kTokenLatencyBuckets);
    m_tpot = &r.histogram("vllm:request_time_per_output_token_seconds",
                          "Histogram of time_per_output_token_seconds per request.", l, kTokenLatencyBuckets);
    m_e2e = &r.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", l,
                         kRequestLatencyBuckets);
    m_queueTime = &r.histogram("vllm:request_queue_time_seconds",
                               "Histogram of time spent in WAITING phase for request.", l, kRequestLatencyBuckets);
    m_inferenceTime = &r.histogram("vllm:request_inference_time_seconds",
                                   "Histogram of time spent in RUNNING phase for request.", l, kRequestLatencyBuckets);
    m_prefillTime = &r.histogram("vllm:request_prefill_time_seconds",
                                 "Histogram of time spent in PREFILL phase for request.", l, kRequestLatencyBuckets);
    m_decodeTime = &r.histogram("vllm:request_decode_time_seconds",
                                "Histogram of time spent in DECODE phase for request.", l, kRequestLatencyBuckets);
}

void EngineMetrics::setSchedulerState(int running, int waiting, double kvCacheUsage)
{
    m_running->set(running);
    m_waiting->set(waiting);
    m_kvUsage->set(kvCacheUsage);
    m_gpuCacheUsage->set(kvCacheUsage);
}

void EngineMetrics::onStep(int promptTokens, int generationTokens)
{
    if (promptTokens > 0) m_promptTokens->inc(promptTokens);
    if (generationTokens > 0) m_generationTokens->inc(generationTokens);
    m_iterationTokens->observe(static_cast<double>(promptTokens) + generationTokens);
}

void EngineMetrics::onPrefixCacheLookups(long long queriedTokens, long long hitTokens)
{
    if (queriedTokens > 0) m_prefixCacheQueries->inc(double(queriedTokens));
    if (hitTokens > 0) m_prefixCacheHits->inc(double(hitTokens));
}

void EngineMetrics::onPreemption(int count)
{
    if (count > 0) m_preemptions->inc(count);
}

void EngineMetrics::onFirstToken(double ttftSeconds) { m_ttft->observe(ttftSeconds); }

void EngineMetrics::onInterTokenLatency(double seconds) { m_itl->observe(seconds); }

void EngineMetrics::onRequestFinished(FinishReason reason, const FinishedRequestTimings& timings)
{
    switch (reason) {
    case FinishReason::Stop: m_successStop->inc(); break;
    case FinishReason::Length: m_successLength->inc(); break;
    case FinishReason::Abort: m_successAbort->inc(); break;
    }
    m_e2e->observe(timings.e2eSeconds);
    m_queueTime->observe(timings.queueSeconds);
    m_prefillTime->observe(timings.prefillSeconds);
    m_inferenceTime->observe(timings.inferenceSeconds);
    m_decodeTime->observe(timings.decodeSeconds);
    m_requestPromptTokens->observe(timings.promptTokens);
    m_requestGenerationTokens->observe(timings.generationTokens);
    // With n = 1 the longest sequence of the request is its only one.
    m_requestMaxGenerationTokens->observe(timings.generationTokens);
    m_requestParamsN->observe(timings.n);
    if (timings.maxTokensParam > 0) m_requestParamsMaxTokens->observe(timings.maxTokensParam);
    // Per-request TPOT: decode time spread over the tokens after the first.
    if (timings.generationTokens > 1)
        m_tpot->observe(timings.decodeSeconds / static_cast<double>(timings.generationTokens - 1));
}

void EngineMetrics::setCacheConfig(int blockSize, int numBlocks, double gpuMemoryUtilization,
                                   const std::string& cacheDtype)
{
    // An info-style gauge: constant 1, the configuration lives in the labels. A new
    // configuration replaces the old series instead of leaving a stale one behind.
    static const char* kName = "vllm:cache_config_info";
    Labels labels = {{"block_size", std::to_string(blockSize)},
                     {"cache_dtype", cacheDtype},
                     {"gpu_memory_utilization", MetricsRegistry::pythonFloatRepr(gpuMemoryUtilization)},
                     {"num_gpu_blocks", std::to_string(numBlocks)},
                     {"model_name", m_modelName},
                     {"engine", m_engineId}};
    std::lock_guard lock(m_cacheConfigMutex);
    if (!m_cacheConfigLabels.empty() && m_cacheConfigLabels != labels)
        m_registry.removeSeries(kName, m_cacheConfigLabels);
    m_registry.gauge(kName, "Information of the LLMEngine CacheConfig", labels).set(1.0);
    m_cacheConfigLabels = std::move(labels);
}

std::string EngineMetrics::renderPrometheus() const { return m_registry.render(); }

}  // namespace brook
