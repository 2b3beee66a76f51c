#include "server/openai_server.h"

#include "launch/engine_launcher.h"
#include "server/completion_handler.h"
#include "server/guarded_http_server.h"
#include "server/http_reply.h"
#include "server/origin_policy.h"
#include "server/server_context.h"
#include "server/socket_calls.h"
#include "server/utility_routes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cerrno>
#include <cstring>
#include <memory>
#include <regex>
#include <system_error>
#include <thread>

namespace brook {

namespace {

bool timingSafeEqual(const std::string& a, const std::string& b)
{
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;  // no early exit: the time taken does not reveal the matching prefix
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace

struct OpenAiServer::Impl {
    explicit Impl(ServeConfig config)
        : context(std::move(config)), completions(context), utility(context), origins(context.config())
    {}

    httplib::Server::HandlerResponse preRoute(const httplib::Request& req, httplib::Response& res)
    {
        if (req.has_header("Host") && !origins.acceptsHost(req.get_header_value("Host"))) {
            HttpReply::error(res,
                             ApiError::forbidden("Host '" + req.get_header_value("Host") +
                                                     "' is not this server: on loopback only localhost names and IP "
                                                     "addresses are answered (DNS rebinding)",
                                                 "invalid_host"));
            return httplib::Server::HandlerResponse::Handled;
        }
        const bool hasOrigin = req.has_header("Origin");
        if (req.method == "OPTIONS") {
            if (hasOrigin && req.has_header("Access-Control-Request-Method")) {
                if (!origins.corsOrigin(req.get_header_value("Origin"))) {
                    // Starlette's words (vLLM), in OpenAI's error shape like every other error.
                    HttpReply::error(res,
                                     ApiError::badRequest("Disallowed CORS origin '" + req.get_header_value("Origin") +
                                                          "': name it in --allowed-origins"));
                    return httplib::Server::HandlerResponse::Handled;
                }
                res.set_header("Access-Control-Allow-Methods", "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
                res.set_header("Access-Control-Allow-Headers",
                               req.has_header("Access-Control-Request-Headers")
                                   ? req.get_header_value("Access-Control-Request-Headers")
                                   : std::string("*"));
                res.set_header("Access-Control-Max-Age", "600");
            }
            res.set_header("Allow", "GET, POST, OPTIONS");
            res.status = 200;
            return httplib::Server::HandlerResponse::Handled;
        }
        if (hasOrigin && origins.refusesOrigin(req.get_header_value("Origin"))) {
            HttpReply::error(
                res, ApiError::forbidden("requests from the web origin '" + req.get_header_value("Origin") +
                                             "' are not allowed: name it in --allowed-origins (or set --api-key)",
                                         "origin_not_allowed"));
            return httplib::Server::HandlerResponse::Handled;
        }
        const std::string& key = context.config().apiKey;
        if (!key.empty() && req.path != "/health") {
            const std::string auth = req.get_header_value("Authorization");
            const std::string prefix = "Bearer ";
            const bool ok = auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0 &&
                            timingSafeEqual(auth.substr(prefix.size()), key);
            if (!ok) {
                HttpReply::error(res, ApiError::unauthorized());
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    }

    void postRoute(const httplib::Request& req, httplib::Response& res)
    {
        if (req.has_header("Origin")) {
            if (auto origin = origins.corsOrigin(req.get_header_value("Origin"))) {
                res.set_header("Access-Control-Allow-Origin", *origin);
                if (*origin != "*") res.set_header("Vary", "Origin");
            }
        }
        // HTTP/1.0 has no chunked encoding: a stream to such a client ends when the connection
        // closes (RequestReader never keeps an HTTP/1.0 connection alive). cpp-httplib then
        // writes the provider's data as it comes, unframed.
        if (req.version == "HTTP/1.0" && res.is_chunked_content_provider_) {
            res.is_chunked_content_provider_ = false;
            res.headers.erase("Transfer-Encoding");
        }
    }

    // The methods a known route answers to, or empty for an unknown path.
    std::string allowedMethods(const std::string& path) const
    {
        std::string allow;
        for (const auto& [method, pattern] : routes) {
            if (!std::regex_match(path, pattern) || allow.find(method) != std::string::npos) continue;
            allow += (allow.empty() ? "" : ", ") + method;
        }
        return allow;
    }

    void fillError(const httplib::Request& req, httplib::Response& res)
    {
        if (!res.body.empty() || res.content_provider_) return;
        switch (res.status) {
        case 404: {
            const std::string allow = allowedMethods(req.path);
            if (allow.empty()) {
                HttpReply::error(res, ApiError::notFound("Not Found: " + req.method + " " + req.path));
            } else {
                HttpReply::error(res, ApiError::methodNotAllowed(req.method, req.path));
                res.set_header("Allow", allow + ", OPTIONS");
            }
            break;
        }
        case 413: HttpReply::error(res, ApiError::payloadTooLarge(context.config().maxRequestBodyBytes)); break;
        case 400: HttpReply::error(res, ApiError::badRequest("malformed HTTP request")); break;
        default: {
            // Client errors are the client's (invalid_request_error); the rest are ours.
            ApiError e = res.status < 500 ? ApiError::badRequest("HTTP " + std::to_string(res.status))
                                          : ApiError::internal("HTTP " + std::to_string(res.status));
            e.status = res.status;
            HttpReply::error(res, e);
        }
        }
    }

    void registerRoutes()
    {
        using httplib::Request;
        using httplib::Response;
        for (const char* path : {"/v1/chat/completions", "/v1/completions", "/tokenize", "/detokenize"})
            routes.emplace_back("POST", std::regex(path));
        for (const char* path : {"/v1/models", "/v1/models/(.+)", "/health", "/ping", "/metrics", "/version", "/load"})
            routes.emplace_back("GET", std::regex(path));
        server.Post("/v1/chat/completions",
                    [this](const Request& q, Response& r) { completions.handle(ApiKind::Chat, q, r); });
        server.Post("/v1/completions",
                    [this](const Request& q, Response& r) { completions.handle(ApiKind::Completion, q, r); });
        server.Get("/v1/models", [this](const Request& q, Response& r) { utility.models(q, r); });
        server.Get(R"(/v1/models/(.+))", [this](const Request& q, Response& r) { utility.model(q, r); });
        server.Get("/health", [this](const Request& q, Response& r) { utility.health(q, r); });
        server.Get("/ping", [this](const Request& q, Response& r) { utility.health(q, r); });
        server.Get("/metrics", [this](const Request& q, Response& r) { utility.metrics(q, r); });
        server.Get("/version", [this](const Request& q, Response& r) { utility.version(q, r); });
        server.Get("/load", [this](const Request& q, Response& r) { utility.load(q, r); });
        server.Post("/tokenize", [this](const Request& q, Response& r) { utility.tokenize(q, r); });
        server.Post("/detokenize", [this](const Request& q, Response& r) { utility.detokenize(q, r); });

        server.set_pre_routing_handler([this](const Request& q, Response& r) { return preRoute(q, r); });
        server.set_post_routing_handler([this](const Request& q, Response& r) { postRoute(q, r); });
        server.set_error_handler([this](const Request& q, Response& r) { fillError(q, r); });
        server.set_exception_handler([](const Request&, Response& r, std::exception_ptr ep) {
            std::string what = "unknown error";
            try {
                if (ep) std::rethrow_exception(ep);
            } catch (const nlohmann::json::exception& e) {
                // A JSON value of an unexpected type that a route did not check: the client's error.
                spdlog::warn("request with an unexpected JSON value: {}", e.what());
                HttpReply::error(r, ApiError::badRequest("the request has a value of the wrong type"));
                return;
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {}
            spdlog::error("request handler failed: {}", what);
            HttpReply::error(r, ApiError::internal("internal error"));
        });
        server.set_logger([](const Request& q, const Response& r) {
            spdlog::info("{}:{} \"{} {}\" {}", q.remote_addr, q.remote_port, q.method, q.path, r.status);
        });
    }

    ServerContext context;
    CompletionHandler completions;
    UtilityRoutes utility;
    OriginPolicy origins;
    std::vector<std::pair<std::string, std::regex>> routes;  // method, path: for 405 against 404
    GuardedHttpServer server;
    std::thread listener;
    int port = -1;
};

OpenAiServer::OpenAiServer(ServeConfig config) : m_impl(std::make_unique<Impl>(std::move(config))) {}

OpenAiServer::~OpenAiServer() { stop(); }

ServerContext& OpenAiServer::context() { return m_impl->context; }

int OpenAiServer::port() const { return m_impl->port; }

namespace {
// Pending connections the kernel may queue before accept() (capped by net.core.somaxconn).
constexpr int kListenBacklog = 4096;
}  // namespace

Result<int> OpenAiServer::start()
{
    const ServeConfig& config = m_impl->context.config();
#ifndef _WIN32
    // A client that hangs up mid-write must not kill the process: writes then fail with EPIPE.
    std::signal(SIGPIPE, SIG_IGN);
#endif

    GuardedHttpServer& server = m_impl->server;
    // Each streaming call holds a worker thread for its whole length: size the pool for them.
    const int threads = config.httpThreads > 0
                            ? config.httpThreads
                            : std::clamp(2 * config.launch.maxNumSeqs + config.maxQueueLen + 32, 64, 2048);
    server.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
    server.set_payload_max_length(config.maxRequestBodyBytes);
    HttpLimits limits;
    limits.maxBodyBytes = config.maxRequestBodyBytes;
    limits.readDeadline = std::chrono::milliseconds(int64_t(config.httpReadTimeoutSeconds * 1000));
    limits.idleTimeout = std::min(limits.readDeadline, std::chrono::milliseconds(5000));
    limits.slowAfter = std::min(limits.readDeadline / 4, std::chrono::milliseconds(2000));
    // Half the pool by default: one client can never hold every thread.
    const int perClient =
        config.maxConnectionsPerClient > 0 ? config.maxConnectionsPerClient : std::max(1, threads / 2);
    server.configure(limits, perClient, 1000, std::chrono::seconds(30));
    server.set_read_timeout(30, 0);
    server.set_write_timeout(30, 0);
    // cpp-httplib listens with a backlog of 5 (compiled into Debian's libcpp-httplib): a burst
    // of 256 clients connecting at once overflows the accept queue, and the kernel drops their
    // handshakes (seen as failed reads at --max-concurrency 256). Remember the listening socket
    // and raise its backlog once bound; listen() on a listening socket only updates the backlog.
    auto listeningSocket = std::make_shared<socket_t>(INVALID_SOCKET);
    server.set_socket_options([listeningSocket](socket_t sock) {
        httplib::default_socket_options(sock);
        *listeningSocket = sock;
    });
    m_impl->registerRoutes();

    if (config.port == 0) {
        m_impl->port = server.bind_to_any_port(config.host);
        if (m_impl->port < 0) return makeError("cannot listen on " + config.host + " (any port)");
    } else {
        if (!server.bind_to_port(config.host, config.port))
            return makeError("cannot listen on " + config.host + ":" + std::to_string(config.port) +
                             " (in use, or not an address of this machine)");
        m_impl->port = config.port;
    }
    if (*listeningSocket != INVALID_SOCKET)
        if (const std::string failed = net::setListenBacklog(*listeningSocket, kListenBacklog); !failed.empty())
            spdlog::warn("could not raise the listen backlog to {}: {}", kListenBacklog, failed);
    if (!isLoopbackHost(config.host) && config.apiKey.empty())
        spdlog::warn("listening on {} without --api-key: anyone who can reach this address can use the model",
                     config.host);
    try {
        m_impl->listener = std::thread([this] { m_impl->server.listen_after_bind(); });
    } catch (const std::system_error& e) {  // out of threads (EAGAIN): say so, do not abort
        return makeError(std::string("cannot start the HTTP listener thread: ") + e.what());
    }
    // stop() is a no-op until the loop runs, so do not hand back control before it does.
    for (int i = 0; i < 500 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    spdlog::info("listening on http://{}:{} ({} HTTP threads)", config.host, m_impl->port, threads);
    return m_impl->port;
}

void OpenAiServer::attach(Engine& engine, const GenerationDefaults& defaults, const std::filesystem::path& modelDir)
{
    const ServeConfig& config = m_impl->context.config();
    auto model = std::make_unique<ServedModel>();
    model->engine = &engine;
    model->names =
        config.servedModelNames.empty() ? std::vector<std::string>{engine.config().modelName} : config.servedModelNames;
    model->root = modelDir.string();
    model->maxModelLen = engine.config().maxModelLen;
    const EngineStats stats = engine.stats();
    model->kvCacheTokens = int64_t(stats.numKvBlocksTotal) * stats.blockSize;
    model->defaults = samplingDefaults(defaults);
    model->defaultMaxTokens = defaults.maxNewTokens;
    model->created =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (model->kvCacheTokens < model->maxModelLen)
        spdlog::warn("the KV cache holds {} tokens, fewer than --max-model-len {}: longer requests are refused",
                     model->kvCacheTokens, model->maxModelLen);
    spdlog::info("serving {} (max_model_len {}, KV cache {} tokens)", model->names.front(), model->maxModelLen,
                 model->kvCacheTokens);
    m_impl->context.attach(std::move(model));
}

void OpenAiServer::setLoadError(const std::string& message) { m_impl->context.setLoadError(message); }

void OpenAiServer::drain(std::chrono::duration<double> grace)
{
    ServerContext& context = m_impl->context;
    context.setDraining();
    auto waitIdle = [&](std::chrono::duration<double> limit) {
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(limit);
        while (context.activeRequests().load() > 0 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return context.activeRequests().load() == 0;
    };
    if (context.activeRequests().load() > 0)
        spdlog::info("shutting down: waiting up to {:.0f} s for {} request(s)", grace.count(),
                     context.activeRequests().load());
    if (waitIdle(grace)) return;
    spdlog::warn("shutting down: aborting {} request(s) still running", context.activeRequests().load());
    context.cancelAllJobs();
    if (!waitIdle(std::chrono::seconds(5)))
        spdlog::warn("shutting down: {} request(s) did not end", context.activeRequests().load());
}

void OpenAiServer::stop()
{
    if (m_impl->server.is_running() || m_impl->listener.joinable()) m_impl->server.stop();
    if (m_impl->listener.joinable()) m_impl->listener.join();
}

}  // namespace brook
