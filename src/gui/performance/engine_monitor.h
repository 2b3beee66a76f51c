// EngineMonitor: a live view of the engine: generation tokens/s and KV-cache use as two bounded
// line series, plus running / waiting requests. It polls Engine::stats() on a timer (the charts
// are never fed per token) and keeps the last kPoints samples.
#pragma once

#include <QWidget>

class QLabel;
class QTimer;
class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;

namespace brook {

class Engine;

class EngineMonitor : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPoints = 120;
    static constexpr int kIntervalMs = 500;

    explicit EngineMonitor(QWidget* parent = nullptr);

    void setEngine(Engine* engine);  // null: nothing to show
    int sampleCount() const;
    QString summaryText() const;

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handlePoll();

private:
    void retranslateUi();

    Engine* m_engine = nullptr;
    long long m_lastTokens = -1;
    qint64 m_lastMs = 0;
    int m_tick = 0;
    QTimer* m_timer;
    QChart* m_chart;
    QChartView* m_view;
    QLineSeries* m_throughput;
    QLineSeries* m_kvUsage;
    QValueAxis* m_x;
    QValueAxis* m_yTokens;
    QValueAxis* m_yPercent;
    QLabel* m_summary;
};

}  // namespace brook
