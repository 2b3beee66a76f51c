// The whole window on the tiny model: welcome -> a bad folder's message -> load -> chat through
// the input box (Ctrl+Enter, Esc), edit via a bubble, switch language at run time, settings
// persisted, and the local endpoint serving the same engine (with its loopback-only rule).
#include "gui_test_support.h"

#include "gui/shell/app_settings.h"
#include "gui/chat/chat_area.h"
#include "gui/chat/chat_generator.h"
#include "gui/chat/chat_pane.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/conversation_actions.h"
#include "gui/chat/conversation_list_panel.h"
#include "gui/shell/endpoint_panel.h"
#include "gui/shell/engine_host.h"
#include "gui/performance/engine_monitor.h"
#include "gui/performance/performance_window.h"
#include "gui/shell/gui_log_sink.h"
#include "gui/chat/history_store.h"
#include "gui/shell/local_endpoint.h"
#include "gui/shell/main_window.h"
#include "gui/chat/message_bubble.h"
#include "gui/shell/model_names.h"
#include "gui/shell/model_panel.h"
#include "gui/shell/models_dialog.h"
#include "gui/shell/theme_manager.h"
#include "gui/shell/translation_manager.h"
#include "loadgen/openai_client.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>

#include <spdlog/spdlog.h>

using namespace brook;
using namespace brook::guitest;

class TestMainWindow : public QObject {
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

    ChatPane* pane() const { return m_window->chatArea()->currentPane(); }
    QString menuTitle(int index) const { return m_window->menuBar()->actions().value(index)->text(); }

private slots:
    void initTestCase()
    {
        m_settings = std::make_unique<AppSettings>(m_dir.filePath("brook.ini"));
        m_settings->setLanguage(QStringLiteral("en"));
        QVERIFY(m_store.open(m_dir.filePath("history.sqlite")).ok());
        m_translations = std::make_unique<TranslationManager>();
        m_theme = std::make_unique<ThemeManager>();
        m_sink = std::make_shared<GuiLogSink>();
        spdlog::default_logger()->sinks().push_back(m_sink);
        m_window = std::make_unique<MainWindow>(*m_settings, m_store, *m_translations, *m_theme, m_sink);
        m_window->resize(1200, 800);
        m_window->show();
        m_window->generator().setRequestHook([this](GenerationRequest& r) {
            if (m_forcedTokens > 0) {
                r.params.ignoreEos = true;
                r.params.maxTokens = m_forcedTokens;
            }
        });
    }

    void startsOnTheWelcomePage()
    {
        QVERIFY(m_window->showingWelcome());
        QVERIFY(!m_window->engineHost().isLoaded());
        QCOMPARE(menuTitle(0), QStringLiteral("&File"));
    }

    void aFolderWithoutAModelSaysWhatIsMissing()
    {
        QTemporaryDir empty;
        m_window->loadModel(empty.path());  // looked at before any load starts
        QVERIFY(!m_window->engineHost().isLoading());
        QVERIFY(m_window->showingWelcome());
        QVERIFY2(m_window->modelPanel()->errorText().contains(QStringLiteral("config.json")),
                 qPrintable(m_window->modelPanel()->errorText()));
        QVERIFY(m_settings->recentModels().isEmpty());  // failures are not remembered
    }

