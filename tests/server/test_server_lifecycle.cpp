// The server around the routes: loading (/health 503), --api-key, CORS, /metrics moving and
// parsing, clients that hang up, --max-queue-len, --request-timeout and graceful shutdown.
#include "server_test_support.h"

#include <QtTest>

#include <atomic>
#include <thread>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

json longStream(int maxTokens)
{
    return {{"prompt", "Tell a long story"},
            {"max_tokens", maxTokens},
            {"temperature", 0},
            {"ignore_eos", true},
            {"stream", true}};
}

PromText scrape(const InProcessServer& server)
{
    auto r = server.client().get("/metrics");
    if (r.status != 200) qFatal("/metrics: %d", r.status);
    return parsePrometheus(r.body);
}

// Polls /metrics into `m` until done(m) holds; false if it still does not after 30 s (a starved
// machine).
template <typename Done>
bool scrapeUntil(const InProcessServer& server, PromText& m, const Done& done)
{
    for (QDeadlineTimer deadline(30000);; QTest::qWait(10)) {
        m = scrape(server);
        if (done(m)) return true;
        if (deadline.hasExpired()) return false;
    }
}

bool idle(const PromText& m)
{
    return m.value("vllm:num_requests_running") == 0 && m.value("vllm:num_requests_waiting") == 0;
}

// Polls /metrics until nothing runs or waits (the engine publishes after each step). The gauges
// say idle too before the engine has taken up a new request: wait for a request's end first.
bool waitIdle(const InProcessServer& server, PromText& m) { return scrapeUntil(server, m, idle); }

}  // namespace

class TestServerLifecycle : public QObject {
    Q_OBJECT

private slots:
    void healthIsUnavailableWhileLoading()
    {
        InProcessServer server(testServeConfig(), serverLaunchOptions(), /*attachNow=*/false);
        auto health = server.client().get("/health");
        QCOMPARE(health.status, 503);
        QVERIFY(health.json["error"]["message"].get<std::string>().find("loading") != std::string::npos);
        QCOMPARE(server.client().post("/v1/chat/completions", chatBody("hi", 4)).status, 503);
        QCOMPARE(server.client().get("/v1/models").status, 503);
        server.attach();
        QCOMPARE(server.client().get("/health").status, 200);
        QCOMPARE(server.client().post("/v1/chat/completions", chatBody("hi", 4)).status, 200);
    }

    void apiKeyGuardsAllButHealth()
    {
        ServeConfig config = testServeConfig();
        config.apiKey = "s3cret-key";
        InProcessServer server(config);
        QCOMPARE(server.client().get("/health").status, 200);
        for (const char* path : {"/v1/models", "/metrics", "/version", "/load", "/nope"}) {
            auto r = server.client().get(path);
            QCOMPARE(r.status, 401);
            QCOMPARE(r.json["error"]["code"].get<std::string>(), std::string("invalid_api_key"));
            QCOMPARE(server.client("wrong-key").get(path).status, 401);
        }
        QCOMPARE(server.client().post("/v1/completions", {{"prompt", "x"}}).status, 401);
        QCOMPARE(server.client("s3cret-key!").post("/tokenize", {{"prompt", "x"}}).status, 401);
        QCOMPARE(server.client("s3cret-key").get("/v1/models").status, 200);
        QCOMPARE(server.client("s3cret-key").post("/v1/chat/completions", chatBody("hi", 3)).status, 200);
        QCOMPARE(server.client("s3cret-key").get("/nope").status, 404);
    }

