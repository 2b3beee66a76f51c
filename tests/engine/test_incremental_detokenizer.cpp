// Tests for IncrementalDetokenizer: on random token streams (ordinary pieces, byte-fallback
// pieces, special and added tokens, out-of-range ids) and on real text, every delta is whole
// UTF-8 and the deltas plus flush() equal Tokenizer::decode of all tokens, byte for byte.
// Every delta also equals the two-decode definition's (TwoDecodeDetokenizer), table path or not.
// Run against two models: without and with sentencepiece's dummy prefix ("▁" stripped at the
// start of every decode window).
#include "engine/incremental_detokenizer.h"
#include "engine/tokenizer.h"
#include "testing/test_tokenizer_writer.h"

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <span>
#include <cstdio>
#include <string>

using brook::IncrementalDetokenizer;
using brook::Tokenizer;

namespace {

// Strict UTF-8 check: whole sequences only, no overlongs, surrogates or values past U+10FFFF.
bool isCompleteUtf8(const std::string& s)
{
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        size_t n = 0;
        uint32_t cp = 0;
        if (c < 0x80) {
            n = 1;
            cp = c;
        } else if ((c & 0xE0) == 0xC0) {
            n = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 4;
            cp = c & 0x07;
        } else return false;
        if (i + n > s.size()) return false;
        for (size_t k = 1; k < n; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        static constexpr std::array<uint32_t, 5> kMin = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += n;
    }
    return true;
}

std::string encodeUtf8(uint32_t cp)
{
    std::string out;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return out;
}

// vLLM's prefix/read-offset detokenizer written out with two Tokenizer::decode calls per push:
// the definition IncrementalDetokenizer's table lookups must reproduce delta for delta.
class TwoDecodeDetokenizer {
public:
    TwoDecodeDetokenizer(const Tokenizer& tok, bool skipSpecial) : m_tok(tok), m_skipSpecial(skipSpecial) {}

    std::string push(int32_t id)
    {
        m_ids.push_back(id);
        const std::span<const int32_t> all(m_ids);
        const std::string before = m_tok.decode(all.subspan(m_prefix, m_read - m_prefix), m_skipSpecial);
        const std::string after = m_tok.decode(all.subspan(m_prefix), m_skipSpecial);
        const bool unfinished = after.size() >= 3 && after.compare(after.size() - 3, 3, "\xEF\xBF\xBD") == 0;
        if (after.size() <= before.size() || unfinished) return {};
        m_prefix = m_read;
        m_read = m_ids.size();
        return after.substr(before.size());
    }

private:
    const Tokenizer& m_tok;
    bool m_skipSpecial;
    std::vector<int32_t> m_ids;
    size_t m_prefix = 0, m_read = 0;
};

struct StreamResult {
    std::string joined;  // every push() delta, then flush()
    int heldBack = 0;    // pushes that returned nothing
};

}  // namespace

class TestIncrementalDetokenizer : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dirs[2];
    std::unique_ptr<Tokenizer> m_toks[2];  // [0]: no dummy prefix (ERNIE-like), [1]: dummy prefix
    std::vector<int32_t> m_byteIds;        // <0x00>..<0xFF>

    // Streams ids through a detokenizer, checking every delta on the way; callers check
    // QTest::currentTestFailed() afterwards.
    void stream(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skipSpecial, StreamResult& result)
    {
        IncrementalDetokenizer detok(tok, skipSpecial);
        result = {};
        for (const int32_t id : ids) {
            const std::string delta = detok.push(id);
            if (delta.empty()) ++result.heldBack;
            QVERIFY2(isCompleteUtf8(delta), qPrintable(QString("delta after id %1 is not whole UTF-8").arg(id)));
            QVERIFY(delta.size() < 3 || delta.compare(delta.size() - 3, 3, "\xEF\xBF\xBD") != 0);
            result.joined += delta;
            QCOMPARE(detok.text(), result.joined);
        }
        result.joined += detok.flush();
        QCOMPARE(detok.text(), result.joined);
    }

