// Tests for StopChecker: stop strings split over deltas, held-back text released when it turns
// out not to be a stop, include_stop_str, several stops, multi-byte text, and a randomised
// check that the output never depends on how the text was cut into deltas.
#include "engine/stop_checker.h"

#include <QtTest/QtTest>

#include <random>

using namespace brook;

namespace {

struct Run {
    std::string text;  // everything emitted, including flush()
    bool stopped = false;
    std::string matched;
};

Run feed(StopChecker& checker, const std::vector<std::string>& deltas)
{
    Run run;
    for (const auto& delta : deltas) {
        const auto update = checker.push(delta);
        run.text += update.text;
        if (update.stopped) {
            run.stopped = true;
            run.matched = update.matched;
            break;
        }
    }
    run.text += checker.flush();
    return run;
}

// Reference: the stop string that ends first (ties: starts first) in the whole text.
Run reference(const std::string& text, const std::vector<std::string>& stops, bool include)
{
    size_t bestEnd = std::string::npos, bestStart = std::string::npos;
    std::string matched;
    for (const auto& stop : stops) {
        if (stop.empty()) continue;
        const size_t start = text.find(stop);
        if (start == std::string::npos) continue;
        const size_t end = start + stop.size();
        if (matched.empty() || end < bestEnd || (end == bestEnd && start < bestStart)) {
            bestEnd = end;
            bestStart = start;
            matched = stop;
        }
    }
    if (matched.empty()) return {text, false, {}};
    return {text.substr(0, include ? bestEnd : bestStart), true, matched};
}

}  // namespace

class TestStopChecker : public QObject {
    Q_OBJECT

private slots:
    void stopSplitAcrossTwoDeltas()
    {
        StopChecker checker({"###"}, false);
        auto update = checker.push("Hello #");
        QCOMPARE(update.text, std::string("Hello "));  // "#" may start the stop string: held
        QVERIFY(!update.stopped);
        update = checker.push("## world");
        QVERIFY(update.stopped);
        QCOMPARE(update.text, std::string());
        QCOMPARE(update.matched, std::string("###"));
        QCOMPARE(checker.flush(), std::string());
        QVERIFY(checker.push("more").stopped);  // nothing after a stop
    }

    void stopSplitAcrossThreeDeltas()
    {
        StopChecker checker({"STOP"}, false);
        QCOMPARE(checker.push("abS").text, std::string("ab"));
        QCOMPARE(checker.push("T").text, std::string());
        const auto update = checker.push("OP tail");
        QVERIFY(update.stopped);
        QCOMPARE(update.text, std::string());
        QCOMPARE(update.matched, std::string("STOP"));
    }

    void partialMatchIsReleased()
    {
        StopChecker checker({"STOP"}, false);
        QCOMPARE(checker.push("xST").text, std::string("x"));
        const auto update = checker.push("ay");
        QVERIFY(!update.stopped);
        QCOMPARE(update.text, std::string("STay"));
        QCOMPARE(checker.flush(), std::string());

        StopChecker held({"STOP"}, false);
        QCOMPARE(held.push("abc STO").text, std::string("abc "));
        QCOMPARE(held.flush(), std::string("STO"));  // finished for another reason: release it
    }

    void includeStopString()
    {
        StopChecker checker({"</end>"}, true);
        QCOMPARE(checker.push("answer</e").text, std::string("answer"));
        const auto update = checker.push("nd> ignored");
        QVERIFY(update.stopped);
        QCOMPARE(update.text, std::string("</end>"));
    }

    void severalStopStrings()
    {
        StopChecker checker({"END", "\n\n", ""}, false);
        const auto run = feed(checker, {"line one\n", "\nline two END"});
        QVERIFY(run.stopped);
        QCOMPARE(run.text, std::string("line one"));
        QCOMPARE(run.matched, std::string("\n\n"));

        // Overlapping stops in one delta: the one that ends first wins, as if streamed by character.
        StopChecker overlap({"xyz", "y"}, false);
        const auto update = overlap.push("axyz");
        QCOMPARE(update.matched, std::string("y"));
        QCOMPARE(update.text, std::string("ax"));
    }

    void emptyStopStringsAreIgnored()
    {
        StopChecker checker({"", ""}, false);
        const auto update = checker.push("anything at all");
        QVERIFY(!update.stopped);
        QCOMPARE(update.text, std::string("anything at all"));
    }

    void multiByteStopStrings()
    {
        StopChecker checker({"。结束"}, false);
        QCOMPARE(checker.push("你好。").text, std::string("你好"));
        QCOMPARE(checker.push("结").text, std::string());
        const auto update = checker.push("束吧");
        QVERIFY(update.stopped);
        QCOMPARE(update.matched, std::string("。结束"));

        // A prefix that turns out different is released whole, never half a character.
        StopChecker released({"结束"}, true);
        QCOMPARE(released.push("我们结").text, std::string("我们"));
        QCOMPARE(released.push("果").text, std::string("结果"));
        const auto stop = released.push("。结束了");
        QVERIFY(stop.stopped);
        QCOMPARE(stop.text, std::string("。结束"));
    }

    void independentOfDeltaBoundaries()
    {
        std::mt19937 rng(2024);
        const std::vector<std::string> alphabet = {"a", "b", "c", "\xe4\xbd\xa0", "\xe5\xa5\xbd"};  // 你, 好
        auto randomText = [&](size_t length) {
            std::string text;
            for (size_t i = 0; i < length; ++i) text += alphabet[rng() % alphabet.size()];
            return text;
        };
        int stoppedRuns = 0;
        for (int trial = 0; trial < 2000; ++trial) {
            const std::string text = randomText(5 + rng() % 40);
            std::vector<std::string> stops;
            for (size_t s = 0, n = 1 + rng() % 3; s < n; ++s) stops.push_back(randomText(1 + rng() % 4));
            const bool include = rng() % 2;
            // Cut into deltas on character boundaries (the detokenizer emits whole characters).
            std::vector<std::string> deltas;
            std::string current;
            for (size_t i = 0; i < text.size();) {
                const size_t length = static_cast<unsigned char>(text[i]) >= 0x80 ? 3 : 1;
                current += text.substr(i, length);
                i += length;
                if (rng() % 3 == 0) {
                    deltas.push_back(current);
                    current.clear();
                }
            }
            if (!current.empty()) deltas.push_back(current);

            StopChecker checker(stops, include);
            const Run got = feed(checker, deltas);
            const Run want = reference(text, stops, include);
            QCOMPARE(got.text, want.text);
            QCOMPARE(got.stopped, want.stopped);
            QCOMPARE(got.matched, want.matched);
            stoppedRuns += got.stopped;
        }
        QVERIFY(stoppedRuns > 200 && stoppedRuns < 1900);  // both outcomes exercised
    }
};

QTEST_APPLESS_MAIN(TestStopChecker)
#include "test_stop_checker.moc"