    void corsPreflightAndHeadersOnErrors()
    {
        ServeConfig anyOrigin = testServeConfig();
        anyOrigin.allowedOrigins = {"*"};  // the default is no CORS at all
        InProcessServer open(anyOrigin);
        httplib::Client c("127.0.0.1", open.port());
        auto pre =
            c.Options("/v1/chat/completions", {{"Origin", "http://app.example"},
                                               {"Access-Control-Request-Method", "POST"},
                                               {"Access-Control-Request-Headers", "authorization,content-type"}});
        QVERIFY(pre);
        QCOMPARE(pre->status, 200);
        QCOMPARE(pre->get_header_value("Access-Control-Allow-Origin"), std::string("*"));
        QVERIFY(pre->get_header_value("Access-Control-Allow-Methods").find("POST") != std::string::npos);
        QCOMPARE(pre->get_header_value("Access-Control-Allow-Headers"), std::string("authorization,content-type"));
        auto notFound = c.Get("/v2/whatever", {{"Origin", "http://app.example"}});
        QCOMPARE(notFound->status, 404);
        QCOMPARE(notFound->get_header_value("Access-Control-Allow-Origin"), std::string("*"));
        QVERIFY(json::parse(notFound->body).contains("error"));

        ServeConfig config = testServeConfig();
        config.allowedOrigins = {"http://good.example"};
        config.apiKey = std::string("k");
        InProcessServer strict(config);
        httplib::Client s("127.0.0.1", strict.port());
        auto bad =
            s.Options("/v1/models", {{"Origin", "http://evil.example"}, {"Access-Control-Request-Method", "GET"}});
        QCOMPARE(bad->status, 400);
        QVERIFY(!bad->has_header("Access-Control-Allow-Origin"));
        auto good =
            s.Options("/v1/models", {{"Origin", "http://good.example"}, {"Access-Control-Request-Method", "GET"}});
        QCOMPARE(good->status, 200);  // preflight needs no key
        QCOMPARE(good->get_header_value("Access-Control-Allow-Origin"), std::string("http://good.example"));
        auto unauthorized = s.Get("/v1/models", {{"Origin", "http://good.example"}});
        QCOMPARE(unauthorized->status, 401);
        QCOMPARE(unauthorized->get_header_value("Access-Control-Allow-Origin"), std::string("http://good.example"));
        QCOMPARE(unauthorized->get_header_value("Vary"), std::string("Origin"));
        auto foreign = s.Get("/health", {{"Origin", "http://evil.example"}});
        QCOMPARE(foreign->status, 200);
        QVERIFY(!foreign->has_header("Access-Control-Allow-Origin"));
    }

    void metricsParseAndMove()
    {
        InProcessServer server;
        const PromText before = scrape(server);
        QVERIFY2(before.error.empty(), before.error.c_str());
        QCOMPARE(before.types.at("vllm:request_success_total"), std::string("counter"));
        QCOMPARE(before.types.at("vllm:num_requests_running"), std::string("gauge"));
        QCOMPARE(before.types.at("vllm:time_to_first_token_seconds"), std::string("histogram"));
        for (const PromSample& s : before.samples) {
            QVERIFY2(s.labels.count("model_name") && s.labels.at("model_name") == "tiny-ernie", s.name.c_str());
            QVERIFY(s.labels.count("engine"));
        }

        json body = chatBody("Count to five.", 7);
        body["ignore_eos"] = true;
        auto r = server.client().post("/v1/chat/completions", body);
        QCOMPARE(r.status, 200);
        const int promptTokens = r.json["usage"]["prompt_tokens"].get<int>();
        PromText after;
        QVERIFY(waitIdle(server, after));
        QVERIFY2(after.error.empty(), after.error.c_str());
        QCOMPARE(after.value("vllm:prompt_tokens_total") - before.value("vllm:prompt_tokens_total"),
                 double(promptTokens));
        QCOMPARE(after.value("vllm:generation_tokens_total") - before.value("vllm:generation_tokens_total"), 7.0);
        QCOMPARE(after.value("vllm:request_success_total", {{"finished_reason", "length"}}) -
                     before.value("vllm:request_success_total", {{"finished_reason", "length"}}),
                 1.0);
        QCOMPARE(after.value("vllm:e2e_request_latency_seconds_count") -
                     before.value("vllm:e2e_request_latency_seconds_count"),
                 1.0);
        QCOMPARE(after.value("vllm:e2e_request_latency_seconds_bucket", {{"le", "+Inf"}}),
                 after.value("vllm:e2e_request_latency_seconds_count"));
        QVERIFY(after.value("brook:weights_bytes") > 0);
    }

