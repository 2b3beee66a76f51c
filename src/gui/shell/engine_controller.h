// EngineController: owns what runs the model for the window: the one EngineHost (loading, the
// engine), the shared ChatGenerator (every chat pane batched by that engine) and the LocalEndpoint
// (the OpenAI API on the same engine). When a load swaps engines it moves the generator over and
// restarts the endpoint on the new engine if it was serving, then tells the window. The window
// asks it for things; it knows no widget. GUI thread only.
#pragma once

#include "gui/chat/chat_settings.h"
#include "gui/shell/local_endpoint.h"
#include "launch/launch_options.h"

#include <QObject>
#include <QString>

namespace brook {

class ChatGenerator;
class Engine;
class EngineHost;

class EngineController : public QObject {
    Q_OBJECT
public:
    explicit EngineController(QObject* parent = nullptr);
    ~EngineController() override;

    EngineHost& host() { return *m_host; }
    ChatGenerator& generator() { return *m_generator; }
    LocalEndpoint& endpoint() { return *m_endpoint; }

    bool isLoaded() const;
    // Starts loading; false when a load is already running.
    bool load(const LaunchOptions& options);
    // The chat settings a new conversation starts from: the model's generation_config when one is
    // loaded; and the loaded context length (0: none).
    ChatSettings chatDefaults() const;
    int maxModelLen() const;

    // Serves the loaded model. The error is translated text ("Load a model first ...").
    Result<int> startEndpoint(const LocalEndpoint::Settings& settings);
    // The endpoint's base URL without /v1, started with `settings` when it is not running (the load
    // generator talks HTTP to it); empty with *error set when it cannot be.
    QString ensureEndpoint(const LocalEndpoint::Settings& settings, QString* error);
    // Stops serving and every chat generation (the window is closing).
    void stopAll();

signals:
    // After the generator and endpoint have moved to `engine` (null: unloaded).
    void engineChanged(brook::Engine* engine);
    // The endpoint was serving and did not come back on the new engine (translated text).
    void endpointFailed(const QString& message);

private:
    void handleEngineChanged(Engine* engine);

    EngineHost* m_host;
    ChatGenerator* m_generator;
    LocalEndpoint* m_endpoint;
};

}  // namespace brook
