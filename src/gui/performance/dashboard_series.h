// DashboardSeries: the dashboard's data, apart from any chart: each MetricsSnapshot becomes one
// DashboardSample (counters turned into per-second rates against the previous snapshot), kept for
// kMaxAgeSeconds (the longest time window) and exported as CSV. The charts draw from here, so a
// paused or re-windowed chart redraws from the same samples. Not thread-safe (GUI thread).
#pragma once

#include "gui/performance/metrics_snapshot.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace brook {

// One value of a sample, in the units the charts use.
enum class DashboardField {
    WeightsGiB,
    KvCacheGiB,
    ActivationsGiB,
    FreeGiB,
    KvCacheUsagePercent,
    Running,
    Waiting,
    PreemptionsPerSecond,
    TtftP50Ms,
    TtftP95Ms,
    ItlP50Ms,
    ItlP95Ms,
    E2eP50Ms,
    E2eP95Ms,
    PromptTokensPerSecond,
    GenerationTokensPerSecond,
    PrefixCacheHitPercent,  // prompt tokens found in the prefix cache since the previous sample
};
inline constexpr int kNumDashboardFields = int(DashboardField::PrefixCacheHitPercent) + 1;

struct DashboardSample {
    double timeSeconds = 0;
    bool hasMemory = false;
    std::optional<double> values[kNumDashboardFields];  // nullopt: nothing to show (no request yet, no driver)
    std::optional<double> value(DashboardField f) const { return values[int(f)]; }
};

class DashboardSeries {
public:
    static constexpr double kMaxAgeSeconds = 30 * 60;

    const DashboardSample& append(const MetricsSnapshot& snapshot);
    void clear();
    const std::deque<DashboardSample>& samples() const { return m_samples; }
    std::vector<DashboardSample> since(double timeSeconds) const;
    std::optional<DashboardSample> latest() const;
    // Column header, then one line per sample: ISO time, unix seconds, every field (empty: none).
    std::string toCsv() const;

    static const char* fieldKey(DashboardField field);  // the CSV column name

private:
    std::deque<DashboardSample> m_samples;
    std::optional<MetricsSnapshot> m_previous;
};

}  // namespace brook