    void disconnectAbortsAtOnce()
    {
        InProcessServer server;
        const PromText before = scrape(server);
        int seen = 0;
        auto s =
            server.client().stream("/v1/completions", longStream(4000), [&](const StreamEvent&) { return ++seen < 5; });
        QCOMPARE(seen, 5);
        QVERIFY(!s.sawDone);
        PromText after;
        QVERIFY(waitIdle(server, after));
        QCOMPARE(after.value("vllm:num_requests_running"), 0.0);
        QCOMPARE(after.value("vllm:kv_cache_usage_perc"), 0.0);
        QCOMPARE(after.value("vllm:request_success_total", {{"finished_reason", "abort"}}) -
                     before.value("vllm:request_success_total", {{"finished_reason", "abort"}}),
                 1.0);
        // Aborted long before the end: far fewer than 4000 tokens were generated.
        QVERIFY(after.value("vllm:generation_tokens_total") - before.value("vllm:generation_tokens_total") < 2000);
        QCOMPARE(after.value("vllm:request_success_total", {{"finished_reason", "length"}}),
                 before.value("vllm:request_success_total", {{"finished_reason", "length"}}));
        QCOMPARE(server.server().context().activeSequences()->load(), 0);
    }

    void disconnectWhileWaitingForAWholeAnswer()
    {
        // An answer no machine finishes in the client's 200 ms: the tiny model once generated 4,000
        // tokens in under 200 ms in a fresh Debian root, so the request completed and nothing
        // was aborted. 60,000 tokens take seconds even there.
        LaunchOptions launch = serverLaunchOptions();
        launch.modelDir = testsupport::longContextTinyModelDir();
        launch.maxModelLen = 65536;
        ServeConfig config = testServeConfig();
        config.launch = launch;
        InProcessServer server(config, launch);
        const PromText before = scrape(server);
        // A client that gives up after 200 ms (and closes its connection) on a long whole answer.
        httplib::Client impatient("127.0.0.1", server.port());
        impatient.set_read_timeout(0, 200000);
        json body = longStream(60000);
        body["stream"] = false;
        auto r = impatient.Post("/v1/completions", body.dump(), "application/json");
        QVERIFY(!r);
        impatient.stop();
        // The server may not even have queued the request yet: wait for its abort, not for idle.
        const double abortsBefore = before.value("vllm:request_success_total", {{"finished_reason", "abort"}});
        PromText after;
        scrapeUntil(server, after, [&](const PromText& m) {
            return m.value("vllm:request_success_total", {{"finished_reason", "abort"}}) >= abortsBefore + 1 && idle(m);
        });
        QCOMPARE(after.value("vllm:request_success_total", {{"finished_reason", "abort"}}) - abortsBefore, 1.0);
        QVERIFY(idle(after));
        // The abort counted above is the proof that it was cut short; a bound on the tokens
        // generated would only restate it.
        QCOMPARE(after.value("vllm:kv_cache_usage_perc"), 0.0);
    }

