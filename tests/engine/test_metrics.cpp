// Tests for MetricsRegistry and EngineMetrics: the text format of each metric type as
// prometheus_client writes it, label escaping, histogram buckets, vLLM's names and bucket
// lists, and exact counts under concurrent updates.
#include "engine/engine_metrics.h"
#include "engine/metrics_registry.h"

#include <QtTest/QtTest>

#include <random>
#include <sstream>
#include <thread>

using namespace brook;

namespace {

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::vector<std::string> linesStartingWith(const std::string& text, const std::string& prefix)
{
    std::vector<std::string> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        if (line.rfind(prefix, 0) == 0) lines.push_back(line);
    return lines;
}

}  // namespace

class TestMetrics : public QObject {
    Q_OBJECT

private slots:
    void numberFormatting()
    {
        QCOMPARE(MetricsRegistry::formatNumber(1.0), std::string("1.0"));
        QCOMPARE(MetricsRegistry::formatNumber(12.0), std::string("12.0"));
        QCOMPARE(MetricsRegistry::formatNumber(0.25), std::string("0.25"));
        QCOMPARE(MetricsRegistry::formatNumber(0.0), std::string("0.0"));
        QCOMPARE(MetricsRegistry::formatNumber(-3.5), std::string("-3.5"));
        QCOMPARE(MetricsRegistry::formatNumber(0.1 + 0.2), std::string("0.30000000000000004"));
        QCOMPARE(MetricsRegistry::formatNumber(0.0001), std::string("0.0001"));
        QCOMPARE(MetricsRegistry::formatNumber(1e-05), std::string("1e-05"));
        QCOMPARE(MetricsRegistry::formatNumber(2.5e-07), std::string("2.5e-07"));
        QCOMPARE(MetricsRegistry::formatNumber(7680.0), std::string("7680.0"));
        QCOMPARE(MetricsRegistry::formatNumber(100000.0), std::string("100000.0"));
        QCOMPARE(MetricsRegistry::formatNumber(1234567.0), std::string("1.234567e+06"));
        QCOMPARE(MetricsRegistry::formatNumber(10000000.0), std::string("1e+07"));
        QCOMPARE(MetricsRegistry::formatNumber(1e16), std::string("1e+16"));
        QCOMPARE(MetricsRegistry::formatNumber(std::numeric_limits<double>::infinity()), std::string("+Inf"));
        QCOMPARE(MetricsRegistry::formatNumber(-std::numeric_limits<double>::infinity()), std::string("-Inf"));
        QCOMPARE(MetricsRegistry::formatNumber(std::nan("")), std::string("NaN"));
        QCOMPARE(MetricsRegistry::pythonFloatRepr(0.9), std::string("0.9"));
        QCOMPARE(MetricsRegistry::pythonFloatRepr(1234567.0), std::string("1234567.0"));
    }

