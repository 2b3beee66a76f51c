// PerformanceDashboard: live charts of a server: GPU memory split (weights / KV cache /
// activations and graphs / free), KV-cache use, requests running / waiting / preempted, rolling
// p50 and p95 of TTFT, inter-token latency and end-to-end latency, prompt and generation tokens/s,
// and the prefix cache's hit rate (per interval on the KV-cache chart, since start in the status).
// It polls a snapshot every kIntervalMs (Engine::stats() for this app's engine, or /metrics of a
// remote server through RemoteMetricsSource), never one signal per token. Time window 1, 5 or 30
// minutes; pause (sampling goes on, the charts hold still); hover values; CSV and PNG export.
// GUI thread only.
#pragma once

#include "gui/performance/dashboard_series.h"

#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTimer;
class QToolButton;

namespace brook {

class Engine;
class RemoteMetricsSource;
class TimeSeriesChart;

class PerformanceDashboard : public QWidget {
    Q_OBJECT
public:
    enum class Source { LocalEngine, Remote };
    static constexpr int kIntervalMs = 1000;

    explicit PerformanceDashboard(QWidget* parent = nullptr);

    void setEngine(Engine* engine);  // this app's engine (null: none loaded)
    void watchLocal();
    void watchRemote(const QString& baseUrl, const QString& apiKey = {});
    Source source() const { return m_source; }
    RemoteMetricsSource* remote() const { return m_remote; }

    void setWindowSeconds(int seconds);  // 60, 300 or 1800
    int windowSeconds() const { return m_windowSeconds; }
    void setPaused(bool paused);
    bool isPaused() const { return m_paused; }

    const DashboardSeries& series() const { return m_series; }
    QList<TimeSeriesChart*> charts() const { return m_charts; }
    QString statusText() const;
    bool exportCsv(const QString& path, QString* error = nullptr) const;
    bool exportPng(const QString& path) const;

public slots:
    void pollNow();

signals:
    void sampleAdded();

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private slots:
    void handleRemoteSnapshot(const brook::MetricsSnapshot& snapshot);
    void handleSourceChanged(int index);
    void handleExportCsv();
    void handleExportPng();

private:
    void addSample(const MetricsSnapshot& snapshot);
    void redraw();
    void retranslateUi();
    void updateStatus();

    Engine* m_engine = nullptr;
    Source m_source = Source::LocalEngine;
    RemoteMetricsSource* m_remote;
    DashboardSeries m_series;
    int m_windowSeconds = 300;
    bool m_paused = false;
    QString m_remoteState;
    std::optional<double> m_prefixCacheHitRate;  // 0..1, since the server started; none: no lookups or off
    QTimer* m_timer;
    QComboBox* m_sourceBox;
    QLineEdit* m_url;
    QLineEdit* m_apiKey;
    QPushButton* m_connect;
    QComboBox* m_windowBox;
    QToolButton* m_pause;
    QPushButton* m_csv;
    QPushButton* m_png;
    QLabel* m_status;
    QWidget* m_grid;
    QList<TimeSeriesChart*> m_charts;
};

}  // namespace brook
