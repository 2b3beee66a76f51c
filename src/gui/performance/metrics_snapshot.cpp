#include "gui/performance/metrics_snapshot.h"

#include <algorithm>

namespace brook {

MetricsSnapshot MetricsSnapshot::fromEngineStats(const EngineStats& s, double timeSeconds)
{
    MetricsSnapshot m;
    m.timeSeconds = timeSeconds;
    const BackendMemory& mem = s.memory;
    m.hasMemory = mem.weightsBytes > 0 || mem.kvCacheBytes > 0;
    m.weightsBytes = double(mem.weightsBytes);
    m.kvCacheBytes = double(mem.kvCacheBytes);
    m.activationsBytes = double(mem.activationsBytes);
    if (mem.deviceTotalBytes > 0) {
        // The driver knows what is in use; what is neither weights nor KV cache is activations,
        // graphs, workspaces and the CUDA context.
        const double used = double(mem.deviceTotalBytes - mem.deviceFreeBytes);
        m.activationsBytes = std::max(m.activationsBytes, used - m.weightsBytes - m.kvCacheBytes);
        m.freeBytes = double(mem.deviceFreeBytes);
    }
    m.kvCacheUsage = s.kvCacheUsage;
    m.running = s.numRunning;
    m.waiting = s.numWaiting;
    m.preemptionsTotal = double(s.numPreemptions);
    m.promptTokensTotal = double(s.promptTokensTotal);
    m.generationTokensTotal = double(s.generationTokensTotal);
    if (s.prefixCachingEnabled) {
        m.prefixCacheQueriesTotal = double(s.prefixCacheQueries);
        m.prefixCacheHitsTotal = double(s.prefixCacheHits);
    }
    m.latency = s.latency;
    return m;
}

}  // namespace brook
