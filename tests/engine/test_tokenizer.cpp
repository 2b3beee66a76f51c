// Tests for Tokenizer on a sentencepiece model trained here (writeTestTokenizer) with ERNIE's
// special and added tokens: exact round trips, special-token splitting, ids read from the
// files, skipSpecial, stop ids, load errors naming the file, and Baidu's own JSON files.
#include "engine/tokenizer.h"
#include "testing/test_model_writer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>

using brook::Tokenizer;

namespace {

constexpr int kPieces = 1200;

QJsonObject readJson(const std::filesystem::path& file)
{
    QFile f(QString::fromStdString(file.string()));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

void writeBytes(const std::filesystem::path& file, const QByteArray& bytes)
{
    QFile f(QString::fromStdString(file.string()));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

bool contains(const std::vector<int32_t>& ids, int32_t id)
{
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::filesystem::path m_path;
    std::unique_ptr<Tokenizer> m_tok;

    std::filesystem::path freshCopy(const QTemporaryDir& dir)
    {
        const std::filesystem::path path = dir.path().toStdString();
        std::filesystem::copy(
            m_path, path, std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
        return path;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.path().toStdString();
        auto written = brook::testing::writeTestTokenizer(m_path, kPieces);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
        auto loaded = Tokenizer::load(m_path);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
        m_tok = std::move(loaded.value());
    }

    void roundTrip_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("english") << "The river behind the old mill runs faster in spring.";
        QTest::newRow("chinese") << "老磨坊后面的那条小河，春天的时候流得最快。";
        QTest::newRow("mixed") << "Brook 支持中文 and English, 也能处理 code: x = 42;";
        QTest::newRow("newlines") << "line one\nline two\n\n\nline five\r\n\tindented\n";
        QTest::newRow("code") << "def f(x):\n    return [i * i for i in range(x)]  # squares\n";
        QTest::newRow("rare-chinese-emoji") << "龘靐齉爩 🙂🚀 Ω≈ç√";
        QTest::newRow("spaces") << "   leading and trailing   ";
        QTest::newRow("digits") << "3.14159 2718 1000000";
        QTest::newRow("empty") << "";
    }

    void roundTrip()
    {
        QFETCH(QString, text);
        const std::string s = text.toStdString();
        for (const bool parseSpecial : {true, false}) {
            const auto ids = m_tok->encode(s, parseSpecial);
            QCOMPARE(QString::fromStdString(m_tok->decode(ids)), text);
            for (const int32_t id : ids) QVERIFY(!m_tok->isSpecial(id));
        }
        QCOMPARE(m_tok->encode(s).empty(), s.empty());
    }

    void randomRoundTrip()
    {
        const std::vector<std::string> fragments = {
            "the",    " river", "mill", " ", "  ", "\n", "\t", "，",      "河水", "春天", "龘", "🙂",
            "x = 1;", "<",      "|",    ">", "<|", "3",  "90", "Ünïcödé", "\r\n", "a",    "。", "<|LOC_",
        };
        QRandomGenerator rng(20240611);
        for (int trial = 0; trial < 300; ++trial) {
            std::string s;
            const int n = rng.bounded(1, 30);
            for (int i = 0; i < n; ++i) s += fragments[rng.bounded(static_cast<int>(fragments.size()))];
            for (const bool parseSpecial : {true, false}) {
                const auto ids = m_tok->encode(s, parseSpecial);
                QCOMPARE(m_tok->decode(ids), s);
            }
        }
    }

    // Chat prompts repeat their earlier turns, whose chunks (text between special tokens) come
    // from the tokenizer's chunk cache on later encodes: the ids must be those of a tokenizer
    // without the cache.
    void repeatedChunksEncodeAsWithoutTheCache()
    {
        const QJsonObject map = readJson(m_path / "special_tokens_map.json");
        const std::string cls = map["cls_token"].toString().toStdString();
        const std::string sep = map["sep_token"].toString().toStdString();
        auto uncached = Tokenizer::load(m_path, 0);
        QVERIFY(uncached.ok());
        QRandomGenerator rng(77);
        const std::vector<std::string> words = {"the river", " mill", "河水", "春天", " 🙂", "\n", " x = 1;", "  "};
        std::string history = cls;
        for (int turn = 0; turn < 12; ++turn) {
            std::string user = "User: ", reply = "Assistant: ";
            for (int i = rng.bounded(10, 40); i > 0; --i) user += words[rng.bounded(int(words.size()))];
            for (int i = rng.bounded(10, 40); i > 0; --i) reply += words[rng.bounded(int(words.size()))];
            const std::string prompt = history + user + "\nAssistant: ";
            const auto cached = m_tok->encode(prompt);  // the history's chunks were seen before
            QCOMPARE(cached, uncached.value()->encode(prompt));
            QCOMPARE(m_tok->encode(prompt), cached);  // every chunk seen before
            history += user + "\n" + reply + sep;
        }
    }

    void specialTokensSplitOutAndMappedWhole()
    {
        const QJsonObject map = readJson(m_path / "special_tokens_map.json");
        const std::string cls = map["cls_token"].toString().toStdString();
        const std::string sep = map["sep_token"].toString().toStdString();
        QCOMPARE(m_tok->clsToken(), cls);
        QCOMPARE(m_tok->sepToken(), sep);
        const auto clsId = m_tok->pieceToId(cls);
        const auto sepId = m_tok->pieceToId(sep);
        QVERIFY(clsId && sepId && *clsId != *sepId);
        QVERIFY(m_tok->isSpecial(*clsId) && m_tok->isSpecial(*sepId));
        QCOMPARE(m_tok->idToPiece(*clsId), cls);

        const std::string text = cls + "User: Hi\nAssistant: Hello" + sep + "User: 你好<mask:4>\n";
        const auto ids = m_tok->encode(text);
        QCOMPARE(ids.front(), *clsId);
        QCOMPARE(std::count(ids.begin(), ids.end(), *sepId), 1);
        QVERIFY(contains(ids, *m_tok->pieceToId("<mask:4>")));
        QCOMPARE(m_tok->decode(ids), text);
        // No BOS is added.
        QVERIFY(!contains(ids, *m_tok->pieceToId("<s>")));
    }

    void appendedTextOfOrdinaryPiecesOnly()
    {
        // Every ordinary piece: its text with "▁" as spaces, and decoding it after visible text
        // appends exactly that (the detokenizer's table path relies on it).
        const auto anchor = m_tok->encode("river");
        QVERIFY(!anchor.empty() && !m_tok->decode(anchor).empty());
        int ordinary = 0;
        for (int32_t id = 0; id < m_tok->vocabSize(); ++id) {
            const auto text = m_tok->appendedText(id);
            if (!text) continue;
            ++ordinary;
            QVERIFY(!m_tok->isSpecial(id));
            std::vector<int32_t> ids = anchor;
            ids.push_back(id);
            QCOMPARE(m_tok->decode(ids), m_tok->decode(anchor) + std::string(*text));
            // A text that starts with it is visible at once (so nothing after it loses a space).
            if (m_tok->startsNonEmptyText(id)) QVERIFY(!m_tok->decode(std::vector<int32_t>{id}).empty());
        }
        QVERIFY(ordinary > 500);
        for (const char* piece : {"<0x41>", "<s>", "</s>", "<unk>"})  // byte-fallback, control, unknown
            if (const auto id = m_tok->pieceToId(piece)) QVERIFY2(!m_tok->appendedText(*id), piece);
        QVERIFY(!m_tok->appendedText(*m_tok->pieceToId(m_tok->clsToken())));
        QVERIFY(!m_tok->appendedText(-1) && !m_tok->appendedText(m_tok->vocabSize()));
        // "▁" alone decodes to nothing at the start of a text; a piece with letters does not.
        if (const auto space = m_tok->pieceToId("\xE2\x96\x81")) QVERIFY(!m_tok->startsNonEmptyText(*space));
        QVERIFY(m_tok->startsNonEmptyText(anchor.front()));
    }

    void everyNamedTokenIsSpecial()
    {
        const QJsonObject map = readJson(m_path / "special_tokens_map.json");
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (!it.value().isString()) continue;
            const std::string token = it.value().toString().toStdString();
            const auto id = m_tok->pieceToId(token);
            QVERIFY2(id.has_value(), token.c_str());
            QVERIFY2(m_tok->isSpecial(*id), token.c_str());
            QCOMPARE(m_tok->encode("x" + token + "y").at(1), *id);
        }
    }

    void plainTextSpellingSpecialTokensStaysText()
    {
        const std::string text = "say <|begin_of_sentence|> and <|LOC_5|> or </s><unk><mask:1>";
        const auto ids = m_tok->encode(text, /*parseSpecial=*/false);
        for (const int32_t id : ids) QVERIFY2(!m_tok->isSpecial(id), m_tok->idToPiece(id).c_str());
        QVERIFY(!contains(ids, *m_tok->pieceToId("<|begin_of_sentence|>")));
        QCOMPARE(m_tok->decode(ids), text);
        // The same text parsed for specials yields them.
        QVERIFY(contains(m_tok->encode(text, true), *m_tok->pieceToId("<|begin_of_sentence|>")));
    }

    void addedTokensMapToTheirIds()
    {
        const QJsonObject added = readJson(m_path / "added_tokens.json");
        QCOMPARE(added.size(), 1009);
        int maxId = 0;
        for (auto it = added.begin(); it != added.end(); ++it) {
            const std::string token = it.key().toStdString();
            const int id = it.value().toInt();
            maxId = std::max(maxId, id);
            QCOMPARE(m_tok->pieceToId(token), std::optional<int32_t>(id));
            QCOMPARE(m_tok->encode(token), std::vector<int32_t>{id});
            QCOMPARE(m_tok->idToPiece(id), token);
            QVERIFY(m_tok->isSpecial(id));
        }
        QCOMPARE(m_tok->vocabSize(), maxId + 1);
        // Digits inside a token do not end it early.
        const auto ids = m_tok->encode("<|LOC_100|>7<|LOC_1|>");
        QCOMPARE(ids.front(), added["<|LOC_100|>"].toInt());
        QCOMPARE(ids.back(), added["<|LOC_1|>"].toInt());
        QCOMPARE(ids.size(), size_t(3));
    }

    void longestMatchWins()
    {
        // An added token that extends another one: the longer is taken where both match.
        QTemporaryDir dir;
        const auto path = freshCopy(dir);
        const int base = m_tok->vocabSize();
        const QByteArray added =
            QStringLiteral("{\"[A]\": %1, \"[A][B]\": %2, \"[B]\": %3}").arg(base).arg(base + 1).arg(base + 2).toUtf8();
        writeBytes(path / "added_tokens.json", added);
        auto loaded = Tokenizer::load(path);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
        const auto ids = (*loaded)->encode("[A][B][A]x[B]");
        QCOMPARE(ids.front(), base + 1);
        QCOMPARE(ids.at(1), base);
        QCOMPARE(ids.back(), base + 2);
        QCOMPARE((*loaded)->decode(ids), std::string("[A][B][A]x[B]"));
    }

    void decodeSkipSpecial()
    {
        const std::string text = "<|begin_of_sentence|>Hello<|LOC_5|> world 世界<|end_of_sentence|></s>";
        const auto ids = m_tok->encode(text);
        QCOMPARE(m_tok->decode(ids), text);
        QCOMPARE(m_tok->decode(ids, /*skipSpecial=*/true), std::string("Hello world 世界"));
    }

    void decodeToleratesBadIds()
    {
        const auto hello = m_tok->encode("hello");
        std::vector<int32_t> ids = {-5, m_tok->vocabSize(), m_tok->vocabSize() + 1000};
        ids.insert(ids.end(), hello.begin(), hello.end());
        QCOMPARE(m_tok->decode(ids), std::string("hello"));
        QCOMPARE(m_tok->idToPiece(m_tok->vocabSize()), std::string());
        QVERIFY(!m_tok->pieceToId("no such piece at all").has_value());
    }

    void byteFallback()
    {
        const std::string rare = "龘";  // not in the corpus: encoded as its three UTF-8 bytes
        const auto ids = m_tok->encode(rare);
        QCOMPARE(ids.size(), size_t(3));
        for (const int32_t id : ids) QVERIFY(m_tok->idToPiece(id).rfind("<0x", 0) == 0);
        QCOMPARE(m_tok->decode(ids), rare);
        // An unfinished character decodes to U+FFFD, never to raw bytes.
        const std::vector<int32_t> partial(ids.begin(), ids.begin() + 2);
        QVERIFY(QString::fromStdString(m_tok->decode(partial)).contains(QChar(0xFFFD)));
    }

    void stopTokenIds()
    {
        const QJsonObject map = readJson(m_path / "special_tokens_map.json");
        const auto eos = m_tok->pieceToId(map["eos_token"].toString().toStdString());
        const auto sep = m_tok->pieceToId(map["sep_token"].toString().toStdString());
        QVERIFY(eos && sep);
        QCOMPARE(m_tok->eosTokenId(), eos);
        QCOMPARE(m_tok->stopTokenIds(), (std::vector<int32_t>{*eos, *sep}));
    }

    void writerOutputIsShapedLikeErnies()
    {
        const std::filesystem::path ernie = BROOK_TEST_DATA_DIR "/ernie-4.5-0.3b-tokenizer";
        const QJsonObject ours = readJson(m_path / "tokenizer_config.json");
        const QJsonObject theirs = readJson(ernie / "tokenizer_config.json");
        QVERIFY(!theirs.isEmpty());
        QCOMPARE(ours.keys(), theirs.keys());
        QCOMPARE(ours["chat_template"].toString(), theirs["chat_template"].toString());
        const QJsonObject ourMap = readJson(m_path / "special_tokens_map.json");
        const QJsonObject theirMap = readJson(ernie / "special_tokens_map.json");
        QCOMPARE(ourMap, theirMap);  // same keys and strings, added-token list included
        // Added tokens: ERNIE's names, contiguous from the sentencepiece size.
        const QJsonObject ourAdded = readJson(m_path / "added_tokens.json");
        const QJsonObject theirAdded = readJson(ernie / "added_tokens.json");
        QCOMPARE(ourAdded.keys(), theirAdded.keys());
        const int ourOffset = m_tok->vocabSize() - ourAdded.size();
        QCOMPARE(ourOffset, kPieces);
        for (const QString& key : theirAdded.keys())
            QCOMPARE(ourAdded[key].toInt() - ourOffset, theirAdded[key].toInt() - 100295);
    }

    void trainingIsCachedAndReproducible()
    {
        QTemporaryDir other;
        const std::filesystem::path path = other.path().toStdString();
        QVERIFY(brook::testing::writeTestTokenizer(path, kPieces).ok());
        QFile a(QString::fromStdString((m_path / "tokenizer.model").string()));
        QFile b(QString::fromStdString((path / "tokenizer.model").string()));
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());
    }

    void loadsErniesOwnJsonFiles()
    {
        // Baidu's JSON files beside our model: added ids start at 100295 as in the real model.
        QTemporaryDir dir;
        const std::filesystem::path path = dir.path().toStdString();
        std::filesystem::copy_file(m_path / "tokenizer.model", path / "tokenizer.model");
        for (const char* name : {"added_tokens.json", "special_tokens_map.json", "tokenizer_config.json"})
            std::filesystem::copy_file(std::filesystem::path(BROOK_TEST_DATA_DIR "/ernie-4.5-0.3b-tokenizer") / name,
                                       path / name);
        auto loaded = Tokenizer::load(path);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
        const Tokenizer& tok = **loaded;
        const QJsonObject added = readJson(path / "added_tokens.json");
        QCOMPARE(tok.vocabSize(), added["<|IMAGE_SEP|>"].toInt() + 1);
        QCOMPARE(tok.encode("<|LOC_5|>"), std::vector<int32_t>{added["<|LOC_5|>"].toInt()});
        QCOMPARE(tok.idToPiece(added["<|LOC_5|>"].toInt()), std::string("<|LOC_5|>"));
        QCOMPARE(tok.stopTokenIds().size(), size_t(2));
        QCOMPARE(tok.clsToken(), std::string("<|begin_of_sentence|>"));
        const std::string text = "<|begin_of_sentence|>User: 你好<|IMAGE_PLACEHOLDER|>\nAssistant: ";
        QCOMPARE(tok.decode(tok.encode(text)), text);
    }

    void missingModelIsAnError()
    {
        QTemporaryDir dir;
        auto loaded = Tokenizer::load(dir.path().toStdString());
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.error().find("tokenizer.model") != std::string::npos, loaded.error().c_str());
    }

