// TimeSeriesChart without Qt Charts (BROOK_WITH_CHARTS=OFF): a framed panel with the chart's
// title and, per line, a colour swatch, the line's name and its latest value in the window, live.
// The data (TimeSeriesFrame), the axis the plot would have, and the hover text are the same as
// the plotted chart's, so the performance window keeps all of its logic.
#include "gui/performance/time_series_chart.h"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

namespace brook {

namespace {

constexpr int kTicks = 5;  // a fixed axis (0..100 %) has the plotted chart's default tick count

QString swatchStyle(const QColor& color, bool dashed)
{
    return QStringLiteral("background: %1; border: %2 %3; min-width: 14px; max-width: 14px; min-height: 4px; "
                          "max-height: 4px;")
        .arg(color.name(), dashed ? QStringLiteral("1px dashed") : QStringLiteral("1px solid"),
             color.darker(130).name());
}

}  // namespace

TimeSeriesChart::TimeSeriesChart(QList<Line> lines, bool stacked, QWidget* parent)
    : QFrame(parent), m_lines(std::move(lines)), m_stacked(stacked)
{
    setFrameShape(QFrame::StyledPanel);
    auto* layout = new QVBoxLayout(this);
    m_title = new QLabel(this);
    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    layout->addWidget(m_title);
    auto* grid = new QGridLayout;
    for (int l = 0; l < m_lines.size(); ++l) {
        auto* swatch = new QLabel(this);
        swatch->setStyleSheet(swatchStyle(drawnColor(l), m_lines[l].dashed));
        auto* name = new QLabel(this);
        auto* value = new QLabel(QStringLiteral("–"), this);
        value->setObjectName(QStringLiteral("liveFigure"));
        value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        QFont big = value->font();
        big.setPointSizeF(big.pointSizeF() * 1.3);
        value->setFont(big);
        grid->addWidget(swatch, l, 0);
        grid->addWidget(name, l, 1);
        grid->addWidget(value, l, 2);
        m_nameLabels << name;
        m_valueLabels << value;
        m_names << QString();
    }
    grid->setColumnStretch(1, 1);
    layout->addLayout(grid);
    layout->addStretch(1);
    setMinimumSize(200, 110);
}

void TimeSeriesChart::setTitle(const QString& title) { m_title->setText(title); }

void TimeSeriesChart::setLineName(int line, const QString& name)
{
    if (line < 0 || line >= m_nameLabels.size()) return;
    m_names[line] = name;
    m_nameLabels[line]->setText(name);
}

void TimeSeriesChart::setDarkTheme(bool) {}  // plain labels follow the application's palette

void TimeSeriesChart::redraw(const std::vector<DashboardSample>& samples, double, double)
{
    QList<DashboardField> fields;
    for (const Line& line : m_lines) fields << line.field;
    m_frame = buildTimeSeriesFrame(samples, fields, m_stacked, m_scale, kMaxPoints);
    const double top = timeSeriesAxisTop(m_frame.peak, m_fixedMaximum);
    const NiceAxis axis = m_fixedMaximum > 0 ? NiceAxis{top, kTicks} : timeSeriesNiceAxis(top);
    m_axisTop = axis.top;
    m_axisTicks = axis.ticks;
    // The newest sample that has the line's value: an idle minute shows the last value seen
    // rather than nothing; a window with none shows a dash.
    for (int l = 0; l < m_lines.size(); ++l) {
        std::optional<double> latest;
        for (auto it = m_frame.shown.rbegin(); it != m_frame.shown.rend() && !latest; ++it) {
            std::optional<double> v = it->value(m_lines[l].field);
            if (v && std::isfinite(*v)) latest = *v * m_scale;
        }
        m_valueLabels[l]->setText(formatValue(latest));
    }
    setToolTip(m_frame.shown.empty() ? QString() : hoverText(m_frame.shown.back().timeSeconds * 1000.0));
}

double TimeSeriesChart::axisMaximum() const { return m_axisTop; }

QStringList TimeSeriesChart::axisLabels() const { return timeSeriesAxisLabels(m_axisTop, m_axisTicks); }

}  // namespace brook