private slots:
    void initTestCase()
    {
        for (int i = 0; i < 2; ++i) {
            QVERIFY(m_dirs[i].isValid());
            brook::testing::TestTokenizerOptions options;
            options.addDummyPrefix = i == 1;
            auto written = brook::testing::writeTestTokenizer(m_dirs[i].path().toStdString(), options);
            QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
            auto loaded = Tokenizer::load(m_dirs[i].path().toStdString());
            QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
            m_toks[i] = std::move(loaded.value());
        }
        for (int b = 0; b < 256; ++b) {
            char piece[8];
            std::snprintf(piece, sizeof piece, "<0x%02X>", b);
            const auto id = m_toks[0]->pieceToId(piece);
            QVERIFY2(id.has_value(), piece);
            m_byteIds.push_back(*id);
        }
    }

    void randomTokenStreams_data()
    {
        QTest::addColumn<int>("model");
        QTest::addColumn<bool>("skipSpecial");
        QTest::newRow("plain") << 0 << false;
        QTest::newRow("plain skip-special") << 0 << true;
        QTest::newRow("dummy-prefix") << 1 << false;
        QTest::newRow("dummy-prefix skip-special") << 1 << true;
    }

    void randomTokenStreams()
    {
        QFETCH(int, model);
        QFETCH(bool, skipSpecial);
        const Tokenizer& tok = *m_toks[model];
        const int vocab = tok.vocabSize();
        const int pieces = vocab - 1009;  // added tokens follow the sentencepiece pieces
        QRandomGenerator rng(1000 + model * 2 + (skipSpecial ? 1 : 0));
        for (int trial = 0; trial < 400; ++trial) {
            std::vector<int32_t> ids(rng.bounded(1, 48));
            for (int32_t& id : ids) {
                const int kind = rng.bounded(100);
                if (kind < 45) id = rng.bounded(pieces);                       // any piece
                else if (kind < 85) id = m_byteIds[rng.bounded(0x80, 0x100)];  // UTF-8 lead/continuation bytes
                else if (kind < 95) id = rng.bounded(pieces, vocab);           // added tokens
                else id = rng.bounded(2) ? vocab + rng.bounded(64) : -1 - rng.bounded(5);  // out of range
            }
            StreamResult result;
            stream(tok, ids, skipSpecial, result);
            if (QTest::currentTestFailed()) return;
            QCOMPARE(result.joined, tok.decode(ids, skipSpecial));
        }
    }

    // Mostly ordinary pieces, as generated text is: the table path answers most pushes, and
    // every delta equals the two-decode definition's, around bytes, specials and window starts.
    void directAppendsEqualTwoDecodes()
    {
        QFETCH(int, model);
        QFETCH(bool, skipSpecial);
        const Tokenizer& tok = *m_toks[model];
        const int vocab = tok.vocabSize();
        const int pieces = vocab - 1009;
        QRandomGenerator rng(2000 + model * 2 + (skipSpecial ? 1 : 0));
        size_t direct = 0, total = 0;
        for (int trial = 0; trial < 300; ++trial) {
            IncrementalDetokenizer detok(tok, skipSpecial);
            TwoDecodeDetokenizer reference(tok, skipSpecial);
            for (int i = rng.bounded(1, 64); i > 0; --i) {
                const int kind = rng.bounded(100);
                int32_t id = rng.bounded(pieces);
                if (kind >= 90) id = m_byteIds[rng.bounded(0x80, 0x100)];
                else if (kind >= 85) id = rng.bounded(pieces, vocab);
                QCOMPARE(detok.push(id), reference.push(id));
                ++total;
            }
            direct += detok.directAppends();
        }
        QVERIFY2(direct > total / 5, qPrintable(QString("%1 of %2 pushes were direct").arg(direct).arg(total)));
    }

    void directAppendsEqualTwoDecodes_data() { randomTokenStreams_data(); }

    void chineseByteFallbackText_data()
    {
        QTest::addColumn<int>("model");
        QTest::newRow("plain") << 0;
        QTest::newRow("dummy-prefix") << 1;
    }

    void chineseByteFallbackText()
    {
        QFETCH(int, model);
        const Tokenizer& tok = *m_toks[model];
        const std::string text = "龘靐齉爩，鱻麤。 Rare 字 like 𠀀 and 🙂 need bytes; 小河 does not.";
        const auto ids = tok.encode(text);
        int byteTokens = 0;
        for (const int32_t id : ids) byteTokens += tok.idToPiece(id).rfind("<0x", 0) == 0 ? 1 : 0;
        QVERIFY(byteTokens >= 20);
        StreamResult result;
        stream(tok, ids, false, result);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(result.joined, tok.decode(ids));
        QCOMPARE(result.joined, model == 0 ? text : tok.decode(tok.encode(text)));
        QVERIFY(result.heldBack >= byteTokens / 2);  // mid-character bytes were held back
    }

    void randomUtf8AsBytes()
    {
        // Random code points of every length, sent byte by byte: the stream must reproduce them.
        const Tokenizer& tok = *m_toks[0];
        QRandomGenerator rng(99);
        for (int trial = 0; trial < 100; ++trial) {
            std::string text;
            for (int i = rng.bounded(1, 20); i > 0; --i) {
                static constexpr std::array<std::pair<uint32_t, uint32_t>, 4> kRanges = {
                    {{0x20, 0x7F}, {0x80, 0x800}, {0x800, 0xD800}, {0x10000, 0x110000}}};
                const auto [lo, hi] = kRanges[rng.bounded(4)];
                text += encodeUtf8(rng.bounded(lo, hi));
            }
            std::vector<int32_t> ids;
            for (const char c : text) ids.push_back(m_byteIds[static_cast<unsigned char>(c)]);
            IncrementalDetokenizer detok(tok, false);
            std::string joined;
            for (const int32_t id : ids) joined += detok.push(id);
            QCOMPARE(detok.flush(), std::string());  // nothing unfinished at the end
            QCOMPARE(joined, text);
        }
    }

    void leadingSpacesSurviveWindowStarts_data() { chineseByteFallbackText_data(); }

    void leadingSpacesSurviveWindowStarts()
    {
        QFETCH(int, model);
        const Tokenizer& tok = *m_toks[model];
        const std::string text = "the river behind the old mill runs faster in spring than ever";
        const auto ids = tok.encode(text);
        IncrementalDetokenizer detok(tok, false);
        std::string joined;
        int deltasStartingWithSpace = 0;
        for (const int32_t id : ids) {
            const std::string delta = detok.push(id);
            deltasStartingWithSpace += !delta.empty() && delta.front() == ' ';
            joined += delta;
        }
        joined += detok.flush();
        QCOMPARE(joined, text);  // "▁river" at a window start keeps its space in the delta
        QVERIFY(deltasStartingWithSpace >= 5);
        QVERIFY2(detok.directAppends() + 2 >= ids.size(), "plain words after the first take the table path");
    }

    void unfinishedCharacterComesOutOnFlush()
    {
        const Tokenizer& tok = *m_toks[0];
        IncrementalDetokenizer detok(tok, false);
        const auto hello = tok.encode("hi ");
        for (const int32_t id : hello) detok.push(id);
        QCOMPARE(detok.push(m_byteIds[0xE4]), std::string());  // first byte of a CJK character
        QCOMPARE(detok.text(), std::string("hi "));
        QCOMPARE(detok.flush(), std::string("\xEF\xBF\xBD"));
        QCOMPARE(detok.text(), std::string("hi \xEF\xBF\xBD"));
    }

    void specialTokensInTheStream()
    {
        const Tokenizer& tok = *m_toks[0];
        const std::string text = "<|begin_of_sentence|>User: 你好\nAssistant: 好<|end_of_sentence|>";
        const auto ids = tok.encode(text);
        StreamResult kept, skipped;
        stream(tok, ids, false, kept);
        stream(tok, ids, true, skipped);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(kept.joined, text);
        QCOMPARE(skipped.joined, std::string("User: 你好\nAssistant: 好"));
    }
};

QTEST_APPLESS_MAIN(TestIncrementalDetokenizer)
#include "test_incremental_detokenizer.moc"
