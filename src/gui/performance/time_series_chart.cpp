#include "gui/performance/time_series_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace brook {

TimeSeriesChart::TimeSeriesChart(QList<Line> lines, bool stacked, QWidget* parent)
    : QChartView(parent), m_lines(std::move(lines)), m_stacked(stacked)
{
    auto* chart = new QChart;
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setFont(QFont(font().family(), std::max(7, font().pointSize() - 1)));
    m_x = new QDateTimeAxis(chart);
    m_x->setFormat(QStringLiteral("HH:mm:ss"));
    m_x->setTickCount(5);
    m_y = new QValueAxis(chart);
    m_y->setRange(0, 1);
    m_y->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    // Lines show their pen in the legend: a dashed p95 then differs from its solid p50.
    if (!m_stacked) chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
    // Stacked: each field is an area between the running total before it and after it.
    for (const Line& line : m_lines) {
        auto* upper = new QLineSeries(chart);
        const QPen pen = linePen(int(m_series.size()));
        QAbstractSeries* drawn = upper;
        if (m_stacked) {
            auto* lower = new QLineSeries(chart);
            auto* area = new QAreaSeries(upper, lower);
            QColor fill = line.color;
            fill.setAlpha(170);
            area->setBrush(fill);
            area->setPen(QPen(line.color.darker(120), 1));
            m_lowers << lower;
            drawn = area;
        } else {
            upper->setPen(pen);
        }
        chart->addSeries(drawn);
        drawn->attachAxis(m_x);
        drawn->attachAxis(m_y);
        m_series << upper;
        m_drawn << drawn;
        m_names << QString();
        m_pieces << QList<QLineSeries*>();
        m_piecesUsed << 1;
    }
    // setChart() releases the view's default chart without deleting it (Qt's documentation says
    // so; LeakSanitizer found ~30 KB a chart): it is ours to delete.
    QChart* defaultChart = this->chart();
    setChart(chart);
    delete defaultChart;
    setRenderHint(QPainter::Antialiasing);
    setMouseTracking(true);
    setMinimumSize(200, 150);  // three in a row still fit an 800 px window
}

void TimeSeriesChart::setTitle(const QString& title) { chart()->setTitle(title); }

QPen TimeSeriesChart::linePen(int line) const
{
    QPen pen(drawnColor(line), 2);
    if (m_lines[line].dashed) pen.setStyle(Qt::DashLine);
    return pen;
}

QLineSeries* TimeSeriesChart::segment(int line, int index)
{
    if (index == 0) return m_series[line];
    QList<QLineSeries*>& pieces = m_pieces[line];
    while (pieces.size() < index) {
        // A piece is drawn like the line and kept out of the legend (the first piece stands for it).
        auto* piece = new QLineSeries(chart());
        piece->setPen(linePen(line));
        chart()->addSeries(piece);
        piece->attachAxis(m_x);
        piece->attachAxis(m_y);
        for (QLegendMarker* marker : chart()->legend()->markers(piece)) marker->setVisible(false);
        pieces << piece;
    }
    return pieces[index - 1];
}

void TimeSeriesChart::setLineName(int line, const QString& name)
{
    if (line < 0 || line >= m_drawn.size()) return;
    m_names[line] = name;
    m_drawn[line]->setName(name);
}

void TimeSeriesChart::setDarkTheme(bool dark)
{
    // Re-theming resets series colours; put them back.
    chart()->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    for (int i = 0; i < m_lines.size(); ++i) {
        const QPen pen = linePen(i);
        for (QLineSeries* piece : m_pieces[i]) piece->setPen(pen);
        if (auto* area = qobject_cast<QAreaSeries*>(m_drawn[i])) {
            QColor fill = m_lines[i].color;
            fill.setAlpha(170);
            area->setBrush(fill);
            area->setPen(QPen(m_lines[i].color.darker(120), 1));
        } else {
            m_series[i]->setPen(pen);
        }
    }
}

void TimeSeriesChart::redraw(const std::vector<DashboardSample>& samples, double from, double to)
{
    QList<DashboardField> fields;
    for (const Line& line : m_lines) fields << line.field;
    m_frame = buildTimeSeriesFrame(samples, fields, m_stacked, m_scale, kMaxPoints);
    for (int l = 0; l < m_lines.size(); ++l) {
        const QList<QList<QPointF>>& pieces = m_frame.pieces[l];
        if (m_stacked) {
            m_series[l]->replace(pieces.first());
            m_lowers[l]->replace(m_frame.lower[l]);
            continue;
        }
        for (int p = 0; p < pieces.size(); ++p) segment(l, p)->replace(pieces[p]);
        for (int p = int(pieces.size()); p < m_piecesUsed[l]; ++p) segment(l, p)->clear();
        m_piecesUsed[l] = int(pieces.size());
    }
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(qint64(from * 1000.0)),
                  QDateTime::fromMSecsSinceEpoch(qint64(to * 1000.0)));
    m_x->setFormat(to - from > 600 ? QStringLiteral("HH:mm") : QStringLiteral("HH:mm:ss"));
    m_y->setRange(0, timeSeriesAxisTop(m_frame.peak, m_fixedMaximum));
    if (m_fixedMaximum <= 0) m_y->applyNiceNumbers();  // round ticks: 0, 250, 500 ... rather than 0, 462, 923
    applyAxisLabels();
}

void TimeSeriesChart::applyAxisLabels()
{
    const int ticks = std::max(2, m_y->tickCount());
    m_y->setLabelFormat(QStringLiteral("%.%1f").arg(timeSeriesAxisDecimals((m_y->max() - m_y->min()) / (ticks - 1))));
}

QStringList TimeSeriesChart::axisLabels() const { return timeSeriesAxisLabels(m_y->max(), m_y->tickCount()); }

double TimeSeriesChart::axisMaximum() const { return m_y->max(); }

void TimeSeriesChart::mouseMoveEvent(QMouseEvent* event)
{
    QChartView::mouseMoveEvent(event);
    if (m_drawn.isEmpty() || !chart()->plotArea().contains(event->position())) {
        QToolTip::hideText();
        return;
    }
    const QPointF value = chart()->mapToValue(event->position(), m_drawn.first());
    const QString hover = hoverText(value.x());
    if (!hover.isEmpty()) QToolTip::showText(event->globalPosition().toPoint(), hover, this);
}

void TimeSeriesChart::leaveEvent(QEvent* event)
{
    QToolTip::hideText();
    QChartView::leaveEvent(event);
}

}  // namespace brook
