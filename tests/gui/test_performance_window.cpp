// The performance window on the tiny model inside the real MainWindow: the dashboard polls on a
// timer and draws exactly its samples (window, pause, hover, CSV/PNG), the planner follows the
// knobs before anything is applied and its suggested fix fits, profiles save/load/export as
// brook-serve YAML, applying new parameters during a chat reloads the engine and keeps the
// conversation, the load generator (ServeBenchmark, as brook-bench serve) runs against the local
// endpoint, the request inspector cancels a chat's request, two profiles compare side by side,
// the dashboard watches a server over /metrics, and the window speaks Chinese.
// With BROOK_SCREENSHOT_DIR set it also writes the docs' screenshots of the window under load.
#include "gui_test_support.h"

#include "engine/capacity_planner.h"
#include "engine/tokenizer.h"
#include "gui/shell/app_settings.h"
#include "gui/performance/capacity_plan_view.h"
#include "gui/chat/chat_area.h"
#include "gui/chat/chat_generator.h"
#include "gui/chat/chat_pane.h"
#include "gui/chat/chat_session.h"
#include "gui/shell/endpoint_panel.h"
#include "gui/shell/engine_host.h"
#include "gui/shell/gui_log_sink.h"
#include "gui/shell/gui_terms.h"
#include "gui/chat/history_store.h"
#include "gui/performance/load_generator.h"
#include "gui/performance/load_generator_panel.h"
#include "gui/shell/local_endpoint.h"
#include "gui/shell/main_window.h"
#include "gui/performance/performance_dashboard.h"
#include "gui/performance/performance_window.h"
#include "gui/performance/remote_metrics_source.h"
#include "gui/performance/request_inspector.h"
#include "gui/performance/serving_parameters_panel.h"
#include "gui/shell/theme_manager.h"
#include "gui/performance/time_series_chart.h"
#include "gui/shell/translation_manager.h"
#include "server/serve_config.h"

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QImage>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include <random>

#include <spdlog/spdlog.h>

using namespace brook;
using namespace brook::guitest;

class TestPerformanceWindow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::unique_ptr<AppSettings> m_settings;
    HistoryStore m_store;
    std::unique_ptr<TranslationManager> m_translations;
    std::unique_ptr<ThemeManager> m_theme;
    std::shared_ptr<GuiLogSink> m_sink;
    std::unique_ptr<MainWindow> m_window;
    int m_forcedTokens = 0;

    PerformanceWindow* perf() const { return m_window->performanceWindow(); }
    PerformanceDashboard* dashboard() const { return perf()->dashboard(); }
    ServingParametersPanel* serving() const { return perf()->servingPanel(); }
    LoadGeneratorPanel* load() const { return perf()->loadPanel(); }
    Engine* engine() const { return m_window->engineHost().engine(); }
    ChatPane* pane() const { return m_window->chatArea()->currentPane(); }

    void setKnobs(const std::function<void(LaunchOptions&)>& change)
    {
        LaunchOptions o = serving()->options();
        change(o);
        serving()->setOptions(o);
    }

    bool reloadWith(const std::function<void(LaunchOptions&)>& change)
    {
        QSignalSpy loaded(&m_window->engineHost(), &EngineHost::modelLoaded);
        setKnobs(change);
        QTest::mouseClick(serving()->findChild<QPushButton*>(QStringLiteral("applyServing")), Qt::LeftButton);
        return waitFor([&] { return loaded.count() == 1; }, 30000);
    }

    void configureLoad(int requests, int users, int inputLen, int outputLen, double rate = 0)
    {
        ServeBenchOptions o = load()->benchOptions();
        o.numPrompts = requests;
        o.maxConcurrency = users;
        o.randomInputLen = inputLen;
        o.randomOutputLen = outputLen;
        o.randomRangeRatio = 0;
        o.requestRate = rate > 0 ? rate : std::numeric_limits<double>::infinity();
        o.ignoreEos = true;
        o.endpoint = "/v1/completions";
        load()->setBenchOptions(o);
        load()->setTargetUrl({});
    }

