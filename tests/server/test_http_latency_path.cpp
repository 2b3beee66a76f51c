// The serving path's latency fixes (issue 19), checked by structure rather than by timing so that
// nothing here can flake on a loaded machine: accepted sockets have Nagle off and are published to
// the handler (no descriptor scan), brook-bench's client reuses its connection, a streamed chunk
// serializes exactly as a whole-object dump would, and a stream takes every queued output in one
// batch, the engine reporting how long it queued the request.
#include "engine/tokenizer.h"
#include "server/client_connection.h"
#include "server/generation_job.h"
#include "server/guarded_http_server.h"
#include "server/request_timeline.h"
#include "server/response_writer.h"
#include "server/socket_calls.h"
#include "server_test_support.h"

#include <QtTest>

#include <thread>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// A GuardedHttpServer on an ephemeral port, listening on its own thread.
class ProbeServer {
public:
    explicit ProbeServer(const std::function<void(httplib::Server&)>& routes)
    {
        m_server.configure(HttpLimits{}, 64, 100, std::chrono::seconds(5));
        routes(m_server);
        m_port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        for (int i = 0; i < 500 && !m_server.is_running(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ~ProbeServer()
    {
        m_server.stop();
        m_thread.join();
    }
    int port() const { return m_port; }
    std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(m_port); }

private:
    GuardedHttpServer m_server;
    std::thread m_thread;
    int m_port = -1;
};

}  // namespace

class TestHttpLatencyPath : public QObject {
    Q_OBJECT

private slots:
    // Every accepted socket has TCP_NODELAY (an SSE event must not wait for the client's delayed
    // ACK of the previous one), and the handler learns that socket from the server rather than by
    // scanning the process's descriptors.
    void acceptedSocketsHaveNoDelayAndArePublished()
    {
        ProbeServer server([](httplib::Server& s) {
            s.Get("/probe", [](const httplib::Request&, httplib::Response& res) {
                const CurrentConnection* current = CurrentConnection::get();
                json out = {{"published", current != nullptr}};
                if (current) {
                    out["nodelay"] = net::noDelay(current->socket());
                    out["firstByteStamped"] = current->timeline().firstByte != RequestTimeline::Clock::time_point{};
                    out["clientConnected"] = !ClientConnection(current->socket()).closed();
                }
                res.set_content(out.dump(), "application/json");
            });
        });
        for (int i = 0; i < 2; ++i) {  // a fresh connection each time
            httplib::Client client("127.0.0.1", server.port());
            auto res = client.Get("/probe");
            QVERIFY(res);
            QCOMPARE(res->status, 200);
            const json body = json::parse(res->body);
            QVERIFY(body["published"].get<bool>());
            QVERIFY(body["nodelay"].get<bool>());
            QVERIFY(body["firstByteStamped"].get<bool>());
            QVERIFY(body["clientConnected"].get<bool>());
        }
        QVERIFY(CurrentConnection::get() == nullptr);  // never leaks outside a request
    }

    // brook-bench serve's streams reuse a kept-alive connection: a TCP handshake per request
    // would be counted in its time to first token.
    void streamingClientReusesItsConnection()
    {
        ProbeServer server([](httplib::Server& s) {
            s.Post("/stream", [](const httplib::Request& req, httplib::Response& res) {
                const std::string events = "data: " + json{{"port", req.remote_port}}.dump() + "\n\ndata: [DONE]\n\n";
                res.set_chunked_content_provider("text/event-stream", [events](size_t, httplib::DataSink& sink) {
                    sink.write(events.data(), events.size());
                    sink.done();
                    return true;
                });
            });
        });
        const OpenAiClient client(server.baseUrl(), {}, 30);
        std::vector<int> ports;
        for (int i = 0; i < 3; ++i) {
            StreamResult r = client.stream("/stream", json::object());
            QVERIFY2(r.ok(), r.transportError.c_str());
            QVERIFY(r.sawDone);
            QCOMPARE(r.events.size(), size_t(1));
            ports.push_back(r.events[0].data["port"].get<int>());
        }
        QCOMPARE(ports[1], ports[0]);
        QCOMPARE(ports[2], ports[0]);

        // A stream the caller hangs up on is not reused: the next one gets a new connection.
        StreamResult cut = client.stream("/stream", json::object(), [](const StreamEvent&) { return false; });
        QVERIFY(!cut.sawDone);
        StreamResult after = client.stream("/stream", json::object());
        QVERIFY(after.ok());
        QVERIFY(after.events[0].data["port"].get<int>() != ports[0]);
    }

