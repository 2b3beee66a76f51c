#include "server/completion_handler.h"

#include "server/client_connection.h"
#include "server/generation_job.h"
#include "server/http_reply.h"
#include "server/request_timeline.h"
#include "server/response_writer.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace brook {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr std::chrono::milliseconds kPollInterval{50};

// Everything one call owns while it runs; its destructor cancels what is still running and
// releases the call's share of the server's counters.
struct CallState {
    CallState(ServerContext& context, ParsedRequest parsedRequest, const Tokenizer& tokenizer,
              const httplib::Request& req, const RequestTimeline& timeline)
        : context(context), request(std::move(parsedRequest)), writer(request, tokenizer),
          connection(connectionOf(req)), timeline(timeline)
    {
        ++context.activeRequests();
        const double timeout = context.config().requestTimeoutSeconds;
        if (timeout > 0)
            deadline = SteadyClock::now() +
                       std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(timeout));
    }
    ~CallState()
    {
        if (job) {
            context.unregisterJob(job.get());
            job.reset();  // cancels unfinished requests
        }
        --context.activeRequests();
    }
    CallState(const CallState&) = delete;
    CallState& operator=(const CallState&) = delete;

    static ClientConnection connectionOf(const httplib::Request& req)
    {
        if (const CurrentConnection* current = CurrentConnection::get()) return ClientConnection(current->socket());
        return ClientConnection(req.remote_addr, req.remote_port, req.local_addr, req.local_port);
    }

    bool timedOut() const { return deadline && SteadyClock::now() > *deadline; }
    ApiError timeoutError() const
    {
        return ApiError::timeout("the request did not finish within --request-timeout (" +
                                 std::to_string(context.config().requestTimeoutSeconds) + " s) and was aborted");
    }

    ServerContext& context;
    ParsedRequest request;
    ResponseWriter writer;
    ClientConnection connection;
    std::unique_ptr<GenerationJob> job;
    std::vector<ChoiceState> states;
    std::optional<SteadyClock::time_point> deadline;
    RequestTimeline timeline;     // the first token's hops, logged at debug level
    std::vector<JobEvent> batch;  // streaming: the outputs taken for one write
    std::string events;           // ... and their SSE events
};

std::vector<GenerationRequest> engineRequests(const ParsedRequest& parsed)
{
    std::vector<GenerationRequest> requests;
    for (const ParsedPrompt& prompt : parsed.prompts) {
        for (int j = 0; j < parsed.n; ++j) {
            GenerationRequest r;
            r.prompt = prompt.tokens;
            r.params = parsed.params;
            r.params.maxTokens = prompt.maxTokens;
            // n > 1 with a seed: distinct but reproducible choices.
            if (r.params.seed) r.params.seed = *r.params.seed + uint64_t(j);
            r.priority = parsed.priority;
            r.source = "api";
            requests.push_back(std::move(r));
        }
    }
    return requests;
}

// Streams one call's events; called again and again by cpp-httplib until sink.done(). Each call
// writes what the engine has produced by then in one write: the first token goes out as soon as
// it arrives, and tokens that arrive while a batch is being written wait for the next one.
bool pumpStream(CallState& call, httplib::DataSink& sink)
{
    auto fail = [&](const char* why) {
        spdlog::info("{}: {}; aborting its {} request(s)", call.writer.id(), why, call.job->size());
        call.job->cancel();
        return false;  // closes the connection
    };
    if (call.connection.closed() || !sink.is_writable()) return fail("client disconnected");
    // Both buffers live as long as the call, so a long stream does not allocate per token.
    std::string& events = call.events;
    std::vector<JobEvent>& batch = call.batch;
    events.clear();
    batch.clear();
    call.job->takeAll(kPollInterval, batch);
    const bool first = !batch.empty() && call.timeline.firstTaken == RequestTimeline::Clock::time_point{};
    if (first) {
        call.timeline.firstTaken = SteadyClock::now();
        call.timeline.firstOutput = batch.front().received;
        call.timeline.engineQueueSeconds = batch.front().output.queueSeconds;
        call.timeline.engineTtftSeconds = batch.front().output.timeToFirstTokenSeconds;
    }
    for (const JobEvent& event : batch)
        call.writer.appendStreamEvents(events, size_t(event.choice), event.output, call.states);
    auto written = [&] {
        if (!first || !spdlog::should_log(spdlog::level::debug)) return;
        call.timeline.firstWritten = SteadyClock::now();
        spdlog::debug("{}: first token hops: {}", call.writer.id(), call.timeline.describe());
    };
    if (call.job->done()) {
        events += call.writer.streamEnd(call.states);
        if (!sink.write(events.data(), events.size())) return fail("client disconnected");
        written();
        sink.done();
        return true;
    }
    if (call.timedOut()) {
        call.job->cancel();
        events += ResponseWriter::streamError(call.timeoutError());
        sink.write(events.data(), events.size());
        sink.done();
        return true;
    }
    if (!events.empty() && !sink.write(events.data(), events.size())) return fail("client disconnected");
    written();
    return true;
}

