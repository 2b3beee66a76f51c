#pragma once

#include "engine/backend.h"
#include "engine/latency_window.h"

#include <cstdint>

namespace brook {

// A consistent snapshot of the engine, cheap to take; dashboards poll it on a timer.
struct EngineStats {
    int numRunning = 0;
    int numWaiting = 0;
    int numKvBlocksTotal = 0;
    int numKvBlocksFree = 0;
    int blockSize = 0;
    double kvCacheUsage = 0.0;              // 0..1
    long long numPreemptions = 0;           // total since start
    long long promptTokensTotal = 0;        // computed prefill tokens since start
    long long generationTokensTotal = 0;
    long long requestsFinished = 0;
    long long requestsAborted = 0;
    long long steps = 0;
    BackendMemory memory;
    LatencySummary latency;                 // rolling TTFT / ITL / E2E p50 and p95 (LatencyWindow)
};

} // namespace brook
