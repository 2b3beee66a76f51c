// Structured outputs through the engine on the CPU backend with the tiny random model (which
// talks nonsense, so only the mask keeps its output in shape): 200 random schemas each give JSON
// that validates (checked by an independent validator), regex and choice outputs match, the
// output is the same after preemption, a complete grammar ends the request even under
// ignore_eos, and bad specs are refused at submit naming the field.
#include "engine_test_support.h"
#include "json_schema_checker.h"
#include "random_schema_generator.h"

#include "engine/backend.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model_folder.h"
#include "engine/tokenizer.h"

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <random>
#include <regex>
#include <set>

using namespace brook;
using namespace brook::testsupport;

namespace {

LaunchOptions structuredOptions()
{
    LaunchOptions o = cpuOptions();
    o.maxModelLen = 2048;
    o.maxNumBatchedTokens = 2048;
    return o;
}

GenerationRequest structuredRequest(std::mt19937& rng, int vocab, StructuredOutput output, uint64_t seed)
{
    GenerationRequest r;
    r.prompt = randomPrompt(rng, 8, vocab);
    r.params.temperature = 1.0f;
    r.params.seed = seed;
    r.params.maxTokens = 1500;
    r.params.structured = std::move(output);
    return r;
}

StructuredOutput jsonSchema(const nlohmann::json& schema)
{
    StructuredOutput o;
    o.kind = StructuredOutput::Kind::JsonSchema;
    o.text = schema.dump();
    o.field = "response_format.json_schema.schema";
    return o;
}

// A backend that forwards to the CPU backend and records, for every step with masked rows, whether
// prepareStep saw the same batch first and whether its masks were still unset then: the engine
// starts the forward before it computes masks, so a GPU overlaps the two.
class RecordingBackend final : public Backend {
public:
    explicit RecordingBackend(std::unique_ptr<Backend> inner) : m_inner(std::move(inner)) {}
    std::string name() const override { return m_inner->name(); }
    const ModelConfig& config() const override { return m_inner->config(); }
    int numKvBlocks() const override { return m_inner->numKvBlocks(); }
    int blockSize() const override { return m_inner->blockSize(); }
    BackendMemory memory() const override { return m_inner->memory(); }
    std::string kvCacheDtype() const override { return m_inner->kvCacheDtype(); }
    std::vector<float> logits(std::span<const BatchSequence> batch) override { return m_inner->logits(batch); }

    void prepareStep(std::span<const BatchSequence> batch) override
    {
        m_prepared = batch.data();
        m_preparedSize = batch.size();
        m_unmaskedAtPrepare = std::none_of(batch.begin(), batch.end(),
                                           [](const BatchSequence& b) { return !b.sampling.allowedTokens.empty(); });
        m_inner->prepareStep(batch);
    }
    std::vector<SampleResult> step(std::span<const BatchSequence> batch) override
    {
        const bool masked = std::any_of(batch.begin(), batch.end(),
                                        [](const BatchSequence& b) { return !b.sampling.allowedTokens.empty(); });
        if (masked) {
            ++maskedSteps;
            if (m_prepared == batch.data() && m_preparedSize == batch.size() && m_unmaskedAtPrepare) ++overlappedSteps;
        }
        m_prepared = nullptr;
        return m_inner->step(batch);
    }

    std::atomic<int> maskedSteps = 0, overlappedSteps = 0;

private:
    std::unique_ptr<Backend> m_inner;
    const BatchSequence* m_prepared = nullptr;
    size_t m_preparedSize = 0;
    bool m_unmaskedAtPrepare = false;
};

}  // namespace

