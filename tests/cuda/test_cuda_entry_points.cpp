// The programs users start, on the GPU, with the limits they pick: brook-run with its defaults
// (the README's first command ends in it), brook-bench latency and brook-serve with
// --max-num-seqs 1. Each once failed to load on every GPU: a load-time step asked for two
// sequences (load_plan.h). Each must load on CUDA and answer.
#include "cuda_engine_test_support.h"
#include "cuda_test_support.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>

#include <httplib.h>

#include <regex>

using namespace brook;

namespace {

const QString kBin = QStringLiteral(BROOK_BIN_DIR);

QString modelArg() { return QString::fromStdString(cudatest::gpuModelDir().string()); }

struct Finished {
    int code = -1;
    QString out, err;
};

Finished runProgram(const QString& program, const QStringList& args, int timeoutMs = 120000)
{
    QProcess p;
    p.start(kBin + "/" + program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace

class TestCudaEntryPoints : public QObject {
    Q_OBJECT
private slots:
    void init() { BROOK_REQUIRE_GPU(); }

    void brookRunAnswersWithItsDefaults()
    {
        // No --device: auto picks the GPU; brook-run itself serves one sequence at a time.
        const Finished r = runProgram("brook-run", {"--model", modelArg(), "--chat", "你好", "--max-tokens", "8",
                                                    "--ignore-eos", "--json", "--log-level", "info"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("CUDA backend:"), qPrintable(r.err));
        const QJsonObject answer = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(answer.value("token_ids").toArray().size(), 8);
        QCOMPARE(answer.value("finish_reason").toString(), QStringLiteral("length"));
    }

    void brookBenchLatencyWithOneSequence()
    {
        const Finished r = runProgram("brook-bench", {"latency", "--model", modelArg(), "--device", "cuda",
                                                      "--max-num-seqs", "1", "--input-len", "32", "--output-len", "16",
                                                      "--repeats", "2", "--max-model-len", "1024"});
        QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
        QVERIFY2(r.out.contains("TTFT") || r.out.contains("ttft"), qPrintable(r.out));
    }

    void brookServeWithOneSequence()
    {
        QProcess serve;
        serve.setReadChannel(QProcess::StandardError);
        serve.start(kBin + "/brook-serve", {modelArg(), "--served-model-name", "tiny", "--port", "0", "--device",
                                            "cuda", "--max-num-seqs", "1", "--max-model-len", "1024"});
        QVERIFY(serve.waitForStarted(5000));
        auto stop = qScopeGuard([&] {
            serve.kill();
            serve.waitForFinished(5000);
        });
        QString log;
        int port = 0;
        QElapsedTimer timer;
        timer.start();
        const std::regex listening("listening on http://[^:]+:(\\d+)");
        while (port == 0 && timer.elapsed() < 120000 && serve.state() == QProcess::Running) {
            serve.waitForReadyRead(200);
            log += QString::fromUtf8(serve.readAllStandardError());
            std::smatch m;
            const std::string text = log.toStdString();
            if (std::regex_search(text, m, listening)) port = std::stoi(m[1]);
        }
        QVERIFY2(port > 0, qPrintable(log));
        const QByteArray body = R"({"model":"tiny","messages":[{"role":"user","content":"你好"}],)"
                                R"("max_tokens":8,"ignore_eos":true,"temperature":0})";
        // Two requests: the second after the first one's blocks were freed.
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(60);
        // The port opens while the model loads; /health says 200 once it can answer.
        for (;;) {
            const auto health = client.Get("/health");
            if (health && health->status == 200) break;
            QVERIFY2(timer.elapsed() < 120000 && serve.state() == QProcess::Running, "/health never answered 200");
            QTest::qWait(200);
        }
        for (int i = 0; i < 2; ++i) {
            const auto reply = client.Post("/v1/chat/completions", body.toStdString(), "application/json");
            QVERIFY2(reply && reply->status == 200, reply ? reply->body.c_str() : "no reply");
            const QJsonObject answer = QJsonDocument::fromJson(QByteArray::fromStdString(reply->body)).object();
            QCOMPARE(answer.value("usage").toObject().value("completion_tokens").toInt(), 8);
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaEntryPoints)
#include "test_cuda_entry_points.moc"
