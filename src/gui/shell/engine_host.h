// EngineHost: owns the loaded model's Engine for the app. Loading runs on a worker thread in
// stages (check the folder and estimate memory, read weights + allocate the KV cache, warm up)
// reported through queued signals, so the window keeps painting; the Engine itself then lives
// here and runs its own step thread. GUI thread only, apart from the loader it starts.
#pragma once

#include "launch/launch_options.h"
#include "engine/engine.h"
#include "engine/generation_config.h"

#include <QObject>
#include <QString>

#include <memory>
#include <thread>

namespace brook {

struct MemoryEstimate {
    qint64 weightsBytes = 0;
    qint64 kvCacheBytes = 0;  // CUDA: 0, the backend sizes it from free memory
    QString device;           // "cpu" or "cuda"
};

class EngineHost : public QObject {
    Q_OBJECT
public:
    enum class Stage { Checking, Loading, WarmingUp, Ready };
    Q_ENUM(Stage)

    explicit EngineHost(QObject* parent = nullptr);
    ~EngineHost() override;  // waits for a load in progress, then shuts the engine down

    bool isLoading() const { return m_loader.joinable() && m_loading; }
    bool isLoaded() const { return m_engine != nullptr; }
    Engine* engine() const { return m_engine.get(); }
    QString modelName() const { return m_modelName; }
    QString modelDir() const { return m_modelDir; }
    QString backendName() const;
    const GenerationDefaults& generationDefaults() const { return m_defaults; }

    // Starts loading; false when a load is already running. The current model stays until the
    // new one is ready (engineChanged then swaps them).
    bool load(const LaunchOptions& options);
    // Shuts the loaded engine down (engineChanged(nullptr) first); false while a load runs.
    bool unload();

    // Parameters and KV-cache bytes the options will take for this model (before loading).
    static MemoryEstimate estimate(const ModelConfig& config, const LaunchOptions& options, bool cuda);
    // A load error in the app's words (translated advice where the CLI would name flags).
    static QString describeLoadError(const Error& error);

signals:
    void loadStageChanged(brook::EngineHost::Stage stage, int percent);  // percent -1: busy
    void memoryEstimated(const brook::MemoryEstimate& estimate);
    void engineChanged(brook::Engine* engine);  // the new engine (null: unloaded)
    void modelLoaded(const QString& modelName);
    void modelLoadFailed(const QString& message);

private:
    void runLoad(LaunchOptions options);

    std::unique_ptr<Engine> m_engine;
    QString m_modelName;
    QString m_modelDir;
    GenerationDefaults m_defaults;
    std::thread m_loader;
    bool m_loading = false;
};

}  // namespace brook

Q_DECLARE_METATYPE(brook::MemoryEstimate)
