// brook-bench serve and baseline (the built binary) against an in-process server: the report's
// token counts must match what the server's own /metrics counted.
#include "server_test_support.h"

#include "loadgen/serve_benchmark.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <numeric>
#include <system_error>
#include <thread>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

const QString kBench = QStringLiteral(BROOK_BIN_DIR "/brook-bench");

std::pair<int, std::string> runBench(const QStringList& args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(kBench, args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAll().toStdString()};
}

}  // namespace

class TestBenchServe : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (!QFileInfo::exists(kBench)) QSKIP("brook-bench is not built");
    }

    void serveReportsWhatTheServerCounted()
    {
        InProcessServer server;
        QTemporaryDir dir;
        const QString resultFile = dir.filePath("result.json");
        const PromText before = parsePrometheus(server.client().get("/metrics").body);
        auto [code, out] = runBench({"serve", "--base-url", QString::fromStdString(server.baseUrl()), "--num-prompts",
                                     "12", "--random-input-len", "16", "--random-output-len", "8", "--ignore-eos",
                                     "--max-concurrency", "4", "--seed", "3", "--save-result", resultFile});
        QVERIFY2(code == 0, out.c_str());
        QVERIFY(out.find("Serving Benchmark Result") != std::string::npos);
        QVERIFY(out.find("P99 ITL (ms):") != std::string::npos);
        std::ifstream in(resultFile.toStdString());
        const json result = json::parse(in);
        QCOMPARE(result["completed"].get<int>(), 12);
        QCOMPARE(result["failed"].get<int>(), 0);
        QCOMPARE(result["total_output_tokens"].get<int>(), 96);
        QVERIFY(result["max_concurrent_requests"].get<int>() <= 4);
        QCOMPARE(result["model_id"].get<std::string>(), std::string("tiny-ernie"));
        const auto inputLens = result["input_lens"].get<std::vector<int>>();
        QCOMPARE(std::accumulate(inputLens.begin(), inputLens.end(), 0), result["total_input_tokens"].get<int>());
        QVERIFY(result["median_ttft_ms"].get<double>() > 0);
        QVERIFY(result["p99_ttft_ms"].get<double>() >= result["median_ttft_ms"].get<double>());
        QVERIFY(result["p99_e2el_ms"].get<double>() >= result["p99_ttft_ms"].get<double>());
        QVERIFY(result["mean_tpot_ms"].get<double>() > 0);

        // The engine counts a step's tokens after it has sent them: the last ones can reach the
        // counters after the benchmark has ended. Wait for them (30 s at most), then compare.
        PromText after;
        for (QDeadlineTimer deadline(30000);; QTest::qWait(10)) {
            after = parsePrometheus(server.client().get("/metrics").body);
            if (after.value("vllm:generation_tokens_total") - before.value("vllm:generation_tokens_total") >= 96 ||
                deadline.hasExpired())
                break;
        }
        QCOMPARE(after.value("vllm:prompt_tokens_total") - before.value("vllm:prompt_tokens_total"),
                 result["total_input_tokens"].get<double>());
        QCOMPARE(after.value("vllm:generation_tokens_total") - before.value("vllm:generation_tokens_total"), 96.0);

        // The same seed gives the same prompts.
        auto [code2, out2] = runBench({"serve", "--base-url", QString::fromStdString(server.baseUrl()), "--num-prompts",
                                       "12", "--random-input-len", "16", "--random-output-len", "8", "--ignore-eos",
                                       "--seed", "3", "--save-result", resultFile, "--endpoint", "/v1/completions"});
        QCOMPARE(code2, 0);
        std::ifstream in2(resultFile.toStdString());
        QCOMPARE(json::parse(in2)["total_input_tokens"], result["total_input_tokens"]);
    }

    void multiTurnChatResendsHistoryAndHitsTheCache()
    {
        InProcessServer server;
        QTemporaryDir dir;
        const QString resultFile = dir.filePath("multi.json");
        const QStringList args = QStringLiteral("serve --dataset-name multi-turn --num-prompts 3 --multi-turn-turns 4 "
                                                "--multi-turn-system-len 120 --random-input-len 10 "
                                                "--random-output-len 6 --ignore-eos --max-concurrency 2 --seed 5")
                                     .split(QLatin1Char(' '));
        auto [code, out] = runBench(
            args + QStringList{"--base-url", QString::fromStdString(server.baseUrl()), "--save-result", resultFile});
        QVERIFY2(code == 0, out.c_str());
        QVERIFY(out.find("Time to First Token by turn") != std::string::npos);
        std::ifstream in(resultFile.toStdString());
        const json result = json::parse(in);
        QCOMPARE(result["completed"].get<int>(), 12);
        QCOMPARE(result["failed"].get<int>(), 0);
        QCOMPARE(result["total_output_tokens"].get<int>(), 72);
        QCOMPARE(result["max_concurrency"].get<int>(), 2);
        const json& turns = result["by_turn"];
        QCOMPARE(turns.size(), size_t(4));
        // Each turn resends the last: prompts grow, and from turn 2 on most of them is cached.
        for (size_t t = 1; t < turns.size(); ++t) {
            QCOMPARE(turns[t]["completed"].get<int>(), 3);
            QVERIFY(turns[t]["mean_prompt_tokens"].get<double>() > turns[t - 1]["mean_prompt_tokens"].get<double>());
            QVERIFY2(turns[t]["mean_cached_tokens"].get<double>() > 0.5 * turns[t]["mean_prompt_tokens"].get<double>(),
                     turns.dump().c_str());
        }
        QVERIFY(result["prefix_cache_hits"].get<double>() > 0);
        QVERIFY(result["prefix_cache_queries"].get<double>() >= result["total_input_tokens"].get<double>());
    }

    void baselineAppendsAndCompares()
    {
        InProcessServer server;
        QTemporaryDir dir;
        const QString history = dir.filePath("history.jsonl");
        const QStringList args = {
            "baseline", "--base-url", QString::fromStdString(server.baseUrl()), "--history", history, "--label", "ci"};
        auto [code, out] = runBench(args);
        QVERIFY2(code == 0, out.c_str());
        auto [code2, out2] = runBench(args);
        QVERIFY2(code2 == 0, out2.c_str());
        QVERIFY2(out2.find("vs ") != std::string::npos, out2.c_str());
        std::ifstream in(history.toStdString());
        std::vector<json> lines;
        for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
        QCOMPARE(lines.size(), size_t(2));
        for (const json& line : lines) {
            QCOMPARE(line["output_tokens"].get<int>(), 64);
            QCOMPARE(line["requests"].get<int>(), 3);
            QCOMPARE(line["label"].get<std::string>(), std::string("ci"));
            QVERIFY(line["memory_used_mib"].get<double>() > 0);
            QCOMPARE(line["queue_waiting"].get<double>(), 0.0);
            QVERIFY(line["median_output_tok_s"].get<double>() > 0);
            QCOMPARE(line["server_version"].get<std::string>(), std::string(BROOK_VERSION));
        }
    }

    // Out of threads (pthread_create's EAGAIN): the requests that cannot start fail with the
    // reason, the others complete, and the run ends normally. It once aborted brook-bench with an
    // uncaught std::system_error beside a soak's thousand slow sockets.
    void outOfThreadsFailsThoseRequestsNotTheRun()
    {
        InProcessServer server;
        ServeBenchOptions o;
        o.baseUrl = server.baseUrl();
        o.numPrompts = 9;
        o.randomInputLen = 16;
        o.randomOutputLen = 4;
        o.ignoreEos = true;
        o.maxConcurrency = 3;
        ServeBenchmark bench(o);
        std::atomic<int> spawned{0};
        bench.setThreadSpawn([&](std::function<void()> work) {
            if (++spawned % 3 == 0)  // what std::thread throws when pthread_create fails with EAGAIN
                throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
            return std::thread(std::move(work));
        });
        const auto r = bench.run();
        QVERIFY(r);
        QCOMPARE(spawned.load(), 9);
        QCOMPARE(r->completed, 6);
        QCOMPARE(int(r->errors.size()), 3);
        for (const std::string& e : r->errors)
            QVERIFY2(e.find("cannot start a thread: Resource temporarily unavailable") != std::string::npos, e.c_str());
    }

    // The same with the real limit: brook-bench as an unprivileged user under `ulimit -u`, which
    // root would ignore. All 40 requests at once need 40 threads; a handful are allowed.
    void brookBenchUnderAThreadLimitDoesNotAbort()
    {
        if (::geteuid() != 0) QSKIP("needs root to run brook-bench as another user");
        if (QStandardPaths::findExecutable("setpriv").isEmpty()) QSKIP("setpriv (util-linux) is missing");
        InProcessServer server;
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        const QString command = "ulimit -u 8 && exec " + kBench + " serve --base-url " +
                                QString::fromStdString(server.baseUrl()) +
                                " --num-prompts 40 --random-input-len 16 --random-output-len 4 --ignore-eos";
        p.start("setpriv", {"--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", command});
        QVERIFY(p.waitForFinished(120000));
        const std::string out = p.readAll().toStdString();
        if (out.find("setpriv:") != std::string::npos) QSKIP(("setpriv cannot switch users here: " + out).c_str());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit, out.c_str());  // no abort (SIGABRT)
        QVERIFY2(out.find("terminate called") == std::string::npos, out.c_str());
        QVERIFY2(out.find("Serving Benchmark Result") != std::string::npos, out.c_str());
        // Some requests ran, and those that could not start say why.
        QVERIFY2(out.find("Resource temporarily unavailable") != std::string::npos, out.c_str());
        QVERIFY2(out.find("Successful requests:") != std::string::npos, out.c_str());
    }

    void unreachableServerFails()
    {
        auto [code, out] = runBench({"serve", "--base-url", "http://127.0.0.1:1", "--num-prompts", "2"});
        QCOMPARE(code, 1);
        QVERIFY2(out.find("cannot list models") != std::string::npos, out.c_str());
    }
};

QTEST_APPLESS_MAIN(TestBenchServe)
#include "test_bench_serve.moc"
