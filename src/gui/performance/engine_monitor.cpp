#include "gui/performance/engine_monitor.h"

#include "engine/engine.h"

#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QEvent>
#include <QLabel>
#include <QLineSeries>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

namespace brook {

EngineMonitor::EngineMonitor(QWidget* parent) : QWidget(parent)
{
    m_throughput = new QLineSeries(this);
    m_kvUsage = new QLineSeries(this);
    m_chart = new QChart;
    m_chart->addSeries(m_throughput);
    m_chart->addSeries(m_kvUsage);
    m_chart->setMargins(QMargins(2, 2, 2, 2));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_x = new QValueAxis(this);
    m_x->setRange(0, kPoints);
    m_x->setLabelsVisible(false);
    m_yTokens = new QValueAxis(this);
    m_yTokens->setRange(0, 10);
    m_yTokens->setLabelFormat(QStringLiteral("%.0f"));
    m_yPercent = new QValueAxis(this);
    m_yPercent->setRange(0, 100);
    m_yPercent->setLabelFormat(QStringLiteral("%.0f%%"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_yTokens, Qt::AlignLeft);
    m_chart->addAxis(m_yPercent, Qt::AlignRight);
    m_throughput->attachAxis(m_x);
    m_throughput->attachAxis(m_yTokens);
    m_kvUsage->attachAxis(m_x);
    m_kvUsage->attachAxis(m_yPercent);
    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(160);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("monitorSummary"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_summary);

    m_timer = new QTimer(this);
    m_timer->setInterval(kIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &EngineMonitor::handlePoll);
    m_timer->start();
    retranslateUi();
}

void EngineMonitor::setEngine(Engine* engine)
{
    m_engine = engine;
    m_lastTokens = -1;
    m_throughput->clear();
    m_kvUsage->clear();
    m_tick = 0;
    handlePoll();
}

int EngineMonitor::sampleCount() const { return int(m_throughput->count()); }
QString EngineMonitor::summaryText() const { return m_summary->text(); }

void EngineMonitor::handlePoll()
{
    if (!m_engine) {
        m_summary->setText(tr("No model loaded"));
        return;
    }
    const EngineStats s = m_engine->stats();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    double rate = 0;
    if (m_lastTokens >= 0 && now > m_lastMs)
        rate = double(s.generationTokensTotal - m_lastTokens) * 1000.0 / double(now - m_lastMs);
    m_lastTokens = s.generationTokensTotal;
    m_lastMs = now;

    // Bounded series: drop the oldest point, shift x so the newest is always at the right edge.
    m_throughput->append(m_tick, rate);
    m_kvUsage->append(m_tick, s.kvCacheUsage * 100.0);
    ++m_tick;
    if (m_throughput->count() > kPoints) {
        m_throughput->remove(0);
        m_kvUsage->remove(0);
    }
    m_x->setRange(std::max(0, m_tick - kPoints), std::max(kPoints, m_tick));
    double peak = 10;
    for (const QPointF& p : m_throughput->points()) peak = std::max(peak, p.y());
    m_yTokens->setRange(0, peak * 1.15);

    m_summary->setText(tr("%1 tokens/s · KV cache %2% · running %3 · waiting %4")
                           .arg(rate, 0, 'f', 1)
                           .arg(s.kvCacheUsage * 100.0, 0, 'f', 1)
                           .arg(s.numRunning)
                           .arg(s.numWaiting));
}

void EngineMonitor::retranslateUi()
{
    m_throughput->setName(tr("Generated tokens/s"));
    m_kvUsage->setName(tr("KV cache used (%)"));
    handlePoll();
}

void EngineMonitor::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    else if (event->type() == QEvent::PaletteChange)
        m_chart->setTheme(palette().color(QPalette::Window).lightness() < 128 ? QChart::ChartThemeDark
                                                                              : QChart::ChartThemeLight);
    QWidget::changeEvent(event);
}

}  // namespace brook
