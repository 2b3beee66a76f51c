// The CPU backend against Hugging Face transformers' Ernie4_5ForCausalLM on the same random
// weights (tests/data/hf_tiny, made by scripts/make_hf_fixture.py): logits at every prompt
// position within 1e-4 relative error in fp32, and the same 32-token greedy continuation.
// The fixture's weights are scaled so a wrong RoPE, norm or GQA mapping fails this test
// (its README records by how much).
// And the exact mode (--dtype float32) on a bf16 checkpoint (tests/data/hf_tiny_bf16: the same
// weights rounded to bf16, transformers' logits computed from them in fp32): top-3 logprobs
// within 1e-4 at every prompt position and greedy step, where the default arithmetic (activations
// rounded to bf16 on AVX-512 BF16) is 1e-3 or more away.
#include "engine_test_support.h"

#include "engine/checkpoint.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model_config.h"
#include "engine/safetensors_file.h"
#include "launch/cpu_dtype.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace brook;

namespace {

const std::filesystem::path kFixture = std::filesystem::path(BROOK_TEST_DATA_DIR) / "hf_tiny";
const std::filesystem::path kBf16Fixture = std::filesystem::path(BROOK_TEST_DATA_DIR) / "hf_tiny_bf16";

std::vector<float> floats(const SafetensorsFile& file, const std::string& name)
{
    const TensorView* t = file.find(name);
    if (!t) qFatal("fixture lacks %s", name.c_str());
    std::vector<float> v(size_t(t->numElements()));
    convertToFloat32(*t, v.data());
    return v;
}

std::vector<int32_t> ints(const SafetensorsFile& file, const std::string& name)
{
    const TensorView* t = file.find(name);
    if (!t || t->dtype != DType::I32) qFatal("fixture lacks I32 %s", name.c_str());
    const auto* p = reinterpret_cast<const int32_t*>(t->data);
    return {p, p + t->numElements()};
}

int32_t argmax(std::span<const float> row) { return int32_t(std::max_element(row.begin(), row.end()) - row.begin()); }

}  // namespace

