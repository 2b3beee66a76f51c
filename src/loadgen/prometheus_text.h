// PrometheusText: a parsed /metrics page in the Prometheus text exposition format (0.0.4, what
// vLLM's prometheus_client and Brook serve): HELP/TYPE lines, samples with quoted, escaped labels,
// +Inf/NaN values and optional timestamps. Lookups sum over label sets (one model, one or more
// engines), and histograms come back with their cumulative buckets so a dashboard can take the
// difference of two scrapes and estimate quantiles as Prometheus's histogram_quantile does.
// Plain C++ (no Qt), so it can be tested on captured text. Thread-compatible.
#pragma once

#include "engine/result.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace brook {

struct PromSample {
    std::string name;                                         // with _total/_bucket/_sum/_count
    std::vector<std::pair<std::string, std::string>> labels;  // as written
    double value = 0;
    std::string label(const std::string& key) const;  // empty when absent
};

struct PromHistogram {
    std::vector<std::pair<double, double>> buckets;  // (le, cumulative count), ascending, +Inf last
    double sum = 0;
    double count = 0;
    bool empty() const { return buckets.empty() || count <= 0; }
    // This scrape minus an earlier one (the observations in between); the earlier one's buckets
    // must match. A counter reset (a restarted server) gives back this scrape unchanged.
    PromHistogram minus(const PromHistogram& earlier) const;
    // histogram_quantile(q): linear inside the bucket holding rank q * count, the lowest bucket
    // starting at 0, the +Inf bucket answered with the highest finite bound. nullopt when empty.
    std::optional<double> quantile(double q) const;
};

class PrometheusText {
public:
    // The error names the line at fault.
    static Result<PrometheusText> parse(std::string_view text);

    const std::vector<PromSample>& samples() const { return m_samples; }
    std::string typeOf(const std::string& family) const;  // "counter", "gauge", ...; empty: not declared
    std::string helpOf(const std::string& family) const;
    bool has(const std::string& name) const;
    // Over every label set of the exact sample name; nullopt when there is none.
    std::optional<double> sum(const std::string& name) const;
    std::optional<double> max(const std::string& name) const;
    // The first of `names` present (newer names first, then the ones older servers use).
    std::optional<double> sumOfFirst(std::initializer_list<const char*> names) const;
    // `family`_bucket/_sum/_count summed over label sets (all but le). Empty when absent.
    PromHistogram histogram(const std::string& family) const;
    std::vector<std::string> labelValues(const std::string& name, const std::string& key) const;

private:
    struct Family {
        std::string name, type, help;
    };
    Family* family(const std::string& name);
    const Family* family(const std::string& name) const;

    std::vector<PromSample> m_samples;
    std::vector<Family> m_families;
};

}  // namespace brook
