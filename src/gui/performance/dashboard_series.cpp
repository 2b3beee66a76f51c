#include "gui/performance/dashboard_series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace brook {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A per-second rate from two cumulative counters; a counter that went down (a restart) is 0.
std::optional<double> rate(const std::optional<double>& now, const std::optional<double>& before, double seconds)
{
    if (!now || !before || seconds <= 0) return std::nullopt;
    return std::max(0.0, (*now - *before) / seconds);
}

// Hits over queries between two samples, in percent; nothing when no prompt was looked up.
std::optional<double> hitPercent(const MetricsSnapshot& now, const MetricsSnapshot& before)
{
    if (!now.prefixCacheQueriesTotal || !before.prefixCacheQueriesTotal || !now.prefixCacheHitsTotal ||
        !before.prefixCacheHitsTotal)
        return std::nullopt;
    const double queries = *now.prefixCacheQueriesTotal - *before.prefixCacheQueriesTotal;
    if (queries <= 0) return std::nullopt;
    return std::clamp(100.0 * (*now.prefixCacheHitsTotal - *before.prefixCacheHitsTotal) / queries, 0.0, 100.0);
}

std::optional<double> ms(const LatencyPercentiles& p, bool p95)
{
    if (p.count <= 0) return std::nullopt;
    return (p95 ? p.p95 : p.p50) * 1e3;
}

}  // namespace

const char* DashboardSeries::fieldKey(DashboardField f)
{
    switch (f) {
    case DashboardField::WeightsGiB: return "weights_gib";
    case DashboardField::KvCacheGiB: return "kv_cache_gib";
    case DashboardField::ActivationsGiB: return "activations_gib";
    case DashboardField::FreeGiB: return "free_gib";
    case DashboardField::KvCacheUsagePercent: return "kv_cache_usage_pct";
    case DashboardField::Running: return "running";
    case DashboardField::Waiting: return "waiting";
    case DashboardField::PreemptionsPerSecond: return "preemptions_per_s";
    case DashboardField::TtftP50Ms: return "ttft_p50_ms";
    case DashboardField::TtftP95Ms: return "ttft_p95_ms";
    case DashboardField::ItlP50Ms: return "itl_p50_ms";
    case DashboardField::ItlP95Ms: return "itl_p95_ms";
    case DashboardField::E2eP50Ms: return "e2e_p50_ms";
    case DashboardField::E2eP95Ms: return "e2e_p95_ms";
    case DashboardField::PromptTokensPerSecond: return "prompt_tokens_per_s";
    case DashboardField::GenerationTokensPerSecond: return "generation_tokens_per_s";
    case DashboardField::PrefixCacheHitPercent: return "prefix_cache_hit_pct";
    }
    return "?";
}

const DashboardSample& DashboardSeries::append(const MetricsSnapshot& s)
{
    DashboardSample d;
    d.timeSeconds = s.timeSeconds;
    d.hasMemory = s.hasMemory;
    auto set = [&](DashboardField f, std::optional<double> v) { d.values[int(f)] = v; };
    if (s.hasMemory) {
        set(DashboardField::WeightsGiB, s.weightsBytes / kGiB);
        set(DashboardField::KvCacheGiB, s.kvCacheBytes / kGiB);
        set(DashboardField::ActivationsGiB, s.activationsBytes / kGiB);
        set(DashboardField::FreeGiB, s.freeBytes / kGiB);
    }
    set(DashboardField::KvCacheUsagePercent, s.kvCacheUsage * 100.0);
    set(DashboardField::Running, s.running);
    set(DashboardField::Waiting, s.waiting);
    const double dt = m_previous ? s.timeSeconds - m_previous->timeSeconds : 0.0;
    const MetricsSnapshot none;
    const MetricsSnapshot& before = m_previous ? *m_previous : none;
    set(DashboardField::PreemptionsPerSecond, rate(s.preemptionsTotal, before.preemptionsTotal, dt));
    // Counters when the server has them; otherwise the rates an old vLLM computes itself.
    std::optional<double> prompt = rate(s.promptTokensTotal, before.promptTokensTotal, dt);
    std::optional<double> generation = rate(s.generationTokensTotal, before.generationTokensTotal, dt);
    if (!s.promptTokensTotal) prompt = s.promptTokensPerSecond;
    if (!s.generationTokensTotal) generation = s.generationTokensPerSecond;
    set(DashboardField::PromptTokensPerSecond, prompt);
    set(DashboardField::GenerationTokensPerSecond, generation);
    set(DashboardField::PrefixCacheHitPercent, hitPercent(s, before));
    set(DashboardField::TtftP50Ms, ms(s.latency.ttft, false));
    set(DashboardField::TtftP95Ms, ms(s.latency.ttft, true));
    set(DashboardField::ItlP50Ms, ms(s.latency.itl, false));
    set(DashboardField::ItlP95Ms, ms(s.latency.itl, true));
    set(DashboardField::E2eP50Ms, ms(s.latency.e2e, false));
    set(DashboardField::E2eP95Ms, ms(s.latency.e2e, true));
    m_previous = s;
    m_samples.push_back(d);
    while (!m_samples.empty() && m_samples.front().timeSeconds < s.timeSeconds - kMaxAgeSeconds) m_samples.pop_front();
    return m_samples.back();
}

void DashboardSeries::clear()
{
    m_samples.clear();
    m_previous.reset();
}

std::vector<DashboardSample> DashboardSeries::since(double t) const
{
    std::vector<DashboardSample> out;
    for (const DashboardSample& s : m_samples)
        if (s.timeSeconds >= t) out.push_back(s);
    return out;
}

std::optional<DashboardSample> DashboardSeries::latest() const
{
    if (m_samples.empty()) return std::nullopt;
    return m_samples.back();
}

std::string DashboardSeries::toCsv() const
{
    std::string out = "time,unix_seconds";
    for (int f = 0; f < kNumDashboardFields; ++f) out += std::string(",") + fieldKey(DashboardField(f));
    out += '\n';
    char buffer[64];
    for (const DashboardSample& s : m_samples) {
        const std::time_t whole = std::time_t(std::floor(s.timeSeconds));
        std::tm utc{};
#ifdef _WIN32
        gmtime_s(&utc, &whole);
#else
        gmtime_r(&whole, &utc);
#endif
        std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
        out += buffer;
        std::snprintf(buffer, sizeof buffer, ",%.3f", s.timeSeconds);
        out += buffer;
        for (int f = 0; f < kNumDashboardFields; ++f) {
            out += ',';
            if (s.values[f]) {
                std::snprintf(buffer, sizeof buffer, "%.6g", *s.values[f]);
                out += buffer;
            }
        }
        out += '\n';
    }
    return out;
}

}  // namespace brook
