// MetricsRegistry: owns every metric family and series, and writes them in the Prometheus
// text format exactly as Python's prometheus_client does (what vLLM serves), so scrapers and
// dashboards built for vLLM read Brook unchanged. Families render in registration order, the
// series of one family together. Counters get "_total" on the HELP, TYPE and sample lines (the
// 0.0.4 munging of prometheus_client's generate_latest). "_created" series are not emitted.
#include "engine/metrics_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace brook {

namespace {

enum class Kind { Counter, Gauge, Histogram };

const char* kindName(Kind kind)
{
    switch (kind) {
    case Kind::Counter: return "counter";
    case Kind::Gauge: return "gauge";
    case Kind::Histogram: return "histogram";
    }
    return "untyped";
}

std::string escapeLabelValue(const std::string& value)
{
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string escapeHelp(const std::string& help)
{
    std::string out;
    out.reserve(help.size());
    for (char c : help) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

// {a="x",b="y"} with an optional trailing le="..." (histogram buckets).
std::string labelBlock(const Labels& labels, const std::string* le = nullptr)
{
    if (labels.empty() && !le) return {};
    std::string out = "{";
    bool first = true;
    for (const auto& [key, value] : labels) {
        if (!first) out += ',';
        first = false;
        out += key + "=\"" + escapeLabelValue(value) + '"';
    }
    if (le) {
        if (!first) out += ',';
        out += "le=\"" + *le + '"';
    }
    out += '}';
    return out;
}

}  // namespace

struct MetricsRegistry::Impl {
    struct Series {
        Labels labels;
        std::unique_ptr<Counter> counter;
        std::unique_ptr<Gauge> gauge;
        std::unique_ptr<Histogram> histogram;
    };
    struct Family {
        std::string name;
        std::string help;
        Kind kind;
        std::vector<double> buckets;  // histograms only
        std::vector<std::unique_ptr<Series>> series;
    };

    mutable std::mutex mutex;
    std::vector<std::unique_ptr<Family>> families;
    // Series removed from output or handed out on misuse; kept so their handles stay valid.
    std::vector<std::unique_ptr<Series>> detached;

    Family* findFamily(const std::string& name)
    {
        for (auto& family : families)
            if (family->name == name) return family.get();
        return nullptr;
    }

    // The family's series with these labels, or nullptr. Caller holds the mutex.
    static Series* findSeries(Family& family, const Labels& labels)
    {
        for (auto& series : family.series)
            if (series->labels == labels) return series.get();
        return nullptr;
    }
};

MetricsRegistry::MetricsRegistry() : m_impl(std::make_unique<Impl>()) {}
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Counter& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                                   const Labels& labels)
{
    std::lock_guard lock(m_impl->mutex);
    Impl::Family* family = m_impl->findFamily(name);
    if (!family) {
        m_impl->families.push_back(std::make_unique<Impl::Family>(Impl::Family{name, help, Kind::Counter, {}, {}}));
        family = m_impl->families.back().get();
    } else if (family->kind != Kind::Counter) {
        spdlog::error("metrics: '{}' is a {}, not a counter; the update will not be exported", name,
                      kindName(family->kind));
        auto series = std::make_unique<Impl::Series>(Impl::Series{labels, std::make_unique<Counter>(), {}, {}});
        m_impl->detached.push_back(std::move(series));
        return *m_impl->detached.back()->counter;
    }
    if (Impl::Series* existing = Impl::findSeries(*family, labels)) return *existing->counter;
    family->series.push_back(std::make_unique<Impl::Series>(Impl::Series{labels, std::make_unique<Counter>(), {}, {}}));
    return *family->series.back()->counter;
}

MetricsRegistry::Gauge& MetricsRegistry::gauge(const std::string& name, const std::string& help, const Labels& labels)
{
    std::lock_guard lock(m_impl->mutex);
    Impl::Family* family = m_impl->findFamily(name);
    if (!family) {
        m_impl->families.push_back(std::make_unique<Impl::Family>(Impl::Family{name, help, Kind::Gauge, {}, {}}));
        family = m_impl->families.back().get();
    } else if (family->kind != Kind::Gauge) {
        spdlog::error("metrics: '{}' is a {}, not a gauge; the update will not be exported", name,
                      kindName(family->kind));
        auto series = std::make_unique<Impl::Series>(Impl::Series{labels, {}, std::make_unique<Gauge>(), {}});
        m_impl->detached.push_back(std::move(series));
        return *m_impl->detached.back()->gauge;
    }
    if (Impl::Series* existing = Impl::findSeries(*family, labels)) return *existing->gauge;
    family->series.push_back(std::make_unique<Impl::Series>(Impl::Series{labels, {}, std::make_unique<Gauge>(), {}}));
    return *family->series.back()->gauge;
}

MetricsRegistry::Histogram& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                                       const Labels& labels, std::vector<double> buckets)
{
    // Upper bounds sorted and unique; +Inf is implicit (the overflow bucket), as in prometheus_client.
    std::sort(buckets.begin(), buckets.end());
    buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
    while (!buckets.empty() && (std::isnan(buckets.back()) || std::isinf(buckets.back()))) buckets.pop_back();

    std::lock_guard lock(m_impl->mutex);
    Impl::Family* family = m_impl->findFamily(name);
    if (!family) {
        m_impl->families.push_back(
            std::make_unique<Impl::Family>(Impl::Family{name, help, Kind::Histogram, buckets, {}}));
        family = m_impl->families.back().get();
    } else if (family->kind != Kind::Histogram) {
        spdlog::error("metrics: '{}' is a {}, not a histogram; the update will not be exported", name,
                      kindName(family->kind));
        auto series = std::make_unique<Impl::Series>(Impl::Series{labels, {}, {}, {}});
        series->histogram.reset(new Histogram(buckets));
        m_impl->detached.push_back(std::move(series));
        return *m_impl->detached.back()->histogram;
    } else if (family->buckets != buckets) {
        spdlog::warn("metrics: histogram '{}' asked with other buckets; keeping the first ones", name);
    }
    if (Impl::Series* existing = Impl::findSeries(*family, labels)) return *existing->histogram;
    auto series = std::make_unique<Impl::Series>(Impl::Series{labels, {}, {}, {}});
    series->histogram.reset(new Histogram(family->buckets));
    family->series.push_back(std::move(series));
    return *family->series.back()->histogram;
}

