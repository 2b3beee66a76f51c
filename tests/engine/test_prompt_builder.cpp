// PromptBuilder: the one prompt path and context rule every front end uses, and the typed errors
// (code + field) the engine hands front ends instead of words to match.
#include "engine/chat_template.h"
#include "engine/model_folder.h"
#include "engine/prompt_builder.h"
#include "engine_test_support.h"

#include <QtTest>

#include <climits>

using namespace brook;
using namespace brook::testsupport;

class TestPromptBuilder : public QObject {
    Q_OBJECT

    std::shared_ptr<const Tokenizer> m_tokenizer;
    int m_vocab = 0;

private slots:
    void initTestCase()
    {
        auto folder = ModelFolder::load(tinyModelDir());
        QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().c_str());
        m_tokenizer = folder->tokenizer;
        m_vocab = folder->config.vocabSize;
    }

    void eachPromptFormGoesThroughItsOwnPath()
    {
        const PromptBuilder builder(*m_tokenizer, m_vocab, {64, 0, {}});
        auto text = builder.tokens(std::string("hello world"));
        QVERIFY(text.ok());
        QCOMPARE(*text, m_tokenizer->encode("hello world", true));

        const std::vector<ChatMessage> chat = {{"system", "be brief"}, {"user", "hi <|end_of_sentence|>"}};
        auto rendered = builder.tokens(chat);
        QVERIFY(rendered.ok());
        QCOMPARE(*rendered, encodeChat(*m_tokenizer, chat));  // contents stay text

        const std::vector<int32_t> ids = {3, 4, 5};
        auto given = builder.tokens(ids);
        QVERIFY(given.ok());
        QCOMPARE(*given, ids);
    }

    void badPromptsAreInvalidArgumentsOfThePrompt()
    {
        const PromptBuilder builder(*m_tokenizer, m_vocab, {64, 0, {}});
        auto outside = builder.tokens(std::vector<int32_t>{1, m_vocab});
        QVERIFY(!outside.ok());
        QCOMPARE(outside.failure().code, ErrorCode::InvalidArgument);
        QCOMPARE(outside.failure().field, std::string("prompt"));
        QVERIFY(outside.error().find("outside the vocabulary") != std::string::npos);
        auto empty = builder.tokens(std::vector<int32_t>{});
        QVERIFY(!empty.ok());
        QCOMPARE(empty.failure().field, std::string("prompt"));
    }

    void contextCheckNamesTheFieldAtFault()
    {
        const PromptBuilder builder(*m_tokenizer, m_vocab, {64, 0, {}});
        QVERIFY(builder.checkContext(10, 54).ok());
        QVERIFY(builder.checkContext(63, std::nullopt).ok());

        auto prompt = builder.checkContext(64, std::nullopt);
        QVERIFY(!prompt.ok());
        QCOMPARE(prompt.failure().code, ErrorCode::ContextTooLong);
        QCOMPARE(prompt.failure().field, std::string("prompt"));
        QVERIFY(prompt.error().find("your request has 64 input tokens") != std::string::npos);

        auto completion = builder.checkContext(10, 55);
        QVERIFY(!completion.ok());
        QCOMPARE(completion.failure().field, std::string("max_tokens"));
        QVERIFY(completion.error().find("65 tokens (10 in the messages, 55 in the completion)") != std::string::npos);

        auto huge = builder.checkContext(10, INT64_MAX);  // no overflow in the sum
        QVERIFY(!huge.ok());
        QVERIFY(huge.error().find("more than") != std::string::npos);
    }

    void theWholeKvCacheBoundsARequestToo()
    {
        const PromptBuilder builder(*m_tokenizer, m_vocab, {4096, 100, {}});
        QVERIFY(builder.checkContext(50, 50).ok());
        auto tooBig = builder.checkContext(50, 51);
        QVERIFY(!tooBig.ok());
        QCOMPARE(tooBig.failure().code, ErrorCode::ContextTooLong);
        QVERIFY(tooBig.error().find("the whole cache holds 100") != std::string::npos);
        QCOMPARE(builder.room(40), int64_t(60));
    }

    void defaultMaxTokensIsTheRoomLeftCappedAndAtLeastOne()
    {
        QCOMPARE(PromptBuilder(*m_tokenizer, m_vocab, {64, 0, {}}).defaultMaxTokens(10), 54);
        QCOMPARE(PromptBuilder(*m_tokenizer, m_vocab, {64, 0, 20}).defaultMaxTokens(10), 20);
        QCOMPARE(PromptBuilder(*m_tokenizer, m_vocab, {64, 40, {}}).defaultMaxTokens(10), 30);
        QCOMPARE(PromptBuilder(*m_tokenizer, m_vocab, {64, 0, {}}).defaultMaxTokens(80), 1);
    }

    void theEngineAnswersWithTypedErrors()
    {
        LaunchOptions o = cpuOptions();
        o.maxModelLen = 64;
        auto engine = launch(o);
        auto tooLong = engine->submit(greedyRequest({5, 6, 7}, 62), [](const RequestOutput&) {});
        QVERIFY(!tooLong.ok());
        QCOMPARE(tooLong.failure().code, ErrorCode::ContextTooLong);
        QCOMPARE(tooLong.failure().field, std::string("max_tokens"));

        GenerationRequest badTopP = greedyRequest({5, 6}, 4);
        badTopP.params.topP = 0.0f;
        auto bad = engine->submit(badTopP, [](const RequestOutput&) {});
        QVERIFY(!bad.ok());
        QCOMPARE(bad.failure().code, ErrorCode::InvalidArgument);
        QCOMPARE(bad.failure().field, std::string("top_p"));

        engine->shutdown();
        auto late = engine->submit(greedyRequest({5, 6}, 4), [](const RequestOutput&) {});
        QVERIFY(!late.ok());
        QCOMPARE(late.failure().code, ErrorCode::ShuttingDown);
    }
};

QTEST_GUILESS_MAIN(TestPromptBuilder)
#include "test_prompt_builder.moc"
