#include "gui/performance/engine_monitor.h"

#include "engine/engine.h"

#include <QDateTime>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace brook {

EngineMonitor::EngineMonitor(QWidget* parent) : QWidget(parent)
{
    auto makeValue = [this](const char* name) {
        auto* label = new QLabel(this);
        label->setObjectName(QLatin1String(name));
        label->setWordWrap(true);  // a narrow dock wraps, it does not cut
        return label;
    };
    m_rateLabel = new QLabel(this);
    m_kvLabel = new QLabel(this);
    m_requestsLabel = new QLabel(this);
    m_rateValue = makeValue("monitorRate");
    m_requestsValue = makeValue("monitorRequests");
    m_kvBar = new QProgressBar(this);
    m_kvBar->setObjectName(QStringLiteral("monitorKvCache"));
    m_kvBar->setRange(0, 1000);
    m_idle = makeValue("monitorIdle");
    m_openPerformance = new QPushButton(this);
    m_openPerformance->setObjectName(QStringLiteral("monitorOpenPerformance"));
    connect(m_openPerformance, &QPushButton::clicked, this, &EngineMonitor::performanceRequested);

    m_form = new QFormLayout;
    m_form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    m_form->addRow(m_rateLabel, m_rateValue);
    m_form->addRow(m_kvLabel, m_kvBar);
    m_form->addRow(m_requestsLabel, m_requestsValue);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_idle);
    layout->addLayout(m_form);
    layout->addWidget(m_openPerformance, 0, Qt::AlignLeft);
    layout->addStretch(1);

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
    m_rates.clear();
    handlePoll();
}

QString EngineMonitor::summaryText() const
{
    if (!m_engine) return tr("No model loaded");
    return tr("%1 tokens/s · KV cache %2% · running %3 · waiting %4")
        .arg(m_rate, 0, 'f', 1)
        .arg(m_kvPercent, 0, 'f', 1)
        .arg(m_running)
        .arg(m_waiting);
}

void EngineMonitor::handlePoll()
{
    const bool loaded = m_engine != nullptr;
    m_idle->setVisible(!loaded);
    for (QWidget* w : std::initializer_list<QWidget*>{m_rateLabel, m_rateValue, m_kvLabel, m_kvBar, m_requestsLabel,
                                                      m_requestsValue})
        w->setVisible(loaded);
    if (!loaded) return;
    const EngineStats s = m_engine->stats();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    m_rate = 0;
    if (m_lastTokens >= 0 && now > m_lastMs)
        m_rate = double(s.generationTokensTotal - m_lastTokens) * 1000.0 / double(now - m_lastMs);
    m_lastTokens = s.generationTokensTotal;
    m_lastMs = now;
    m_rates.push_back(m_rate);
    while (int(m_rates.size()) > kPoints) m_rates.pop_front();
    m_kvPercent = s.kvCacheUsage * 100.0;
    m_running = s.numRunning;
    m_waiting = s.numWaiting;

    const double peak = *std::max_element(m_rates.begin(), m_rates.end());
    m_rateValue->setText(tr("%1 tokens/s (peak %2 in the last minute)").arg(m_rate, 0, 'f', 1).arg(peak, 0, 'f', 1));
    m_kvBar->setValue(int(m_kvPercent * 10.0));
    m_kvBar->setFormat(QStringLiteral("%1%").arg(m_kvPercent, 0, 'f', 1));
    m_requestsValue->setText(tr("running %1 · waiting %2").arg(m_running).arg(m_waiting));
    setToolTip(summaryText());
}

void EngineMonitor::retranslateUi()
{
    m_rateLabel->setText(tr("Generating:"));
    m_kvLabel->setText(tr("KV cache:"));
    m_requestsLabel->setText(tr("Requests:"));
    m_idle->setText(tr("No model loaded"));
    m_openPerformance->setText(tr("Charts and tuning…"));
    m_openPerformance->setToolTip(tr("The Performance window: live charts, serving parameters, load tests"));
    handlePoll();
}

void EngineMonitor::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