    // Chunks are built from a prefix serialized once per call: byte for byte what serializing the
    // whole chunk object (OpenAI's field order) gives, with and without usage.
    void chunkEventsMatchWholeObjectSerialization()
    {
        auto tokenizer = Tokenizer::load(tinyModelDir());
        QVERIFY(tokenizer);
        for (const ApiKind kind : {ApiKind::Completion, ApiKind::Chat}) {
            for (const int usageMode : {0, 1, 2}) {  // none, include_usage, continuous_usage_stats
                ParsedRequest request;
                request.kind = kind;
                request.model = "tiny \"ernie\"";  // needs escaping
                request.stream = true;
                request.includeUsage = usageMode >= 1;
                request.continuousUsage = usageMode == 2;
                request.prompts.push_back({{1, 2, 3}, "abc", 8});
                ResponseWriter writer(request, **tokenizer);
                std::vector<ChoiceState> states(1);
                RequestOutput out;
                out.newTokenIds = {5};
                out.textDelta = "h\xc3\xa9llo \"x\"";
                out.numOutputTokens = 1;
                std::string events;
                writer.appendStreamEvents(events, 0, out, states);
                QVERIFY(!events.empty());
                // Every event re-serialized from its parsed (order-keeping) form comes out the same.
                size_t start = 0;
                int seen = 0;
                while (start < events.size()) {
                    const size_t end = events.find("\n\n", start);
                    QVERIFY(end != std::string::npos);
                    const std::string line = events.substr(start, end - start);
                    QVERIFY(line.rfind("data: ", 0) == 0);
                    const ordered_json parsed = ordered_json::parse(line.substr(6));
                    QCOMPARE(QString::fromStdString(parsed.dump()), QString::fromStdString(line.substr(6)));
                    std::vector<std::string> keys;
                    for (const auto& [key, value] : parsed.items()) keys.push_back(key);
                    std::vector<std::string> expected = {"id", "object", "created", "model", "choices"};
                    if (usageMode >= 1) expected.push_back("usage");
                    QVERIFY(keys == expected);
                    QCOMPARE(QString::fromStdString(parsed["model"].get<std::string>()), QString("tiny \"ernie\""));
                    // continuous_usage_stats: the token chunk carries usage, the chat role chunk null.
                    const bool last = end + 2 == events.size();
                    if (usageMode == 2 && last) QVERIFY(parsed["usage"].is_object());
                    else QVERIFY(!parsed.contains("usage") || parsed["usage"].is_null());
                    start = end + 2;
                    ++seen;
                }
                QCOMPARE(seen, kind == ApiKind::Chat ? 2 : 1);  // chat opens with the role chunk
            }
        }
    }

    // A stream takes every output queued at once, in order; the engine (whose idle wait has no
    // timeout when stats logging is off, so only the submit's notify can wake it) reports the
    // request's queue time with its first token.
    void streamTakesQueuedOutputsInOneBatch()
    {
        auto engine = launch(cpuOptions());
        GenerationRequest request;
        request.prompt = std::vector<int32_t>{10, 11, 12, 13};
        request.params.maxTokens = 12;
        request.params.ignoreEos = true;
        request.params.temperature = 0;
        auto started = GenerationJob::start(*engine, {request});
        QVERIFY(std::holds_alternative<std::unique_ptr<GenerationJob>>(started));
        auto& job = std::get<std::unique_ptr<GenerationJob>>(started);
        std::vector<JobEvent> events;
        // Generous: a request that never reached the engine shows as a missing answer, not a flake.
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!job->done() && std::chrono::steady_clock::now() < giveUp)
            job->takeAll(std::chrono::milliseconds(1000), events);
        QVERIFY(job->done());
        QCOMPARE(events.size(), size_t(12));
        for (size_t i = 0; i < events.size(); ++i) QCOMPARE(events[i].output.numOutputTokens, int(i) + 1);
        QVERIFY(events.back().output.finished());
        const RequestOutput& first = events.front().output;
        QVERIFY(first.queueSeconds >= 0);
        QVERIFY(first.queueSeconds <= first.timeToFirstTokenSeconds);
        QVERIFY(events.front().received != std::chrono::steady_clock::time_point{});
        std::vector<JobEvent> none;
        QCOMPARE(job->takeAll(std::chrono::milliseconds(0), none), size_t(0));  // done: nothing more
    }
};

QTEST_GUILESS_MAIN(TestHttpLatencyPath)
#include "test_http_latency_path.moc"
