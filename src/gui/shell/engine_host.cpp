#include "gui/shell/engine_host.h"

#include "gui/shell/gui_terms.h"

#include "engine/capacity_planner.h"
#include "launch/engine_launcher.h"
#include "engine/model_folder.h"
#include "engine/request_stream.h"
#include "engine/tokenizer.h"

#include <QMetaObject>

#include <spdlog/spdlog.h>

namespace brook {

EngineHost::EngineHost(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<brook::MemoryEstimate>("brook::MemoryEstimate");
    qRegisterMetaType<brook::EngineHost::Stage>("brook::EngineHost::Stage");
}

EngineHost::~EngineHost()
{
    if (m_loader.joinable()) m_loader.join();
    m_engine.reset();
}

QString EngineHost::backendName() const
{
    return m_engine ? QString::fromStdString(m_engine->backendName()) : QString();
}

MemoryEstimate EngineHost::estimate(const ModelConfig& c, const LaunchOptions& options, bool cuda)
{
    // The capacity planner sizes memory for everyone (the serving panel, the launcher, here).
    CapacityInput in;
    static_cast<ServingSettings&>(in) = options;
    in.model = c;
    in.device = cuda ? "cuda" : "cpu";
    const CapacityPlan plan = CapacityPlanner::plan(in);
    MemoryEstimate e;
    e.device = cuda ? QStringLiteral("cuda") : QStringLiteral("cpu");
    e.weightsBytes = plan.weightsBytes;
    if (!cuda) e.kvCacheBytes = CapacityPlanner::cpuKvCacheBytes(c, options, plan.maxModelLen);
    return e;
}

QString EngineHost::describeLoadError(const Error& error) { return GuiTerms::describeLoadError(error); }

bool EngineHost::load(const LaunchOptions& options)
{
    if (m_loading) return false;
    if (m_loader.joinable()) m_loader.join();
    m_loading = true;
    m_loader = std::thread([this, options] { runLoad(options); });
    return true;
}

bool EngineHost::unload()
{
    if (m_loading || !m_engine) return false;
    std::unique_ptr<Engine> old = std::move(m_engine);
    m_modelName.clear();
    m_modelDir.clear();
    emit engineChanged(nullptr);  // listeners drop it before it shuts down
    old.reset();
    return true;
}

void EngineHost::runLoad(LaunchOptions options)
{
    // Loader thread: everything reaches the GUI through queued invocations.
    auto post = [this](auto fn) { QMetaObject::invokeMethod(this, fn, Qt::QueuedConnection); };
    auto fail = [this, post](const Error& error) {
        spdlog::error("model load failed: {}", error.message);
        post([this, text = describeLoadError(error)] {
            m_loading = false;
            emit modelLoadFailed(text);
        });
    };

    post([this] { emit loadStageChanged(Stage::Checking, 5); });
    const bool cuda = options.device == "cuda" || (options.device == "auto" && cudaAvailable());
    auto folder = ModelFolder::load(options.modelDir);  // read once: the estimate, then the launch
    if (!folder) return fail(folder.failure());
    // The app's context-length setting is a cap: a model with a shorter context uses its own.
    if (options.maxModelLen > folder->config.maxPositionEmbeddings)
        options.maxModelLen = folder->config.maxPositionEmbeddings;
    const MemoryEstimate estimate = EngineHost::estimate(folder->config, options, cuda);
    post([this, estimate] { emit memoryEstimated(estimate); });

    post([this] { emit loadStageChanged(Stage::Loading, 10); });
    // Weights, KV cache and graphs report their progress; the bar runs from 10 to 85 percent.
    auto lastPercent = std::make_shared<int>(10);
    options.onLoadProgress = [this, post, lastPercent](double fraction) {
        const int percent = 10 + int(75.0 * fraction);
        if (percent == *lastPercent) return;
        *lastPercent = percent;
        post([this, percent] { emit loadStageChanged(Stage::Loading, percent); });
    };
    auto launched = launchEngine(options, std::move(folder).value());
    if (!launched) return fail(launched.failure());

    post([this] { emit loadStageChanged(Stage::WarmingUp, 90); });
    {
        // One short request touches every kernel and buffer once, so the first chat is not slow.
        GenerationRequest warm;
        warm.prompt = launched->engine->tokenizer().encode("Hello", false);
        warm.params.maxTokens = 2;
        warm.params.temperature = 0.0f;
        warm.source = "warmup";
        if (auto stream = RequestStream::submit(*launched->engine, warm)) {
            while ((*stream)->next()) {}
        }
    }

    auto shared = std::make_shared<LaunchedEngine>(std::move(launched).value());
    const QString dir = QString::fromStdString(options.modelDir.string());
    post([this, shared, dir] {
        std::unique_ptr<Engine> old = std::move(m_engine);
        m_engine = std::move(shared->engine);
        m_modelName = QString::fromStdString(shared->modelName);
        m_modelDir = dir;
        m_defaults = shared->generationDefaults;
        m_loading = false;
        emit engineChanged(m_engine.get());  // listeners drop the old engine before it goes
        old.reset();
        emit loadStageChanged(Stage::Ready, 100);
        emit modelLoaded(m_modelName);
    });
}

}  // namespace brook
