// The built brook-serve binary, as users run it: SIGTERM/SIGINT shutdown (finish or abort
// in-flight requests, exit 0), bad configuration refused before loading, the offline message,
// and SSE framing as curl sees it.
#include "fake_hub.h"
#include "server_test_support.h"

#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <csignal>
#include <fstream>
#include <regex>
#include <thread>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

const QString kServe = QStringLiteral(BROOK_BIN_DIR "/brook-serve");

// brook-serve started on a free port; the port is read from its "listening on" log line.
class ServeProcess {
public:
    explicit ServeProcess(QStringList extraArgs, QProcessEnvironment env = QProcessEnvironment::systemEnvironment(),
                          QStringList modelArgs = {})
    {
        if (modelArgs.isEmpty())
            modelArgs = {QString::fromStdString(tinyModelDir().string()), "--served-model-name", "tiny-ernie"};
        QStringList args = modelArgs;
        args += {"--port", "0", "--device", "cpu", "--max-model-len", "4096"};
        args += extraArgs;
        m_process.setProcessEnvironment(env);
        m_process.setReadChannel(QProcess::StandardError);
        m_process.start(kServe, args);
        if (!m_process.waitForStarted(5000)) qFatal("brook-serve did not start");
        QElapsedTimer timer;
        timer.start();
        const std::regex listening("listening on http://[^:]+:(\\d+)");
        while (port == 0 && timer.elapsed() < 20000 && m_process.state() == QProcess::Running) {
            m_process.waitForReadyRead(100);
            m_log += m_process.readAllStandardError().toStdString();
            std::smatch m;
            if (std::regex_search(m_log, m, listening)) port = std::stoi(m[1]);
        }
    }
    ~ServeProcess()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    bool waitHealthy()
    {
        for (int i = 0; i < 400; ++i) {
            if (client().get("/health").status == 200) return true;
            QTest::qWait(25);
        }
        return false;
    }
    OpenAiClient client() const { return OpenAiClient("http://127.0.0.1:" + std::to_string(port), {}, 60); }
    void signal(int sig) { ::kill(pid_t(m_process.processId()), sig); }
    bool waitExit(int ms) { return m_process.waitForFinished(ms); }
    int exitCode() const { return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1; }
    std::string log()
    {
        if (m_process.state() == QProcess::Running) m_process.waitForReadyRead(100);
        m_log += m_process.readAllStandardError().toStdString();
        return m_log;
    }

    int port = 0;

private:
    QProcess m_process;
    std::string m_log;
};

json longStream(int maxTokens)
{
    return {{"prompt", "Tell a long story"},
            {"max_tokens", maxTokens},
            {"temperature", 0},
            {"ignore_eos", true},
            {"stream", true}};
}

// Runs a program to completion; returns its exit code and output.
std::pair<int, std::string> run(const QString& program, const QStringList& args, int timeoutMs = 20000,
                                QProcessEnvironment env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-1, p.readAll().toStdString()};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAll().toStdString()};
}

}  // namespace

