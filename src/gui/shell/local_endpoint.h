// LocalEndpoint: the OpenAI-compatible server (src/server's OpenAiServer) started inside the app
// on the app's own Engine, so chats and API requests are batched together. Checks the settings
// first (a host other than loopback needs an API key), and counts the requests it serves.
// GUI thread only; the server runs on its own HTTP threads.
#pragma once

#include "engine/engine.h"
#include "engine/generation_config.h"
#include "engine/result.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>

namespace brook {

class OpenAiServer;

class LocalEndpoint : public QObject {
    Q_OBJECT
public:
    struct Settings {
        QString host = QStringLiteral("127.0.0.1");
        int port = 8000;  // 0: any free port
        QString apiKey;
    };

    explicit LocalEndpoint(QObject* parent = nullptr);
    ~LocalEndpoint() override;

    // An error to show instead of starting (translated), or empty when the settings are usable.
    static QString checkSettings(const Settings& settings);
    static bool isLoopback(const QString& host);

    // Starts serving `engine` (which must outlive stop()). Returns the port.
    Result<int> start(Engine& engine, const GenerationDefaults& defaults, const QString& modelDir,
                      const Settings& settings);
    void stop();  // lets running requests finish for a moment, then cancels them
    bool isRunning() const { return m_server != nullptr; }

    const Settings& settings() const { return m_settings; }
    int port() const { return m_port; }
    QString baseUrl() const;  // http://host:port/v1
    QString curlExample() const;
    int activeRequests() const;  // API calls in progress
    // Engine requests that came from the API since start: the engine's total minus the chats'
    // (counted by `chatRequests`), so it needs no hook inside the server.
    qint64 servedRequests() const;
    void setChatRequestCounter(std::function<qint64()> counter) { m_chatRequests = std::move(counter); }

signals:
    void runningChanged(bool running);

private:
    std::unique_ptr<OpenAiServer> m_server;
    Engine* m_engine = nullptr;
    Settings m_settings;
    QString m_modelName;
    int m_port = 0;
    std::function<qint64()> m_chatRequests;
    qint64 m_engineBaseline = 0;
    qint64 m_chatBaseline = 0;
};

}  // namespace brook
