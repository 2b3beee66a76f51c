// LatencyWindow: rolling p50 / p95 of time to first token, inter-token latency and end-to-end
// latency over the last few seconds, for dashboards (vLLM's histograms are cumulative since start,
// which hides what a knob change just did). The engine thread records one sample per event; any
// thread asks for the summary, which is computed on the asking thread so the engine never sorts.
// Each kind keeps at most maxSamples newest samples: at thousands of tokens/s the ITL window is
// then shorter than windowSeconds, never unbounded. Thread-safe.
#pragma once

#include "engine/sequence.h"

#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

namespace brook {

enum class LatencyKind { Ttft, Itl, E2e };

struct LatencyPercentiles {
    int count = 0;   // samples in the window; 0: p50 and p95 mean nothing
    double p50 = 0;  // seconds
    double p95 = 0;
};

struct LatencySummary {
    LatencyPercentiles ttft;
    LatencyPercentiles itl;
    LatencyPercentiles e2e;
    double windowSeconds = 0;
};

class LatencyWindow {
public:
    static constexpr double kDefaultWindowSeconds = 30.0;
    static constexpr size_t kDefaultMaxSamples = 8192;

    explicit LatencyWindow(double windowSeconds = kDefaultWindowSeconds, size_t maxSamples = kDefaultMaxSamples);

    void record(LatencyKind kind, double seconds, Clock::time_point when);  // thread-safe
    LatencySummary summary(Clock::time_point now) const;                    // thread-safe
    double windowSeconds() const { return m_windowSeconds; }

    // Linear interpolation between the closest ranks (numpy's default); 0 for an empty sample.
    static double percentile(std::vector<double> values, double percent);

private:
    using Samples = std::deque<std::pair<Clock::time_point, double>>;
    Samples& samplesOf(LatencyKind kind);
    LatencyPercentiles summarize(const Samples& samples, Clock::time_point cutoff) const;

    double m_windowSeconds;
    size_t m_maxSamples;
    mutable std::mutex m_mutex;
    Samples m_ttft, m_itl, m_e2e;
};

}  // namespace brook