bool MetricsRegistry::removeSeries(const std::string& name, const Labels& labels)
{
    std::lock_guard lock(m_impl->mutex);
    Impl::Family* family = m_impl->findFamily(name);
    if (!family) return false;
    auto it = std::find_if(family->series.begin(), family->series.end(),
                           [&](const auto& series) { return series->labels == labels; });
    if (it == family->series.end()) return false;
    m_impl->detached.push_back(std::move(*it));
    family->series.erase(it);
    return true;
}

std::string MetricsRegistry::render() const
{
    std::lock_guard lock(m_impl->mutex);
    std::string out;
    out.reserve(4096);
    for (const auto& family : m_impl->families) {
        const std::string exposed = family->kind == Kind::Counter ? family->name + "_total" : family->name;
        out += "# HELP " + exposed + ' ' + escapeHelp(family->help) + '\n';
        out += "# TYPE " + exposed + ' ' + kindName(family->kind) + '\n';
        for (const auto& series : family->series) {
            switch (family->kind) {
            case Kind::Counter:
                out += exposed + labelBlock(series->labels) + ' ' + formatNumber(series->counter->value()) + '\n';
                break;
            case Kind::Gauge:
                out += exposed + labelBlock(series->labels) + ' ' + formatNumber(series->gauge->value()) + '\n';
                break;
            case Kind::Histogram: {
                const Histogram& histogram = *series->histogram;
                std::vector<uint64_t> cumulative;
                double sum = 0.0;
                {
                    // One lock for buckets, count and sum, so a scrape never sees them disagree.
                    std::lock_guard seriesLock(histogram.m_mutex);
                    cumulative.resize(histogram.m_counts.size());
                    uint64_t running = 0;
                    for (size_t i = 0; i < histogram.m_counts.size(); ++i) {
                        running += histogram.m_counts[i];
                        cumulative[i] = running;
                    }
                    sum = histogram.m_sum;
                }
                for (size_t i = 0; i < cumulative.size(); ++i) {
                    const double bound =
                        i < family->buckets.size() ? family->buckets[i] : std::numeric_limits<double>::infinity();
                    const std::string le = formatNumber(bound);
                    out += family->name + "_bucket" + labelBlock(series->labels, &le) + ' ' +
                           formatNumber(static_cast<double>(cumulative[i])) + '\n';
                }
                out += family->name + "_count" + labelBlock(series->labels) + ' ' +
                       formatNumber(static_cast<double>(cumulative.back())) + '\n';
                // prometheus_client leaves _sum out when a bucket bound is negative.
                if (family->buckets.empty() || family->buckets.front() >= 0)
                    out += family->name + "_sum" + labelBlock(series->labels) + ' ' + formatNumber(sum) + '\n';
                break;
            }
            }
        }
    }
    return out;
}

