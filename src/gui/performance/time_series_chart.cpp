#include "gui/performance/time_series_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLegend>
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
    // Stacked: each field is an area between the running total before it and after it.
    for (const Line& line : m_lines) {
        auto* upper = new QLineSeries(chart);
        QPen pen(line.color, 2);
        if (line.dashed) pen.setStyle(Qt::DashLine);
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
    }
    setChart(chart);
    setRenderHint(QPainter::Antialiasing);
    setMouseTracking(true);
    setMinimumSize(260, 170);
}

void TimeSeriesChart::setTitle(const QString& title) { chart()->setTitle(title); }

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
        QPen pen(m_lines[i].color, 2);
        if (m_lines[i].dashed) pen.setStyle(Qt::DashLine);
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

    double peak = 0;
    std::vector<double> base(m_shown.size(), 0.0);
    for (int l = 0; l < m_lines.size(); ++l) {
        QList<QPointF> upper, lower;
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
            } else if (v && std::isfinite(*v)) {
                upper << QPointF(x, *v);
                peak = std::max(peak, *v);
            }
        }
        m_series[l]->replace(upper);
        if (m_stacked) m_lowers[l]->replace(lower);
    }
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(qint64(from * 1000.0)),
                  QDateTime::fromMSecsSinceEpoch(qint64(to * 1000.0)));
    m_x->setFormat(to - from > 600 ? QStringLiteral("HH:mm") : QStringLiteral("HH:mm:ss"));
    const double top = m_fixedMaximum > 0 ? m_fixedMaximum : std::max(peak * 1.1, m_scale > 1.0 ? 1.0 : 0.01);
    m_y->setRange(0, top);
    if (m_fixedMaximum <= 0) m_y->applyNiceNumbers();  // round ticks: 0, 250, 500 ... rather than 0, 462, 923
    const double shownTop = m_y->max();
    m_y->setLabelFormat(shownTop >= 10  ? QStringLiteral("%.0f")
                        : shownTop >= 1 ? QStringLiteral("%.1f")
                                        : QStringLiteral("%.2f"));
}

int TimeSeriesChart::pointCount(int line) const
{
    return line >= 0 && line < m_series.size() ? int(m_series[line]->count()) : 0;
}

QList<QPointF> TimeSeriesChart::points(int line) const
{
    return line >= 0 && line < m_series.size() ? m_series[line]->points() : QList<QPointF>();
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
