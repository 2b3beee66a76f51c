// 64 streaming clients at once: every one receives a complete, well-framed answer, identical to
// the same request served alone (greedy), while the engine batches them together.
#include "server_test_support.h"

#include <QtTest>

#include <atomic>
#include <latch>
#include <thread>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

class TestServerConcurrency : public QObject {
    Q_OBJECT

private slots:
    void sixtyFourStreamsMatchTheirSoloAnswers()
    {
        InProcessServer server;
        constexpr int kClients = 64;
        std::mt19937 rng(2024);
        std::vector<json> bodies;
        for (int i = 0; i < kClients; ++i) {
            const bool useChat = i % 2 == 0;
            json body;
            if (useChat) {
                body = chatBody("question number " + std::to_string(i) + " about rivers and mountains", 24, true);
            } else {
                body = {{"prompt", randomPrompt(rng, 4 + i % 13, 1000)},
                        {"max_tokens", 24},
                        {"temperature", 0},
                        {"stream", true}};
            }
            body["ignore_eos"] = true;
            body["stream_options"] = {{"include_usage", true}};
            bodies.push_back(body);
        }
        auto pathFor = [](int i) { return i % 2 == 0 ? "/v1/chat/completions" : "/v1/completions"; };

        // Alone first: one request at a time.
        std::vector<std::string> solo(kClients);
        for (int i = 0; i < kClients; ++i) {
            auto s = server.client().stream(pathFor(i), bodies[size_t(i)]);
            QVERIFY(s.ok() && s.sawDone);
            solo[size_t(i)] = streamedText(s)[0];
        }

        // Then all together.
        const EngineStats before = server.engine().stats();
        std::vector<StreamResult> results(kClients);
        std::vector<std::thread> threads;
        // Every client thread exists before any sends: created one by one, the first ones' requests
        // ran for dozens of steps before the last threads had started (a 2-core machine, ~1 in 5
        // runs over the step bound below).
        std::latch allStarted(kClients);
        for (int i = 0; i < kClients; ++i)
            threads.emplace_back([&, i] {
                allStarted.arrive_and_wait();
                results[size_t(i)] = server.client().stream(pathFor(i), bodies[size_t(i)]);
            });
        for (auto& t : threads) t.join();

        for (int i = 0; i < kClients; ++i) {
            const StreamResult& r = results[size_t(i)];
            QVERIFY2(r.ok(), (std::to_string(i) + ": " + r.transportError + " " + r.errorBody).c_str());
            QVERIFY(r.sawDone);
            QCOMPARE(r.events.back().data["usage"]["completion_tokens"].get<int>(), 24);
            QCOMPARE(streamedText(r)[0], solo[size_t(i)]);
            // Every event is one well-formed JSON object of this call.
            for (const StreamEvent& e : r.events) QVERIFY(!e.data.contains("unparsed"));
            QCOMPARE(r.events.front().data["id"], r.events.back().data["id"]);
        }
        // The engine counts a request, and the server ends its call, after the client has read
        // the last chunk.
        QTRY_COMPARE_WITH_TIMEOUT(server.server().context().activeRequests().load(), 0, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(parsePrometheus(server.client().get("/metrics").body)
                                      .value("vllm:request_success_total", {{"finished_reason", "length"}}),
                                  double(2 * kClients), 30000);
        // They were batched: one at a time would take at least 24 steps each. (How many run at
        // the same instant depends on how fast the client threads start on a loaded machine:
        // decode steps only need to have carried more than one request on average, counted by
        // the engine rather than sampled.)
        const EngineStats after = server.engine().stats();
        const long long steps = after.steps - before.steps;
        QVERIFY2(steps < kClients * 24 / 4, (std::to_string(steps) + " steps").c_str());
        const long long decodeSteps = after.stepTimes.decodeSteps - before.stepTimes.decodeSteps;
        const long long decodeRows = after.stepTimes.decodeRows - before.stepTimes.decodeRows;
        QVERIFY2(decodeRows > decodeSteps,
                 (std::to_string(decodeRows) + " rows in " + std::to_string(decodeSteps) + " decode steps").c_str());
    }

    // A burst of 512 clients connecting in the same instant (vllm bench serve at
    // --max-concurrency 256 and more): every connection is accepted and answered. With
    // cpp-httplib's listen backlog of 5, about a tenth of them saw their connection dropped.
    void burstOfConnectionsIsAllAnswered()
    {
        InProcessServer server;
        constexpr int kClients = 512;
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<StreamResult> results(kClients);
        std::vector<std::thread> threads;
        for (int i = 0; i < kClients; ++i)
            threads.emplace_back([&, i] {
                json body = {{"prompt", "burst " + std::to_string(i)},
                             {"max_tokens", 2},
                             {"stream", true},
                             {"ignore_eos", true}};
                ++ready;
                while (!go) std::this_thread::yield();
                results[size_t(i)] = server.client().stream("/v1/completions", body);
            });
        while (ready < kClients) std::this_thread::yield();
        go = true;
        for (auto& t : threads) t.join();
        int failed = 0;
        std::string first;
        for (const StreamResult& r : results) {
            if (r.ok() && r.sawDone) continue;
            if (failed++ == 0) first = r.transportError + " " + r.errorBody;
        }
        QVERIFY2(failed == 0, (std::to_string(failed) + " of 512 failed; first: " + first).c_str());
    }
};

QTEST_APPLESS_MAIN(TestServerConcurrency)
#include "test_server_concurrency.moc"