std::string MetricsRegistry::pythonFloatRepr(double value)
{
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    // Shortest round-trip digits, as Python's repr picks them; then Python's layout:
    // fixed notation for 1e-4 <= |x| < 1e16, scientific otherwise.
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), std::fabs(value), std::chars_format::scientific);
    const std::string text(buffer, result.ptr);
    const size_t ePos = text.find('e');
    std::string digits;
    for (size_t i = 0; i < ePos; ++i)
        if (text[i] != '.') digits += text[i];
    const int exponent = std::stoi(text.substr(ePos + 1));

    std::string out = std::signbit(value) ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent >= 0) {
            std::string integerPart = digits.substr(0, std::min<size_t>(digits.size(), exponent + 1));
            integerPart.append(exponent + 1 - integerPart.size(), '0');
            std::string fraction =
                digits.size() > static_cast<size_t>(exponent + 1) ? digits.substr(exponent + 1) : "0";
            out += integerPart + '.' + fraction;
        } else {
            out += "0." + std::string(-exponent - 1, '0') + digits;
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += '.' + digits.substr(1);
        const int magnitude = std::abs(exponent);
        out += exponent < 0 ? "e-" : "e+";
        if (magnitude < 10) out += '0';
        out += std::to_string(magnitude);
    }
    return out;
}

std::string MetricsRegistry::formatNumber(double value)
{
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    std::string text = pythonFloatRepr(value);
    // prometheus_client's floatToGoString: Go switches to exponents sooner than Python.
    const size_t dot = text.find('.');
    if (value > 0 && dot != std::string::npos && dot > 6) {
        std::string mantissa = text.substr(0, 1) + '.' + text.substr(1, dot - 1) + text.substr(dot + 1);
        while (!mantissa.empty() && (mantissa.back() == '0' || mantissa.back() == '.')) mantissa.pop_back();
        return mantissa + "e+0" + std::to_string(dot - 1);
    }
    return text;
}

void MetricsRegistry::Counter::inc(double amount)
{
    if (!(amount >= 0.0)) {
        spdlog::warn("metrics: counter increment {} ignored (counters only go up)", amount);
        return;
    }
    std::lock_guard lock(m_mutex);
    m_value += amount;
}

double MetricsRegistry::Counter::value() const
{
    std::lock_guard lock(m_mutex);
    return m_value;
}

void MetricsRegistry::Gauge::set(double value)
{
    std::lock_guard lock(m_mutex);
    m_value = value;
}

double MetricsRegistry::Gauge::value() const
{
    std::lock_guard lock(m_mutex);
    return m_value;
}

MetricsRegistry::Histogram::Histogram(std::vector<double> buckets)
    : m_buckets(std::move(buckets)), m_counts(m_buckets.size() + 1, 0)
{}

void MetricsRegistry::Histogram::observe(double value)
{
    // Bucket i counts value <= bound i (upper bounds are inclusive, as in Prometheus).
    const size_t index = std::lower_bound(m_buckets.begin(), m_buckets.end(), value) - m_buckets.begin();
    std::lock_guard lock(m_mutex);
    m_counts[index] += 1;
    m_sum += value;
    m_count += 1;
}

uint64_t MetricsRegistry::Histogram::count() const
{
    std::lock_guard lock(m_mutex);
    return m_count;
}

double MetricsRegistry::Histogram::sum() const
{
    std::lock_guard lock(m_mutex);
    return m_sum;
}

std::vector<uint64_t> MetricsRegistry::Histogram::cumulativeCounts() const
{
    std::lock_guard lock(m_mutex);
    std::vector<uint64_t> cumulative(m_counts.size());
    uint64_t running = 0;
    for (size_t i = 0; i < m_counts.size(); ++i) {
        running += m_counts[i];
        cumulative[i] = running;
    }
    return cumulative;
}

}  // namespace brook
