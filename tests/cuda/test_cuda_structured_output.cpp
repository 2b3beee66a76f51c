// Structured outputs on the CUDA backend (the masks go through GpuSampler's upload and
// token_mask_kernel.cu): 200 random schemas with the tiny random model each give JSON valid
// against the schema (independent validator), a regex and a choice match, and greedy constrained
// output is valid and the same run to run.
#include "cuda_engine_test_support.h"
#include "cuda_test_support.h"

#include "../engine/engine_test_support.h"
#include "../engine/json_schema_checker.h"
#include "../engine/random_schema_generator.h"

#include <random>
#include <regex>

using namespace brook;
using namespace brook::testsupport;

namespace {

LaunchOptions options(const char* device)
{
    LaunchOptions o = cpuOptions();
    // One model for both backends (the CUDA kernels take head_dim 32, 64 or 128).
    o.modelDir = cudatest::gpuModelDir();
    o.device = device;
    o.gpuMemoryUtilization = 0.3;
    o.maxModelLen = 2048;
    o.maxNumBatchedTokens = 2048;
    return o;
}

GenerationRequest request(std::mt19937& rng, int vocab, StructuredOutput output, uint64_t seed, float temperature)
{
    GenerationRequest r;
    r.prompt = randomPrompt(rng, 8, vocab);
    r.params.temperature = temperature;
    r.params.seed = seed;
    r.params.maxTokens = 1500;
    r.params.structured = std::move(output);
    return r;
}

StructuredOutput schemaOutput(const nlohmann::json& schema)
{
    return {StructuredOutput::Kind::JsonSchema, schema.dump(), {}, "response_format.json_schema.schema"};
}

}  // namespace

class TestCudaStructuredOutput : public QObject {
    Q_OBJECT
private slots:
    void randomSchemasGiveValidJson()
    {
        BROOK_REQUIRE_GPU();
        auto engine = launch(options("cuda"));
        const int vocab = engine->tokenizer().vocabSize();
        std::mt19937 rng(2026);
        RandomSchemaGenerator generator(18);
        std::vector<nlohmann::json> schemas;
        std::vector<std::shared_ptr<RequestStream>> streams;
        for (int i = 0; i < 200; ++i) {
            schemas.push_back(generator.schema());
            auto stream =
                RequestStream::submit(*engine, request(rng, vocab, schemaOutput(schemas.back()), uint64_t(i), 1.0f));
            QVERIFY(stream);
            streams.push_back(*stream);
        }
        for (size_t i = 0; i < streams.size(); ++i) {
            const Completion c = drain(*streams[i]);
            const std::string context = schemas[i].dump() + "\n-> " + c.text;
            QVERIFY2(c.finish == FinishReason::Stop, context.c_str());
            const nlohmann::json value = nlohmann::json::parse(c.text, nullptr, false);
            QVERIFY2(!value.is_discarded(), context.c_str());
            const auto errors = JsonSchemaChecker(schemas[i]).check(value);
            QVERIFY2(errors.empty(), (errors.empty() ? context : errors[0] + "\n" + context).c_str());
        }
    }

    void regexChoiceAndGreedy()
    {
        BROOK_REQUIRE_GPU();
        auto gpu = launch(options("cuda"));
        const int vocab = gpu->tokenizer().vocabSize();
        std::mt19937 rng(5);
        StructuredOutput regex{StructuredOutput::Kind::Regex, "\\d{3}-[a-z]{2,6}", {}, "regex"};
        const Completion r = complete(*gpu, request(rng, vocab, regex, 1, 1.0f));
        QVERIFY2(std::regex_match(r.text, std::regex("\\d{3}-[a-z]{2,6}")), r.text.c_str());
        StructuredOutput choice{StructuredOutput::Kind::Choice, {}, {"alpha", "beta", "gamma"}, "choice"};
        const Completion c = complete(*gpu, request(rng, vocab, choice, 2, 1.0f));
        QVERIFY(c.text == "alpha" || c.text == "beta" || c.text == "gamma");

        // Greedy constrained output is valid and repeatable (the GPU and CPU backends' logits differ
        // in rounding, so their argmax may differ where two tokens nearly tie; no cross check here).
        RandomSchemaGenerator generator(3);
        for (int i = 0; i < 8; ++i) {
            const nlohmann::json schema = generator.schema();
            const GenerationRequest g = request(rng, vocab, schemaOutput(schema), 0, 0.0f);
            const Completion first = complete(*gpu, g), second = complete(*gpu, g);
            QCOMPARE(first.text, second.text);
            QVERIFY2(JsonSchemaChecker(schema).check(nlohmann::json::parse(first.text, nullptr, false)).empty(),
                     first.text.c_str());
        }
    }
};

QTEST_MAIN(TestCudaStructuredOutput)
#include "test_cuda_structured_output.moc"
