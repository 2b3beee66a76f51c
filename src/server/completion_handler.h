// CompletionHandler: POST /v1/chat/completions and /v1/completions. Parses on the HTTP thread,
// submits one engine request per choice, then either waits for them all (a whole response) or
// streams SSE events as tokens arrive. A client that hangs up is noticed within ~50 ms (or on
// the next failed write) and its requests are cancelled, freeing their KV blocks in one engine
// step. --request-timeout and shutdown cancel the same way. Thread-safe: one instance serves all
// HTTP worker threads; per-call state lives on the stack or in the stream's session.
#pragma once

#include "server/request_parser.h"
#include "server/server_context.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace brook {

class CompletionHandler {
public:
    explicit CompletionHandler(ServerContext& context) : m_context(context) {}

    void handle(ApiKind kind, const httplib::Request& req, httplib::Response& res);

private:
    ServerContext& m_context;
};

}  // namespace brook