class TestServeBinary : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (!QFileInfo::exists(kServe)) QSKIP("brook-serve is not built");
        (void)tinyModelDir();
    }

    void sigtermLetsRunningRequestsFinish()
    {
        // A grace far beyond what the stream needs even on a starved machine (the default is 10 s).
        ServeProcess serve({"--shutdown-timeout", "120"});
        QVERIFY(serve.port > 0);
        QVERIFY(serve.waitHealthy());
        bool signalled = false;
        StreamResult result;
        std::thread client([&] {
            // SIGTERM as the first event arrives: the request is running, however late this test's
            // main thread would have woken.
            result = serve.client().stream("/v1/completions", longStream(1500), [&](const StreamEvent&) {
                if (!signalled) serve.signal(SIGTERM);
                signalled = true;
                return true;
            });
        });
        client.join();
        QVERIFY(signalled);
        QVERIFY(serve.waitExit(120000));
        QCOMPARE(serve.exitCode(), 0);
        QVERIFY(result.sawDone);
        QCOMPARE(result.events.back().data["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
        QVERIFY2(serve.log().find("received SIGTERM") != std::string::npos, serve.log().c_str());
    }

    void sigintAbortsWhatOutlastsTheTimeout()
    {
        ServeProcess serve({"--shutdown-timeout", "0.2"});
        QVERIFY(serve.waitHealthy());
        bool signalled = false;
        QElapsedTimer timer;
        StreamResult result;
        std::thread client([&] {
            // SIGINT as the first event arrives, long before the 4000 tokens are done.
            result = serve.client().stream("/v1/completions", longStream(4000), [&](const StreamEvent&) {
                if (!signalled) {
                    timer.start();
                    serve.signal(SIGINT);
                }
                signalled = true;
                return true;
            });
        });
        client.join();
        QVERIFY(signalled);
        QVERIFY(serve.waitExit(60000));
        // Aborted after the 0.2 s grace, not left to run (a bound a starved machine still meets;
        // the "shutting down" error event below is what proves the abort).
        QVERIFY(timer.elapsed() < 60000);
        QCOMPARE(serve.exitCode(), 0);
        QVERIFY(result.sawDone);
        // OpenAI has no "abort" finish_reason: the stream ends with a 503 error event instead.
        const json& last = result.events.back().data;
        QVERIFY2(last.contains("error"), last.dump().c_str());
        QVERIFY(last["error"]["message"].get<std::string>().find("shutting down") != std::string::npos);
        for (const StreamEvent& e : result.events)
            if (e.data.contains("choices"))
                for (const auto& c : e.data["choices"]) QVERIFY(c["finish_reason"] != "abort");
    }

    void badConfigurationIsRefusedBeforeLoading()
    {
        QTemporaryDir dir;
        const QString yaml = dir.filePath("serve.yaml");
        std::ofstream(yaml.toStdString()) << "max_num_seqs: 4\nmax_num_sequences: 8\n";
        auto [code, out] = run(kServe, {QString::fromStdString(tinyModelDir().string()), "--config", yaml});
        QCOMPARE(code, 2);
        QVERIFY2(out.find("unknown key 'max_num_sequences'") != std::string::npos, out.c_str());
        QVERIFY(out.find("loading") == std::string::npos);

        auto [code2, out2] = run(kServe, {QString::fromStdString(tinyModelDir().string()), "--max-queue-len", "-3"});
        QCOMPARE(code2, 2);
        QVERIFY2(out2.find("--max-queue-len") != std::string::npos, out2.c_str());
    }

    void offlineWithoutCacheSaysSo()
    {
        QTemporaryDir cache;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HF_HUB_OFFLINE", "1");
        env.insert("HF_HUB_CACHE", cache.path());
        auto [code, out] = run(kServe, {"baidu/ERNIE-4.5-0.3B-PT", "--port", "0"}, 20000, env);
        QCOMPARE(code, 1);
        QVERIFY2(out.find("HF_HUB_OFFLINE is set") != std::string::npos, out.c_str());
        QVERIFY(out.find(cache.path().toStdString()) != std::string::npos);
    }

    void servesAHubIdThroughTheCache()
    {
        FakeHub hub(tinyModelDir());
        QTemporaryDir home;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HF_ENDPOINT", QString::fromStdString(hub.endpoint()));
        env.insert("HF_HOME", home.path());
        env.remove("HF_HUB_CACHE");
        env.remove("HF_HUB_OFFLINE");
        env.insert("HF_TOKEN", "hf_serve");
        {
            ServeProcess serve({}, env, {QString::fromStdString(kRepo)});
            QVERIFY(serve.waitHealthy());
            auto models = serve.client().get("/v1/models");
            QCOMPARE(models.json["data"][0]["id"].get<std::string>(), kRepo);  // the id is the served name
            auto chat = serve.client().post("/v1/chat/completions",
                                            {{"model", kRepo},
                                             {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})},
                                             {"max_tokens", 3}});
            QCOMPARE(chat.status, 200);
            QVERIFY2(serve.log().find("downloading") != std::string::npos, serve.log().c_str());
            serve.signal(SIGTERM);
            QVERIFY(serve.waitExit(10000));
        }
        const std::filesystem::path snapshot = std::filesystem::path(home.path().toStdString()) / "hub" /
                                               "models--test-org--tiny-ernie" / "snapshots" / kCommit;
        QVERIFY(std::filesystem::exists(snapshot / "model.safetensors"));
        // Offline, the cached snapshot is enough.
        env.insert("HF_HUB_OFFLINE", "1");
        env.insert("HF_ENDPOINT", "http://127.0.0.1:1");
        ServeProcess offline({}, env, {QString::fromStdString(kRepo)});
        QVERIFY(offline.waitHealthy());
    }

    void warnsWhenExposedWithoutKey()
    {
        ServeProcess serve({"--host", "0.0.0.0"});
        QVERIFY(serve.waitHealthy());
        QVERIFY2(serve.log().find("without --api-key") != std::string::npos, serve.log().c_str());
        serve.signal(SIGTERM);
        QVERIFY(serve.waitExit(10000));
        QCOMPARE(serve.exitCode(), 0);
    }

    void curlSeesSseFraming()
    {
        const QString curl = QStandardPaths::findExecutable("curl");
        if (curl.isEmpty()) QSKIP("curl is not installed");
        ServeProcess serve({"--api-key", "k"});
        QVERIFY(serve.waitHealthy());
        const json body = {{"model", "tiny-ernie"},
                           {"messages", json::array({{{"role", "user"}, {"content", "Hello"}}})},
                           {"max_tokens", 12},
                           {"stream", true},
                           {"stream_options", {{"include_usage", true}}}};
        const QString url = QString("http://127.0.0.1:%1/v1/chat/completions").arg(serve.port);
        auto [code, out] = run(curl, {"-sN", "-i", url, "-H", "Authorization: Bearer k", "-H",
                                      "Content-Type: application/json", "-d", QString::fromStdString(body.dump())});
        QCOMPARE(code, 0);
        const size_t headerEnd = out.find("\r\n\r\n");
        QVERIFY(headerEnd != std::string::npos);
        std::string headers = out.substr(0, headerEnd);
        std::transform(headers.begin(), headers.end(), headers.begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });
        QVERIFY2(headers.find("content-type: text/event-stream") != std::string::npos, headers.c_str());
        QVERIFY(headers.find("http/1.1 200") == 0);
        // The body: "data: {json}\n\n" events, the last one "data: [DONE]\n\n", nothing else.
        const std::string bodyText = out.substr(headerEnd + 4);
        size_t pos = 0, events = 0;
        bool done = false;
        while (pos < bodyText.size()) {
            const size_t end = bodyText.find("\n\n", pos);
            QVERIFY2(end != std::string::npos, bodyText.substr(pos).c_str());
            const std::string event = bodyText.substr(pos, end - pos);
            QVERIFY2(event.rfind("data: ", 0) == 0 && event.find('\n') == std::string::npos, event.c_str());
            QVERIFY(!done);  // nothing after [DONE]
            if (event == "data: [DONE]") done = true;
            else QVERIFY(json::accept(event.substr(6)));
            ++events;
            pos = end + 2;
        }
        QVERIFY(done);
        QVERIFY(events >= 4);
        auto [code401, out401] = run(curl, {"-s", "-o", "/dev/null", "-w", "%{http_code}", url, "-d", "{}"});
        QCOMPARE(out401, std::string("401"));
    }
};

QTEST_APPLESS_MAIN(TestServeBinary)
#include "test_serve_binary.moc"