void respondWhole(CallState& call, httplib::Response& res)
{
    auto nextCheck = SteadyClock::now();
    while (!call.job->done()) {
        if (auto event = call.job->next(kPollInterval))
            ResponseWriter::accumulate(call.states[size_t(event->choice)], event->output);
        // Checked every poll interval even while tokens keep coming.
        if (SteadyClock::now() < nextCheck) continue;
        nextCheck = SteadyClock::now() + kPollInterval;
        if (call.connection.closed()) {
            spdlog::info("{}: client disconnected; aborting its {} request(s)", call.writer.id(), call.job->size());
            return;  // CallState's destructor cancels
        }
        if (call.timedOut()) {
            HttpReply::error(res, call.timeoutError());
            return;
        }
    }
    for (const ChoiceState& s : call.states)
        if (s.finish == FinishReason::Abort) {
            HttpReply::error(res, ResponseWriter::abortedError());
            return;
        }
    HttpReply::json(res, 200, call.writer.response(call.states));
}

}  // namespace

void CompletionHandler::handle(ApiKind kind, const httplib::Request& req, httplib::Response& res)
{
    const ServedModel* model = m_context.model();
    if (!model) {
        HttpReply::error(res, ApiError::unavailable("the model is still loading; retry when GET /health answers 200"));
        return;
    }
    if (m_context.draining()) {
        HttpReply::error(res, ApiError::unavailable("the server is shutting down"));
        return;
    }
    RequestTimeline timeline;
    if (const CurrentConnection* current = CurrentConnection::get()) timeline = current->timeline();
    timeline.handlerStart = SteadyClock::now();
    json body;
    try {
        body = json::parse(req.body);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
        HttpReply::error(res, ApiError::badRequest(std::string("the request body is not valid JSON: ") + e.what()));
        return;
    }
    timeline.jsonParsed = SteadyClock::now();
    ParsedRequest parsed;
    if (auto error = RequestParser(*model).parse(kind, body, parsed)) {
        HttpReply::error(res, *error);
        return;
    }
    timeline.promptReady = SteadyClock::now();
    timeline.tokenizeSeconds = parsed.tokenizeSeconds;

    const ServeConfig& config = m_context.config();
    if (config.maxQueueLen > 0) {
        const int active = m_context.activeSequences()->load();
        const int limit = config.launch.maxNumSeqs + config.maxQueueLen;
        if (active + int(parsed.numChoices()) > limit) {
            HttpReply::error(res, ApiError::queueFull("the server is at capacity (" + std::to_string(active) +
                                                      " requests running or waiting, limit " + std::to_string(limit) +
                                                      " from --max-num-seqs + --max-queue-len); retry later"));
            return;
        }
    }

    auto call = std::make_shared<CallState>(m_context, std::move(parsed), model->engine->tokenizer(), req, timeline);
    auto started = GenerationJob::start(*model->engine, engineRequests(call->request), m_context.activeSequences());
    call->timeline.submitted = SteadyClock::now();
    if (auto* failed = std::get_if<GenerationJob::SubmitError>(&started)) {
        const char* field = call->request.kind == ApiKind::Chat ? "messages" : "prompt";
        HttpReply::error(res, RequestParser::fromEngineError(failed->error, field));
        return;
    }
    call->job = std::move(std::get<std::unique_ptr<GenerationJob>>(started));
    call->states.resize(call->job->size());
    m_context.registerJob(call->job.get());
    spdlog::debug("{}: {} choice(s), prompt {} tokens, stream {}", call->writer.id(), call->job->size(),
                  call->request.prompts.front().tokens.size(), call->request.stream);

    if (!call->request.stream) {
        respondWhole(*call, res);
        return;
    }
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");  // proxies must not hold tokens back
    res.set_chunked_content_provider(
        "text/event-stream", [call](size_t, httplib::DataSink& sink) { return pumpStream(*call, sink); },
        [call](bool) { call->job->cancel(); });
}

}  // namespace brook