    void loadsTheModelAndOpensAChat()
    {
        const QString dir = QString::fromStdString(testsupport::tinyModelDir().string());
        QSignalSpy loaded(&m_window->engineHost(), &EngineHost::modelLoaded);
        QSignalSpy stages(&m_window->engineHost(), &EngineHost::loadStageChanged);
        QSignalSpy estimate(&m_window->engineHost(), &EngineHost::memoryEstimated);
        m_window->loadModel(dir);
        QVERIFY(waitFor([&] { return loaded.count() == 1; }));
        QCOMPARE(estimate.count(), 1);
        QVERIFY(estimate[0][0].value<MemoryEstimate>().weightsBytes > 0);
        QList<EngineHost::Stage> seen;  // distinct stages in order; Loading repeats as its percent moves
        int lastLoadingPercent = -1;
        for (const auto& s : stages) {
            const auto stage = s[0].value<EngineHost::Stage>();
            if (seen.isEmpty() || seen.last() != stage) seen << stage;
            if (stage == EngineHost::Stage::Loading) {
                QVERIFY(s[1].toInt() >= lastLoadingPercent);  // the bar never runs backwards
                lastLoadingPercent = s[1].toInt();
            }
        }
        QCOMPARE(seen, (QList<EngineHost::Stage>{EngineHost::Stage::Checking, EngineHost::Stage::Loading,
                                                 EngineHost::Stage::WarmingUp, EngineHost::Stage::Ready}));
        QCOMPARE(lastLoadingPercent, 85);  // weights and KV cache reported as done
        QVERIFY(!m_window->showingWelcome());
        QVERIFY(pane());
        QCOMPARE(m_settings->recentModels(), QStringList{dir});
        // The new chat is a draft: nothing reaches the history until its first message.
        QVERIFY(!pane()->session()->isStored());
        QCOMPARE(m_store.conversations().size(), 0);
        QCOMPARE(m_window->newChat(), pane());  // an empty draft is reused, not piled up
        QCOMPARE(m_window->chatArea()->panes().size(), 1);
        // The pane's model picker names the loaded model and offers the others.
        QComboBox* picker = pane()->modelPicker();
        QCOMPARE(picker->currentData().toString(), dir);
        QCOMPARE(picker->currentText(), ModelNames::displayName(dir));
        const QString other = QStringLiteral("/models/hub/models--baidu--ERNIE-4.5-0.3B-PT/snapshots/0123abcd");
        QCOMPARE(ModelNames::displayName(other), QStringLiteral("baidu/ERNIE-4.5-0.3B-PT"));
        pane()->setModels({dir, other}, dir);
        QSignalSpy requested(pane(), &ChatPane::modelRequested);
        emit picker->activated(picker->findData(other));
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested[0][0].toString(), other);
        QCOMPARE(picker->currentData().toString(), dir);  // still the loaded one until the other is in
        // The window was asked; that folder does not exist, so the loaded model stays and says so.
        auto* refused = m_window->findChild<QMessageBox*>(QStringLiteral("loadFailureBox"));
        QVERIFY(refused && refused->text().contains(QStringLiteral("does not exist")));
        refused->close();
        QVERIFY(waitFor([&] { return !m_window->findChild<QMessageBox*>(QStringLiteral("loadFailureBox")); }));
        QVERIFY(m_window->engineHost().isLoaded());
    }

    void ctrlEnterSendsAndTheReplyStreamsIntoABubble()
    {
        m_forcedTokens = 400;
        ChatPane* p = pane();
        ChatSettings settings = p->session()->settings();
        settings.seed = 7;  // a fixed, sampled reply: the same text every run
        settings.temperature = 0.8;
        p->session()->setSettings(settings);
        // Each streamed update: the question plus a streaming bubble showing the text so far
        // (the pane handles the signal before this check, it connected first).
        int streamedUpdates = 0;
        bool bubbleShowedStream = true;
        connect(p->session(), &ChatSession::streamingTextChanged, this, [&](const QString& text) {
            if (text.isEmpty()) return;
            ++streamedUpdates;
            const auto b = p->bubbles();
            bubbleShowedStream &= b.size() == 2 && b.last()->isStreaming() && b.last()->renderedText() == text;
        });
        QTest::keyClicks(p->input(), QStringLiteral("Hello there"));
        QTest::keyClick(p->input(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(p->session()->isGenerating());
        QVERIFY(p->input()->toPlainText().isEmpty());
        QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        disconnect(p->session(), &ChatSession::streamingTextChanged, this, nullptr);
        QVERIFY(streamedUpdates > 0);
        QVERIFY(bubbleShowedStream);
        const QList<MessageBubble*> bubbles = p->bubbles();
        QCOMPARE(bubbles.size(), 2);
        QVERIFY(!bubbles[1]->isStreaming());
        QCOMPARE(bubbles[1]->message().outputTokens, 400);
        QVERIFY(bubbles[1]
                    ->findChild<QLabel*>(QStringLiteral("messageStats"))
                    ->text()
                    .contains(QStringLiteral("400 tokens")));
        // The list shows the conversation under its new title.
        QListWidget* list = m_window->conversationList()->list();
        QVERIFY(waitFor([&] { return list->count() == 1 && list->item(0)->text() == QStringLiteral("Hello there"); }));
    }

    void aFolderThatIsNotAModelKeepsTheRunningEngine()
    {
        m_forcedTokens = 4;
        Engine* engine = m_window->engineHost().engine();
        ChatPane* open = pane();
        const int messages = int(open->session()->visibleMessages().size());
        // Missing files: refused before a load starts.
        QTemporaryDir notAModel;
        m_window->loadModel(notAModel.path());
        QVERIFY(!m_window->engineHost().isLoading());
        QCOMPARE(m_window->engineHost().engine(), engine);
        QVERIFY(!m_window->showingWelcome());
        QCOMPARE(pane(), open);
        auto* box = m_window->findChild<QMessageBox*>(QStringLiteral("loadFailureBox"));
        QVERIFY(box && box->text().contains(QStringLiteral("config.json")));
        box->close();
        // Files that look right but do not load: the load fails on its thread, the old engine stays.
        QTemporaryDir broken;
        const QDir tiny(QString::fromStdString(testsupport::tinyModelDir().string()));
        QVERIFY(QFile::copy(tiny.filePath("config.json"), broken.filePath("config.json")));
        QVERIFY(QFile::copy(tiny.filePath("tokenizer.model"), broken.filePath("tokenizer.model")));
        QFile weights(broken.filePath("model.safetensors"));
        QVERIFY(weights.open(QIODevice::WriteOnly));
        weights.write("not safetensors");
        weights.close();
        QSignalSpy failed(&m_window->engineHost(), &EngineHost::modelLoadFailed);
        m_window->loadModel(broken.path());
        QVERIFY(waitFor([&] { return failed.count() == 1; }));
        QCOMPARE(m_window->engineHost().engine(), engine);
        QVERIFY(!m_window->showingWelcome());
        QCOMPARE(m_window->chatArea()->currentPane(), open);
        QCOMPARE(int(open->session()->visibleMessages().size()), messages);
        QVERIFY(waitFor([&] { return m_window->findChild<QMessageBox*>(QStringLiteral("loadFailureBox")); }));
        m_window->findChild<QMessageBox*>(QStringLiteral("loadFailureBox"))->close();
        QVERIFY(open->session()->send(QStringLiteral("still here?")));  // the old engine still answers
        QVERIFY(waitFor([&] { return !open->session()->isGenerating(); }));
        m_window->activateWindow();  // the message box had it; shortcuts (Esc) need it back
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    }

    void escapeStopsGeneration()
    {
        m_forcedTokens = 3500;
        ChatPane* p = pane();
        // Esc goes with the first text the window receives. On a starved machine the engine can
        // still finish all 3,500 tokens before the stop reaches it: then again, up to 3 times.
        for (int attempt = 1;; ++attempt) {
            p->input()->setPlainText(QStringLiteral("a long one"));
            connect(
                &m_window->generator(), &ChatGenerator::textArrived, p,
                [p] { QTest::keyClick(p->input(), Qt::Key_Escape); }, Qt::SingleShotConnection);
            p->sendInput();
            QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }, 120000));
            const MessageRecord last = p->session()->visibleMessages().last();
            if (last.finishReason == QLatin1String("length") && attempt < 3) {
                qWarning("the reply ended before Esc reached the engine; again");
                continue;
            }
            QCOMPARE(last.finishReason, QStringLiteral("abort"));
            QVERIFY(last.outputTokens < 3500);
            break;
        }
    }

    void theKeyboardReachesEverything()
    {
        m_forcedTokens = 4;
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        ChatPane* p = pane();
        // Enter sends (on by default), Shift+Enter is a new line.
        QVERIFY(m_settings->enterSends() && p->enterSends());
        p->input()->clear();
        p->input()->setFocus();
        QTest::keyClicks(p->input(), QStringLiteral("line one"));
        QTest::keyClick(p->input(), Qt::Key_Return, Qt::ShiftModifier);
        QTest::keyClicks(p->input(), QStringLiteral("line two"));
        QCOMPARE(p->input()->toPlainText(), QStringLiteral("line one\nline two"));
        QTest::keyClick(p->input(), Qt::Key_Return);
        QVERIFY(p->session()->isGenerating());
        QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        const QList<MessageRecord> shown = p->session()->visibleMessages();
        QCOMPARE(shown[shown.size() - 2].content, QStringLiteral("line one\nline two"));
        // The setting off: Enter is a new line, Ctrl+Enter still sends.
        auto* enterSends = m_window->findChild<QAction*>(QStringLiteral("enterSendsAction"));
        enterSends->trigger();
        QVERIFY(!m_settings->enterSends() && !p->enterSends());
        QTest::keyClicks(p->input(), QStringLiteral("a"));
        QTest::keyClick(p->input(), Qt::Key_Return);
        QTest::keyClicks(p->input(), QStringLiteral("b"));
        QCOMPARE(p->input()->toPlainText(), QStringLiteral("a\nb"));
        QVERIFY(!p->session()->isGenerating());
        QTest::keyClick(p->input(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(p->session()->isGenerating());
        QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        enterSends->trigger();
        QVERIFY(m_settings->enterSends());
        // Tab leaves the composer instead of typing a tab.
        p->input()->setFocus();
        QTest::keyClick(p->input(), Qt::Key_Tab);
        QVERIFY(!p->input()->hasFocus());
        QVERIFY(!p->input()->toPlainText().contains(QLatin1Char('\t')));
        // Ctrl+K: search; Ctrl+Shift+L: the list; Ctrl+Shift+M: back to the message box.
        QTest::keyClick(m_window.get(), Qt::Key_K, Qt::ControlModifier);
        QCOMPARE(QApplication::focusWidget(), m_window->conversationList()->searchBox());
        QTest::keyClick(m_window.get(), Qt::Key_L, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(QApplication::focusWidget(), m_window->conversationList()->list());
        QTest::keyClick(m_window.get(), Qt::Key_M, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(QApplication::focusWidget(), p->input());
    }

    void actionsSayWhatTheyDoAndRegenerateNeedsAnAnswer()
    {
        auto action = [this](const QString& text) {
            for (QAction* a : m_window->findChildren<QAction*>())
                if (a->text().startsWith(text)) return a;
            return static_cast<QAction*>(nullptr);
        };
        QAction* regenerate = action(QStringLiteral("Regenerate"));
        QVERIFY(regenerate && regenerate->isEnabled());  // this chat has answers
        QVERIFY(action(QStringLiteral("Split view")));   // one side: what "side by side" does
        QVERIFY(!action(QStringLiteral("Move to the other side")));
        ChatPane* draft = m_window->newChat();
        QVERIFY(!regenerate->isEnabled());  // an empty chat has nothing to regenerate
        action(QStringLiteral("Split view"))->trigger();
        QCOMPARE(m_window->chatArea()->sideCount(), 2);
        QVERIFY(action(QStringLiteral("Move this chat to the left half")));
        m_window->chatArea()->closePane(draft);
        QVERIFY(waitFor([&] { return m_window->chatArea()->sideCount() == 1; }));
        QVERIFY(regenerate->isEnabled());
    }

    void editingABubbleResendsAsABranch()
    {
        m_forcedTokens = 8;
        ChatPane* p = pane();
        MessageBubble* question = p->bubbles()[0];
        const qint64 original = question->messageId();
        question->startEditing();
        auto* editor = question->findChild<QPlainTextEdit*>(QStringLiteral("messageEditor"));
        QVERIFY(editor);
        QVERIFY(waitFor([&] { return editor->isVisible(); }));  // new bubbles are shown by the event loop
        editor->setPlainText(QStringLiteral("Hello again"));
        QTest::mouseClick(question->findChild<QPushButton*>(QStringLiteral("saveEdit")), Qt::LeftButton);
        QVERIFY(waitFor([&] { return !p->session()->isGenerating() && p->bubbles().size() == 2; }));
        MessageBubble* edited = p->bubbles()[0];
        QVERIFY(edited->messageId() != original);
        QCOMPARE(edited->message().content, QStringLiteral("Hello again"));
        QCOMPARE(p->session()->tree().siblings(edited->messageId()).size(), 2);
        QVERIFY(edited->findChild<QToolButton*>(QStringLiteral("previousBranch"))->isEnabled());
    }

    void twoConversationsSideBySideGenerateTogether()
    {
        m_forcedTokens = 1200;
        Engine* engine = m_window->engineHost().engine();
        const EngineStepTimes before = testsupport::waitIdle(*engine).stepTimes;
        ChatPane* left = pane();
        ChatPane* right = m_window->newChat();
        QVERIFY(right && right != left);
        m_window->chatArea()->moveToOtherSide(right);
        QCOMPARE(m_window->chatArea()->sideCount(), 2);
        left->input()->setPlainText(QStringLiteral("left question"));
        left->sendInput();
        right->input()->setPlainText(QStringLiteral("right question"));
        right->sendInput();
        QVERIFY(left->session()->isGenerating() && right->session()->isGenerating());
        QVERIFY(waitFor([&] { return !left->session()->isGenerating() && !right->session()->isGenerating(); }, 120000));
        // Both panes in the same decode steps, as the engine counted them (a poll of numRunning
        // could miss the overlap on a starved machine).
        const EngineStepTimes after = testsupport::waitIdle(*engine).stepTimes;
        QVERIFY(after.decodeRows - before.decodeRows > after.decodeSteps - before.decodeSteps);
        m_window->chatArea()->closePane(right);
        QVERIFY(waitFor([&] { return m_window->chatArea()->sideCount() == 1; }));
        m_window->chatArea()->showPane(left);
    }

    void exportThenImportGivesTheSameBranch()
    {
        ChatPane* p = pane();
        const QList<MessageRecord> shown = p->session()->visibleMessages();
        QVERIFY(shown.size() >= 2);
        QTemporaryDir out;
        QString error;
        ConversationActions* actions = m_window->conversationActions();
        QVERIFY(actions->exportTo(p, out.filePath("c.md"), true, QString(), &error));
        QVERIFY(actions->exportTo(p, out.filePath("c.json"), false, QStringLiteral("tiny"), &error));
        QFile md(out.filePath("c.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(md.readAll()).contains(shown.first().content));
        const QString imported = m_window->importConversation(out.filePath("c.json"));
        QVERIFY2(imported.isEmpty(), qPrintable(imported));
        ChatPane* copy = pane();
        QVERIFY(copy != p);
        const QList<MessageRecord> back = copy->session()->visibleMessages();
        QCOMPARE(back.size(), shown.size());
        for (int i = 0; i < shown.size(); ++i) {
            QCOMPARE(back[i].role, shown[i].role);
            QCOMPARE(back[i].content, shown[i].content);
        }
        QVERIFY(!m_window->importConversation(out.filePath("missing.json")).isEmpty());
        m_window->chatArea()->closePane(copy);
        m_window->chatArea()->showPane(p);
    }

    void languageSwitchesAtRunTimeAndPersists()
    {
        ChatPane* draft = m_window->newChat();
        QTabWidget* englishTabs = m_window->chatArea()->findChild<QTabWidget*>();
        QCOMPARE(englishTabs->tabText(englishTabs->indexOf(draft)), QStringLiteral("New chat"));
        const QString englishSend = pane()->findChild<QPushButton*>(QStringLiteral("sendButton"))->text();
        m_window->setLanguage(QStringLiteral("zh_CN"));
        QCoreApplication::processEvents();
        QCOMPARE(menuTitle(0), QStringLiteral("文件(&F)"));
        const QString chineseSend = pane()->findChild<QPushButton*>(QStringLiteral("sendButton"))->text();
        QCOMPARE(chineseSend, QStringLiteral("发送"));
        // An untitled tab opened in English: its "New chat" follows the switch.
        QTabWidget* tabs = m_window->chatArea()->findChild<QTabWidget*>();
        QCOMPARE(tabs->tabText(tabs->indexOf(draft)), QStringLiteral("新对话"));
        QVERIFY(chineseSend != englishSend);
        QCOMPARE(m_settings->language(), QStringLiteral("zh_CN"));
        m_window->setLanguage(QStringLiteral("en"));
        QCoreApplication::processEvents();
        QCOMPARE(menuTitle(0), QStringLiteral("&File"));
        QCOMPARE(pane()->findChild<QPushButton*>(QStringLiteral("sendButton"))->text(), englishSend);
        m_window->chatArea()->closePane(draft);
    }

    void twoPanesInChineseFitA1024Screen()
    {
        m_window->setLanguage(QStringLiteral("zh_CN"));
        QCoreApplication::processEvents();
        ChatPane* second = m_window->newChat();
        m_window->chatArea()->moveToOtherSide(second);
        QCOMPARE(m_window->chatArea()->sideCount(), 2);
        QVERIFY2(m_window->minimumSizeHint().width() <= 1024,
                 qPrintable(QString::number(m_window->minimumSizeHint().width())));
        m_window->chatArea()->closePane(second);
        QVERIFY(waitFor([&] { return m_window->chatArea()->sideCount() == 1; }));
        m_window->setLanguage(QStringLiteral("en"));
        QCoreApplication::processEvents();
    }

    void themeAppliesAndPersists()
    {
        m_window->setTheme(QStringLiteral("dark"));
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
        QCOMPARE(m_settings->theme(), QStringLiteral("dark"));
        m_window->setTheme(QStringLiteral("light"));
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 150);
    }

    void localEndpointServesTheSameEngine()
    {
        EndpointPanel* panel = m_window->endpointPanel();
        panel->setSettings({QStringLiteral("127.0.0.1"), 0, QString()});
        panel->enableSwitch()->setChecked(true);
        QVERIFY(m_window->endpoint().isRunning());
        const QString base = m_window->endpoint().baseUrl();
        QVERIFY(base.startsWith(QStringLiteral("http://127.0.0.1:")) && base.endsWith(QStringLiteral("/v1")));
        // The dock shows the whole URL: the field asks for the room it needs.
        auto* url = panel->findChild<QLineEdit*>(QStringLiteral("endpointUrl"));
        QVERIFY(url->minimumSizeHint().width() >= url->fontMetrics().horizontalAdvance(base) ||
                url->minimumWidth() >= url->fontMetrics().horizontalAdvance(base));
        OpenAiClient client(base.chopped(3).toStdString());
        const HttpResult models = client.get("/v1/models");
        QCOMPARE(models.status, 200);
        nlohmann::json body{{"model", models.json["data"][0]["id"]},
                            {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                            {"max_tokens", 5}};
        const HttpResult chat = client.post("/v1/chat/completions", body);
        QCOMPARE(chat.status, 200);
        QVERIFY(waitFor([&] { return m_window->endpoint().servedRequests() == 1; }));
        QVERIFY(waitFor([&] { return panel->countersText().contains(QStringLiteral("served: 1")); }));
        QVERIFY(m_window->endpoint().curlExample().contains(base + QStringLiteral("/chat/completions")));

        panel->enableSwitch()->setChecked(false);
        QVERIFY(!m_window->endpoint().isRunning());
        // Not loopback and no key: refused with a message, nothing listens.
        panel->setSettings({QStringLiteral("0.0.0.0"), 0, QString()});
        panel->enableSwitch()->setChecked(true);
        QVERIFY(!m_window->endpoint().isRunning());
        QVERIFY(!panel->enableSwitch()->isChecked());
        QVERIFY(!LocalEndpoint::checkSettings({QStringLiteral("0.0.0.0"), 8000, QString()}).isEmpty());
        QVERIFY(LocalEndpoint::checkSettings({QStringLiteral("0.0.0.0"), 8000, QStringLiteral("secret")}).isEmpty());
        QVERIFY(LocalEndpoint::checkSettings({QStringLiteral("localhost"), 8000, QString()}).isEmpty());
    }

    void theEngineMonitorPollsStats()
    {
        auto* monitor = m_window->findChild<EngineMonitor*>();
        QVERIFY(monitor);
        // Counted from a fresh start: the samples stop growing at kPoints, a minute after the load,
        // which a slow machine reaches by this test.
        monitor->setEngine(m_window->engineHost().engine());
        const int before = monitor->sampleCount();
        QVERIFY(waitFor([&] { return monitor->sampleCount() >= before + 2; }));  // a timer, not per token
        QVERIFY(monitor->sampleCount() <= EngineMonitor::kPoints);
        QVERIFY(monitor->summaryText().contains(QStringLiteral("tokens/s")));
        // A glance, not a second dashboard: its button opens the Performance window.
        QTest::mouseClick(monitor->findChild<QPushButton*>(QStringLiteral("monitorOpenPerformance")), Qt::LeftButton);
        QVERIFY(m_window->performanceWindow()->isVisible());
        m_window->performanceWindow()->close();
    }

    void theLogViewShowsEngineLines()
    {
        auto* log = m_window->findChild<QPlainTextEdit*>(QStringLiteral("logText"));
        QVERIFY(log);
        spdlog::info("a line for the log view {}", 4242);
        QVERIFY(waitFor([&] { return log->toPlainText().contains(QStringLiteral("a line for the log view 4242")); }));
        QVERIFY(log->toPlainText().contains(QStringLiteral("KV cache")));  // the launcher's line
    }

    void theModelsPageListsLoadsUnloadsAndDeletes()
    {
        // A Hugging Face cache holding a copy of the tiny model, beside the folder opened before.
        QTemporaryDir cache;
        const QString snapshot = cache.filePath("models--test--tiny-copy/snapshots/0123abcd");
        QVERIFY(QDir().mkpath(snapshot));
        const QDir tiny(QString::fromStdString(testsupport::tinyModelDir().string()));
        for (const QString& file : tiny.entryList(QDir::Files))
            QVERIFY(QFile::copy(tiny.filePath(file), QDir(snapshot).filePath(file)));
        qputenv("HF_HUB_CACHE", cache.path().toLocal8Bit());
        ModelsDialog* models = m_window->showModels();
        QTableWidget* table = models->table();
        auto rowOf = [&](const QString& dir) {
            for (int r = 0; r < models->entries().size(); ++r)
                if (models->entries()[r].dir == QDir::cleanPath(dir)) return r;
            return -1;
        };
        const int copyRow = rowOf(snapshot);
        const int tinyRow = rowOf(tiny.path());
        QVERIFY(copyRow >= 0 && tinyRow >= 0);
        QCOMPARE(table->item(copyRow, ModelsDialog::Name)->text(), QStringLiteral("test/tiny-copy"));
        QVERIFY(models->entries()[copyRow].bytes > 0);
        QVERIFY(table->item(tinyRow, ModelsDialog::Name)->text().contains(QStringLiteral("loaded")));
        QVERIFY(models->entries()[tinyRow].lastUsed.isValid());
        QVERIFY(!models->entries()[copyRow].lastUsed.isValid());
        QVERIFY(!models->findChild<QPushButton*>(QStringLiteral("modelsDelete"))->isEnabled());  // the loaded one

        // Load the copy from the page.
        QSignalSpy loaded(&m_window->engineHost(), &EngineHost::modelLoaded);
        table->selectRow(copyRow);
        QTest::mouseClick(models->findChild<QPushButton*>(QStringLiteral("modelsLoad")), Qt::LeftButton);
        QVERIFY(waitFor([&] { return loaded.count() == 1; }));
        QCOMPARE(QDir::cleanPath(m_window->engineHost().modelDir()), QDir::cleanPath(snapshot));
        QVERIFY(models->entries()[rowOf(snapshot)].lastUsed.isValid());
        QCOMPARE(pane()->modelPicker()->currentText(), QStringLiteral("test/tiny-copy"));

        // Unload: the chats stay, nothing runs.
        QTest::mouseClick(models->findChild<QPushButton*>(QStringLiteral("modelsUnload")), Qt::LeftButton);
        QVERIFY(!m_window->engineHost().isLoaded());
        QVERIFY(pane() != nullptr);

        // Delete the copy (confirmed): its whole cache entry goes.
        table->selectRow(rowOf(snapshot));
        QVERIFY(models->deleteSelected(true));
        QVERIFY(!QFileInfo::exists(cache.filePath("models--test--tiny-copy")));
        QCOMPARE(rowOf(snapshot), -1);
        QVERIFY(rowOf(tiny.path()) >= 0);
        models->close();
        qunsetenv("HF_HUB_CACHE");
    }

    void theOpenTabsReopenOnTheNextStart()
    {
        // Two stored conversations in tabs and an empty draft (which is not remembered).
        for (const ConversationRecord& c : m_store.conversations()) {
            if (m_window->chatArea()->panes().size() >= 2) break;
            m_window->openConversation(c.id);
        }
        QList<qint64> open;
        for (ChatPane* p : m_window->chatArea()->panes()) open << p->session()->conversationId();
        QCOMPARE(open.size(), 2);
        QVERIFY(!m_window->newChat()->session()->isStored());
        m_window->close();
        QCOMPARE(m_settings->openConversations(), open);

        m_window = std::make_unique<MainWindow>(*m_settings, m_store, *m_translations, *m_theme, m_sink);
        m_window->show();
        QVERIFY(m_window->chatArea()->panes().isEmpty());  // the welcome page until a model is loaded
        // An empty new chat without a model shows the welcome guidance too.
        ChatPane* draft = m_window->newChat();
        QVERIFY(m_window->showingWelcome());
        QVERIFY(draft->modelPicker()->currentText().contains(QStringLiteral("No model")));
        m_window->chatArea()->closePane(draft);
        QVERIFY(waitFor([&] { return m_window->chatArea()->panes().isEmpty(); }));
        QSignalSpy loaded(&m_window->engineHost(), &EngineHost::modelLoaded);
        m_window->loadModel(QString::fromStdString(testsupport::tinyModelDir().string()));
        QVERIFY(waitFor([&] { return loaded.count() == 1; }));
        QList<qint64> reopened;
        for (ChatPane* p : m_window->chatArea()->panes()) reopened << p->session()->conversationId();
        QCOMPARE(reopened, open);
    }

    void screenshotsForTheDocs()
    {
        // With BROOK_SCREENSHOT_DIR set: the README's pictures of the current app, taken here
        // because they need two panes, branches and a theme switch a command line cannot set up.
        const QString dir = qEnvironmentVariable("BROOK_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("set BROOK_SCREENSHOT_DIR to write the docs' screenshots");
        m_forcedTokens = 60;
        QVERIFY(waitFor([&] { return m_window->engineHost().isLoaded(); }));
        auto ask = [&](ChatPane* p, const QString& text) {
            p->input()->setPlainText(text);
            p->sendInput();
            QVERIFY(waitFor([&] { return !p->session()->isGenerating(); }));
        };
        // English, dark then light (every bubble restyled), one pane.
        m_window->setTheme(QStringLiteral("dark"));
        m_window->resize(1280, 800);
        ChatPane* left = m_window->chatArea()->currentPane();
        ask(left, QStringLiteral("What does a paged KV cache buy a server?"));
        QCoreApplication::processEvents();
        QVERIFY(m_window->grab().save(dir + QStringLiteral("/screenshot-dark.png")));
        m_window->setTheme(QStringLiteral("light"));
        QCoreApplication::processEvents();
        QVERIFY(m_window->grab().save(dir + QStringLiteral("/screenshot-en.png")));
        // 简体中文, two panes side by side at 1024×700.
        m_window->setLanguage(QStringLiteral("zh_CN"));
        ChatPane* right = m_window->newChat();
        m_window->chatArea()->moveToOtherSide(right);
        ask(right, QStringLiteral("用三句话介绍一下春天。"));
        m_window->resize(1024, 700);
        QCoreApplication::processEvents();
        QTest::qWait(200);
        QVERIFY(m_window->width() <= 1024);
        QVERIFY(m_window->grab().save(dir + QStringLiteral("/screenshot-zh-split.png")));
        ModelsDialog* models = m_window->showModels();
        QTest::qWait(100);
        QVERIFY(models->grab().save(dir + QStringLiteral("/models-zh.png")));
        models->close();
        m_window->setLanguage(QStringLiteral("en"));
        m_window->chatArea()->closePane(right);
        m_window->setTheme(QStringLiteral("system"));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        spdlog::default_logger()->sinks().pop_back();
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
