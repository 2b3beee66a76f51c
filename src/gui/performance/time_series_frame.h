// TimeSeriesFrame: what one dashboard chart shows for a time window, computed from DashboardSeries
// samples without drawing anything: the samples kept (thinned evenly to a point budget), each
// line's points in pieces (a line breaks where a value is missing or the samples stop for a while:
// no straight segment claims a trend across a gap), stacked lines as areas between a lower and an
// upper edge, and the peak. Shared by the Qt Charts view and the live-figures view
// (BROOK_WITH_CHARTS=OFF), so both show the same numbers and the tests check one computation.
#pragma once

#include "gui/performance/dashboard_series.h"

#include <QList>
#include <QPointF>
#include <QStringList>

#include <vector>

namespace brook {

struct TimeSeriesFrame {
    std::vector<DashboardSample> shown;   // the thinned samples, oldest first
    QList<QList<QList<QPointF>>> pieces;  // per line, its pieces (x: ms since the epoch); stacked: one, the top
    QList<QList<QPointF>> lower;          // stacked only: each area's bottom edge
    double peak = 0;                      // the highest value drawn (after scaling)
};

TimeSeriesFrame buildTimeSeriesFrame(const std::vector<DashboardSample>& samples, const QList<DashboardField>& fields,
                                     bool stacked, double scale, int maxPoints);

// The y-axis top before rounding: a fixed maximum when set, else 10% above the peak; nothing to
// show yet (idle) gives a 0..1 axis, not a 0..0.01 one whose labels repeat.
double timeSeriesAxisTop(double peak, double fixedMaximum);

// An automatic axis rounded up so its ticks fall on round steps (1, 2, 2.5 or 5 times a power of
// ten), with at most maxTicks ticks: 0, 250, 500 ... rather than 0, 462, 923.
struct NiceAxis {
    double top = 1.0;
    int ticks = 5;
};
NiceAxis timeSeriesNiceAxis(double top, int maxTicks = 7);

// The decimals a tick step needs so no two labels read the same (0.25 needs 2), and the labels
// from 0 to `top` in `ticks` ticks.
int timeSeriesAxisDecimals(double step);
QStringList timeSeriesAxisLabels(double top, int ticks);

}  // namespace brook
