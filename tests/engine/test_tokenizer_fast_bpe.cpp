// Tests that SpmBpeEncoder (the fast BPE path behind Tokenizer::encode) gives exactly
// libsentencepiece's ids: a large random corpus of corpus text, random Unicode (CJK, emoji,
// "▁", U+FFFD), whitespace runs, user-defined special strings, invalid UTF-8 (stray and
// truncated sequences, overlong forms, surrogates, past U+10FFFF) and long words, on test
// tokenizers with and without the dummy prefix and at two vocabulary sizes.
#include "engine/regular_file.h"
#include "engine/tokenizer_spm_bpe.h"
#include "platform/resource_path.h"
#include "testing/test_tokenizer_writer.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <latch>
#include <thread>
#include <random>
#include <sstream>

using brook::SpmBpeEncoder;
using brook::SpmReferenceEncoder;

namespace {

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string utf8(uint32_t c)
{
    std::string s;
    if (c < 0x80) {
        s += char(c);
    } else if (c < 0x800) {
        s += char(0xC0 | (c >> 6));
        s += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        s += char(0xE0 | (c >> 12));
        s += char(0x80 | ((c >> 6) & 0x3F));
        s += char(0x80 | (c & 0x3F));
    } else {
        s += char(0xF0 | (c >> 18));
        s += char(0x80 | ((c >> 12) & 0x3F));
        s += char(0x80 | ((c >> 6) & 0x3F));
        s += char(0x80 | (c & 0x3F));
    }
    return s;
}

// One random fragment; the kinds are weighted so that every text mixes several.
std::string fragment(std::mt19937& rng, const std::string& corpus)
{
    static const char* const kSpecial[] = {"<|begin_of_sentence|>",
                                           "<|end_of_sentence|>",
                                           "<mask:1>",
                                           "<mask:4>",
                                           "<mask:7>",
                                           "<|begin_of_sentence",
                                           "<mask:",
                                           "<|LOC_12|>",
                                           "<unk>",
                                           "<s>",
                                           "</s>",
                                           "<0x41>"};
    auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng); };
    switch (pick(12)) {
    case 0:
    case 1:
    case 2: {  // a slice of the training text: long merges, realistic words
        const size_t begin = pick(static_cast<uint32_t>(corpus.size()));
        return corpus.substr(begin, 1 + pick(200));  // may cut a character: invalid bytes too
    }
    case 3: {  // whitespace runs
        std::string s;
        for (uint32_t i = 0, n = 1 + pick(8); i < n; ++i) s += " \t\n\r\xE2\x96\x81"[pick(5)];
        if (pick(4) == 0) s += "\xE2\x96\x81";
        return s;
    }
    case 4: return kSpecial[pick(std::size(kSpecial))];
    case 5: {  // invalid UTF-8
        static const char* const kInvalid[] = {"\x80",
                                               "\xFF",
                                               "\xC0\x80",
                                               "\xC3",
                                               "\xE4\xB8",
                                               "\xED\xA0\x80",
                                               "\xF4\x90\x80\x80",
                                               "\xF0\x9F\x98",
                                               "\xF8\x88\x80\x80\x80",
                                               "\xFE",
                                               "\xEF\xBF\xBD",
                                               "\xC1\xBF",
                                               "\xE0\x80\xAF"};
        return kInvalid[pick(std::size(kInvalid))];
    }
    case 6: {  // a long word
        std::string s;
        for (uint32_t i = 0, n = 20 + pick(200); i < n; ++i) s += char('a' + pick(26));
        return s;
    }
    case 7: return std::to_string(rng());
    default: {  // random characters from several ranges
        std::string s;
        for (uint32_t i = 0, n = 1 + pick(12); i < n; ++i) {
            static const std::pair<uint32_t, uint32_t> kRanges[] = {
                {0x20, 0x7E},     {0x00, 0x1F},        {0xA0, 0x24F},    {0x370, 0x4FF},
                {0x4E00, 0x9FFF}, {0x3000, 0x303F},    {0xFF00, 0xFFEF}, {0x1F300, 0x1FAFF},
                {0xAC00, 0xD7A3}, {0x10000, 0x10FFFF}, {0x2580, 0x2582}};
            const auto [lo, hi] = kRanges[pick(std::size(kRanges))];
            s += utf8(lo + pick(hi - lo + 1));
        }
        return s;
    }
    }
}

}  // namespace

