// Tests for loadGenerationDefaults: ERNIE's shipped file, eos_token_id as an int or a list,
// null and absent keys, a missing file (empty defaults) and malformed files (errors naming them).
#include "engine/generation_config.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

using namespace brook;

class TestGenerationConfig : public QObject {
    Q_OBJECT

private slots:
    void readsErnieFile();
    void eosListAndNulls();
    void missingFileGivesEmptyDefaults();
    void malformedFilesNameFileAndKey();

private:
    QTemporaryDir m_dir;
    std::string write(const std::string& text) {
        const std::string path = m_dir.filePath("generation_config.json").toStdString();
        std::ofstream(path) << text;
        return path;
    }
};

void TestGenerationConfig::readsErnieFile() {
    // ERNIE-4.5-0.3B's generation_config.json, verbatim.
    const std::string path = write(R"({
    "do_sample": true,
    "top_p": 0.8,
    "temperature": 0.8,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "pad_token_id": 0,
    "repetition_penalty": 1.0,
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0
})");
    auto d = loadGenerationDefaults(path);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().c_str());
    QCOMPARE(d->doSample, std::optional<bool>(true));
    QCOMPARE(*d->temperature, 0.8f);
    QCOMPARE(*d->topP, 0.8f);
    QCOMPARE(*d->repetitionPenalty, 1.0f);
    QCOMPARE(*d->frequencyPenalty, 0.0f);
    QCOMPARE(*d->presencePenalty, 0.0f);
    QVERIFY(!d->topK.has_value());
    QVERIFY(!d->minP.has_value());
    QVERIFY(!d->maxNewTokens.has_value());
    QCOMPARE(d->eosTokenIds, (std::vector<int32_t>{2}));
}

void TestGenerationConfig::eosListAndNulls() {
    auto d = loadGenerationDefaults(write(R"({"eos_token_id": [2, 100272], "top_k": 40, "min_p": 0.05,
                                             "max_new_tokens": 77, "temperature": null, "unknown_key": {"x": 1}})"));
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().c_str());
    QCOMPARE(d->eosTokenIds, (std::vector<int32_t>{2, 100272}));
    QCOMPARE(*d->topK, 40);
    QCOMPARE(*d->minP, 0.05f);
    QCOMPARE(*d->maxNewTokens, 77);
    QVERIFY(!d->temperature.has_value());
    QVERIFY(!d->doSample.has_value());
}

void TestGenerationConfig::missingFileGivesEmptyDefaults() {
    auto d = loadGenerationDefaults(m_dir.filePath("nope/generation_config.json").toStdString());
    QVERIFY(d.ok());
    QVERIFY(d->eosTokenIds.empty());
    QVERIFY(!d->temperature.has_value());
}

void TestGenerationConfig::malformedFilesNameFileAndKey() {
    const std::pair<const char*, const char*> cases[] = {
        {"{\"top_p\": 0.8,", "not valid JSON"},
        {"[1]", "JSON object"},
        {"{\"top_p\": \"high\"}", "'top_p'"},
        {"{\"top_k\": 4.5}", "'top_k'"},
        {"{\"do_sample\": 1}", "'do_sample'"},
        {"{\"eos_token_id\": [2, \"</s>\"]}", "'eos_token_id'"},
        {"{\"eos_token_id\": \"</s>\"}", "'eos_token_id'"},
    };
    for (const auto& [text, expected] : cases) {
        auto d = loadGenerationDefaults(write(text));
        QVERIFY2(!d.ok(), text);
        QVERIFY2(d.error().find(expected) != std::string::npos, d.error().c_str());
        QVERIFY2(d.error().find("generation_config.json") != std::string::npos, d.error().c_str());
    }
}

QTEST_APPLESS_MAIN(TestGenerationConfig)
#include "test_generation_config.moc"
