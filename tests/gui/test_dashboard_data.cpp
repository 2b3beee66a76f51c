// The dashboard's data path without widgets: Prometheus text as vLLM writes it (two generations of
// metric names, tests/data/vllm/) parsed and read into snapshots, histogram quantiles against
// hand-worked values, rolling percentiles over a window of scrapes, snapshots turned into chart
// samples (rates, memory split, CSV), RemoteMetricsSource over Qt Network against a tiny HTTP
// server, and serving profiles round-tripping through brook-serve's own YAML parser.
#include "gui/performance/dashboard_series.h"
#include "loadgen/prometheus_text.h"
#include "gui/performance/remote_metrics_source.h"
#include "gui/performance/serving_profile.h"
#include "gui/performance/vllm_metrics_reader.h"
#include "server/serve_config.h"

#include <QFile>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <cmath>
#include <random>

using namespace brook;

namespace {

std::string fixture(const char* name)
{
    QFile file(QStringLiteral(BROOK_TEST_DATA_DIR "/vllm/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read fixture %s", name);
    return file.readAll().toStdString();
}

bool near(double a, double b, double tolerance = 1e-9)
{
    return std::abs(a - b) <= tolerance * std::max(1.0, std::abs(b));
}

// A histogram family with buckets 0.1, 0.5, 1.0 and the given cumulative counts.
std::string ttftText(double b01, double b05, double b1, double inf)
{
    std::string t = "# TYPE vllm:time_to_first_token_seconds histogram\n";
    const char* les[] = {"0.1", "0.5", "1.0", "+Inf"};
    const double counts[] = {b01, b05, b1, inf};
    for (int i = 0; i < 4; ++i)
        t += std::string("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"") + les[i] +
             "\",model_name=\"m\"} " + std::to_string(counts[i]) + "\n";
    t += "vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} " + std::to_string(inf) + "\n";
    return t;
}

// Answers every HTTP request with `body` (path /health: an empty 200).
class TinyHttpServer : public QTcpServer {
public:
    explicit TinyHttpServer(QByteArray metrics) : m_metrics(std::move(metrics))
    {
        connect(this, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* socket = nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                    const QByteArray request = socket->readAll();
                    paths << QString::fromLatin1(request.split(' ').value(1));
                    authorization << QString::fromLatin1(request)
                                         .section(QStringLiteral("Authorization: "), 1, 1)
                                         .section(QLatin1Char('\r'), 0, 0);
                    const QByteArray body = request.startsWith("GET /metrics") ? m_metrics : QByteArray();
                    socket->write(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nConnection: close\r\nContent-Length: " +
                        QByteArray::number(body.size()) + "\r\n\r\n" + body);
                    socket->disconnectFromHost();
                });
            }
        });
    }
    QStringList paths, authorization;

private:
    QByteArray m_metrics;
};

}  // namespace

class TestDashboardData : public QObject {
    Q_OBJECT
private slots:
    void parsesVllmV1Text()
    {
        auto parsed = PrometheusText::parse(fixture("vllm_0.10_metrics.txt"));
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().c_str());
        const PrometheusText& m = *parsed;
        QCOMPARE(m.typeOf("vllm:time_to_first_token_seconds"), std::string("histogram"));
        QCOMPARE(m.typeOf("vllm:prompt_tokens_total"), std::string("counter"));
        QCOMPARE(m.typeOf("vllm:prompt_tokens_created"), std::string("gauge"));
        QCOMPARE(m.helpOf("vllm:kv_cache_usage_perc"), std::string("KV-cache usage. 1 means 100 percent usage."));
        QCOMPARE(*m.sum("vllm:num_requests_running"), 12.0);
        QCOMPARE(*m.sum("vllm:request_success_total"), 98.0);  // stop 61 + length 36 + abort 1
        QCOMPARE(m.labelValues("vllm:request_success_total", "finished_reason"),
                 (std::vector<std::string>{"stop", "length", "abort"}));
        QCOMPARE(m.labelValues("vllm:cache_config_info", "num_gpu_blocks"), std::vector<std::string>{"449281"});
        QCOMPARE(*m.sum("process_virtual_memory_bytes"), 4.42355712e10);  // Go-style exponent
        QVERIFY(!m.sum("vllm:gpu_cache_usage_perc"));

