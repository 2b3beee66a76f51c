#include "engine/latency_window.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace brook {

LatencyWindow::LatencyWindow(double windowSeconds, size_t maxSamples)
    : m_windowSeconds(windowSeconds > 0 ? windowSeconds : kDefaultWindowSeconds),
      m_maxSamples(maxSamples > 0 ? maxSamples : kDefaultMaxSamples)
{}

LatencyWindow::Samples& LatencyWindow::samplesOf(LatencyKind kind)
{
    switch (kind) {
    case LatencyKind::Ttft: return m_ttft;
    case LatencyKind::Itl: return m_itl;
    case LatencyKind::E2e: break;
    }
    return m_e2e;
}

void LatencyWindow::record(LatencyKind kind, double seconds, Clock::time_point when)
{
    const auto cutoff =
        when - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(m_windowSeconds));
    std::lock_guard lock(m_mutex);
    Samples& samples = samplesOf(kind);
    samples.emplace_back(when, seconds);
    while (samples.size() > m_maxSamples || (!samples.empty() && samples.front().first < cutoff)) samples.pop_front();
}

double LatencyWindow::percentile(std::vector<double> values, double percent)
{
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const double rank = std::clamp(percent, 0.0, 100.0) / 100.0 * double(values.size() - 1);
    const size_t lo = size_t(rank);
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (rank - double(lo));
}

LatencyPercentiles LatencyWindow::summarize(const Samples& samples, Clock::time_point cutoff) const
{
    std::vector<double> values;
    values.reserve(samples.size());
    for (const auto& [when, value] : samples)
        if (when >= cutoff) values.push_back(value);
    LatencyPercentiles p;
    p.count = int(values.size());
    if (values.empty()) return p;
    p.p50 = percentile(values, 50);
    p.p95 = percentile(std::move(values), 95);
    return p;
}

LatencySummary LatencyWindow::summary(Clock::time_point now) const
{
    const auto cutoff =
        now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(m_windowSeconds));
    Samples ttft, itl, e2e;
    {
        // Copy under the lock, sort outside it: the engine thread only ever waits for a copy.
        std::lock_guard lock(m_mutex);
        ttft = m_ttft;
        itl = m_itl;
        e2e = m_e2e;
    }
    LatencySummary s;
    s.windowSeconds = m_windowSeconds;
    s.ttft = summarize(ttft, cutoff);
    s.itl = summarize(itl, cutoff);
    s.e2e = summarize(e2e, cutoff);
    return s;
}

}  // namespace brook
