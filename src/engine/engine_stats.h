#pragma once

#include "engine/backend_memory.h"
#include "engine/latency_window.h"

#include <cstdint>

namespace brook {

// Where the engine thread's time went, summed since start: what bounds a throughput run
// (brook-bench throughput prints it). Seconds of wall time on the engine thread.
struct EngineStepTimes {
    double scheduleSeconds = 0.0;     // scheduler + building the backend's batch
    double backendSeconds = 0.0;      // the backend's step: inputs, forward, sampling, copy back
    double outputSeconds = 0.0;       // sampled tokens -> detokenizer, stop checks, callbacks
    double bookkeepingSeconds = 0.0;  // arrivals, stats snapshots, request table
    long long decodeSteps = 0;        // steps with no prompt tokens
    double decodeBackendSeconds = 0.0;
    long long decodeRows = 0;  // sequences summed over decode steps (mean batch = rows / steps)
};

// A consistent snapshot of the engine, cheap to take; dashboards poll it on a timer.
struct EngineStats {
    int numRunning = 0;
    int numWaiting = 0;
    int numKvBlocksTotal = 0;
    int numKvBlocksFree = 0;
    int blockSize = 0;
    double kvCacheUsage = 0.0;        // 0..1
    long long numPreemptions = 0;     // total since start
    long long promptTokensTotal = 0;  // computed prefill tokens since start
    bool prefixCachingEnabled = false;
    long long prefixCacheQueries = 0;  // prompt tokens looked up in the prefix cache since start
    long long prefixCacheHits = 0;     // of which found there (not computed)
    long long generationTokensTotal = 0;
    long long requestsFinished = 0;
    long long requestsAborted = 0;
    long long steps = 0;
    BackendMemory memory;
    EngineStepTimes stepTimes;
    LatencySummary latency;  // rolling TTFT / ITL / E2E p50 and p95 (LatencyWindow)
};

}  // namespace brook