class TestStructuredOutput : public QObject {
    Q_OBJECT
private slots:
    void randomSchemasGiveValidJson()
    {
        auto engine = launch(structuredOptions());
        const int vocab = engine->tokenizer().vocabSize();
        std::mt19937 rng(2026);
        RandomSchemaGenerator generator(18);
        constexpr int kSchemas = 200, kBatch = 25;
        int checked = 0;
        for (int start = 0; start < kSchemas; start += kBatch) {
            std::vector<nlohmann::json> schemas;
            std::vector<std::shared_ptr<RequestStream>> streams;
            for (int i = 0; i < kBatch; ++i) {
                schemas.push_back(generator.schema());
                auto stream = RequestStream::submit(
                    *engine, structuredRequest(rng, vocab, jsonSchema(schemas.back()), uint64_t(start + i)));
                QVERIFY2(stream, qPrintable(QString::fromStdString(schemas.back().dump() + ": " +
                                                                   (stream ? "" : stream.error()))));
                streams.push_back(*stream);
            }
            for (int i = 0; i < kBatch; ++i) {
                const Completion c = drain(*streams[size_t(i)]);
                const std::string context = "schema " + schemas[size_t(i)].dump() + "\noutput " + c.text;
                QVERIFY2(c.finish == FinishReason::Stop, qPrintable(QString::fromStdString(context)));
                const nlohmann::json value = nlohmann::json::parse(c.text, nullptr, false);
                QVERIFY2(!value.is_discarded(), qPrintable(QString::fromStdString("not JSON: " + context)));
                const std::vector<std::string> errors = JsonSchemaChecker(schemas[size_t(i)]).check(value);
                QVERIFY2(errors.empty(),
                         qPrintable(QString::fromStdString(errors.empty() ? "" : errors[0] + "\n" + context)));
                ++checked;
            }
        }
        QCOMPARE(checked, kSchemas);
        const EngineStats stats = waitIdle(*engine);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void regexAndChoiceOutputsMatch()
    {
        auto engine = launch(structuredOptions());
        const int vocab = engine->tokenizer().vocabSize();
        std::mt19937 rng(4);
        const std::vector<std::string> patterns = {"[a-z]{3,8}@[a-z]{2,5}\\.(com|cn)", "\\d{1,3}(,\\d{3}){0,2}",
                                                   "(是|否)：[一-龥]{1,4}", "#[0-9A-F]{6}"};
        for (int round = 0; round < 3; ++round)
            for (const std::string& pattern : patterns) {
                StructuredOutput o;
                o.kind = StructuredOutput::Kind::Regex;
                o.text = pattern;
                const Completion c = complete(*engine, structuredRequest(rng, vocab, o, uint64_t(round)));
                QCOMPARE(c.finish, FinishReason::Stop);
                QVERIFY2(std::regex_match(c.text, std::regex(pattern)) || pattern.find("是") != std::string::npos,
                         qPrintable(QString::fromStdString(pattern + " -> " + c.text)));
                if (pattern.find("是") != std::string::npos)  // std::regex has no UTF-8 ranges: check by hand
                    QVERIFY2(c.text.rfind("是：", 0) == 0 || c.text.rfind("否：", 0) == 0, c.text.c_str());
            }
        const std::vector<std::string> choices = {"positive", "negative", "neutral", "积极"};
        std::set<std::string> seen;
        for (int i = 0; i < 12; ++i) {
            StructuredOutput o;
            o.kind = StructuredOutput::Kind::Choice;
            o.choices = choices;
            const Completion c = complete(*engine, structuredRequest(rng, vocab, o, uint64_t(100 + i)));
            QCOMPARE(c.finish, FinishReason::Stop);
            QVERIFY2(std::find(choices.begin(), choices.end(), c.text) != choices.end(), c.text.c_str());
            seen.insert(c.text);
        }
        QVERIFY(seen.size() >= 2);  // seeded draws differ: the mask does not force one answer
    }

    void grammarAndJsonObject()
    {
        auto engine = launch(structuredOptions());
        const int vocab = engine->tokenizer().vocabSize();
        std::mt19937 rng(8);
        StructuredOutput grammar;
        grammar.kind = StructuredOutput::Kind::Grammar;
        grammar.text = "root ::= \"SELECT \" col (\", \" col){0,2} \" FROM t\"\ncol ::= [a-z]{1,5}\n";
        const Completion sql = complete(*engine, structuredRequest(rng, vocab, grammar, 1));
        QVERIFY2(std::regex_match(sql.text, std::regex("SELECT [a-z]{1,5}(, [a-z]{1,5}){0,2} FROM t")),
                 sql.text.c_str());
        StructuredOutput object;
        object.kind = StructuredOutput::Kind::JsonObject;
        for (int i = 0; i < 4; ++i) {
            GenerationRequest r = structuredRequest(rng, vocab, object, uint64_t(i));
            r.params.maxTokens = 400;
            const Completion c = complete(*engine, r);
            if (c.finish == FinishReason::Length) continue;  // any object may go on; a finished one must parse
            const nlohmann::json value = nlohmann::json::parse(c.text, nullptr, false);
            QVERIFY2(value.is_object(), c.text.c_str());
        }
    }

    void completeGrammarStopsEvenIgnoringEos()
    {
        auto engine = launch(structuredOptions());
        const int vocab = engine->tokenizer().vocabSize();
        std::mt19937 rng(9);
        StructuredOutput o;
        o.kind = StructuredOutput::Kind::Choice;
        o.choices = {"yes", "no"};
        GenerationRequest r = structuredRequest(rng, vocab, o, 5);
        r.params.ignoreEos = true;
        const Completion c = complete(*engine, r);
        QCOMPARE(c.finish, FinishReason::Stop);
        QVERIFY(c.text == "yes" || c.text == "no");
    }

    void preemptionKeepsTheOutputExact()
    {
        std::mt19937 rng(12);
        RandomSchemaGenerator generator(77);
        std::vector<GenerationRequest> requests;
        auto big = launch(structuredOptions());
        const int vocab = big->tokenizer().vocabSize();
        for (int i = 0; i < 6; ++i) {
            GenerationRequest r = structuredRequest(rng, vocab, jsonSchema(generator.schema()), uint64_t(i));
            r.prompt = randomPrompt(rng, 40, vocab);
            r.params.maxTokens = 170;  // prompt + output fit the small cache's 224 slots alone
            requests.push_back(r);
        }
        std::vector<Completion> expected;
        for (const auto& r : requests) expected.push_back(complete(*big, r));
        big.reset();

        LaunchOptions small = structuredOptions();
        small.numKvBlocks = 14;  // 224 token slots for 6 requests of 40 + up to 170 tokens
        auto engine = launch(small);
        std::vector<std::shared_ptr<RequestStream>> streams;
        for (const auto& r : requests) streams.push_back(*RequestStream::submit(*engine, r));
        for (size_t i = 0; i < streams.size(); ++i) {
            const Completion c = drain(*streams[i]);
            QCOMPARE(c.text, expected[i].text);
            QCOMPARE(c.tokens, expected[i].tokens);
        }
        const EngineStats stats = waitIdle(*engine);
        QVERIFY2(stats.numPreemptions > 0, "the small cache should have forced preemption");
    }

    void masksAreComputedWhileTheForwardRuns()
    {
        auto folder = ModelFolder::load(tinyModelDir());
        QVERIFY2(folder, folder ? "" : folder.error().c_str());
        cpu::CpuBackendOptions cpuOptions;
        cpuOptions.numKvBlocks = 256;
        auto inner = cpu::CpuBackend::create(folder->config, *folder->checkpoint, cpuOptions);
        QVERIFY2(inner, inner ? "" : inner.error().c_str());
        auto recording = std::make_unique<RecordingBackend>(std::move(inner).value());
        RecordingBackend& record = *recording;
        EngineConfig config;
        config.maxModelLen = 2048;
        Engine engine(config, std::move(recording), folder->tokenizer, folder->tokenizer->stopTokenIds());
        auto reference = launch(structuredOptions());

        std::mt19937 rng(5);
        StructuredOutput choice;
        choice.kind = StructuredOutput::Kind::Choice;
        choice.choices = {"alpha beta", "gamma", "数据"};
        const GenerationRequest request = structuredRequest(rng, engine.tokenizer().vocabSize(), choice, 9);
        const Completion c = complete(engine, request);
        QCOMPARE(c.finish, FinishReason::Stop);
        QCOMPARE(c.text, complete(*reference, request).text);  // the split step samples the same tokens
        QVERIFY(record.maskedSteps > 0);
        QCOMPARE(record.overlappedSteps.load(), record.maskedSteps.load());
    }

    void badSpecsAreRefusedAtSubmit()
    {
        auto engine = launch(structuredOptions());
        std::mt19937 rng(1);
        const int vocab = engine->tokenizer().vocabSize();
        auto bad = jsonSchema({{"type", "object"}, {"not", {{"type", "null"}}}});
        auto result = engine->submit(structuredRequest(rng, vocab, bad, 1), [](const RequestOutput&) {});
        QVERIFY(!result);
        QCOMPARE(result.failure().code, ErrorCode::InvalidArgument);
        QCOMPARE(result.failure().field, std::string("response_format.json_schema.schema"));
        QVERIFY(result.failure().message.find("'not'") != std::string::npos);
        StructuredOutput regex;
        regex.kind = StructuredOutput::Kind::Regex;
        regex.text = "(a)\\1";
        regex.field = "structured_outputs.regex";
        result = engine->submit(structuredRequest(rng, vocab, regex, 1), [](const RequestOutput&) {});
        QVERIFY(!result);
        QCOMPARE(result.failure().field, std::string("structured_outputs.regex"));
    }
};

QTEST_MAIN(TestStructuredOutput)
#include "test_structured_output.moc"
