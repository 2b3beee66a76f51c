#include "loadgen/prometheus_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

namespace brook {

namespace {

bool isNameChar(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

std::optional<double> parseValue(std::string_view text)
{
    if (text == "+Inf" || text == "Inf" || text == "inf" || text == "+inf")
        return std::numeric_limits<double>::infinity();
    if (text == "-Inf" || text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "NaN" || text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text.empty()) return std::nullopt;
    const std::string copy(text);
    char* end = nullptr;
    const double v = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return std::nullopt;
    return v;
}

void skipSpaces(std::string_view line, size_t& i)
{
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
}

// The base name of a histogram sample ("x_bucket" -> "x"), or empty.
std::string histogramBase(const std::string& name, const char* suffix)
{
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
        return name.substr(0, name.size() - s.size());
    return {};
}

}  // namespace

std::string PromSample::label(const std::string& key) const
{
    for (const auto& [k, v] : labels)
        if (k == key) return v;
    return {};
}

PromHistogram PromHistogram::minus(const PromHistogram& earlier) const
{
    if (earlier.buckets.size() != buckets.size() || earlier.count > count) return *this;
    PromHistogram d;
    d.sum = sum - earlier.sum;
    d.count = count - earlier.count;
    for (size_t i = 0; i < buckets.size(); ++i) {
        if (buckets[i].first != earlier.buckets[i].first || earlier.buckets[i].second > buckets[i].second) return *this;
        d.buckets.emplace_back(buckets[i].first, buckets[i].second - earlier.buckets[i].second);
    }
    return d;
}

std::optional<double> PromHistogram::quantile(double q) const
{
    if (empty()) return std::nullopt;
    const double total = buckets.back().second;
    if (total <= 0) return std::nullopt;
    const double rank = std::clamp(q, 0.0, 1.0) * total;
    for (size_t i = 0; i < buckets.size(); ++i) {
        if (buckets[i].second < rank) continue;
        const double upper = buckets[i].first;
        if (std::isinf(upper)) return i > 0 ? buckets[i - 1].first : 0.0;  // the highest finite bound
        const double lower = i > 0 ? buckets[i - 1].first : std::min(0.0, upper);
        const double below = i > 0 ? buckets[i - 1].second : 0.0;
        const double inBucket = buckets[i].second - below;
        if (inBucket <= 0) return upper;
        return lower + (upper - lower) * (rank - below) / inBucket;
    }
    return buckets.size() > 1 ? buckets[buckets.size() - 2].first : 0.0;
}

PrometheusText::Family* PrometheusText::family(const std::string& name)
{
    for (Family& f : m_families)
        if (f.name == name) return &f;
    m_families.push_back({name, {}, {}});
    return &m_families.back();
}

const PrometheusText::Family* PrometheusText::family(const std::string& name) const
{
    for (const Family& f : m_families)
        if (f.name == name) return &f;
    return nullptr;
}

Result<PrometheusText> PrometheusText::parse(std::string_view text)
{
    PrometheusText out;
    size_t lineNo = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        size_t i = 0;
        skipSpaces(line, i);
        if (i == line.size()) continue;
        const auto where = [&](const std::string& what) {
            return "metrics line " + std::to_string(lineNo) + ": " + what;
        };
        if (line[i] == '#') {
            // "# HELP name text" and "# TYPE name type"; any other comment is ignored.
            std::string_view rest = line.substr(i + 1);
            while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
            const bool help = rest.rfind("HELP ", 0) == 0, type = rest.rfind("TYPE ", 0) == 0;
            if (!help && !type) continue;
            rest.remove_prefix(5);
            while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
            const size_t space = rest.find(' ');
            const std::string name(rest.substr(0, space));
            const std::string value =
                space == std::string_view::npos ? std::string() : std::string(rest.substr(space + 1));
            if (name.empty()) return makeError(where("HELP/TYPE without a metric name"));
            if (help) out.family(name)->help = value;
            else out.family(name)->type = value;
            continue;
        }
        PromSample sample;
        const size_t nameStart = i;
        while (i < line.size() && isNameChar(line[i], i == nameStart)) ++i;
        sample.name = std::string(line.substr(nameStart, i - nameStart));
        if (sample.name.empty()) return makeError(where("expected a metric name"));
        if (i < line.size() && line[i] == '{') {
            ++i;
            for (;;) {
                skipSpaces(line, i);
                if (i < line.size() && line[i] == '}') {
                    ++i;
                    break;
                }
                const size_t keyStart = i;
                while (i < line.size() && isNameChar(line[i], i == keyStart)) ++i;
                std::string key(line.substr(keyStart, i - keyStart));
                skipSpaces(line, i);
                if (key.empty() || i >= line.size() || line[i] != '=')
                    return makeError(where("bad label in " + sample.name));
                ++i;
                skipSpaces(line, i);
                if (i >= line.size() || line[i] != '"')
                    return makeError(where("label value of " + key + " is not quoted"));
                ++i;
                std::string value;
                bool closed = false;
                for (; i < line.size(); ++i) {
                    if (line[i] == '\\' && i + 1 < line.size()) {
                        const char e = line[++i];
                        value += e == 'n' ? '\n' : e;
                    } else if (line[i] == '"') {
                        closed = true;
                        ++i;
                        break;
                    } else {
                        value += line[i];
                    }
                }
                if (!closed) return makeError(where("unterminated label value of " + key));
                sample.labels.emplace_back(std::move(key), std::move(value));
                skipSpaces(line, i);
                if (i < line.size() && line[i] == ',') ++i;
            }
        }
        skipSpaces(line, i);
        const size_t valueStart = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        const auto value = parseValue(line.substr(valueStart, i - valueStart));
        if (!value) return makeError(where("bad value for " + sample.name));
        sample.value = *value;
        out.m_samples.push_back(std::move(sample));  // a trailing timestamp is ignored
    }
    return out;
}

std::string PrometheusText::typeOf(const std::string& name) const
{
    const Family* f = family(name);
    return f ? f->type : std::string();
}

std::string PrometheusText::helpOf(const std::string& name) const
{
    const Family* f = family(name);
    return f ? f->help : std::string();
}

bool PrometheusText::has(const std::string& name) const
{
    return std::any_of(m_samples.begin(), m_samples.end(), [&](const PromSample& s) { return s.name == name; });
}

std::optional<double> PrometheusText::sum(const std::string& name) const
{
    std::optional<double> total;
    for (const PromSample& s : m_samples)
        if (s.name == name) total = total.value_or(0.0) + s.value;
    return total;
}

std::optional<double> PrometheusText::max(const std::string& name) const
{
    std::optional<double> best;
    for (const PromSample& s : m_samples)
        if (s.name == name) best = best ? std::max(*best, s.value) : s.value;
    return best;
}

std::optional<double> PrometheusText::sumOfFirst(std::initializer_list<const char*> names) const
{
    for (const char* name : names)
        if (auto v = sum(name)) return v;
    return std::nullopt;
}

PromHistogram PrometheusText::histogram(const std::string& familyName) const
{
    PromHistogram h;
    std::map<double, double> buckets;
    for (const PromSample& s : m_samples) {
        if (histogramBase(s.name, "_bucket") == familyName) {
            const auto le = parseValue(s.label("le"));
            if (le) buckets[*le] += s.value;
        } else if (histogramBase(s.name, "_sum") == familyName) {
            h.sum += s.value;
        } else if (histogramBase(s.name, "_count") == familyName) {
            h.count += s.value;
        }
    }
    for (const auto& [le, count] : buckets) h.buckets.emplace_back(le, count);
    if (h.count == 0 && !h.buckets.empty()) h.count = h.buckets.back().second;
    return h;
}

std::vector<std::string> PrometheusText::labelValues(const std::string& name, const std::string& key) const
{
    std::vector<std::string> out;
    for (const PromSample& s : m_samples) {
        if (s.name != name) continue;
        const std::string v = s.label(key);
        if (!v.empty() && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
}

}  // namespace brook
