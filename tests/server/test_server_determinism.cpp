// Same question, same answer, through the HTTP server (issue 43): 16 concurrent copies of each of
// 4 prompts, greedy and seeded, on bf16 weights (the CPU's vdpbf16ps path where it has one) get
// the tokens and logprobs that each prompt gets alone, bit for bit.
#include "server_test_support.h"

#include <QtTest>

#include <latch>
#include <thread>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

// The answer as the client sees it: the text and every token's logprob and top-3 alternatives,
// as serialized (so "identical" means the same bits reached the client).
std::string answerOf(const HttpResult& r)
{
    const json& choice = r.json["choices"][0];
    return choice["message"]["content"].get<std::string>() + "\n" + choice["logprobs"].dump();
}

}  // namespace

class TestServerDeterminism : public QObject {
    Q_OBJECT

private slots:
    void sixteenCopiesOfFourPromptsMatchThemAlone()
    {
        LaunchOptions launch = serverLaunchOptions();
        launch.modelDir = tinyModelDir(DType::BF16);
        launch.maxNumBatchedTokens = 64;  // long prompts are split across steps beside decodes
        InProcessServer server(testServeConfig(), launch);

        // Prompts of different lengths; two greedy, two seeded samples at temperature 1.
        std::vector<json> bodies;
        const std::vector<std::string> users = {
            "hi", "tell me about rivers and the mountains they come from, and the sea they reach",
            std::string(300, 'a') + " long", "question number four"};
        for (size_t i = 0; i < users.size(); ++i) {
            json body = chatBody(users[i], 20);
            body["ignore_eos"] = true;
            body["logprobs"] = true;
            body["top_logprobs"] = 3;
            if (i % 2 == 1) {
                body["temperature"] = 1.0;
                body["seed"] = 1234 + int(i);
            }
            bodies.push_back(body);
        }

        std::vector<std::string> alone;
        for (const json& body : bodies) {
            auto r = server.client().post("/v1/chat/completions", body);
            QCOMPARE(r.status, 200);
            QCOMPARE(r.json["usage"]["completion_tokens"].get<int>(), 20);
            const json& content = r.json["choices"][0]["logprobs"]["content"];
            QCOMPARE(content.size(), size_t(20));
            QCOMPARE(content[0]["top_logprobs"].size(), size_t(3));
            alone.push_back(answerOf(r));
        }
        // The seeded prompts sample: a greedy answer would not show that the seed is honoured.
        QVERIFY(alone[1] != alone[3]);

        constexpr int kCopies = 16;
        const int total = kCopies * int(bodies.size());
        std::vector<HttpResult> results(static_cast<size_t>(total));
        const EngineStats before = server.engine().stats();
        std::latch allStarted(total);
        std::vector<std::thread> threads;
        for (int k = 0; k < total; ++k)
            threads.emplace_back([&, k] {
                allStarted.arrive_and_wait();
                results[size_t(k)] = server.client().post("/v1/chat/completions", bodies[size_t(k) % bodies.size()]);
            });
        for (auto& t : threads) t.join();
        // They ran batched: decode steps carried more than one request on average.
        const EngineStats after = server.engine().stats();
        QVERIFY(after.stepTimes.decodeRows - before.stepTimes.decodeRows >
                2 * (after.stepTimes.decodeSteps - before.stepTimes.decodeSteps));

        int differ = 0;
        for (int k = 0; k < total; ++k) {
            QCOMPARE(results[size_t(k)].status, 200);
            if (answerOf(results[size_t(k)]) != alone[size_t(k) % bodies.size()]) ++differ;
        }
        QVERIFY2(differ == 0, (std::to_string(differ) + " of " + std::to_string(total) +
                               " batched answers differ from the same request alone")
                                  .c_str());
    }
};

QTEST_GUILESS_MAIN(TestServerDeterminism)
#include "test_server_determinism.moc"