private slots:
    void initTestCase()
    {
        m_settings = std::make_unique<AppSettings>(m_dir.filePath("brook.ini"));
        m_settings->setLanguage(QStringLiteral("en"));
        LaunchOptions start = m_settings->servingOptions();
        start.device = "cpu";
        start.maxModelLen = 4096;
        start.cpuKvCacheBytes = 64LL << 20;
        m_settings->setServingOptions(start);
        QVERIFY(m_store.open(m_dir.filePath("history.sqlite")).ok());
        m_translations = std::make_unique<TranslationManager>();
        m_theme = std::make_unique<ThemeManager>();
        m_sink = std::make_shared<GuiLogSink>();
        spdlog::default_logger()->sinks().push_back(m_sink);
        m_window = std::make_unique<MainWindow>(*m_settings, m_store, *m_translations, *m_theme, m_sink);
        m_window->show();
        m_window->endpointPanel()->setSettings({QStringLiteral("127.0.0.1"), 0, QString()});  // any free port
        m_window->generator().setRequestHook([this](GenerationRequest& r) {
            if (m_forcedTokens > 0) {
                r.params.ignoreEos = true;
                r.params.maxTokens = m_forcedTokens;
            }
        });
        QSignalSpy loaded(&m_window->engineHost(), &EngineHost::modelLoaded);
        m_window->loadModel(QString::fromStdString(testsupport::tinyModelDir().string()));
        QVERIFY(waitFor([&] { return loaded.count() == 1; }));
        m_window->showPerformance();
        QVERIFY(perf()->isVisible());
    }

    void dashboardPollsOnATimerAndDrawsItsSamples()
    {
        const int before = int(dashboard()->series().samples().size());
        QElapsedTimer timer;
        timer.start();
        // A chat generating hundreds of tokens meanwhile: still one sample per interval.
        m_forcedTokens = 600;
        pane()->input()->setPlainText(QStringLiteral("fill the charts"));
        pane()->sendInput();
        QVERIFY(waitFor([&] { return int(dashboard()->series().samples().size()) >= before + 3; }, 10000));
        QVERIFY(waitFor([&] { return !pane()->session()->isGenerating(); }));
        const int polls = int(dashboard()->series().samples().size()) - before;
        QVERIFY2(polls <= timer.elapsed() / PerformanceDashboard::kIntervalMs + 2, qPrintable(QString::number(polls)));

        dashboard()->pollNow();
        const std::vector<DashboardSample> samples = dashboard()->series().since(0);
        const QList<TimeSeriesChart*> charts = dashboard()->charts();
        QCOMPARE(charts.size(), 6);
        // Requests chart, running line: one point per sample, at its time, with its value.
        const QList<QPointF> running = charts[2]->points(0);
        QCOMPARE(running.size(), qsizetype(samples.size()));
        QCOMPARE(running.last().x(), samples.back().timeSeconds * 1000.0);
        QCOMPARE(running.last().y(), *samples.back().value(DashboardField::Running));
        QCOMPARE(charts[1]->axisMaximum(), 100.0);  // KV cache percent
        // Memory is stacked: the top edge of the last area is the sum of all four fields.
        const QList<QPointF> top = charts[0]->points(3);
        const DashboardSample& last = samples.back();
        const double sum = *last.value(DashboardField::WeightsGiB) + *last.value(DashboardField::KvCacheGiB) +
                           *last.value(DashboardField::ActivationsGiB) + *last.value(DashboardField::FreeGiB);
        QVERIFY(sum < 1.0);  // the tiny model takes megabytes: the chart draws MiB
        QVERIFY(qAbs(top.last().y() - sum * 1024.0) < 1e-6);
        QVERIFY(charts[0]->hoverText(last.timeSeconds * 1000.0).contains(QStringLiteral(" MiB")));
        QVERIFY(*last.value(DashboardField::WeightsGiB) > 0);
        // The chat's tokens show up as a generation rate and as latency percentiles.
        bool sawRate = false;
        for (const DashboardSample& s : samples)
            sawRate |= s.value(DashboardField::GenerationTokensPerSecond).value_or(0) > 0;
        QVERIFY(sawRate);
        QVERIFY(last.value(DashboardField::TtftP50Ms).has_value());
        QVERIFY(*last.value(DashboardField::ItlP95Ms) >= *last.value(DashboardField::ItlP50Ms));
        QVERIFY(dashboard()->statusText().contains(QStringLiteral("tokens/s")));
    }

    void windowPauseHoverAndExport()
    {
        dashboard()->setWindowSeconds(60);
        QCOMPARE(dashboard()->windowSeconds(), 60);
        dashboard()->setPaused(true);
        const int frozen = dashboard()->charts()[2]->pointCount(0);
        const size_t collected = dashboard()->series().samples().size();
        QVERIFY(waitFor([&] { return dashboard()->series().samples().size() >= collected + 2; }));
        QCOMPARE(dashboard()->charts()[2]->pointCount(0), frozen);  // sampling goes on, the chart holds still
        QVERIFY(dashboard()->statusText().contains(QStringLiteral("paused")));
        dashboard()->setPaused(false);
        QVERIFY(dashboard()->charts()[2]->pointCount(0) > frozen);

        const DashboardSample last = *dashboard()->series().latest();
        const QString hover = dashboard()->charts()[2]->hoverText(last.timeSeconds * 1000.0 + 100);
        QVERIFY2(hover.contains(QStringLiteral("Running: %1").arg(*last.value(DashboardField::Running), 0, 'f', 1)),
                 qPrintable(hover));
        QVERIFY(hover.contains(QStringLiteral("Waiting: ")));

        QTemporaryDir out;
        QString error;
        QVERIFY(dashboard()->exportCsv(out.filePath("d.csv"), &error));
        QFile csv(out.filePath("d.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), int(dashboard()->series().samples().size()) + 1);
        QVERIFY(lines[0].contains(QStringLiteral("generation_tokens_per_s")));
        QVERIFY(dashboard()->exportPng(out.filePath("d.png")));
        const QImage png(out.filePath("d.png"));
        QVERIFY(!png.isNull() && png.width() > 200);
        QVERIFY(!dashboard()->exportCsv(out.filePath("missing/dir/d.csv"), &error));
        dashboard()->setWindowSeconds(300);
    }

    void thePlannerFollowsTheKnobsBeforeAnythingIsApplied()
    {
        const int loadedSeqs = engine()->config().scheduler.maxNumSeqs;
        setKnobs([](LaunchOptions& o) {
            o.device = "cuda";
            o.maxModelLen = 4096;
            o.maxNumSeqs = 32;
            o.gpuMemoryUtilization = 0.9;
        });
        serving()->setPlanDeviceGiB(80);
        CapacityPlanView* view = serving()->planView();
        QCOMPARE(view->plan().concurrentSequences, 32);
        QCOMPARE(view->plan().binding, CapacityLimit::MaxNumSeqs);
        // Moving a knob re-plans at once: the spin box, not an apply.
        serving()->findChild<QSpinBox*>(QStringLiteral("maxNumSeqs"))->setValue(48);
        QCOMPARE(view->plan().concurrentSequences, 48);
        QVERIFY(view->bindingText().contains(QStringLiteral("max-num-seqs")));
        QVERIFY(view->warningText().isEmpty());
        QCOMPARE(engine()->config().scheduler.maxNumSeqs, loadedSeqs);

        // A small GPU: the tiny model's plan cannot hold one long request; the suggested fix fits.
        serving()->setPlanDeviceGiB(1);
        setKnobs([](LaunchOptions& o) {
            o.gpuMemoryUtilization = 0.5;
            o.maxNumBatchedTokens = 8192;
            o.maxNumSeqs = 256;
        });
        QVERIFY(!view->plan().fits());
        QVERIFY(!view->warningText().isEmpty());
        auto* fix = view->findChild<QPushButton*>(QStringLiteral("planFixUtilization"));
        QVERIFY(!fix->isHidden());
        const double suggested = view->plan().suggestedGpuMemoryUtilization;
        QVERIFY(suggested > 0.5 && suggested <= 1.0);
        QTest::mouseClick(fix, Qt::LeftButton);
        QCOMPARE(serving()->findChild<QDoubleSpinBox*>(QStringLiteral("gpuMemoryUtilization"))->value(), suggested);
        QVERIFY2(view->plan().fits(), qPrintable(view->summaryText()));
        QVERIFY(view->warningText().isEmpty());
        QCOMPARE(engine()->config().scheduler.maxNumSeqs, loadedSeqs);
        // Back to what runs here.
        setKnobs([](LaunchOptions& o) {
            o.device = "cpu";
            o.maxNumSeqs = 64;
            o.maxNumBatchedTokens = 8192;
        });
        QVERIFY(view->plan().fits());
        QVERIFY(view->summaryText().contains(QStringLiteral("KV cache:")));
    }

    void quantizationTheModelCannotTakeIsGreyedAndNeverApplied()
    {
        // Quantization is live on both devices, but the tiny model's hidden size (64) is not a
        // multiple of the group size (128): int4/int8 are greyed out with the reason, and AWQ
        // (no AWQ checkpoint) too.
        setKnobs([](LaunchOptions& o) { o.device = "cuda"; });
        setKnobs([](LaunchOptions& o) { o.device = "cpu"; });
        auto* quantization = serving()->findChild<QComboBox*>(QStringLiteral("quantization"));
        QVERIFY(quantization->isEnabled());
        auto* items = qobject_cast<QStandardItemModel*>(quantization->model());
        const int int8 = quantization->findData(QStringLiteral("int8"));
        const int awq = quantization->findData(QStringLiteral("awq"));
        QVERIFY(!items->item(int8)->isEnabled() && !items->item(awq)->isEnabled());
        const QString why = quantization->itemData(int8, Qt::ToolTipRole).toString();
        QVERIFY2(why.contains(QStringLiteral("group size")) && !why.contains(QStringLiteral("--")), qPrintable(why));
        // Selected anyway (code, an old profile): never what options() hands the launcher.
        quantization->setCurrentIndex(int8);
        QCOMPARE(serving()->options().quantization, std::string());
        setKnobs([](LaunchOptions& o) { o.quantization = "int8"; });
        QCOMPARE(quantization->currentIndex(), 0);
        QVERIFY2(serving()->profileMessage().contains(QStringLiteral("int8")), qPrintable(serving()->profileMessage()));
    }

    void thePlannerChecksQuantizationAndAdvisesInTheAppsTerms()
    {
        CapacityPlanView view;
        // The group-size check the load makes, in the plan.
        CapacityInput tiny = serving()->plannerInput();
        tiny.model = engine()->modelConfig();
        tiny.quantization = "int4";
        view.showPlan(CapacityPlanner::plan(tiny), tiny);
        QCOMPARE(view.plan().problem, CapacityProblem::QuantizationDoesNotApply);
        QVERIFY2(view.warningText().contains(QStringLiteral("group size")) && !view.warningText().contains("--"),
                 qPrintable(view.warningText()));
        // On the CPU the KV cache is bound by its own size, not by gpu-memory-utilization.
        CapacityInput cpu = serving()->plannerInput();
        cpu.model = ServingParametersPanel::ernie03bShape();
        cpu.maxNumSeqs = 1024;
        cpu.maxNumBatchedTokens = 1 << 20;
        view.showPlan(CapacityPlanner::plan(cpu), cpu);
        QCOMPARE(view.plan().binding, CapacityLimit::KvCache);
        QVERIFY2(!view.bindingText().contains(QStringLiteral("gpu-memory")), qPrintable(view.bindingText()));
        // int4 already chosen on a small GPU: the advice is the knob that fits, never "int4" again.
        CapacityInput gpu = cpu;
        gpu.device = "cuda";
        gpu.quantization = "int4";
        gpu.deviceTotalBytes = 3LL << 29;  // 1.5 GiB
        gpu.gpuMemoryUtilization = 0.9;
        gpu.maxModelLen = 4096;
        gpu.maxNumSeqs = 64;
        gpu.maxNumBatchedTokens = 65536;
        view.showPlan(CapacityPlanner::plan(gpu), gpu);
        QVERIFY(!view.plan().fits());
        QVERIFY2(!view.warningText().contains(QStringLiteral("int4")) &&
                     view.warningText().contains(QStringLiteral("max-num-batched-tokens")),
                 qPrintable(view.warningText()));
        // Load errors name the serving panel's settings, not brook-serve's flags.
        const QString text = GuiTerms::describeLoadError(
            Error{"--quantization int4: the group size 128 does not divide the model's hidden_size 64",
                  ErrorCode::InvalidArgument, "quantization"});
        QVERIFY2(!text.contains(QStringLiteral("--")) && text.contains(QStringLiteral("Serving parameters")),
                 qPrintable(text));
    }

    void profilesSaveLoadAndExportAsBrookServeYaml()
    {
        setKnobs([](LaunchOptions& o) {
            o.maxNumSeqs = 2;
            o.maxModelLen = 2048;
        });
        QVERIFY(serving()->saveProfile(QStringLiteral("narrow")));
        setKnobs([](LaunchOptions& o) {
            o.maxNumSeqs = 8;
            o.maxModelLen = 4096;
        });
        QVERIFY(serving()->saveProfile(QStringLiteral("wide")));
        QCOMPARE(m_settings->servingProfiles().size(), 2);
        QVERIFY(serving()->loadProfile(QStringLiteral("narrow")));
        QCOMPARE(serving()->findChild<QSpinBox*>(QStringLiteral("maxNumSeqs"))->value(), 2);
        QCOMPARE(serving()->currentProfileName(), QStringLiteral("narrow"));

        QTemporaryDir out;
        QString error;
        QVERIFY2(serving()->exportProfileYaml(out.filePath("narrow.yaml"), &error), qPrintable(error));
        QFile file(out.filePath("narrow.yaml"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString yaml = QString::fromUtf8(file.readAll());
        // brook-serve's parser reads it back to the same knobs and the loaded model's folder.
        ServeConfig config;
        QVERIFY(applyServeConfigYaml(yaml.toStdString(), "narrow.yaml", config).ok());
        QCOMPARE(config.model, testsupport::tinyModelDir().string());
        QCOMPARE(config.launch.maxNumSeqs, 2);
        QCOMPARE(config.launch.maxModelLen, 2048);
        auto back = ServingProfile::fromServeYaml(yaml, QStringLiteral("narrow"));
        QVERIFY(back.ok());
        QVERIFY(ServingProfile::sameKnobs(back->options, serving()->options()));

        QFile vllmFile(out.filePath("from-vllm.yaml"));
        QVERIFY(vllmFile.open(QIODevice::WriteOnly));
        vllmFile.write("max_num_seqs: 5\nmax_model_len: 1024\ndevice: cpu\n");
        vllmFile.close();
        QVERIFY(serving()->importProfileYaml(out.filePath("from-vllm.yaml"), &error));
        QCOMPARE(serving()->currentProfileName(), QStringLiteral("from-vllm"));
        QCOMPARE(serving()->options().maxNumSeqs, 5);
        QCOMPARE(serving()->profiles().size(), 3);
        serving()->deleteProfile(QStringLiteral("from-vllm"));
        QCOMPARE(m_settings->servingProfiles().size(), 2);
    }

    void applyingNewParametersDuringAChatKeepsTheConversation()
    {
        // A fresh chat, so the reply and the next question fit max-model-len whatever the timing.
        m_forcedTokens = 3700;
        ChatPane* p = m_window->newChat();
        QVERIFY(p);
        const int shownBefore = p->session()->visibleMessages().size();
        p->input()->setPlainText(QStringLiteral("a question before the reload"));
        p->sendInput();
        // Generous: CI runs this beside the packaging build on two cores, and once the first
        // streamed token took over 20 s to show there (7 s for the whole test when alone).
        QVERIFY(waitFor([&] { return p->session()->streamingTokens() > 0; }, 60000));
        QSignalSpy loaded(&m_window->engineHost(), &EngineHost::modelLoaded);
        setKnobs([](LaunchOptions& o) {
            o.device = "cpu";
            o.maxNumSeqs = 6;
            o.maxModelLen = 4000;
            o.blockSize = 32;
        });
        QTest::mouseClick(serving()->findChild<QPushButton*>(QStringLiteral("applyServing")), Qt::LeftButton);
        QVERIFY(perf()->findChild<QProgressBar*>(QStringLiteral("reloadProgress"))->isVisible());
        QVERIFY(waitFor([&] { return loaded.count() == 1; }, 30000));
        QVERIFY(!perf()->findChild<QProgressBar*>(QStringLiteral("reloadProgress"))->isVisible());
        QCOMPARE(engine()->config().scheduler.maxNumSeqs, 6);
        QCOMPARE(engine()->config().maxModelLen, 4000);
        QCOMPARE(engine()->stats().blockSize, 32);
        QCOMPARE(m_settings->servingOptions().maxNumSeqs, 6);  // the next start uses them too
        QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        QCOMPARE(pane(), p);  // the same pane, still open
        QList<MessageRecord> shown = p->session()->visibleMessages();
        QCOMPARE(shown.size(), shownBefore + 2);
        QCOMPARE(shown[shown.size() - 2].content, QStringLiteral("a question before the reload"));
        // ... and the chat goes on, on the new engine.
        m_forcedTokens = 12;
        p->input()->setPlainText(QStringLiteral("and one after it"));
        p->sendInput();
        QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        shown = p->session()->visibleMessages();
        QCOMPARE(shown.size(), shownBefore + 4);
        QCOMPARE(shown.last().outputTokens, 12);
        QCOMPARE(shown.last().finishReason, QStringLiteral("length"));
        QCOMPARE(shown[shownBefore].content, QStringLiteral("a question before the reload"));
    }

    void aSettingThatDoesNotLoadKeepsTheRunningEngine()
    {
        Engine* before = engine();
        QSignalSpy failed(&m_window->engineHost(), &EngineHost::modelLoadFailed);
        setKnobs([](LaunchOptions& o) { o.device = "cuda"; });  // this build has no CUDA backend
        QTest::mouseClick(serving()->findChild<QPushButton*>(QStringLiteral("applyServing")), Qt::LeftButton);
        QVERIFY(waitFor([&] { return failed.count() == 1; }, 30000));
        QCOMPARE(engine(), before);
        QVERIFY(!m_window->showingWelcome());
        QVERIFY(perf()
                    ->findChild<QLabel*>(QStringLiteral("performanceMessage"))
                    ->text()
                    .contains(QStringLiteral("previous")));
        QCOMPARE(m_settings->servingOptions().device, std::string("cpu"));
        setKnobs([](LaunchOptions& o) { o.device = "cpu"; });
    }

    void theLoadGeneratorRunsBrookBenchsCodeAgainstTheLocalEndpoint()
    {
        QVERIFY(!m_window->endpoint().isRunning());
        const long long generatedBefore = engine()->stats().generationTokensTotal;
        configureLoad(12, 4, 16, 8);
        QSignalSpy finished(load(), &LoadGeneratorPanel::runFinished);
        QString error;
        QVERIFY2(load()->run(&error), qPrintable(error));
        QVERIFY(m_window->endpoint().isRunning());  // started on demand
        QVERIFY(waitFor([&] { return finished.count() == 1; }, 60000));
        QVERIFY(finished[0][1].toBool());
        QCOMPARE(load()->resultCount(), 1);
        const ServeBenchResult r = load()->results().first();
        QCOMPARE(r.completed, 12);
        QCOMPARE(r.totalOutputTokens, 96LL);
        QVERIFY(r.peakConcurrentRequests <= 4);
        QVERIFY(r.ttft.median > 0 && r.e2el.p99 >= r.ttft.median);
        QVERIFY(engine()->stats().generationTokensTotal - generatedBefore >= 96);
        QTableWidget* table = load()->resultsTable();
        QCOMPARE(table->columnCount(), 1);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("12"));
        QVERIFY(load()->statusText().contains(QStringLiteral("12 requests")));
    }

    void theLoadStopsAfterItsDurationOrWhenStopped()
    {
        // 20 requests/s for one second out of 1,000: about 20 are sent, then the run ends.
        configureLoad(1000, 64, 8, 4, 20.0);
        ServeBenchOptions o = load()->benchOptions();
        o.durationSeconds = 1.0;
        load()->setBenchOptions(o);
        QCOMPARE(load()->benchOptions().durationSeconds, 1.0);
        QSignalSpy finished(load(), &LoadGeneratorPanel::runFinished);
        QVERIFY(load()->run());
        QVERIFY(!load()->run());  // one run at a time
        QVERIFY(waitFor([&] { return finished.count() == 1; }, 30000));
        ServeBenchResult r = load()->results().last();
        // At most the second's worth (with room for the first burst); at least one, not "about 20":
        // a starved sender thread may get to few of its slots.
        QVERIFY2(r.sent >= 1 && r.sent <= 60, qPrintable(QString::number(r.sent)));
        QCOMPARE(r.completed, r.sent);
        QVERIFY(!r.cancelled);

        // Stop: nothing more is sent and the requests in flight are hung up on.
        configureLoad(1000, 4, 8, 3000);
        QVERIFY(load()->run());
        QVERIFY(waitFor([&] { return load()->generator()->progress().sent >= 4; }));
        load()->stop();
        QVERIFY(waitFor([&] { return finished.count() == 2; }, 30000));
        r = load()->results().last();
        QVERIFY(r.cancelled);
        QVERIFY(r.sent < 1000);
        QVERIFY(!r.errors.empty());
        QCOMPARE(QString::fromStdString(r.errors.front()), QStringLiteral("cancelled"));
        QVERIFY(waitFor([&] { return engine()->stats().numRunning == 0; }));  // the engine let go of them too
    }

    void theInspectorShowsAndCancelsRequests()
    {
        // Every slot (max-num-seqs) busy with long requests, so a chat's request waits in the
        // queue: the table shows both kinds, and both cancel from their row.
        RequestInspector* inspector = perf()->inspector();
        const int seqs = engine()->config().scheduler.maxNumSeqs;
        std::vector<std::shared_ptr<RequestStream>> fillers;
        std::mt19937 rng(4);
        for (int i = 0; i < seqs; ++i) {
            GenerationRequest r =
                testsupport::greedyRequest(testsupport::randomPrompt(rng, 8, engine()->tokenizer().vocabSize()), 3900);
            r.source = "bench";
            fillers.push_back(*RequestStream::submit(*engine(), r));
        }
        QVERIFY(waitFor([&] { return engine()->stats().numRunning == seqs; }));
        m_forcedTokens = 50;
        ChatPane* p = m_window->newChat();
        QVERIFY(p);
        p->input()->setPlainText(QStringLiteral("a question that waits"));
        p->sendInput();
        const RequestId chat = p->session()->requestId();
        QVERIFY(chat != 0);
        QVERIFY(waitFor([&] {
            inspector->refresh();
            return inspector->rowFor(chat) >= 0 && inspector->rowFor(fillers[0]->id()) >= 0;
        }));
        QTableWidget* table = inspector->table();
        int row = inspector->rowFor(chat);
        QCOMPARE(table->item(row, RequestInspector::Source)->text(), QStringLiteral("chat pane"));
        QCOMPARE(table->item(row, RequestInspector::Phase)->text(), QStringLiteral("queued"));
        QCOMPARE(table->item(row, RequestInspector::GeneratedTokens)->text(), QStringLiteral("0"));
        QVERIFY(table->item(row, RequestInspector::PromptTokens)->text().toInt() > 0);
        // The Cancel column fits its button, whatever the other columns take.
        auto* cancelButton = qobject_cast<QPushButton*>(table->cellWidget(row, RequestInspector::Cancel));
        QVERIFY(cancelButton && cancelButton->sizeHint().width() <= table->columnWidth(RequestInspector::Cancel));
        const long long abortedBefore = engine()->stats().requestsAborted;
        QVERIFY(inspector->cancelRequest(chat));
        QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        QCOMPARE(p->session()->visibleMessages().size(), 1);  // the question; no empty reply kept
        QVERIFY(waitFor([&] { return engine()->stats().requestsAborted == abortedBefore + 1; }));

        // A decoding one.
        row = inspector->rowFor(fillers[0]->id());
        QCOMPARE(table->item(row, RequestInspector::Source)->text(), QStringLiteral("bench"));
        QVERIFY(waitFor([&] {
            inspector->refresh();
            row = inspector->rowFor(fillers[0]->id());
            return row >= 0 && table->item(row, RequestInspector::Phase)->text() == QStringLiteral("decode");
        }));
        QVERIFY(inspector->cancelRequest(fillers[0]->id()));
        QVERIFY(!inspector->cancelRequest(fillers[0]->id()));  // the button is spent
        const testsupport::Completion cancelled = testsupport::drain(*fillers[0]);
        QCOMPARE(*cancelled.finish, FinishReason::Abort);
        QVERIFY(cancelled.tokens.size() < 3900);
        QVERIFY(waitFor([&] {
            inspector->refresh();
            return inspector->rowFor(fillers[0]->id()) < 0 && inspector->rowFor(chat) < 0;
        }));
        for (size_t i = 1; i < fillers.size(); ++i) engine()->cancel(fillers[i]->id());
        for (size_t i = 1; i < fillers.size(); ++i) testsupport::drain(*fillers[i]);
        QVERIFY(waitFor([&] {
            inspector->refresh();
            return inspector->table()->rowCount() == 0;
        }));
    }

    void twoProfilesRunSideBySide()
    {
        configureLoad(8, 8, 16, 8);
        const int columns = load()->resultsTable()->columnCount();
        QVERIFY(perf()->compareProfiles({QStringLiteral("narrow"), QStringLiteral("wide")}));
        QVERIFY(!perf()->compareProfiles({QStringLiteral("narrow")}));  // one comparison at a time
        QVERIFY(waitFor([&] { return !perf()->isComparing() && !load()->isRunning(); }, 120000));
        QTableWidget* table = load()->resultsTable();
        QCOMPARE(table->columnCount(), columns + 2);
        QCOMPARE(table->horizontalHeaderItem(columns)->text(), QStringLiteral("narrow"));
        QCOMPARE(table->horizontalHeaderItem(columns + 1)->text(), QStringLiteral("wide"));
        QCOMPARE(table->item(0, columns)->text(), QStringLiteral("8"));
        QCOMPARE(table->item(0, columns + 1)->text(), QStringLiteral("8"));
        QCOMPARE(engine()->config().scheduler.maxNumSeqs, 8);  // the last one applied
        QVERIFY(m_window->endpoint().isRunning());             // followed the engine across reloads
        QVERIFY(!perf()->compareProfiles({QStringLiteral("no such profile")}));
    }

    void theDashboardWatchesAServerThroughItsMetrics()
    {
        const QString base = m_window->endpoint().baseUrl().chopped(3);
        QSignalSpy added(dashboard(), &PerformanceDashboard::sampleAdded);
        dashboard()->watchRemote(base);
        QCOMPARE(dashboard()->source(), PerformanceDashboard::Source::Remote);
        QVERIFY(waitFor([&] { return added.count() >= 2; }, 10000));
        const DashboardSample s = *dashboard()->series().latest();
        QVERIFY(s.hasMemory);  // Brook's own brook:* gauges
        QVERIFY(*s.value(DashboardField::WeightsGiB) > 0);
        QVERIFY(dashboard()->statusText().contains(QString::fromStdString(engine()->config().modelName)));
        QVERIFY(dashboard()->statusText().contains(QStringLiteral("healthy")));
        dashboard()->watchLocal();
        QCOMPARE(dashboard()->source(), PerformanceDashboard::Source::LocalEngine);
    }

    void theWindowFitsSmallScreens()
    {
        // Sized to the screen it opens on (the offscreen screen is 800×600), never 1400×940 on it.
        const QRect available = perf()->screen()->availableGeometry();
        QVERIFY2(perf()->width() <= available.width() && perf()->height() <= available.height(),
                 qPrintable(QStringLiteral("%1×%2 on %3×%4")
                                .arg(perf()->width())
                                .arg(perf()->height())
                                .arg(available.width())
                                .arg(available.height())));
        // At 1024×700 nothing asks for more room: the knobs and the load form scroll inside their tabs.
        const QSize minimum = perf()->minimumSizeHint();
        QVERIFY2(minimum.width() <= 1024 && minimum.height() <= 700,
                 qPrintable(QStringLiteral("%1×%2").arg(minimum.width()).arg(minimum.height())));
        QVERIFY(serving()->parentWidget() && qobject_cast<QScrollArea*>(serving()->parentWidget()->parentWidget()));
    }

    void theWindowSpeaksChinese()
    {
        // Lines written before the switch follow it too: a numbered run's column, the load
        // generator's status and the serving panel's "Wrote ..." line.
        QTableWidget* results = load()->resultsTable();
        int numbered = -1;
        for (int c = 0; c < results->columnCount(); ++c)
            if (results->horizontalHeaderItem(c)->text().startsWith(QStringLiteral("Run "))) numbered = c;
        QVERIFY(numbered >= 0);
        QVERIFY(serving()->exportProfileYaml(m_dir.filePath("speaks.yaml")));
        QVERIFY(serving()->profileMessage().startsWith(QStringLiteral("Wrote")));
        m_window->setLanguage(QStringLiteral("zh_CN"));
        QCoreApplication::processEvents();
        QVERIFY2(!results->horizontalHeaderItem(numbered)->text().contains(QStringLiteral("Run")),
                 qPrintable(results->horizontalHeaderItem(numbered)->text()));
        QVERIFY2(!serving()->profileMessage().startsWith(QStringLiteral("Wrote")),
                 qPrintable(serving()->profileMessage()));
        QVERIFY(serving()->profileMessage().contains(QStringLiteral("speaks.yaml")));
        QCOMPARE(perf()->tabs()->tabText(PerformanceWindow::ServingTab), QStringLiteral("服务参数"));
        QVERIFY(perf()->windowTitle().contains(QStringLiteral("性能")));
        QVERIFY(!dashboard()
                     ->charts()[2]
                     ->hoverText(dashboard()->series().latest()->timeSeconds * 1000)
                     .contains(QStringLiteral("Running")));
        m_window->setLanguage(QStringLiteral("en"));
        QCoreApplication::processEvents();
        QCOMPARE(perf()->tabs()->tabText(PerformanceWindow::ServingTab), QStringLiteral("Serving parameters"));
    }

    void screenshotsUnderLoad()
    {
        // scripts/dashboard_screenshots.sh runs this under Xvfb: the window under a real load from
        // the in-app load generator on the tiny model (16 users at 12 requests/s against
        // max-num-seqs 8, so requests queue), then two profiles compared side by side.
        const QString dir = qEnvironmentVariable("BROOK_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("set BROOK_SCREENSHOT_DIR to write the docs' screenshots");
        auto seqs = [](int n) {
            return [n](LaunchOptions& o) {
                o.device = "cpu";
                o.maxNumSeqs = n;
                o.maxModelLen = 4096;
                o.blockSize = 16;
            };
        };
        setKnobs(seqs(4));
        QVERIFY(serving()->saveProfile(QStringLiteral("max-num-seqs 4")));
        setKnobs(seqs(16));
        QVERIFY(serving()->saveProfile(QStringLiteral("max-num-seqs 16")));
        QVERIFY(reloadWith(seqs(8)));
        QVERIFY(serving()->saveProfile(QStringLiteral("max-num-seqs 8")));
        perf()->resize(1440, 960);
        dashboard()->setWindowSeconds(60);
        ServeBenchOptions o = load()->benchOptions();
        o.numPrompts = 5000;
        o.maxConcurrency = 16;
        o.requestRate = 12.0;
        o.durationSeconds = 70;
        o.randomInputLen = 256;
        o.randomOutputLen = 384;
        o.randomRangeRatio = 0.5;
        o.ignoreEos = true;
        o.endpoint = "/v1/chat/completions";
        load()->setBenchOptions(o);
        load()->setTargetUrl({});
        load()->setRunLabel(QStringLiteral("max-num-seqs 8"));
        QSignalSpy finished(load(), &LoadGeneratorPanel::runFinished);
        QString error;
        QVERIFY2(load()->run(&error), qPrintable(error));
        perf()->tabs()->setCurrentIndex(PerformanceWindow::LoadTab);
        QTest::qWait(55000);
        QVERIFY(perf()->grab().save(dir + QStringLiteral("/dashboard-load.png")));
        perf()->tabs()->setCurrentIndex(PerformanceWindow::RequestsTab);
        perf()->inspector()->refresh();
        QTest::qWait(1000);
        QVERIFY(perf()->grab().save(dir + QStringLiteral("/dashboard-requests.png")));
        // The planner for ERNIE-4.5-0.3B on a GPU, before anything is applied.
        perf()->tabs()->setCurrentIndex(PerformanceWindow::ServingTab);
        serving()->setPlanForErnie03b(true);
        setKnobs([](LaunchOptions& k) {
            k.device = "cuda";
            k.maxModelLen = 32768;
            k.maxNumSeqs = 64;
            k.gpuMemoryUtilization = 0.9;
        });
        serving()->setPlanDeviceGiB(24);
        QTest::qWait(1000);
        QVERIFY(perf()->grab().save(dir + QStringLiteral("/dashboard-serving.png")));
        serving()->setPlanForErnie03b(false);
        setKnobs(seqs(8));
        QVERIFY(waitFor([&] { return finished.count() == 1; }, 120000));

        // The same load, shorter, on two more profiles: three columns side by side.
        o.durationSeconds = 20;
        load()->setBenchOptions(o);
        perf()->tabs()->setCurrentIndex(PerformanceWindow::LoadTab);
        QVERIFY(perf()->compareProfiles({QStringLiteral("max-num-seqs 4"), QStringLiteral("max-num-seqs 16")}));
        QVERIFY(waitFor([&] { return !perf()->isComparing() && !load()->isRunning(); }, 180000));
        QCOMPARE(load()->resultCount(), 3);
        QTest::qWait(2000);
        QVERIFY(perf()->grab().save(dir + QStringLiteral("/dashboard-results.png")));
        m_window->setLanguage(QStringLiteral("zh_CN"));
        QCoreApplication::processEvents();
        QTest::qWait(1500);
        QVERIFY(perf()->grab().save(dir + QStringLiteral("/dashboard-results-zh.png")));
        m_window->setLanguage(QStringLiteral("en"));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        spdlog::default_logger()->sinks().pop_back();
    }
};

QTEST_MAIN(TestPerformanceWindow)
#include "test_performance_window.moc"
