#include "gui/performance/remote_metrics_source.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace brook {

RemoteMetricsSource::RemoteMetricsSource(QObject* parent) : QObject(parent), m_network(new QNetworkAccessManager(this))
{
    qRegisterMetaType<brook::MetricsSnapshot>("brook::MetricsSnapshot");
}

RemoteMetricsSource::~RemoteMetricsSource()
{
    if (m_reply) m_reply->abort();
}

QUrl RemoteMetricsSource::normalizeBaseUrl(const QString& text)
{
    QString t = text.trimmed();
    if (!t.isEmpty() && !t.contains(QStringLiteral("://"))) t = QStringLiteral("http://") + t;
    while (t.endsWith(QLatin1Char('/'))) t.chop(1);
    if (t.endsWith(QStringLiteral("/v1"))) t.chop(3);
    return QUrl(t);
}

void RemoteMetricsSource::setServer(const QString& baseUrl, const QString& apiKey)
{
    if (m_reply) m_reply->abort();
    m_base = normalizeBaseUrl(baseUrl);
    m_apiKey = apiKey.trimmed();
    m_reader.reset();
}

QNetworkReply* RemoteMetricsSource::get(const QString& path)
{
    QNetworkRequest request(QUrl(m_base.toString() + path));
    request.setTransferTimeout(kTimeoutMs);
    if (!m_apiKey.isEmpty()) request.setRawHeader("Authorization", "Bearer " + m_apiKey.toUtf8());
    return m_network->get(request);
}

void RemoteMetricsSource::poll()
{
    if (m_reply || !m_base.isValid() || m_base.isEmpty()) return;
    m_reply = get(QStringLiteral("/health"));
    connect(m_reply, &QNetworkReply::finished, this, &RemoteMetricsSource::handleHealthFinished);
}

void RemoteMetricsSource::handleHealthFinished()
{
    QNetworkReply* reply = m_reply;
    m_reply = nullptr;
    if (!reply) return;
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (reply->error() != QNetworkReply::NoError && status == 0) {
        emit healthChanged(false, 0);
        emit failed(tr("Cannot reach %1: %2").arg(m_base.toString(), reply->errorString()));
        return;
    }
    emit healthChanged(status == 200, status);
    // A server that is loading or draining still has metrics worth drawing.
    m_reply = get(QStringLiteral("/metrics"));
    connect(m_reply, &QNetworkReply::finished, this, &RemoteMetricsSource::handleMetricsFinished);
}

void RemoteMetricsSource::handleMetricsFinished()
{
    QNetworkReply* reply = m_reply;
    m_reply = nullptr;
    if (!reply) return;
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (reply->error() != QNetworkReply::NoError || status != 200) {
        emit failed(tr("%1/metrics answered %2: %3").arg(m_base.toString()).arg(status).arg(reply->errorString()));
        return;
    }
    const QByteArray body = reply->readAll();
    auto parsed = PrometheusText::parse(std::string_view(body.constData(), size_t(body.size())));
    if (!parsed) {
        emit failed(
            tr("%1/metrics is not Prometheus text: %2").arg(m_base.toString(), QString::fromStdString(parsed.error())));
        return;
    }
    emit snapshotReady(m_reader.read(*parsed, double(QDateTime::currentMSecsSinceEpoch()) / 1000.0));
}

}  // namespace brook
