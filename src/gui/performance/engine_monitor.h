// EngineMonitor: the engine at a glance, for a dock beside the chats: tokens/s now and its peak
// over the last minute, KV-cache use as a bar, running and waiting requests, and a button to the
// Performance window, which has the charts and the tuning. Chart-free on purpose: it stays
// readable in a narrow dock (a chart there had its axes cut off) and the two no longer overlap.
// It polls Engine::stats() on a timer (never per token) and keeps the last kPoints rates.
#pragma once

#include <QWidget>

#include <deque>

class QFormLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace brook {

class Engine;

class EngineMonitor : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPoints = 120;  // a minute of rates
    static constexpr int kIntervalMs = 500;

    explicit EngineMonitor(QWidget* parent = nullptr);

    void setEngine(Engine* engine);  // null: nothing to show
    int sampleCount() const { return int(m_rates.size()); }
    QString summaryText() const;  // one line: tokens/s, KV cache, running, waiting

signals:
    void performanceRequested();  // "Charts and tuning…"

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handlePoll();

private:
    void retranslateUi();

    Engine* m_engine = nullptr;
    long long m_lastTokens = -1;
    qint64 m_lastMs = 0;
    std::deque<double> m_rates;
    double m_rate = 0;
    double m_kvPercent = 0;
    int m_running = 0, m_waiting = 0;
    QTimer* m_timer;
    QFormLayout* m_form;
    QLabel* m_rateLabel;
    QLabel* m_kvLabel;
    QLabel* m_requestsLabel;
    QLabel* m_rateValue;
    QProgressBar* m_kvBar;
    QLabel* m_requestsValue;
    QLabel* m_idle;
    QPushButton* m_openPerformance;
};

}  // namespace brook