    void corruptModelIsAnError()
    {
        QTemporaryDir dir;
        const auto path = freshCopy(dir);
        QByteArray garbage(4096, '\0');
        QRandomGenerator rng(7);
        for (char& c : garbage) c = static_cast<char>(rng.bounded(256));
        writeBytes(path / "tokenizer.model", garbage);
        auto loaded = Tokenizer::load(path);
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.error().find("tokenizer.model") != std::string::npos, loaded.error().c_str());
    }

    void corruptJsonIsAnError_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("contents");
        for (const char* file : {"added_tokens.json", "special_tokens_map.json", "tokenizer_config.json"}) {
            QTest::addRow("%s truncated", file) << file << QByteArray("{\"eos_token\": \"</s>\", ");
            QTest::addRow("%s not an object", file) << file << QByteArray("[1, 2, 3]");
        }
        QTest::newRow("added id not a number") << "added_tokens.json" << QByteArray("{\"<|x|>\": \"7\"}");
        QTest::newRow("added id absurdly large") << "added_tokens.json" << QByteArray("{\"<|x|>\": 4000000000}");
        QTest::newRow("eos not a string") << "special_tokens_map.json" << QByteArray("{\"eos_token\": 2}");
    }

    void corruptJsonIsAnError()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, contents);
        QTemporaryDir dir;
        const auto path = freshCopy(dir);
        writeBytes(path / file.toStdString(), contents);
        auto loaded = Tokenizer::load(path);
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.error().find(file.toStdString()) != std::string::npos, loaded.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
