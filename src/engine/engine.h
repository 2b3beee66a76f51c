// Engine: the request API every front end uses (GUI, server, brook-run, brook-bench).
// One step-loop thread inside runs the scheduler, the KV blocks and the backend (engine_loop.h);
// callers on any thread submit requests, receive their outputs through a callback run on the
// engine thread, cancel, and read stats. The words of the API are in request.h.
//
//   Engine engine(config, std::move(backend), tokenizer, eosIds);
//   auto id = engine.submit(request, [](const RequestOutput& out) { ... });   // any thread
//   engine.cancel(*id);                                                       // any thread
#pragma once

#include "engine/engine_config.h"
#include "engine/engine_metrics.h"  // metrics(): vLLM's metrics, part of the API
#include "engine/engine_stats.h"
#include "engine/request.h"
#include "engine/result.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace brook {

class Backend;
class EngineLoop;
class Tokenizer;
struct ModelConfig;

class Engine {
public:
    // Starts the step loop. eosTokenIds: ids that end generation unless ignore_eos
    // (the tokenizer's stop tokens plus generation_config's eos).
    Engine(EngineConfig config, std::unique_ptr<Backend> backend, std::shared_ptr<const Tokenizer> tokenizer,
           std::vector<int32_t> eosTokenIds);
    // Aborts whatever is still running (each gets a final "abort" output) and joins the loop.
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Thread-safe. Builds the prompt on the calling thread (prompt_builder.h), validates
    // (sampling parameters, prompt + max_tokens against max_model_len and the KV cache) and
    // queues. The callback runs on the engine thread for every update, the last one with
    // finishReason set. Errors carry a code and the field at fault (result.h).
    Result<RequestId> submit(GenerationRequest request, OutputCallback callback);
    // Thread-safe. submit for several requests that the engine sees together: all are validated
    // first (an error names the request's index, and then none is queued), then queued at once,
    // so the next step schedules them side by side, as vLLM's LLM.generate does with a list.
    // callbackFor(i) gives request i's callback. Returns the ids in the requests' order.
    Result<std::vector<RequestId>> submitAll(std::vector<GenerationRequest> requests,
                                             const std::function<OutputCallback(size_t)>& callbackFor);
    // Thread-safe. Aborts the request within one step; its blocks are freed and it receives a
    // final output with finish reason "abort". Unknown or finished ids are ignored.
    void cancel(RequestId id);
    // Thread-safe. Stops the loop after aborting everything (idempotent).
    void shutdown();

    // Thread-safe; blocks the caller. Teacher-forced fp32 logits [n, V] at every position of
    // `tokens` (row i: the distribution of the token after tokens[0..i]), computed on the engine
    // thread between steps (prompt_logits.h). For quality checks (brook-bench quality), not serving.
    Result<std::vector<float>> promptLogits(std::vector<int32_t> tokens);

    EngineStats stats() const;  // thread-safe snapshot
    // Thread-safe. The live requests as the engine thread last published them (at most every
    // 100 ms while busy, and whenever it goes idle), for request inspectors.
    std::vector<RequestSnapshot> requests() const;
    const EngineConfig& config() const;      // thread-safe
    const ModelConfig& modelConfig() const;  // thread-safe
    const Tokenizer& tokenizer() const;      // thread-safe
    std::string backendName() const;         // thread-safe
    EngineMetrics& metrics();                // thread-safe

private:
    std::unique_ptr<EngineLoop> m_loop;
};

}  // namespace brook
