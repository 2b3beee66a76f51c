// OpenAiServer: Brook's OpenAI-compatible HTTP server (vLLM's routes and flags). It listens
// before the model has loaded, so /health can say 503 while loading; attach() hands it the
// engine. Auth (--api-key, everything but /health), CORS (preflight and headers on every
// answer, errors included), body limits and OpenAI-style error objects are applied here for
// every route; the routes themselves live in CompletionHandler and UtilityRoutes.
//
//   OpenAiServer server(config);
//   auto port = server.start();                 // listening; /health 503
//   server.attach(*engine, defaults, modelDir); // serving
//   server.drain(10s); server.stop();           // SIGTERM
//
// Thread-safe: start/attach/drain/stop from the owner's thread, requests on worker threads.
#pragma once

#include "engine/engine.h"
#include "engine/generation_config.h"
#include "engine/result.h"
#include "server/serve_config.h"

#include <chrono>
#include <filesystem>
#include <memory>

namespace brook {

class ServerContext;

class OpenAiServer {
public:
    explicit OpenAiServer(ServeConfig config);
    ~OpenAiServer();  // stop()
    OpenAiServer(const OpenAiServer&) = delete;
    OpenAiServer& operator=(const OpenAiServer&) = delete;

    // Binds --host/--port and serves on background threads. Returns the port (useful with port 0).
    Result<int> start();
    // The model is ready: generation routes start answering. The engine must outlive stop().
    // `defaults` is what --generation-config resolved to (empty for none/vllm).
    void attach(Engine& engine, const GenerationDefaults& defaults, const std::filesystem::path& modelDir);
    // Loading failed: /health keeps answering 503 with this message.
    void setLoadError(const std::string& message);
    // Stops taking generation requests (503), lets running ones finish for up to `grace`, then
    // cancels the rest and waits (bounded) for their final events to be written.
    void drain(std::chrono::duration<double> grace);
    // Closes the listening socket and joins every HTTP thread (idempotent).
    void stop();

    int port() const;
    ServerContext& context();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace brook
