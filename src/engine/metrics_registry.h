// MetricsRegistry: Prometheus counters, gauges and histograms with labels, rendered in the
// text exposition format (version 0.0.4). Counters are exposed with the "_total" suffix.
// Thread-safe: any thread may update; render() takes a consistent snapshot per family.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace brook {

using Labels = std::vector<std::pair<std::string, std::string>>;  // ordered as given

class MetricsRegistry {
public:
    // Returns handles that stay valid for the registry's lifetime.
    class Counter;
    class Gauge;
    class Histogram;

    Counter& counter(const std::string& name, const std::string& help, const Labels& labels);
    Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels);
    Histogram& histogram(const std::string& name, const std::string& help, const Labels& labels,
                         std::vector<double> buckets);

    std::string render() const;

    // Drops one series from the output (e.g. an info gauge whose labels changed). Its handle
    // stays valid but is no longer rendered. Returns false when no such series exists.
    bool removeSeries(const std::string& name, const Labels& labels);

    // A number as prometheus_client writes it: Python's repr of a float ("12.0", "0.25",
    // "1e-05"), "+Inf"/"-Inf"/"NaN", and Go-style exponents for 7+ integer digits ("1.5e+06").
    static std::string formatNumber(double value);
    // Python's repr of a float alone (no Go-style exponent), for label values like "0.9".
    static std::string pythonFloatRepr(double value);

    MetricsRegistry();
    ~MetricsRegistry();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

class MetricsRegistry::Counter {
public:
    void inc(double amount = 1.0);
    double value() const;

private:
    friend class MetricsRegistry;
    mutable std::mutex m_mutex;
    double m_value = 0.0;
};

class MetricsRegistry::Gauge {
public:
    void set(double value);
    double value() const;

private:
    friend class MetricsRegistry;
    mutable std::mutex m_mutex;
    double m_value = 0.0;
};

class MetricsRegistry::Histogram {
public:
    void observe(double value);
    uint64_t count() const;
    double sum() const;
    std::vector<uint64_t> cumulativeCounts() const;  // one per bucket, then +Inf
private:
    friend class MetricsRegistry;
    explicit Histogram(std::vector<double> buckets);
    mutable std::mutex m_mutex;
    std::vector<double> m_buckets;
    std::vector<uint64_t> m_counts;  // per bucket (non-cumulative) + overflow
    double m_sum = 0.0;
    uint64_t m_count = 0;
};

}  // namespace brook
