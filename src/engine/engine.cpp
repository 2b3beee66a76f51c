#include "engine/engine.h"

#include "engine/engine_loop.h"

namespace brook {

Engine::Engine(EngineConfig config, std::unique_ptr<Backend> backend, std::shared_ptr<const Tokenizer> tokenizer,
               std::vector<int32_t> eosTokenIds)
    : m_loop(std::make_unique<EngineLoop>(std::move(config), std::move(backend), std::move(tokenizer),
                                          std::move(eosTokenIds)))
{}

Engine::~Engine() = default;  // EngineLoop's destructor aborts and joins

Result<RequestId> Engine::submit(GenerationRequest request, OutputCallback callback)
{
    return m_loop->submit(std::move(request), std::move(callback));
}

Result<std::vector<RequestId>> Engine::submitAll(std::vector<GenerationRequest> requests,
                                                 const std::function<OutputCallback(size_t)>& callbackFor)
{
    return m_loop->submitAll(std::move(requests), callbackFor);
}

void Engine::cancel(RequestId id) { m_loop->cancel(id); }
void Engine::shutdown() { m_loop->shutdown(); }
Result<std::vector<float>> Engine::promptLogits(std::vector<int32_t> tokens)
{
    return m_loop->promptLogits(std::move(tokens));
}
EngineStats Engine::stats() const { return m_loop->stats(); }
std::vector<RequestSnapshot> Engine::requests() const { return m_loop->requests(); }
const EngineConfig& Engine::config() const { return m_loop->config(); }
const ModelConfig& Engine::modelConfig() const { return m_loop->modelConfig(); }
const Tokenizer& Engine::tokenizer() const { return m_loop->tokenizer(); }
std::string Engine::backendName() const { return m_loop->backendName(); }
EngineMetrics& Engine::metrics() { return m_loop->metrics(); }

}  // namespace brook