    void queueLimitAnswers429()
    {
        ServeConfig config = testServeConfig();
        config.maxQueueLen = 1;
        LaunchOptions launch = serverLaunchOptions();
        launch.maxNumSeqs = 1;
        config.launch = launch;
        InProcessServer server(config, launch);
        std::atomic<bool> hangUp{false};
        std::vector<std::thread> holders;
        for (int i = 0; i < 2; ++i)
            holders.emplace_back([&] {
                server.client().stream("/v1/completions", longStream(4000),
                                       [&](const StreamEvent&) { return !hangUp.load(); });
            });
        for (QDeadlineTimer deadline(30000);
             !deadline.hasExpired() && server.client().get("/load").json["server_load"].get<int>() < 2;)
            QTest::qWait(5);
        auto refused = server.client().post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}});
        hangUp = true;
        for (auto& t : holders) t.join();
        QCOMPARE(refused.status, 429);
        QCOMPARE(refused.json["error"]["code"].get<std::string>(), std::string("queue_full"));
        PromText idleNow;
        QVERIFY(waitIdle(server, idleNow));
        QCOMPARE(server.client().post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}}).status, 200);
    }

    void requestTimeoutAborts()
    {
        ServeConfig config = testServeConfig();
        config.requestTimeoutSeconds = 0.1;
        InProcessServer server(config);
        json body = longStream(4000);
        body["stream"] = false;
        auto whole = server.client().post("/v1/completions", body);
        QCOMPARE(whole.status, 408);
        QVERIFY(whole.json["error"]["message"].get<std::string>().find("request-timeout") != std::string::npos);
        auto s = server.client().stream("/v1/completions", longStream(4000));
        QCOMPARE(s.status, 200);
        QVERIFY(s.sawDone);
        QVERIFY(s.events.back().data.contains("error"));
        // Both aborts counted (the engine may take up the second one only after it timed out).
        PromText after;
        scrapeUntil(server, after, [](const PromText& m) {
            return m.value("vllm:request_success_total", {{"finished_reason", "abort"}}) >= 2 && idle(m);
        });
        QVERIFY(idle(after));
        QCOMPARE(after.value("vllm:request_success_total", {{"finished_reason", "abort"}}), 2.0);
        QCOMPARE(after.value("vllm:kv_cache_usage_perc"), 0.0);
    }

    void drainLetsRunningRequestsFinish()
    {
        InProcessServer server;
        std::atomic<bool> started{false};
        StreamResult result;
        std::thread client([&] {
            result = server.client().stream("/v1/completions", longStream(300), [&](const StreamEvent&) {
                started = true;
                return true;
            });
        });
        while (!started) QTest::qWait(1);
        server.server().drain(std::chrono::seconds(120));  // far more than 300 tokens need, even starved
        client.join();
        QVERIFY(result.sawDone);
        QCOMPARE(result.events.back().data["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
        QCOMPARE(server.client().post("/v1/completions", {{"prompt", "x"}}).status, 503);
        QCOMPARE(server.client().get("/health").status, 503);
    }

    void drainAbortsWhatOutlastsTheGrace()
    {
        InProcessServer server;
        QElapsedTimer timer;
        std::thread drainer;
        StreamResult result;
        std::thread client([&] {
            // The drain starts as the first event arrives, long before the 4000 tokens are done
            // (on its own thread: the client keeps reading meanwhile).
            result = server.client().stream("/v1/completions", longStream(4000), [&](const StreamEvent&) {
                if (!drainer.joinable()) {
                    timer.start();
                    drainer = std::thread([&] { server.server().drain(std::chrono::milliseconds(100)); });
                }
                return true;
            });
        });
        client.join();
        QVERIFY(drainer.joinable());
        drainer.join();
        // Aborted after the 100 ms grace, not left to run (a bound a starved machine still meets;
        // the "shutting down" error event below is what proves the abort).
        QVERIFY(timer.elapsed() < 30000);
        QVERIFY(result.sawDone);
        // OpenAI has no "abort" finish_reason: the stream ends with a 503 error event instead.
        const json& last = result.events.back().data;
        QVERIFY2(last.contains("error"), last.dump().c_str());
        QVERIFY(last["error"]["message"].get<std::string>().find("shutting down") != std::string::npos);
        for (const StreamEvent& e : result.events)
            if (e.data.contains("choices"))
                for (const auto& c : e.data["choices"]) QVERIFY(c["finish_reason"] != "abort");
    }
};

QTEST_APPLESS_MAIN(TestServerLifecycle)
#include "test_server_lifecycle.moc"