    void counterRendering()
    {
        MetricsRegistry registry;
        auto& counter = registry.counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
                                         {{"model_name", "m"}, {"engine", "0"}});
        counter.inc(10);
        counter.inc();
        counter.inc(1.0);
        counter.inc(-5);  // ignored: counters only go up
        QCOMPARE(counter.value(), 12.0);
        const std::string text = registry.render();
        QCOMPARE(text, std::string("# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"
                                   "# TYPE vllm:prompt_tokens_total counter\n"
                                   "vllm:prompt_tokens_total{model_name=\"m\",engine=\"0\"} 12.0\n"));
        // Asking again returns the same series.
        QCOMPARE(&registry.counter("vllm:prompt_tokens", "x", {{"model_name", "m"}, {"engine", "0"}}), &counter);
    }

    void gaugeRendering()
    {
        MetricsRegistry registry;
        registry.gauge("g", "A gauge.", {}).set(0.25);
        registry.gauge("h", "Help with \\ and\nnewline.", {{"a", "1"}}).set(-2.0);
        const std::string text = registry.render();
        QCOMPARE(text, std::string("# HELP g A gauge.\n# TYPE g gauge\ng 0.25\n"
                                   "# HELP h Help with \\\\ and\\nnewline.\n# TYPE h gauge\nh{a=\"1\"} -2.0\n"));
    }

    void labelEscaping()
    {
        MetricsRegistry registry;
        registry.gauge("g", "h", {{"path", "C:\\dir \"quoted\"\nnext"}}).set(1);
        QVERIFY(contains(registry.render(), "g{path=\"C:\\\\dir \\\"quoted\\\"\\nnext\"} 1.0\n"));
    }

    void histogramRendering()
    {
        MetricsRegistry registry;
        auto& histogram = registry.histogram("lat", "Latency.", {{"engine", "0"}}, {5.0, 0.1, 1.0});
        for (double value : {0.05, 0.1, 0.5, 3.0, 7.0}) histogram.observe(value);
        QCOMPARE(histogram.count(), uint64_t{5});
        QVERIFY(std::abs(histogram.sum() - 10.65) < 1e-12);
        QCOMPARE(histogram.cumulativeCounts(), (std::vector<uint64_t>{2, 3, 4, 5}));
        const std::string text = registry.render();
        const std::string expected = "# HELP lat Latency.\n# TYPE lat histogram\n"
                                     "lat_bucket{engine=\"0\",le=\"0.1\"} 2.0\n"
                                     "lat_bucket{engine=\"0\",le=\"1.0\"} 3.0\n"
                                     "lat_bucket{engine=\"0\",le=\"5.0\"} 4.0\n"
                                     "lat_bucket{engine=\"0\",le=\"+Inf\"} 5.0\n"
                                     "lat_count{engine=\"0\"} 5.0\n"
                                     "lat_sum{engine=\"0\"} " +
                                     MetricsRegistry::formatNumber(histogram.sum()) + "\n";
        QCOMPARE(text, expected);
    }

    void familiesInRegistrationOrder()
    {
        MetricsRegistry registry;
        registry.gauge("b_first", "h", {{"x", "1"}}).set(1);
        registry.counter("a_second", "h", {{"x", "1"}}).inc();
        registry.gauge("b_first", "h", {{"x", "2"}}).set(2);  // joins its family, not the end
        const std::string text = registry.render();
        const size_t first1 = text.find("b_first{x=\"1\"}");
        const size_t first2 = text.find("b_first{x=\"2\"}");
        const size_t second = text.find("# HELP a_second_total");
        QVERIFY(first1 < first2 && first2 < second && second != std::string::npos);
        // Misuse (same name, other type) is logged and kept out of the output, not a crash.
        registry.histogram("b_first", "h", {}, {1.0}).observe(3);
        QVERIFY(!contains(registry.render(), "b_first_bucket"));
        QVERIFY(registry.removeSeries("b_first", {{"x", "1"}}));
        QVERIFY(!contains(registry.render(), "b_first{x=\"1\"}"));
        QVERIFY(!registry.removeSeries("b_first", {{"x", "1"}}));
    }

    void engineMetricsNamesAndBuckets()
    {
        EngineMetrics metrics("ernie-4.5", 2048);
        const std::string fresh = metrics.renderPrometheus();
        const std::string labels = "model_name=\"ernie-4.5\",engine=\"0\"";
        for (const char* gauge : {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                                  "vllm:gpu_cache_usage_perc"}) {
            QVERIFY2(contains(fresh, std::string("# TYPE ") + gauge + " gauge\n"), gauge);
            QVERIFY2(contains(fresh, std::string(gauge) + "{" + labels + "} 0.0\n"), gauge);
        }
        for (const char* counter : {"vllm:num_preemptions", "vllm:prompt_tokens", "vllm:generation_tokens"}) {
            QVERIFY2(contains(fresh, std::string("# TYPE ") + counter + "_total counter\n"), counter);
            QVERIFY2(contains(fresh, std::string(counter) + "_total{" + labels + "} 0.0\n"), counter);
        }
        for (const char* reason : {"stop", "length", "abort"})
            QVERIFY(
                contains(fresh, "vllm:request_success_total{" + labels + ",finished_reason=\"" + reason + "\"} 0.0\n"));
        const std::vector<std::string> histograms = {"vllm:iteration_tokens_total",
                                                     "vllm:request_prompt_tokens",
                                                     "vllm:request_generation_tokens",
                                                     "vllm:request_max_num_generation_tokens",
                                                     "vllm:request_params_max_tokens",
                                                     "vllm:request_params_n",
                                                     "vllm:time_to_first_token_seconds",
                                                     "vllm:inter_token_latency_seconds",
                                                     "vllm:request_time_per_output_token_seconds",
                                                     "vllm:e2e_request_latency_seconds",
                                                     "vllm:request_queue_time_seconds",
                                                     "vllm:request_inference_time_seconds",
                                                     "vllm:request_prefill_time_seconds",
                                                     "vllm:request_decode_time_seconds"};
        for (const auto& name : histograms) {
            QVERIFY2(contains(fresh, "# TYPE " + name + " histogram\n"), name.c_str());
            QVERIFY2(contains(fresh, name + "_bucket{" + labels + ",le=\"+Inf\"} 0.0\n"), name.c_str());
            QVERIFY2(contains(fresh, name + "_count{" + labels + "} 0.0\n"), name.c_str());
        }

        auto bucketBounds = [&](const std::string& name) {
            std::string bounds;
            for (const auto& line : linesStartingWith(fresh, name + "_bucket{")) {
                const size_t le = line.find("le=\"") + 4;
                bounds += line.substr(le, line.find('"', le) - le) + ",";
            }
            return bounds;
        };
        // 1-2-5 up to max_model_len = 2048: 2000 is in, 5000 is not.
        const std::string oneTwoFive = "1.0,2.0,5.0,10.0,20.0,50.0,100.0,200.0,500.0,1000.0,2000.0,+Inf,";
        QCOMPARE(bucketBounds("vllm:request_prompt_tokens"), oneTwoFive);
        QCOMPARE(bucketBounds("vllm:request_params_max_tokens"), oneTwoFive);
        QCOMPARE(bucketBounds("vllm:request_params_n"), std::string("1.0,2.0,5.0,10.0,20.0,+Inf,"));
        QCOMPARE(bucketBounds("vllm:iteration_tokens_total"),
                 std::string("1.0,8.0,16.0,32.0,64.0,128.0,256.0,512.0,1024.0,2048.0,4096.0,8192.0,16384.0,+Inf,"));
        QCOMPARE(bucketBounds("vllm:time_to_first_token_seconds"),
                 std::string("0.001,0.005,0.01,0.02,0.04,0.06,0.08,0.1,0.25,0.5,0.75,1.0,2.5,5.0,7.5,10.0,20.0,"
                             "40.0,80.0,160.0,640.0,2560.0,+Inf,"));
        const std::string tokenLatency =
            "0.01,0.025,0.05,0.075,0.1,0.15,0.2,0.3,0.4,0.5,0.75,1.0,2.5,5.0,7.5,10.0,20.0,40.0,80.0,+Inf,";
        QCOMPARE(bucketBounds("vllm:inter_token_latency_seconds"), tokenLatency);
        QCOMPARE(bucketBounds("vllm:request_time_per_output_token_seconds"), tokenLatency);
        const std::string requestLatency = "0.3,0.5,0.8,1.0,1.5,2.0,2.5,5.0,10.0,15.0,20.0,30.0,40.0,50.0,60.0,"
                                           "120.0,240.0,480.0,960.0,1920.0,7680.0,+Inf,";
        for (const char* name : {"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
                                 "vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds",
                                 "vllm:request_decode_time_seconds"})
            QCOMPARE(bucketBounds(name), requestLatency);

        EngineMetrics longer("m", 5000);
        QVERIFY(contains(longer.renderPrometheus(), "le=\"5000.0\""));
        QVERIFY(!contains(longer.renderPrometheus(), "le=\"10000.0\""));
    }

    void engineMetricsUpdates()
    {
        EngineMetrics metrics("m", 4096, "1");
        const std::string labels = "model_name=\"m\",engine=\"1\"";
        metrics.setSchedulerState(3, 2, 0.5);
        metrics.onStep(100, 3);
        metrics.onStep(0, 4);
        metrics.onPreemption();
        metrics.onFirstToken(0.03);
        metrics.onInterTokenLatency(0.02);
        FinishedRequestTimings timings;
        timings.e2eSeconds = 3.0;
        timings.queueSeconds = 0.5;
        timings.prefillSeconds = 0.25;
        timings.decodeSeconds = 2.0;
        timings.inferenceSeconds = 2.25;
        timings.promptTokens = 100;
        timings.generationTokens = 5;
        timings.maxTokensParam = 64;
        metrics.onRequestFinished(FinishReason::Length, timings);
        timings.generationTokens = 1;  // no TPOT for a single token
        metrics.onRequestFinished(FinishReason::Abort, timings);
        metrics.setCacheConfig(16, 1000, 0.9, "auto");
        metrics.setCacheConfig(16, 1200, 0.9, "auto");  // replaces the old series

        const std::string text = metrics.renderPrometheus();
        QVERIFY(contains(text, "vllm:num_requests_running{" + labels + "} 3.0\n"));
        QVERIFY(contains(text, "vllm:num_requests_waiting{" + labels + "} 2.0\n"));
        QVERIFY(contains(text, "vllm:kv_cache_usage_perc{" + labels + "} 0.5\n"));
        QVERIFY(contains(text, "vllm:gpu_cache_usage_perc{" + labels + "} 0.5\n"));
        QVERIFY(contains(text, "vllm:prompt_tokens_total{" + labels + "} 100.0\n"));
        QVERIFY(contains(text, "vllm:generation_tokens_total{" + labels + "} 7.0\n"));
        QVERIFY(contains(text, "vllm:num_preemptions_total{" + labels + "} 1.0\n"));
        QVERIFY(contains(text, "vllm:iteration_tokens_total_bucket{" + labels + ",le=\"1.0\"} 0.0\n"));
        QVERIFY(contains(text, "vllm:iteration_tokens_total_bucket{" + labels + ",le=\"8.0\"} 1.0\n"));
        QVERIFY(contains(text, "vllm:iteration_tokens_total_bucket{" + labels + ",le=\"128.0\"} 2.0\n"));
        QVERIFY(contains(text, "vllm:request_success_total{" + labels + ",finished_reason=\"length\"} 1.0\n"));
        QVERIFY(contains(text, "vllm:request_success_total{" + labels + ",finished_reason=\"abort\"} 1.0\n"));
        QVERIFY(contains(text, "vllm:request_success_total{" + labels + ",finished_reason=\"stop\"} 0.0\n"));
        QVERIFY(contains(text, "vllm:request_time_per_output_token_seconds_count{" + labels + "} 1.0\n"));
        QVERIFY(contains(text, "vllm:request_time_per_output_token_seconds_sum{" + labels + "} 0.5\n"));
        QVERIFY(contains(text, "vllm:e2e_request_latency_seconds_sum{" + labels + "} 6.0\n"));
        QVERIFY(contains(text, "vllm:request_params_max_tokens_bucket{" + labels + ",le=\"50.0\"} 0.0\n"));
        QVERIFY(contains(text, "vllm:request_params_max_tokens_bucket{" + labels + ",le=\"100.0\"} 2.0\n"));
        QVERIFY(contains(text, "vllm:request_params_n_bucket{" + labels + ",le=\"1.0\"} 2.0\n"));
        QVERIFY(contains(text, "vllm:time_to_first_token_seconds_bucket{" + labels + ",le=\"0.02\"} 0.0\n"));
        QVERIFY(contains(text, "vllm:time_to_first_token_seconds_bucket{" + labels + ",le=\"0.04\"} 1.0\n"));
        QVERIFY(contains(text, "vllm:inter_token_latency_seconds_count{" + labels + "} 1.0\n"));
        QVERIFY(contains(text, "# TYPE vllm:cache_config_info gauge\n"));
        QVERIFY(contains(text, "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\","
                               "gpu_memory_utilization=\"0.9\",num_gpu_blocks=\"1200\"," +
                                   labels + "} 1.0\n"));
        QVERIFY(!contains(text, "num_gpu_blocks=\"1000\""));
        QCOMPARE(std::string(finishReasonName(FinishReason::Stop)), std::string("stop"));
    }

    void concurrentUpdatesAreExact()
    {
        EngineMetrics metrics("m", 2048);
        MetricsRegistry& registry = metrics.registry();
        constexpr int kThreads = 8;
        constexpr int kIterations = 20000;
        std::vector<std::thread> threads;
        std::atomic<bool> go{false};
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                while (!go.load()) std::this_thread::yield();
                auto& mine = registry.counter("per_thread", "h", {{"thread", std::to_string(t)}});
                for (int i = 0; i < kIterations; ++i) {
                    metrics.onStep(1, 2);
                    metrics.onInterTokenLatency(0.001 * (i % 100));
                    mine.inc();
                    if (i % 2000 == 0) (void)metrics.renderPrometheus();  // readers race with writers
                }
            });
        }
        go = true;
        for (auto& thread : threads) thread.join();
        const std::string text = metrics.renderPrometheus();
        const double total = static_cast<double>(kThreads) * kIterations;
        const std::string labels = "model_name=\"m\",engine=\"0\"";
        QVERIFY(
            contains(text, "vllm:prompt_tokens_total{" + labels + "} " + MetricsRegistry::formatNumber(total) + "\n"));
        QVERIFY(contains(text, "vllm:generation_tokens_total{" + labels + "} " +
                                   MetricsRegistry::formatNumber(2 * total) + "\n"));
        QVERIFY(contains(text, "vllm:iteration_tokens_total_count{" + labels + "} " +
                                   MetricsRegistry::formatNumber(total) + "\n"));
        QVERIFY(contains(text, "vllm:inter_token_latency_seconds_bucket{" + labels + ",le=\"+Inf\"} " +
                                   MetricsRegistry::formatNumber(total) + "\n"));
        for (int t = 0; t < kThreads; ++t)
            QVERIFY(contains(text, "per_thread_total{thread=\"" + std::to_string(t) + "\"} " +
                                       MetricsRegistry::formatNumber(kIterations) + "\n"));
    }
};

QTEST_APPLESS_MAIN(TestMetrics)
#include "test_metrics.moc"
