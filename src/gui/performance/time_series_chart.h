// TimeSeriesChart: one dashboard chart: a few DashboardFields against wall-clock time, as lines
// or stacked areas (the memory split), redrawn from DashboardSeries samples for a time window.
// Each redraw replaces the points (at most kMaxPoints per line, thinned evenly), so pausing or
// changing the window costs nothing extra. A line breaks where a value is missing or the samples
// stop for a while (idle, a pause): no straight segment claims a trend across a gap. Hovering
// shows every line's value at that moment. Dashed lines (the p95 beside a p50) get a lighter
// shade and a line-shaped legend swatch, so the two read apart in the legend too.
// The numbers come from TimeSeriesFrame. Built without Qt Charts (BROOK_WITH_CHARTS=OFF, the
// Windows cross build) the same class shows each line's latest value as a live figure instead of
// a plot (time_series_figures.cpp), with the same API and data. GUI thread only.
#pragma once

#include "gui/performance/dashboard_series.h"
#include "gui/performance/time_series_frame.h"

#include <QColor>
#include <QList>
#if BROOK_WITH_CHARTS
#include <QChartView>
#else
#include <QFrame>
#endif

#include <vector>

class QAbstractSeries;
class QDateTimeAxis;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace brook {

#if BROOK_WITH_CHARTS
using TimeSeriesChartBase = QChartView;
#else
using TimeSeriesChartBase = QFrame;
#endif

class TimeSeriesChart : public TimeSeriesChartBase {
    Q_OBJECT
public:
    static constexpr int kMaxPoints = 600;

    struct Line {
        DashboardField field;
        QColor color;
        bool dashed = false;
    };

    explicit TimeSeriesChart(QList<Line> lines, bool stacked = false, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    void setLineName(int line, const QString& name);
    void setUnit(const QString& unit, int decimals);    // shown on hover
    void setFixedMaximum(double maximum);               // e.g. 100 for a percentage; 0: automatic
    void setScale(double factor) { m_scale = factor; }  // drawn and hovered values are multiplied by it
    void redraw(const std::vector<DashboardSample>& samples, double fromSeconds, double toSeconds);
    void setDarkTheme(bool dark);

    int pointCount(int line) const;
    QList<QPointF> points(int line) const;  // as drawn, every segment (x: ms since the epoch)
    int segmentCount(int line) const;       // pieces the line is drawn in (gaps split it)
    QColor drawnColor(int line) const;
    double axisMaximum() const;
    QStringList axisLabels() const;          // the y axis's tick labels as drawn
    QString hoverText(double timeMs) const;  // the nearest sample's values

#if BROOK_WITH_CHARTS
protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
#endif

private:
    QString formatValue(const std::optional<double>& value) const;
    QPen linePen(int line) const;
    QLineSeries* segment(int line, int index);  // the index-th piece of a line, made on first use
    void applyAxisLabels();

    QList<Line> m_lines;
    bool m_stacked;
    TimeSeriesFrame m_frame;              // what the last redraw showed
    QList<QLineSeries*> m_series;         // lines (their first piece), or the upper edges of the areas
    QList<QList<QLineSeries*>> m_pieces;  // lines: the pieces after the first, kept for reuse
    QList<int> m_piecesUsed;              // lines: pieces drawn by the last redraw
    QList<QLineSeries*> m_lowers;         // stacked: the lower edges
    QList<QAbstractSeries*> m_drawn;      // what the chart holds (lines or areas)
    QStringList m_names;
    QDateTimeAxis* m_x;
    QValueAxis* m_y;
    QString m_unit;
    int m_decimals = 1;
    double m_fixedMaximum = 0;
    double m_scale = 1.0;
#if !BROOK_WITH_CHARTS
    QLabel* m_title = nullptr;
    QList<QLabel*> m_nameLabels;
    QList<QLabel*> m_valueLabels;
    double m_axisTop = 1.0;
    int m_axisTicks = 5;
#endif
};

}  // namespace brook
