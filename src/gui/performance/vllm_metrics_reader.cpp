#include "gui/performance/vllm_metrics_reader.h"

#include <algorithm>

namespace brook {

VllmMetricsReader::VllmMetricsReader(double windowSeconds) : m_windowSeconds(windowSeconds) {}

LatencyPercentiles VllmMetricsReader::percentiles(const PromHistogram& now, const PromHistogram& then)
{
    const PromHistogram delta = now.minus(then);
    LatencyPercentiles p;
    const auto p50 = delta.quantile(0.50), p95 = delta.quantile(0.95);
    if (!p50 || !p95) return p;
    p.count = int(delta.count);
    p.p50 = *p50;
    p.p95 = *p95;
    return p;
}

MetricsSnapshot VllmMetricsReader::read(const PrometheusText& m, double timeSeconds)
{
    MetricsSnapshot s;
    s.timeSeconds = timeSeconds;
    s.running = m.sum("vllm:num_requests_running").value_or(0.0);
    s.waiting = m.sum("vllm:num_requests_waiting").value_or(0.0);
    // Several engines: the fullest cache is the one that preempts first.
    s.kvCacheUsage = m.max("vllm:kv_cache_usage_perc").value_or(m.max("vllm:gpu_cache_usage_perc").value_or(0.0));
    s.preemptionsTotal = m.sumOfFirst({"vllm:num_preemptions_total", "vllm:num_preemptions"});
    s.promptTokensTotal = m.sumOfFirst({"vllm:prompt_tokens_total", "vllm:prompt_tokens"});
    s.generationTokensTotal = m.sumOfFirst({"vllm:generation_tokens_total", "vllm:generation_tokens"});
    // vLLM before 0.10 named them gpu_prefix_cache_*.
    s.prefixCacheQueriesTotal =
        m.sumOfFirst({"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"});
    s.prefixCacheHitsTotal = m.sumOfFirst({"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"});
    s.promptTokensPerSecond = m.sum("vllm:avg_prompt_throughput_toks_per_s");
    s.generationTokensPerSecond = m.sum("vllm:avg_generation_throughput_toks_per_s");
    if (auto weights = m.sum("brook:weights_bytes")) {
        s.hasMemory = true;
        s.weightsBytes = *weights;
        s.kvCacheBytes = m.sum("brook:kv_cache_bytes").value_or(0.0);
        const double used = m.sum("brook:device_memory_used_bytes").value_or(s.weightsBytes + s.kvCacheBytes);
        s.activationsBytes = std::max(0.0, used - s.weightsBytes - s.kvCacheBytes);
    }
    for (const char* name : {"vllm:num_requests_running", "vllm:prompt_tokens_total", "vllm:cache_config_info"}) {
        const auto models = m.labelValues(name, "model_name");
        if (!models.empty()) {
            m_modelName = models.front();
            break;
        }
    }

    Scrape now;
    now.time = timeSeconds;
    now.ttft = m.histogram(kTtft);
    now.itl = m.histogram(kItl);
    if (now.itl.buckets.empty()) now.itl = m.histogram(kItlOld);
    now.e2e = m.histogram(kE2e);
    // The baseline: the newest scrape at least windowSeconds old, else the oldest one kept; with
    // none yet, everything observed so far counts.
    while (m_history.size() > 1 && m_history[1].time <= timeSeconds - m_windowSeconds) m_history.pop_front();
    const Scrape base = m_history.empty() ? Scrape{} : m_history.front();
    s.latency.windowSeconds = m_windowSeconds;
    s.latency.ttft = percentiles(now.ttft, base.ttft);
    s.latency.itl = percentiles(now.itl, base.itl);
    s.latency.e2e = percentiles(now.e2e, base.e2e);
    m_history.push_back(std::move(now));
    return s;
}

}  // namespace brook
