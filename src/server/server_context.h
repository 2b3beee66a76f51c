// ServerContext: what every route handler shares: the configuration, the served model once it
// has loaded (null before: /health says 503), the in-flight counters behind --max-queue-len and
// graceful shutdown, and the registry of running jobs that shutdown cancels.
// Thread-safe: HTTP worker threads read it; the main thread attaches the model and drains.
#pragma once

#include "engine/engine.h"
#include "engine/sampling_params.h"
#include "server/serve_config.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace brook {

class GenerationJob;

// The loaded model as the API presents it. Immutable once attached.
struct ServedModel {
    Engine* engine = nullptr;
    std::vector<std::string> names;  // the first one is reported
    std::string root;                // the folder it was loaded from
    int maxModelLen = 0;
    int64_t kvCacheTokens = 0;            // what the whole KV cache holds
    SamplingParams defaults;              // generation_config defaults (or plain ones)
    std::optional<int> defaultMaxTokens;  // generation_config's max_new_tokens
    int64_t created = 0;                  // unix seconds

    bool answersTo(const std::string& name) const;
};

class ServerContext {
public:
    explicit ServerContext(ServeConfig config) : m_config(std::move(config)) {}

    const ServeConfig& config() const { return m_config; }

    // Null until the model has loaded (and after detach). Thread-safe.
    const ServedModel* model() const { return m_model.load(); }
    void attach(std::unique_ptr<ServedModel> model);
    void setLoadError(std::string message);
    std::string loadError() const;

    bool draining() const { return m_draining.load(); }
    void setDraining() { m_draining = true; }

    // Engine requests submitted and not finished (one per choice), shared with job callbacks.
    const std::shared_ptr<std::atomic<int>>& activeSequences() const { return m_activeSequences; }
    std::atomic<int>& activeRequests() { return m_activeRequests; }  // HTTP generation calls in progress

    // Jobs register while they run so shutdown can cancel them.
    void registerJob(GenerationJob* job);
    void unregisterJob(GenerationJob* job);
    void cancelAllJobs();

private:
    ServeConfig m_config;
    std::unique_ptr<ServedModel> m_modelOwner;
    std::atomic<const ServedModel*> m_model{nullptr};
    mutable std::mutex m_mutex;  // guards m_loadError and m_jobs
    std::string m_loadError;
    std::set<GenerationJob*> m_jobs;
    std::atomic<bool> m_draining{false};
    std::shared_ptr<std::atomic<int>> m_activeSequences = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> m_activeRequests{0};
};

}  // namespace brook
