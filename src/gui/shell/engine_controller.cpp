#include "gui/shell/engine_controller.h"

#include "engine/engine.h"
#include "gui/chat/chat_generator.h"
#include "gui/shell/engine_host.h"

namespace brook {

EngineController::EngineController(QObject* parent)
    : QObject(parent), m_host(new EngineHost(this)), m_generator(new ChatGenerator(this)),
      m_endpoint(new LocalEndpoint(this))
{
    m_endpoint->setChatRequestCounter([this] { return m_generator->finishedCount(); });
    connect(m_host, &EngineHost::engineChanged, this, &EngineController::handleEngineChanged);
}

EngineController::~EngineController()
{
    // The server and the generator let go of the engine before EngineHost (a child) shuts it down.
    m_endpoint->stop();
    m_generator->setEngine(nullptr);
}

bool EngineController::isLoaded() const { return m_host->isLoaded(); }

bool EngineController::load(const LaunchOptions& options) { return m_host->load(options); }

ChatSettings EngineController::chatDefaults() const
{
    return isLoaded() ? ChatSettings::fromDefaults(m_host->generationDefaults()) : ChatSettings();
}

int EngineController::maxModelLen() const { return isLoaded() ? m_host->engine()->config().maxModelLen : 0; }

Result<int> EngineController::startEndpoint(const LocalEndpoint::Settings& settings)
{
    if (!isLoaded())
        return makeError(tr("Load a model first: the endpoint serves the model this window runs.").toStdString());
    return m_endpoint->start(*m_host->engine(), m_host->generationDefaults(), m_host->modelDir(), settings);
}

QString EngineController::ensureEndpoint(const LocalEndpoint::Settings& settings, QString* error)
{
    if (!isLoaded()) {
        *error = tr("Load a model first.");
        return {};
    }
    if (!m_endpoint->isRunning()) {
        auto port = startEndpoint(settings);
        if (!port) {
            *error = tr("The local endpoint did not start: %1").arg(QString::fromStdString(port.error()));
            return {};
        }
    }
    return m_endpoint->baseUrl().chopped(3);  // without /v1
}

void EngineController::stopAll()
{
    m_endpoint->stop();
    m_generator->stopAll();
}

void EngineController::handleEngineChanged(Engine* engine)
{
    // Before the old engine goes: the server moves to the new one (or stops), chats follow.
    const bool serving = m_endpoint->isRunning();
    const LocalEndpoint::Settings settings = m_endpoint->settings();
    m_endpoint->stop();
    m_generator->setEngine(engine);
    if (serving && engine) {
        if (auto port = startEndpoint(settings); !port) emit endpointFailed(QString::fromStdString(port.error()));
    }
    emit engineChanged(engine);
}

}  // namespace brook
