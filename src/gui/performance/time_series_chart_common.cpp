// The parts of TimeSeriesChart that do not depend on how the series are shown (Qt Charts or live
// figures): units, the fixed maximum, colours, the points of the last redraw, the hover text.
#include "gui/performance/time_series_chart.h"

#include <QDateTime>

#include <algorithm>
#include <cmath>

namespace brook {

void TimeSeriesChart::setUnit(const QString& unit, int decimals)
{
    m_unit = unit;
    m_decimals = decimals;
}

void TimeSeriesChart::setFixedMaximum(double maximum) { m_fixedMaximum = maximum; }

QColor TimeSeriesChart::drawnColor(int line) const
{
    if (line < 0 || line >= m_lines.size()) return {};
    const Line& l = m_lines[line];
    return l.dashed ? l.color.lighter(135) : l.color;
}

int TimeSeriesChart::segmentCount(int line) const
{
    return line >= 0 && line < m_frame.pieces.size() ? int(m_frame.pieces[line].size()) : 0;
}

QList<QPointF> TimeSeriesChart::points(int line) const
{
    if (line < 0 || line >= m_frame.pieces.size()) return {};
    QList<QPointF> all;
    for (const QList<QPointF>& piece : m_frame.pieces[line]) all += piece;
    return all;
}

int TimeSeriesChart::pointCount(int line) const { return int(points(line).size()); }

QString TimeSeriesChart::formatValue(const std::optional<double>& value) const
{
    if (!value) return QStringLiteral("–");
    QString text = QString::number(*value, 'f', m_decimals);
    return m_unit.isEmpty() ? text : text + QLatin1Char(' ') + m_unit;
}

QString TimeSeriesChart::hoverText(double timeMs) const
{
    const std::vector<DashboardSample>& shown = m_frame.shown;
    if (shown.empty()) return {};
    const auto nearest =
        std::min_element(shown.begin(), shown.end(), [&](const DashboardSample& a, const DashboardSample& b) {
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

}  // namespace brook
