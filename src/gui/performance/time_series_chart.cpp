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
    setChart(chart);
    setRenderHint(QPainter::Antialiasing);
    setMouseTracking(true);
    setMinimumSize(200, 150);  // three in a row still fit an 800 px window
}

void TimeSeriesChart::setTitle(const QString& title) { chart()->setTitle(title); }

QColor TimeSeriesChart::drawnColor(int line) const
{
    if (line < 0 || line >= m_lines.size()) return {};
    const Line& l = m_lines[line];
    return l.dashed ? l.color.lighter(135) : l.color;
}

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

int TimeSeriesChart::segmentCount(int line) const
{
    return line >= 0 && line < m_piecesUsed.size() ? m_piecesUsed[line] : 0;
}

void TimeSeriesChart::setLineName(int line, const QString& name)
{
    if (line < 0 || line >= m_drawn.size()) return;
    m_names[line] = name;
    m_drawn[line]->setName(name);
}

void TimeSeriesChart::setUnit(const QString& unit, int decimals)
{
    m_unit = unit;
    m_decimals = decimals;
}

void TimeSeriesChart::setFixedMaximum(double maximum) { m_fixedMaximum = maximum; }

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
    // Thin evenly to kMaxPoints: a 30-minute window at one sample a second is 1,800 samples.
    m_shown.clear();
    const size_t step = std::max<size_t>(1, (samples.size() + kMaxPoints - 1) / kMaxPoints);
    for (size_t i = 0; i < samples.size(); i += step) m_shown.push_back(samples[i]);
    if (!samples.empty() && (samples.size() - 1) % step != 0) m_shown.push_back(samples.back());

    // A pause between shown samples longer than a few of their usual intervals is a gap.
    std::vector<double> intervals;
    for (size_t i = 1; i < m_shown.size(); ++i)
        intervals.push_back(m_shown[i].timeSeconds - m_shown[i - 1].timeSeconds);
    double gapSeconds = 5.0;
    if (!intervals.empty()) {
        std::nth_element(intervals.begin(), intervals.begin() + intervals.size() / 2, intervals.end());
        gapSeconds = std::max(gapSeconds, 3.0 * intervals[intervals.size() / 2]);
    }

    double peak = 0;
    std::vector<double> base(m_shown.size(), 0.0);
    for (int l = 0; l < m_lines.size(); ++l) {
        QList<QPointF> upper, lower;
        QList<QList<QPointF>> pieces(1);
        upper.reserve(qsizetype(m_shown.size()));
        for (size_t i = 0; i < m_shown.size(); ++i) {
            const double x = m_shown[i].timeSeconds * 1000.0;
            std::optional<double> v = m_shown[i].value(m_lines[l].field);
            if (v) *v *= m_scale;
            if (m_stacked) {
                lower << QPointF(x, base[i]);
                base[i] += v.value_or(0.0);
                upper << QPointF(x, base[i]);
                peak = std::max(peak, base[i]);
                continue;
            }
            const bool gap = i > 0 && m_shown[i].timeSeconds - m_shown[i - 1].timeSeconds > gapSeconds;
            if ((gap || !v || !std::isfinite(*v)) && !pieces.last().isEmpty()) pieces.append(QList<QPointF>());
            if (v && std::isfinite(*v)) {
                pieces.last() << QPointF(x, *v);
                peak = std::max(peak, *v);
            }
        }
        if (m_stacked) {
            m_series[l]->replace(upper);
            m_lowers[l]->replace(lower);
            continue;
        }
        if (pieces.size() > 1 && pieces.last().isEmpty()) pieces.removeLast();
        for (int p = 0; p < pieces.size(); ++p) segment(l, p)->replace(pieces[p]);
        for (int p = int(pieces.size()); p < m_piecesUsed[l]; ++p) segment(l, p)->clear();
        m_piecesUsed[l] = int(pieces.size());
    }
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(qint64(from * 1000.0)),
                  QDateTime::fromMSecsSinceEpoch(qint64(to * 1000.0)));
    m_x->setFormat(to - from > 600 ? QStringLiteral("HH:mm") : QStringLiteral("HH:mm:ss"));
    // Nothing to show yet (idle): a 0..1 axis, not a 0..0.01 one whose labels repeat.
    const double top = m_fixedMaximum > 0 ? m_fixedMaximum : peak > 0 ? peak * 1.1 : 1.0;
    m_y->setRange(0, top);
    if (m_fixedMaximum <= 0) m_y->applyNiceNumbers();  // round ticks: 0, 250, 500 ... rather than 0, 462, 923
    applyAxisLabels();
}

void TimeSeriesChart::applyAxisLabels()
{
    // As many decimals as the tick step needs, so no two labels read the same (0.25 needs 2).
    const int ticks = std::max(2, m_y->tickCount());
    const double step = (m_y->max() - m_y->min()) / (ticks - 1);
    int decimals = 0;
    while (decimals < 4 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) >
                               1e-6 * std::pow(10.0, decimals))
        ++decimals;
    m_y->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

QStringList TimeSeriesChart::axisLabels() const
{
    QStringList labels;
    const int ticks = std::max(2, m_y->tickCount());
    const QByteArray format = m_y->labelFormat().toLatin1();
    for (int i = 0; i < ticks; ++i) {
        const double value = m_y->min() + (m_y->max() - m_y->min()) * i / (ticks - 1);
        labels << QString::asprintf(format.constData(), value);
    }
    return labels;
}

int TimeSeriesChart::pointCount(int line) const { return int(points(line).size()); }

QList<QPointF> TimeSeriesChart::points(int line) const
{
    if (line < 0 || line >= m_series.size()) return {};
    QList<QPointF> all = m_series[line]->points();
    for (int p = 1; p < m_piecesUsed[line]; ++p) all += m_pieces[line][p - 1]->points();
    return all;
}

double TimeSeriesChart::axisMaximum() const { return m_y->max(); }

QString TimeSeriesChart::formatValue(const std::optional<double>& value) const
{
    if (!value) return QStringLiteral("–");
    QString text = QString::number(*value, 'f', m_decimals);
    return m_unit.isEmpty() ? text : text + QLatin1Char(' ') + m_unit;
}

QString TimeSeriesChart::hoverText(double timeMs) const
{
    if (m_shown.empty()) return {};
    const auto nearest =
        std::min_element(m_shown.begin(), m_shown.end(), [&](const DashboardSample& a, const DashboardSample& b) {
            return std::abs(a.timeSeconds * 1000.0 - timeMs) < std::abs(b.timeSeconds * 1000.0 - timeMs);
        });
    QStringList lines;
    lines << QDateTime::fromMSecsSinceEpoch(qint64(nearest->timeSeconds * 1000.0)).toString(QStringLiteral("HH:mm:ss"));
    for (int l = 0; l < m_lines.size(); ++l) {
        std::optional<double> v = nearest->value(m_lines[l].field);
        if (v) *v *= m_scale;
        lines << m_names[l] + QStringLiteral(": ") + formatValue(v);
    }
    return lines.join(QLatin1Char('\n'));
}

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
