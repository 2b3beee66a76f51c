// Tests for loadGenerationDefaults: ERNIE's shipped file, eos_token_id as an int or a list,
// null and absent keys, a missing file (empty defaults) and malformed files (errors naming them):
// out-of-range numbers, deep nesting, a FIFO in the file's place.
#include "engine/generation_config.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace brook;

class TestGenerationConfig : public QObject {
    Q_OBJECT

private slots:
    void readsErnieFile();
    void eosListAndNulls();
    void missingFileGivesEmptyDefaults();
    void malformedFilesNameFileAndKey();
    void outOfRangeNumbersAreErrorsNotWrapped();
    void deepNestingIsAnErrorNotACrash();
    void fifoIsRefusedWithoutBlocking();

private:
    QTemporaryDir m_dir;
    std::string write(const std::string& text)
    {
        const std::string path = m_dir.filePath("generation_config.json").toStdString();
        std::ofstream(path) << text;
        return path;
    }
};

void TestGenerationConfig::readsErnieFile()
{
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

void TestGenerationConfig::eosListAndNulls()
{
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

void TestGenerationConfig::missingFileGivesEmptyDefaults()
{
    auto d = loadGenerationDefaults(m_dir.filePath("nope/generation_config.json").toStdString());
    QVERIFY(d.ok());
    QVERIFY(d->eosTokenIds.empty());
    QVERIFY(!d->temperature.has_value());
}

void TestGenerationConfig::malformedFilesNameFileAndKey()
{
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

void TestGenerationConfig::outOfRangeNumbersAreErrorsNotWrapped()
{
    // 2^40 used to wrap to 0 on its way to int32 (token 0 then stopped every reply); 1e300 does
    // not fit a float (converting it is undefined behaviour).
    const std::pair<const char*, const char*> cases[] = {
        {R"({"eos_token_id": 1099511627776})", "'eos_token_id' 1099511627776 is out of range"},
        {R"({"eos_token_id": [2, 1099511627776]})", "'eos_token_id' 1099511627776 is out of range"},
        {R"({"eos_token_id": 18446744073709551615})", "'eos_token_id' 18446744073709551615 is out of range"},
        {R"({"eos_token_id": -3})", "'eos_token_id' -3 is out of range"},
        {R"({"top_k": 4294967336})", "'top_k' 4294967336 is out of range"},
        {R"({"max_new_tokens": -9223372036854775808})", "'max_new_tokens' -9223372036854775808 is out of range"},
        {R"({"temperature": 1e300})", "'temperature'"},
        {R"({"top_p": -1e39})", "'top_p'"},
    };
    for (const auto& [text, expected] : cases) {
        auto d = loadGenerationDefaults(write(text));
        QVERIFY2(!d.ok(), text);
        QVERIFY2(d.error().find(expected) != std::string::npos, d.error().c_str());
        QVERIFY2(d.error().find("generation_config.json") != std::string::npos, d.error().c_str());
    }
    auto edge =
        loadGenerationDefaults(write(R"({"eos_token_id": [0, 2147483647], "top_k": -1, "temperature": 3.4e38})"));
    QVERIFY2(edge.ok(), edge.ok() ? "" : edge.error().c_str());
    QCOMPARE(edge->eosTokenIds, (std::vector<int32_t>{0, 2147483647}));
    QCOMPARE(*edge->topK, -1);
}

void TestGenerationConfig::deepNestingIsAnErrorNotACrash()
{
    // A deep eos_token_id list used to be copied, recursing once per level.
    const int depth = 100000;
    auto d = parseGenerationDefaults("{\"eos_token_id\": " + std::string(depth, '[') + std::string(depth, ']') + "}",
                                     "deep/generation_config.json");
    QVERIFY(!d.ok());
    QVERIFY2(d.error().find("deep/generation_config.json: JSON nested deeper than") != std::string::npos,
             d.error().c_str());
}

void TestGenerationConfig::fifoIsRefusedWithoutBlocking()
{
#ifdef _WIN32
    QSKIP("no FIFOs in the Windows file system");
#else
    // Without a writer, reading a FIFO waits forever: this test would hang.
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("generation_config.json").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    auto d = loadGenerationDefaults(fifo);
    QVERIFY(!d.ok());
    QVERIFY2(d.error().find(fifo + ": not a regular file") != std::string::npos, d.error().c_str());
#endif
}

QTEST_APPLESS_MAIN(TestGenerationConfig)
#include "test_generation_config.moc"
