// MetricsSnapshot: one poll of a server's state as the dashboard draws it, whoever served it:
// this app's Engine (EngineStats) or a remote server's /metrics (VllmMetricsReader). Counters are
// cumulative (the dashboard turns them into rates); latency percentiles are already rolling.
// (The one Qt include is for Q_DECLARE_METATYPE: snapshots travel in signals.)
#pragma once

#include "engine/engine_stats.h"

#include <QMetaType>

#include <optional>

namespace brook {

struct MetricsSnapshot {
    double timeSeconds = 0;  // wall clock (seconds since the epoch)
    // Memory (bytes). activations covers activations, workspaces, graphs and anything else in use
    // that is neither weights nor KV cache; free is 0 when no driver reports it (CPU, vLLM).
    bool hasMemory = false;
    double weightsBytes = 0, kvCacheBytes = 0, activationsBytes = 0, freeBytes = 0;
    double kvCacheUsage = 0;  // 0..1
    double running = 0, waiting = 0;
    std::optional<double> preemptionsTotal;
    std::optional<double> promptTokensTotal, generationTokensTotal;
    // Prefix caching (vLLM's prefix_cache_queries / _hits, in prompt tokens); absent when it is off.
    std::optional<double> prefixCacheQueriesTotal, prefixCacheHitsTotal;
    // Rates a source reports itself (vLLM before 0.6: avg_*_throughput_toks_per_s) when it has
    // no counters.
    std::optional<double> promptTokensPerSecond, generationTokensPerSecond;
    LatencySummary latency;

    // The app's own engine: memory split from the engine's accounting and the driver's free memory.
    static MetricsSnapshot fromEngineStats(const EngineStats& stats, double timeSeconds);
};

}  // namespace brook

Q_DECLARE_METATYPE(brook::MetricsSnapshot)