        const PromHistogram ttft = m.histogram("vllm:time_to_first_token_seconds");
        QCOMPARE(int(ttft.buckets.size()), 23);  // 22 bounds and +Inf
        QVERIFY(std::isinf(ttft.buckets.back().first));
        QCOMPARE(ttft.count, 100.0);
        QCOMPARE(ttft.sum, 9.3125);
        // p50: rank 50 falls exactly on the 0.06 bucket's top. p95: rank 95 is 15 of the 16
        // observations in (0.1, 0.25]: 0.1 + 0.15 * 15 / 16.
        QVERIFY(near(*ttft.quantile(0.5), 0.06));
        QVERIFY(near(*ttft.quantile(0.95), 0.240625));
    }

    void readsVllmV1IntoASnapshot()
    {
        VllmMetricsReader reader;
        const MetricsSnapshot s = reader.read(*PrometheusText::parse(fixture("vllm_0.10_metrics.txt")), 1000.0);
        QCOMPARE(s.running, 12.0);
        QCOMPARE(s.waiting, 3.0);
        QCOMPARE(s.kvCacheUsage, 0.4375);
        QCOMPARE(*s.preemptionsTotal, 7.0);
        QCOMPARE(*s.promptTokensTotal, 52736.0);
        QCOMPARE(*s.generationTokensTotal, 25600.0);
        QVERIFY(!s.hasMemory);  // vLLM reports no memory split
        QCOMPARE(reader.modelName(), std::string("baidu/ERNIE-4.5-0.3B-PT"));
        QCOMPARE(s.latency.ttft.count, 100);
        QVERIFY(near(s.latency.ttft.p50, 0.06));
        // ITL: 25,400 gaps. p50 rank 12,700: 700 of the 12,000 in (0.01, 0.025]. p95 rank 24,130:
        // 130 of the 1,000 in (0.025, 0.05].
        QVERIFY(near(s.latency.itl.p50, 0.01 + 0.015 * 700.0 / 12000.0));
        QVERIFY(near(s.latency.itl.p95, 0.025 + 0.025 * 130.0 / 1000.0));
        // E2E: 97 requests. p50 rank 48.5: 38.5 of the 80 in (2.5, 5]. p95 rank 92.15: 2.15 of 7 in (5, 10].
        QVERIFY(near(s.latency.e2e.p50, 2.5 + 2.5 * 38.5 / 80.0));
        QVERIFY(near(s.latency.e2e.p95, 5.0 + 5.0 * 2.15 / 7.0));
    }

    void readsTheOlderVllmNames()
    {
        VllmMetricsReader reader;
        auto parsed = PrometheusText::parse(fixture("vllm_0.5_metrics.txt"));
        QVERIFY(parsed.ok());
        const MetricsSnapshot s = reader.read(*parsed, 50.0);
        QCOMPARE(s.kvCacheUsage, 0.8125);  // vllm:gpu_cache_usage_perc
        QCOMPARE(s.running, 5.0);
        QCOMPARE(s.waiting, 2.0);
        QCOMPARE(*s.preemptionsTotal, 4.0);
        QCOMPARE(*s.promptTokensTotal, 184320.0);
        QCOMPARE(*s.promptTokensPerSecond, 1843.2);  // vllm:avg_prompt_throughput_toks_per_s
        QCOMPARE(*s.generationTokensPerSecond, 921.6);
        QCOMPARE(reader.modelName(), std::string("meta-llama/Meta-Llama-3-8B-Instruct"));
        // ITL from vllm:time_per_output_token_seconds: rank 45,980 of 91,960 is 5,980 of the
        // 50,000 gaps in (0.025, 0.05]; rank 87,362 is 47,362 of them.
        QCOMPARE(s.latency.itl.count, 91960);
        QVERIFY(near(s.latency.itl.p50, 0.025 + 0.025 * 5980.0 / 50000.0));
        QVERIFY(near(s.latency.itl.p95, 0.025 + 0.025 * 47362.0 / 50000.0));
        // TTFT: rank 100 is 80 of the 140 in (0.1, 0.25]; rank 190 ends the (0.25, 0.5] bucket.
        QVERIFY(near(s.latency.ttft.p50, 0.1 + 0.15 * 80.0 / 140.0));
        QVERIFY(near(s.latency.ttft.p95, 0.5));
        QVERIFY(near(s.latency.e2e.p50, 15.0 + 5.0 * 80.0 / 130.0));
        QVERIFY(near(s.latency.e2e.p95, 28.0));
    }

    void rollingPercentilesFollowTheWindow()
    {
        VllmMetricsReader reader(30.0);
        // t=0: 100 fast requests seen since the server started.
        MetricsSnapshot s0 = reader.read(*PrometheusText::parse(ttftText(100, 100, 100, 100)), 0.0);
        QCOMPARE(s0.latency.ttft.count, 100);
        QVERIFY(near(s0.latency.ttft.p50, 0.05));  // half-way into (0, 0.1]
        // t=10: 100 more, all in (0.5, 1.0]: only they count for the rolling percentiles.
        MetricsSnapshot s1 = reader.read(*PrometheusText::parse(ttftText(100, 100, 200, 200)), 10.0);
        QCOMPARE(s1.latency.ttft.count, 100);
        QVERIFY(near(s1.latency.ttft.p50, 0.75));
        // t=45: nothing new since t=10, which is now the window's start: no sample.
        MetricsSnapshot s2 = reader.read(*PrometheusText::parse(ttftText(100, 100, 200, 200)), 45.0);
        QCOMPARE(s2.latency.ttft.count, 0);
        // A restarted server (counters went down) counts from its own start.
        MetricsSnapshot s3 = reader.read(*PrometheusText::parse(ttftText(0, 4, 4, 4)), 46.0);
        QCOMPARE(s3.latency.ttft.count, 4);
        QVERIFY(near(s3.latency.ttft.p50, 0.3));
    }

    void quantileEdgesAndParseErrors()
    {
        PromHistogram h;
        h.buckets = {{0.5, 0}, {1.0, 0}, {INFINITY, 10}};
        h.count = 10;
        QCOMPARE(*h.quantile(0.5), 1.0);  // all above the last bound: the highest finite bound
        QVERIFY(!PromHistogram().quantile(0.5));
        auto bad = PrometheusText::parse("# TYPE x gauge\nx{a=b} 1\n");
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().find("line 2") != std::string::npos, bad.error().c_str());
        QVERIFY(!PrometheusText::parse("x{a=\"open} 1\n").ok());
        QVERIFY(!PrometheusText::parse("x 12abc\n").ok());
        auto escaped = PrometheusText::parse(
            "\n# a comment\ny{path=\"C:\\\\models\\\\\\\"x\\\"\",n=\"a\\nb\"} -Inf 1700000000000\nz NaN\n");
        QVERIFY(escaped.ok());
        QCOMPARE(escaped->samples().size(), size_t(2));
        QCOMPARE(escaped->samples()[0].label("path"), std::string("C:\\models\\\"x\""));
        QCOMPARE(escaped->samples()[0].label("n"), std::string("a\nb"));
        QVERIFY(std::isinf(escaped->samples()[0].value) && escaped->samples()[0].value < 0);
        QVERIFY(std::isnan(escaped->samples()[1].value));
        // Several engines: gauges and counters add up, KV-cache use is the fullest engine's.
        auto two = PrometheusText::parse(
            "vllm:num_requests_running{engine=\"0\"} 3\nvllm:num_requests_running{engine=\"1\"} 4\n"
            "vllm:kv_cache_usage_perc{engine=\"0\"} 0.2\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.7\n");
        VllmMetricsReader reader;
        const MetricsSnapshot s = reader.read(*two, 1.0);
        QCOMPARE(s.running, 7.0);
        QCOMPARE(s.kvCacheUsage, 0.7);
    }

    void snapshotsBecomeChartSamples()
    {
        const double GiB = 1024.0 * 1024 * 1024;
        EngineStats stats;
        stats.memory.weightsBytes = int64_t(1 * GiB);
        stats.memory.kvCacheBytes = int64_t(15 * GiB);
        stats.memory.activationsBytes = int64_t(0.5 * GiB);
        stats.memory.deviceTotalBytes = int64_t(80 * GiB);
        stats.memory.deviceFreeBytes = int64_t(60 * GiB);
        stats.kvCacheUsage = 0.25;
        stats.numRunning = 6;
        stats.numWaiting = 2;
        stats.numPreemptions = 2;
        stats.promptTokensTotal = 1000;
        stats.generationTokensTotal = 500;
        DashboardSeries series;
        const DashboardSample first = series.append(MetricsSnapshot::fromEngineStats(stats, 100.0));
        // The driver says 20 GiB are in use: 4 GiB of it is neither weights nor KV cache.
        QCOMPARE(*first.value(DashboardField::WeightsGiB), 1.0);
        QCOMPARE(*first.value(DashboardField::KvCacheGiB), 15.0);
        QCOMPARE(*first.value(DashboardField::ActivationsGiB), 4.0);
        QCOMPARE(*first.value(DashboardField::FreeGiB), 60.0);
        QCOMPARE(*first.value(DashboardField::KvCacheUsagePercent), 25.0);
        QCOMPARE(*first.value(DashboardField::Running), 6.0);
        QVERIFY(!first.value(DashboardField::GenerationTokensPerSecond));  // no rate from one snapshot
        QVERIFY(!first.value(DashboardField::TtftP50Ms));                  // no request yet

        stats.promptTokensTotal = 1600;
        stats.generationTokensTotal = 900;
        stats.numPreemptions = 3;
        stats.latency.ttft = {4, 0.020, 0.050};
        stats.latency.e2e = {3, 1.5, 2.0};
        const DashboardSample second = series.append(MetricsSnapshot::fromEngineStats(stats, 102.0));
        QCOMPARE(*second.value(DashboardField::PromptTokensPerSecond), 300.0);
        QCOMPARE(*second.value(DashboardField::GenerationTokensPerSecond), 200.0);
        QCOMPARE(*second.value(DashboardField::PreemptionsPerSecond), 0.5);
        QCOMPARE(*second.value(DashboardField::TtftP95Ms), 50.0);
        QCOMPARE(*second.value(DashboardField::E2eP50Ms), 1500.0);
        QVERIFY(!second.value(DashboardField::ItlP50Ms));

        // Prefix caching off: no hit rate at all; on, hits over queries between the two samples.
        QVERIFY(!second.value(DashboardField::PrefixCacheHitPercent));

        // A counter that went down (the engine reloaded) is a rate of 0, not a negative one.
        stats.generationTokensTotal = 10;
        QCOMPARE(*series.append(MetricsSnapshot::fromEngineStats(stats, 103.0))
                      .value(DashboardField::GenerationTokensPerSecond),
                 0.0);

        const std::string csv = series.toCsv();
        const QStringList lines = QString::fromStdString(csv).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);
        QVERIFY(lines[0].startsWith(QStringLiteral("time,unix_seconds,weights_gib,kv_cache_gib")));
        QCOMPARE(lines[0].count(QLatin1Char(',')), 1 + kNumDashboardFields);
        QVERIFY2(lines[2].startsWith(QStringLiteral("1970-01-01T00:01:42Z,102.000,1,15,4,60,25,6,2,0.5,")),
                 qPrintable(lines[2]));
        QCOMPARE(lines[1].split(QLatin1Char(',')).value(1 + 1 + int(DashboardField::TtftP50Ms)),
                 QString());  // empty: no value

        // Samples older than the longest window go.
        series.append(MetricsSnapshot::fromEngineStats(stats, 100.0 + DashboardSeries::kMaxAgeSeconds + 1.5));
        QCOMPARE(series.samples().front().timeSeconds, 102.0);
        QCOMPARE(int(series.since(103.0).size()), 2);

        // A server with rates but no counters (old vLLM): its rates are drawn as they are.
        DashboardSeries remote;
        MetricsSnapshot old;
        old.timeSeconds = 5;
        old.promptTokensPerSecond = 1843.2;
        remote.append(old);
        QCOMPARE(*remote.latest()->value(DashboardField::PromptTokensPerSecond), 1843.2);
    }

    void prefixCacheHitRateIsPerInterval()
    {
        EngineStats stats;
        stats.prefixCachingEnabled = true;
        stats.prefixCacheQueries = 1000;
        stats.prefixCacheHits = 100;
        DashboardSeries series;
        QVERIFY(
            !series.append(MetricsSnapshot::fromEngineStats(stats, 10.0)).value(DashboardField::PrefixCacheHitPercent));
        stats.prefixCacheQueries = 1400;  // 400 looked up, 300 found
        stats.prefixCacheHits = 400;
        QCOMPARE(
            *series.append(MetricsSnapshot::fromEngineStats(stats, 11.0)).value(DashboardField::PrefixCacheHitPercent),
            75.0);
        // Nothing looked up in an interval: a gap, not 0%.
        QVERIFY(
            !series.append(MetricsSnapshot::fromEngineStats(stats, 12.0)).value(DashboardField::PrefixCacheHitPercent));

        // The same from a server's /metrics.
        const std::string text = "vllm:prefix_cache_queries_total{model_name=\"m\",engine=\"0\"} 200.0\n"
                                 "vllm:prefix_cache_hits_total{model_name=\"m\",engine=\"0\"} 50.0\n";
        auto parsed = PrometheusText::parse(text);
        QVERIFY(parsed.ok());
        VllmMetricsReader reader;
        const MetricsSnapshot remote = reader.read(*parsed, 1.0);
        QCOMPARE(*remote.prefixCacheQueriesTotal, 200.0);
        QCOMPARE(*remote.prefixCacheHitsTotal, 50.0);
    }

    void remoteSourceReadsAServerOverQtNetwork()
    {
        TinyHttpServer server(QByteArray::fromStdString(fixture("vllm_0.10_metrics.txt")));
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        RemoteMetricsSource source;
        source.setServer(QStringLiteral("127.0.0.1:%1/v1/").arg(server.serverPort()), QStringLiteral("sk-test"));
        QCOMPARE(source.server().toString(), QStringLiteral("http://127.0.0.1:%1").arg(server.serverPort()));
        QSignalSpy snapshots(&source, &RemoteMetricsSource::snapshotReady);
        QSignalSpy health(&source, &RemoteMetricsSource::healthChanged);
        source.poll();
        source.poll();  // ignored: one poll at a time
        QVERIFY(snapshots.wait(30000));
        QCOMPARE(server.paths, (QStringList{QStringLiteral("/health"), QStringLiteral("/metrics")}));
        QCOMPARE(server.authorization.value(1), QStringLiteral("Bearer sk-test"));
        QCOMPARE(health.count(), 1);
        QCOMPARE(health[0][0].toBool(), true);
        const auto s = snapshots[0][0].value<MetricsSnapshot>();
        QCOMPARE(s.running, 12.0);
        QCOMPARE(source.modelName(), QStringLiteral("baidu/ERNIE-4.5-0.3B-PT"));

        server.close();
        QSignalSpy failed(&source, &RemoteMetricsSource::failed);
        source.setServer(QStringLiteral("http://127.0.0.1:1"));
        source.poll();
        QVERIFY(failed.wait(30000));
        QVERIFY(failed[0][0].toString().contains(QStringLiteral("127.0.0.1:1")));
    }

    void profilesRoundTripThroughBrookServesYaml()
    {
        std::mt19937 rng(20261129);
        const char* devices[] = {"auto", "cpu", "cuda"};
        const char* dtypes[] = {"auto", "bfloat16", "float16", "float32"};
        const char* quantizations[] = {"", "int8", "int4", "awq"};
        for (int round = 0; round < 20; ++round) {
            ServingProfile p;
            p.name = QStringLiteral("profile %1").arg(round);
            LaunchOptions& o = p.options;
            o.device = devices[rng() % 3];
            o.dtype = dtypes[rng() % 4];
            o.quantization = quantizations[rng() % 4];
            o.maxModelLen = int(rng() % 131072) + 1;
            o.maxNumSeqs = int(rng() % 1024) + 1;
            o.maxNumBatchedTokens = int(rng() % 65536) + 1;
            o.gpuMemoryUtilization = double(rng() % 95 + 5) / 100.0;
            o.cpuKvCacheBytes = int64_t(rng() % (64LL << 30)) + 1;
            o.blockSize = (8 << (rng() % 3));
            o.enforceEager = rng() % 2;
            o.schedulingPolicy = rng() % 2 ? "fcfs" : "priority";
            const QString model = QStringLiteral("/models/My \"ERNIE\": 0.3B\\%1").arg(round);
            const QString yaml = p.toServeYaml(model);
            QString readModel;
            auto back = ServingProfile::fromServeYaml(yaml, p.name, &readModel);
            QVERIFY2(back.ok(), back.ok() ? "" : (back.error() + "\n" + yaml.toStdString()).c_str());
            QVERIFY2(ServingProfile::sameKnobs(back->options, o), qPrintable(yaml));
            QCOMPARE(readModel, model);
            // What brook-serve itself gets from the file.
            ServeConfig config;
            QVERIFY(applyServeConfigYaml(yaml.toStdString(), "profile.yaml", config).ok());
            QCOMPARE(config.model, model.toStdString());
            QCOMPARE(config.launch.maxNumSeqs, o.maxNumSeqs);
            QCOMPARE(config.launch.blockSize, o.blockSize);
            QCOMPARE(config.launch.enforceEager, o.enforceEager);
            QCOMPARE(int64_t(config.cpuKvCacheSpaceGiB * double(1LL << 30)), o.cpuKvCacheBytes);
            // And the app's own storage.
            const ServingProfile stored = ServingProfile::fromJson(p.toJson());
            QCOMPARE(stored.name, p.name);
            QVERIFY(ServingProfile::sameKnobs(stored.options, o));
        }
        // A vLLM-style file (underscores, scheduler_config) imports; a typo is refused by name.
        auto vllm = ServingProfile::fromServeYaml(
            "model: baidu/ERNIE-4.5-0.3B-PT\ngpu_memory_utilization: 0.85\nscheduler_config:\n  max_num_seqs: 48\n  policy: priority\n"
            "enforce_eager: true\n",
            QStringLiteral("vllm"));
        QVERIFY(vllm.ok());
        QCOMPARE(vllm->options.maxNumSeqs, 48);
        QCOMPARE(vllm->options.schedulingPolicy, std::string("priority"));
        QCOMPARE(vllm->options.gpuMemoryUtilization, 0.85);
        QCOMPARE(vllm->options.maxModelLen, 0);  // not given: the model's own
        auto typo = ServingProfile::fromServeYaml("max_num_seq: 4\n", QStringLiteral("typo"));
        QVERIFY(!typo.ok());
        QVERIFY2(typo.error().find("max_num_seq") != std::string::npos, typo.error().c_str());
        QVERIFY(!ServingProfile::fromServeYaml("block-size: 12\n", QStringLiteral("bad")).ok());
    }
};

QTEST_GUILESS_MAIN(TestDashboardData)
#include "test_dashboard_data.moc"
