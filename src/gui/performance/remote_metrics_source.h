// RemoteMetricsSource: watches another OpenAI-compatible server (a vLLM deployment or another
// Brook) for the dashboard: each poll() asks GET /health, then GET /metrics, over Qt Network, and
// turns the Prometheus text into a MetricsSnapshot with VllmMetricsReader. A poll still in flight
// is not doubled. GUI thread only (replies arrive on its event loop).
#pragma once

#include "gui/performance/metrics_snapshot.h"
#include "gui/performance/vllm_metrics_reader.h"

#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QUrl>

class QNetworkAccessManager;

namespace brook {

class RemoteMetricsSource : public QObject {
    Q_OBJECT
public:
    static constexpr int kTimeoutMs = 5000;

    explicit RemoteMetricsSource(QObject* parent = nullptr);
    ~RemoteMetricsSource() override;

    // "http://host:8000" (a trailing "/v1" or "/" is dropped). Starts a fresh history.
    void setServer(const QString& baseUrl, const QString& apiKey = {});
    QUrl server() const { return m_base; }
    QString modelName() const { return QString::fromStdString(m_reader.modelName()); }
    bool isPolling() const { return m_reply != nullptr; }
    static QUrl normalizeBaseUrl(const QString& text);

public slots:
    void poll();

signals:
    void snapshotReady(const brook::MetricsSnapshot& snapshot);
    void healthChanged(bool healthy, int httpStatus);
    void failed(const QString& message);  // network or parse error, translated

private slots:
    void handleHealthFinished();
    void handleMetricsFinished();

private:
    QNetworkReply* get(const QString& path);

    QNetworkAccessManager* m_network;
    QUrl m_base;
    QString m_apiKey;
    QPointer<QNetworkReply> m_reply;
    VllmMetricsReader m_reader;
};

}  // namespace brook
