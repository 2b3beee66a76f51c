#include "gui/performance/time_series_frame.h"

#include <algorithm>
#include <cmath>

namespace brook {

namespace {

// A pause between shown samples longer than a few of their usual intervals is a gap.
double gapSeconds(const std::vector<DashboardSample>& shown)
{
    std::vector<double> intervals;
    for (size_t i = 1; i < shown.size(); ++i) intervals.push_back(shown[i].timeSeconds - shown[i - 1].timeSeconds);
    double gap = 5.0;
    if (!intervals.empty()) {
        std::nth_element(intervals.begin(), intervals.begin() + intervals.size() / 2, intervals.end());
        gap = std::max(gap, 3.0 * intervals[intervals.size() / 2]);
    }
    return gap;
}

}  // namespace

TimeSeriesFrame buildTimeSeriesFrame(const std::vector<DashboardSample>& samples, const QList<DashboardField>& fields,
                                     bool stacked, double scale, int maxPoints)
{
    TimeSeriesFrame frame;
    // Thin evenly to maxPoints: a 30-minute window at one sample a second is 1,800 samples.
    const size_t budget = size_t(std::max(1, maxPoints));
    const size_t step = std::max<size_t>(1, (samples.size() + budget - 1) / budget);
    for (size_t i = 0; i < samples.size(); i += step) frame.shown.push_back(samples[i]);
    if (!samples.empty() && (samples.size() - 1) % step != 0) frame.shown.push_back(samples.back());
    const std::vector<DashboardSample>& shown = frame.shown;
    const double gap = gapSeconds(shown);

    std::vector<double> base(shown.size(), 0.0);
    for (const DashboardField field : fields) {
        QList<QList<QPointF>> pieces(1);
        QList<QPointF> lower;
        for (size_t i = 0; i < shown.size(); ++i) {
            const double x = shown[i].timeSeconds * 1000.0;
            std::optional<double> v = shown[i].value(field);
            if (v) *v *= scale;
            if (stacked) {
                // Each field is an area between the running total before it and after it.
                lower << QPointF(x, base[i]);
                base[i] += v.value_or(0.0);
                pieces.first() << QPointF(x, base[i]);
                frame.peak = std::max(frame.peak, base[i]);
                continue;
            }
            const bool pause = i > 0 && shown[i].timeSeconds - shown[i - 1].timeSeconds > gap;
            if ((pause || !v || !std::isfinite(*v)) && !pieces.last().isEmpty()) pieces.append(QList<QPointF>());
            if (v && std::isfinite(*v)) {
                pieces.last() << QPointF(x, *v);
                frame.peak = std::max(frame.peak, *v);
            }
        }
        if (pieces.size() > 1 && pieces.last().isEmpty()) pieces.removeLast();
        frame.pieces << pieces;
        frame.lower << lower;
    }
    return frame;
}

double timeSeriesAxisTop(double peak, double fixedMaximum)
{
    if (fixedMaximum > 0) return fixedMaximum;
    return peak > 0 ? peak * 1.1 : 1.0;
}

NiceAxis timeSeriesNiceAxis(double top, int maxTicks)
{
    if (!(top > 0) || !std::isfinite(top)) return {};
    maxTicks = std::max(3, maxTicks);
    const int firstExponent = int(std::floor(std::log10(top / (maxTicks - 1))));
    for (int exponent = firstExponent; exponent <= firstExponent + 2; ++exponent) {
        for (const double factor : {1.0, 2.0, 2.5, 5.0}) {
            const double step = factor * std::pow(10.0, exponent);
            const int steps = std::max(1, int(std::ceil(top / step - 1e-9)));
            if (steps + 1 <= maxTicks) return {steps * step, steps + 1};
        }
    }
    return {top, 2};
}

int timeSeriesAxisDecimals(double step)
{
    int decimals = 0;
    while (decimals < 4 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) >
                               1e-6 * std::pow(10.0, decimals))
        ++decimals;
    return decimals;
}

QStringList timeSeriesAxisLabels(double top, int ticks)
{
    ticks = std::max(2, ticks);
    const int decimals = timeSeriesAxisDecimals(top / (ticks - 1));
    QStringList labels;
    for (int i = 0; i < ticks; ++i) labels << QString::number(top * i / (ticks - 1), 'f', decimals);
    return labels;
}

}  // namespace brook
