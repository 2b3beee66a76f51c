// GuiLogSink + LogView: lines logged on other threads all reach the view, in order per thread,
// delivered in a few queued batches rather than one event per line; the history is bounded; a
// view attached later starts with what was logged before.
#include "gui/shell/gui_log_sink.h"
#include "gui/shell/log_view.h"

#include <QPlainTextEdit>
#include <QtTest>

#include <spdlog/logger.h>

#include <thread>

using namespace brook;

class Receiver : public QObject {
    Q_OBJECT
public:
    explicit Receiver(GuiLogSink& sink) : m_sink(sink) {}
    QList<LogLine> lines;
    int batches = 0;
public slots:
    void take()
    {
        ++batches;
        lines += m_sink.takeNew();
    }

private:
    GuiLogSink& m_sink;
};

class TestGuiLogSink : public QObject {
    Q_OBJECT
private slots:
    void linesFromThreadsArriveInFewBatches()
    {
        auto sink = std::make_shared<GuiLogSink>(100000);
        spdlog::logger logger("test", sink);
        logger.set_level(spdlog::level::trace);
        Receiver receiver(*sink);
        sink->setReceiver(&receiver, "take");
        constexpr int kThreads = 4, kLines = 2500;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&logger, t] {
                for (int i = 0; i < kLines; ++i) logger.info("thread {} line {}", t, i);
            });
        for (auto& t : threads) t.join();
        QVERIFY(QTest::qWaitFor([&] { return receiver.lines.size() == kThreads * kLines; }, 10000));
        QVERIFY2(receiver.batches < kThreads * kLines / 10, qPrintable(QString::number(receiver.batches)));
        std::vector<int> next(kThreads, 0);
        for (const LogLine& line : receiver.lines) {
            const QStringList words = line.text.split(QLatin1Char(' '));
            const int t = words[words.size() - 3].toInt();
            QCOMPARE(words.last().toInt(), next[t]++);
            QCOMPARE(line.level, int(spdlog::level::info));
        }
    }

    void historyIsBoundedAndSeenByALateView()
    {
        auto sink = std::make_shared<GuiLogSink>(50);
        spdlog::logger logger("test", sink);
        for (int i = 0; i < 120; ++i) logger.warn("early {}", i);
        QCOMPARE(sink->history().size(), 50);
        LogView view(sink);
        auto* text = view.findChild<QPlainTextEdit*>(QStringLiteral("logText"));
        QVERIFY(text->toPlainText().contains(QStringLiteral("early 119")));
        QVERIFY(!text->toPlainText().contains(QStringLiteral("early 69\n")));
        logger.error("late line");
        QVERIFY(QTest::qWaitFor([&] { return text->toPlainText().contains(QStringLiteral("late line")); }, 5000));
    }

    void aDestroyedViewDetaches()
    {
        auto sink = std::make_shared<GuiLogSink>();
        spdlog::logger logger("test", sink);
        {
            LogView view(sink);
            logger.info("while open");
        }
        logger.info("after close");  // must not post to a dead receiver
        QTest::qWait(20);
        QVERIFY(sink->takeNew().isEmpty());
        QCOMPARE(sink->history().size(), 2);
    }
};

QTEST_MAIN(TestGuiLogSink)
#include "test_gui_log_sink.moc"
