// VllmMetricsReader: turns successive scrapes of a vLLM (or Brook) /metrics page into the
// dashboard's MetricsSnapshot. It knows vLLM's names across versions: kv_cache_usage_perc or the
// older gpu_cache_usage_perc, inter_token_latency_seconds or the older time_per_output_token_seconds,
// and the v0 gauges avg_prompt/generation_throughput_toks_per_s where there are no token counters;
// brook:* gauges add the memory split. Latency percentiles are rolling like the local engine's: the
// histograms' growth over the last windowSeconds of scrapes, read with histogram_quantile.
// Not thread-safe (the GUI thread's poller owns one).
#pragma once

#include "gui/performance/metrics_snapshot.h"
#include "loadgen/prometheus_text.h"

#include <deque>

namespace brook {

class VllmMetricsReader {
public:
    explicit VllmMetricsReader(double windowSeconds = LatencyWindow::kDefaultWindowSeconds);

    MetricsSnapshot read(const PrometheusText& metrics, double timeSeconds);
    void reset() { m_history.clear(); }
    std::string modelName() const { return m_modelName; }  // from the last scrape's labels

    static constexpr const char* kTtft = "vllm:time_to_first_token_seconds";
    static constexpr const char* kItl = "vllm:inter_token_latency_seconds";
    static constexpr const char* kItlOld = "vllm:time_per_output_token_seconds";
    static constexpr const char* kE2e = "vllm:e2e_request_latency_seconds";

private:
    struct Scrape {
        double time = 0;
        PromHistogram ttft, itl, e2e;
    };
    static LatencyPercentiles percentiles(const PromHistogram& now, const PromHistogram& then);

    double m_windowSeconds;
    std::deque<Scrape> m_history;
    std::string m_modelName;
};

}  // namespace brook
