#include "gui/shell/local_endpoint.h"

#include "server/openai_server.h"
#include "server/serve_config.h"
#include "server/server_context.h"

#include <QCoreApplication>

#include <spdlog/spdlog.h>

namespace brook {

namespace {
qint64 engineRequestsEnded(const Engine& engine)
{
    const EngineStats s = engine.stats();
    return s.requestsFinished + s.requestsAborted;
}
}  // namespace

LocalEndpoint::LocalEndpoint(QObject* parent) : QObject(parent) {}

LocalEndpoint::~LocalEndpoint() { stop(); }

bool LocalEndpoint::isLoopback(const QString& host) { return isLoopbackHost(host.trimmed().toStdString()); }

QString LocalEndpoint::checkSettings(const Settings& s)
{
    if (s.host.trimmed().isEmpty())
        return QCoreApplication::translate("brook::LocalEndpoint", "Enter a host to listen on.");
    if (s.port < 0 || s.port > 65535)
        return QCoreApplication::translate("brook::LocalEndpoint",
                                           "The port must be between 0 (any free port) and 65535.");
    if (!isLoopback(s.host) && s.apiKey.trimmed().isEmpty())
        return QCoreApplication::translate("brook::LocalEndpoint",
                                           "Listening on %1 lets other computers use the model: set an API key first.")
            .arg(s.host.trimmed());
    return {};
}

Result<int> LocalEndpoint::start(Engine& engine, const GenerationDefaults& defaults, const QString& modelDir,
                                 const Settings& settings)
{
    stop();
    if (const QString problem = checkSettings(settings); !problem.isEmpty()) return makeError(problem.toStdString());
    ServeConfig config;
    config.model = modelDir.toStdString();
    config.host = settings.host.trimmed().toStdString();
    config.port = settings.port;
    config.apiKey = settings.apiKey.trimmed().toStdString();
    config.servedModelNames = {engine.config().modelName};
    config.httpThreads = 32;  // a desktop's few clients, not a data centre's
    config.launch.maxNumSeqs = engine.config().scheduler.maxNumSeqs;
    auto server = std::make_unique<OpenAiServer>(config);
    auto port = server->start();
    if (!port) return port;
    server->attach(engine, defaults, modelDir.toStdString());
    m_server = std::move(server);
    m_engine = &engine;
    m_settings = settings;
    m_port = *port;
    m_engineBaseline = engineRequestsEnded(engine);
    m_chatBaseline = m_chatRequests ? m_chatRequests() : 0;
    spdlog::info("local endpoint: {}", baseUrl().toStdString());
    emit runningChanged(true);
    return port;
}

void LocalEndpoint::stop()
{
    if (!m_server) return;
    m_server->drain(std::chrono::milliseconds(500));
    m_server->stop();
    m_server.reset();
    m_engine = nullptr;
    spdlog::info("local endpoint stopped");
    emit runningChanged(false);
}

QString LocalEndpoint::baseUrl() const
{
    QString host = m_settings.host.trimmed();
    if (host == QLatin1String("0.0.0.0") || host == QLatin1String("::")) host = QStringLiteral("127.0.0.1");
    if (host.contains(QLatin1Char(':'))) host = QLatin1Char('[') + host + QLatin1Char(']');
    return QStringLiteral("http://%1:%2/v1").arg(host).arg(m_port);
}

QString LocalEndpoint::curlExample() const
{
    const QString model = m_engine ? QString::fromStdString(m_engine->config().modelName) : QStringLiteral("ernie-4.5");
    QString auth;
    if (!m_settings.apiKey.trimmed().isEmpty())
        auth = QStringLiteral(" \\\n  -H \"Authorization: Bearer %1\"").arg(m_settings.apiKey.trimmed());
    return QStringLiteral("curl %1/chat/completions \\\n  -H \"Content-Type: application/json\"%2 \\\n"
                          "  -d '{\"model\": \"%3\", \"messages\": [{\"role\": \"user\", \"content\": \"你好\"}]}'")
        .arg(baseUrl(), auth, model);
}

int LocalEndpoint::activeRequests() const { return m_server ? m_server->context().activeRequests().load() : 0; }

qint64 LocalEndpoint::servedRequests() const
{
    if (!m_server || !m_engine) return 0;
    const qint64 engineDelta = engineRequestsEnded(*m_engine) - m_engineBaseline;
    const qint64 chatDelta = m_chatRequests ? m_chatRequests() - m_chatBaseline : 0;
    return std::max<qint64>(0, engineDelta - chatDelta);
}

}  // namespace brook
