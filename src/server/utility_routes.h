// UtilityRoutes: the small routes around generation: GET /v1/models (and /v1/models/{id}),
// /health, /metrics (vLLM's Prometheus names plus a few brook: gauges), /version, /load, and
// POST /tokenize, /detokenize (vLLM's shapes). Thread-safe; stateless apart from the context.
#pragma once

#include "server/server_context.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace brook {

class UtilityRoutes {
public:
    explicit UtilityRoutes(ServerContext& context) : m_context(context) {}

    void models(const httplib::Request& req, httplib::Response& res) const;
    void model(const httplib::Request& req, httplib::Response& res) const;  // /v1/models/{id}
    void health(const httplib::Request& req, httplib::Response& res) const;
    void metrics(const httplib::Request& req, httplib::Response& res) const;
    void version(const httplib::Request& req, httplib::Response& res) const;
    void load(const httplib::Request& req, httplib::Response& res) const;
    void tokenize(const httplib::Request& req, httplib::Response& res) const;
    void detokenize(const httplib::Request& req, httplib::Response& res) const;

private:
    // Writes 503 and returns null while the model is loading.
    const ServedModel* readyModel(httplib::Response& res) const;
    ServerContext& m_context;
};

}  // namespace brook