class TestTokenizerFastBpe : public QObject {
    Q_OBJECT

private:
    void compareOn(const brook::testing::TestTokenizerOptions& options, uint32_t seed, int texts)
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path path = dir.path().toStdString();
        const auto written = brook::testing::writeTestTokenizer(path, options);
        QVERIFY2(static_cast<bool>(written), written ? "" : written.error().c_str());
        const std::string model = readText(path / "tokenizer.model");
        const auto fast = SpmBpeEncoder::build(model);
        QVERIFY2(fast != nullptr, "the test tokenizer must take the fast path");
        const auto reference = SpmReferenceEncoder::load(model);
        QVERIFY(reference != nullptr);

        const std::filesystem::path corpusDir = brook::findResource("test-corpus");
        const std::string corpus =
            readText(corpusDir / "en.txt") + readText(corpusDir / "zh.txt") + readText(corpusDir / "code.txt");
        QVERIFY(!corpus.empty());

        // The whole corpus files first, then random mixes of 1..40 fragments.
        std::vector<std::string> cases = {corpus, "", " ", "a", "\xE2\x96\x81", "  leading", "trailing  "};
        std::mt19937 rng(seed);
        for (int i = 0; i < texts; ++i) {
            std::string text;
            for (int k = 0, n = 1 + static_cast<int>(rng() % 40); k < n; ++k) text += fragment(rng, corpus);
            cases.push_back(std::move(text));
        }
        size_t tokens = 0;
        for (const auto& text : cases) {
            std::vector<int32_t> got;
            fast->encode(text, got);
            const auto want = reference->encode(text);
            tokens += want.size();
            if (got != want) {
                QByteArray hex = QByteArray::fromStdString(text).toHex(' ');
                QFAIL(qPrintable(QString("ids differ (%1 vs %2 ids) for text bytes %3")
                                     .arg(got.size())
                                     .arg(want.size())
                                     .arg(QString::fromLatin1(hex.left(3000)))));
            }
        }
        qInfo("%zu texts, %zu tokens identical", cases.size(), tokens);
    }

private slots:
    void identicalNoDummyPrefix() { compareOn({.vocabSize = 1200, .addDummyPrefix = false}, 1, 3000); }
    void identicalDummyPrefix() { compareOn({.vocabSize = 1200, .addDummyPrefix = true}, 2, 3000); }
    void identicalLargerVocab() { compareOn({.vocabSize = 2000, .addDummyPrefix = false}, 3, 3000); }

    // The scratch memory kept between calls is bounded whatever the number of threads that
    // encode (the HTTP server has hundreds) and the length of their texts (issue 54's soak).
    void keptScratchIsBounded()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path path = dir.path().toStdString();
        QVERIFY(static_cast<bool>(brook::testing::writeTestTokenizer(path, {.vocabSize = 1200})));
        const auto fast = SpmBpeEncoder::build(readText(path / "tokenizer.model"));
        QVERIFY(fast != nullptr);

        // A long text's scratch is not kept.
        std::string longText;
        while (longText.size() < 100000) longText += "the quick brown fox jumps over the lazy dog ";
        std::vector<int32_t> longIds;
        fast->encode(longText, longIds);
        QVERIFY(!longIds.empty());
        QCOMPARE(fast->keptScratchBytes(), size_t(0));

        // 64 threads at once, each with a 3,000-character text: at most the bound is kept, and
        // the ids are those of the same text encoded alone.
        const std::string text = longText.substr(0, 3000);
        std::vector<int32_t> alone;
        fast->encode(text, alone);
        QVERIFY(fast->keptScratchBytes() > 0);  // a short text's scratch is kept for the next call
        constexpr int kThreads = 64;
        std::latch start(kThreads);
        std::vector<std::vector<int32_t>> got(kThreads);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                start.arrive_and_wait();
                for (int repeat = 0; repeat < 3; ++repeat) {
                    got[size_t(t)].clear();
                    fast->encode(text, got[size_t(t)]);
                }
            });
        for (auto& thread : threads) thread.join();
        for (const auto& ids : got) QCOMPARE(ids, alone);
        QVERIFY2(fast->keptScratchBytes() <= SpmBpeEncoder::maxKeptScratchBytes(),
                 qPrintable(QString("%1 bytes kept, bound %2")
                                .arg(fast->keptScratchBytes())
                                .arg(SpmBpeEncoder::maxKeptScratchBytes())));
    }

    // A model the fast path does not reproduce is refused (the tokenizer keeps sentencepiece).
    void refusesGarbage() { QVERIFY(SpmBpeEncoder::build("not a model") == nullptr); }
};

QTEST_GUILESS_MAIN(TestTokenizerFastBpe)
#include "test_tokenizer_fast_bpe.moc"