class TestHfReference : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        auto config = loadModelConfig(kFixture / "config.json");
        QVERIFY2(config.ok(), config.ok() ? "" : config.error().c_str());
        m_config = *config;
        auto checkpoint = Checkpoint::open(kFixture);
        QVERIFY2(checkpoint.ok(), checkpoint.ok() ? "" : checkpoint.error().c_str());
        m_checkpoint = std::move(checkpoint).value();
        auto expected = SafetensorsFile::open(kFixture / "expected.safetensors");
        QVERIFY2(expected.ok(), expected.ok() ? "" : expected.error().c_str());
        m_expected = std::move(expected).value();
    }

    // Prompt fed one token at a time through the paged KV cache: every position's logits.
    void promptLogitsMatchTokenByToken()
    {
        auto backend = makeBackend();
        const std::vector<int32_t> prompt = ints(*m_expected, "prompt_ids");
        const std::vector<float> want = floats(*m_expected, "prompt_logits");
        const int V = m_config.vocabSize;
        std::vector<int32_t> blocks = {0, 1, 2, 3, 4};
        double worst = 0;
        for (size_t i = 0; i < prompt.size(); ++i) {
            BatchSequence s;
            s.tokens = std::span(&prompt[i], 1);
            s.startPosition = int(i);
            s.blockTable = blocks;
            s.sample = true;
            std::vector<float> got = backend->logits(std::span(&s, 1));
            worst = std::max(worst, testsupport::relativeError(got, std::span(&want[i * V], size_t(V))));
        }
        qInfo("max relative error over %zu positions: %.3g", prompt.size(), worst);
        QVERIFY(worst < 1e-4);
    }

    // Whole-prompt prefill, then chunked prefill (the second chunk reads the cached first).
    void prefillAndChunkedPrefillMatch()
    {
        const std::vector<int32_t> prompt = ints(*m_expected, "prompt_ids");
        const std::vector<float> want = floats(*m_expected, "prompt_logits");
        const int V = m_config.vocabSize;
        const std::span<const float> last(&want[(prompt.size() - 1) * V], size_t(V));
        std::vector<int32_t> blocks = {3, 1, 4, 0};  // any order: the table maps positions

        auto backend = makeBackend();
        BatchSequence whole{prompt, 0, blocks, true, {}};
        QVERIFY(testsupport::relativeError(backend->logits(std::span(&whole, 1)), last) < 1e-4);

        auto chunked = makeBackend();
        const size_t split = prompt.size() / 2 + 3;
        BatchSequence first{std::span(prompt.data(), split), 0, blocks, false, {}};
        QVERIFY(chunked->logits(std::span(&first, 1)).empty());
        BatchSequence second{std::span(prompt.data() + split, prompt.size() - split), int(split), blocks, true, {}};
        QVERIFY(testsupport::relativeError(chunked->logits(std::span(&second, 1)), last) < 1e-4);
    }

    // One step that mixes a chunk that samples nothing with a whole prompt that samples, then one
    // that mixes the chunk's rest with that prompt's first decode. The last layer carries only
    // the rows the head reads (its keys and values still go to the cache for every row), so this
    // checks that each sequence's own last row is the one kept, and that the unsampled chunk's
    // last-layer cache is there for its second half.
    void mixedStepsSampleTheRightRows()
    {
        const std::vector<int32_t> prompt = ints(*m_expected, "prompt_ids");
        const std::vector<float> want = floats(*m_expected, "prompt_logits");
        const std::vector<int32_t> greedy = ints(*m_expected, "greedy_ids");
        const std::vector<float> greedyLogits = floats(*m_expected, "greedy_logits");
        const int V = m_config.vocabSize;
        const std::span<const float> last(&want[(prompt.size() - 1) * V], size_t(V));
        const std::vector<int32_t> blocksA = {5, 2, 7, 0}, blocksB = {1, 3, 4, 6};
        const size_t split = prompt.size() / 3;

        auto backend = makeBackend();
        std::vector<BatchSequence> step = {
            {std::span(prompt.data(), split), 0, blocksA, false, {}},
            {prompt, 0, blocksB, true, {}},
        };
        std::vector<float> logits = backend->logits(step);
        QCOMPARE(logits.size(), size_t(V));
        QVERIFY(testsupport::relativeError(logits, last) < 1e-4);

        // B's first greedy token is greedy_ids[0]; its logits after it are greedy_logits[1].
        const int32_t next = greedy.front();
        step = {
            {std::span(prompt.data() + split, prompt.size() - split), int(split), blocksA, true, {}},
            {std::span(&next, 1), int(prompt.size()), blocksB, true, {}},
        };
        logits = backend->logits(step);
        QCOMPARE(logits.size(), size_t(2) * V);
        QVERIFY(testsupport::relativeError(std::span(logits.data(), size_t(V)), last) < 1e-4);
        QVERIFY(testsupport::relativeError(std::span(logits.data() + V, size_t(V)),
                                           std::span(&greedyLogits[size_t(V)], size_t(V))) < 1e-4);
    }

    void greedyContinuationMatches()
    {
        auto backend = makeBackend();
        std::vector<int32_t> tokens = ints(*m_expected, "prompt_ids");
        const std::vector<int32_t> wantIds = ints(*m_expected, "greedy_ids");
        const std::vector<float> wantLogits = floats(*m_expected, "greedy_logits");
        const int V = m_config.vocabSize;
        std::vector<int32_t> blocks = {0, 1, 2, 3, 4, 5};
        std::vector<int32_t> got;
        int cached = 0;
        for (size_t step = 0; step < wantIds.size(); ++step) {
            BatchSequence s{
                std::span(tokens.data() + cached, tokens.size() - size_t(cached)), cached, blocks, true, {}};
            std::vector<float> logits = backend->logits(std::span(&s, 1));
            QVERIFY(testsupport::relativeError(logits, std::span(&wantLogits[step * V], size_t(V))) < 1e-4);
            cached = int(tokens.size());
            tokens.push_back(argmax(logits));
            got.push_back(tokens.back());
        }
        QCOMPARE(got, wantIds);
    }

    void bf16CheckpointInExactModeMatchesTransformersFp32_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("--dtype float32") << "float32";
        QTest::newRow("--dtype auto") << "auto";
    }

    void bf16CheckpointInExactModeMatchesTransformersFp32()
    {
        QFETCH(QString, dtype);
        auto config = loadModelConfig(kBf16Fixture / "config.json");
        auto checkpoint = Checkpoint::open(kBf16Fixture);
        auto expected = SafetensorsFile::open(kBf16Fixture / "expected.safetensors");
        QVERIFY(config.ok() && checkpoint.ok() && expected.ok());
        auto embedding = (*checkpoint)->require("model.embed_tokens.weight");
        QVERIFY(embedding.ok());
        QCOMPARE((*embedding)->dtype, DType::BF16);
        auto choice = parseDTypeChoice(dtype.toStdString());
        QVERIFY(choice.ok());
        auto arithmetic = cpuArithmeticFor(*choice, DType::BF16, false);
        QVERIFY(arithmetic.ok());
        cpu::CpuBackendOptions options;
        options.numKvBlocks = 8;
        options.arithmetic = *arithmetic;
        auto backend = cpu::CpuBackend::create(*config, **checkpoint, options);
        QVERIFY(backend.ok());
        const int V = config->vocabSize;
        std::vector<int32_t> tokens = ints(**expected, "prompt_ids");
        const std::vector<int32_t> greedyIds = ints(**expected, "greedy_ids");
        const std::vector<float> promptLogits = floats(**expected, "prompt_logits");
        const std::vector<float> greedyLogits = floats(**expected, "greedy_logits");
        std::vector<int32_t> blocks = {0, 1, 2, 3, 4, 5};
        double worst = 0;
        // Every prompt position, one token a step (the decode path), then the greedy steps.
        const size_t promptLength = tokens.size();
        for (size_t i = 0; i < promptLength; ++i) {
            BatchSequence s{std::span(tokens.data() + i, 1), int(i), blocks, true, {}};
            const std::vector<float> got = (*backend)->logits(std::span(&s, 1));
            worst = std::max(worst, testsupport::topLogprobError(got, std::span(&promptLogits[i * V], size_t(V)), 3));
        }
        for (size_t step = 0; step + 1 < greedyIds.size(); ++step) {
            tokens.push_back(greedyIds[step]);
            BatchSequence s{std::span(&tokens.back(), 1), int(tokens.size()) - 1, blocks, true, {}};
            const std::vector<float> got = (*backend)->logits(std::span(&s, 1));
            worst = std::max(worst,
                             testsupport::topLogprobError(got, std::span(&greedyLogits[(step + 1) * V], size_t(V)), 3));
        }
        qInfo("--dtype %s: worst top-3 logprob error against transformers fp32 %.3g", qPrintable(dtype), worst);
        if (*arithmetic == cpu::Bf16Arithmetic::Fp32) {
            QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
        } else if (cpu::activeCpuIsa() == cpu::CpuIsa::Avx512Bf16) {
            QVERIFY2(worst > 1e-3, qPrintable(QString("%1: the activations were not rounded?").arg(worst)));
        }
    }

private:
    std::unique_ptr<cpu::CpuBackend> makeBackend()
    {
        cpu::CpuBackendOptions options;
        options.numKvBlocks = 8;
        auto backend = cpu::CpuBackend::create(m_config, *m_checkpoint, options);
        if (!backend) qFatal("CpuBackend::create: %s", backend.error().c_str());
        return std::move(backend).value();
    }

    ModelConfig m_config;
    std::unique_ptr<Checkpoint> m_checkpoint;
    std::unique_ptr<SafetensorsFile> m_expected;
};

QTEST_APPLESS_MAIN(TestHfReference)
#include "test_hf_reference.moc"
