// The structured-output mask on the GPU against its CPU reference (structured::applyTokenBitmask):
// the masked rows bit for bit, the other rows untouched; and GpuSampler with masks on some rows
// picks the CPU Sampler's token (greedy and seeded draws), always an allowed one, with the same
// logprobs of the masked row; rows sharing one mask (one grammar state) included.
#include "cuda_test_support.h"

#include "cuda/gpu_sampler.h"
#include "cuda/token_mask_kernel.h"
#include "engine/sampler.h"
#include "engine/structured/token_bitmask.h"

#include <cstring>
#include <random>

using namespace brook;
using namespace brook::cudatest;

namespace {

constexpr int kVocab = 103424;
constexpr int kWords = (kVocab + 31) / 32;

// Dense, sparse (a JSON-like handful of tokens) and all-but-a-few masks over `words` words.
std::vector<uint32_t> randomMask(std::mt19937& rng, int kind, int words = kWords)
{
    std::vector<uint32_t> mask(size_t(words), kind == 2 ? ~0u : 0u);
    if (kind == 0)
        for (auto& w : mask) w = uint32_t(rng());
    else if (kind == 1)
        for (int i = 0; i < 12; ++i) mask[rng() % words] |= 1u << (rng() % 32);
    else
        for (int i = 0; i < 40; ++i) mask[rng() % words] &= ~(1u << (rng() % 32));
    return mask;
}

bool allowed(const std::vector<uint32_t>& mask, int32_t t) { return (mask[size_t(t) >> 5] >> (t & 31)) & 1u; }

}  // namespace

class TestTokenMask : public QObject {
    Q_OBJECT
private slots:
    void kernelMatchesTheCpuReference_data()
    {
        QTest::addColumn<int>("vocab");
        QTest::newRow("ERNIE's 103,424") << kVocab;
        QTest::newRow("1,001: a partial last word and block") << 1001;
    }

    void kernelMatchesTheCpuReference()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, vocab);
        const int words = (vocab + 31) / 32;
        constexpr int R = 6;
        std::mt19937 rng(4);
        std::vector<float> logits = randomFloats(size_t(R) * vocab, 9, 3.0f);
        // Rows 2 and 5 share one mask (the same grammar state), uploaded once.
        const std::vector<int32_t> rows = {0, 2, 3, 5}, maskOf = {0, 1, 2, 1};
        std::vector<uint32_t> masks;
        std::vector<std::vector<uint32_t>> distinct, perRow(R);
        for (int u = 0; u < 3; ++u) {
            distinct.push_back(randomMask(rng, u, words));
            masks.insert(masks.end(), distinct.back().begin(), distinct.back().end());
        }
        for (size_t k = 0; k < rows.size(); ++k) perRow[size_t(rows[k])] = distinct[size_t(maskOf[k])];
        cuda::DeviceBuffer dLogits = upload(logits), dMasks = upload(masks), dRows = upload(rows),
                           dMaskOf = upload(maskOf);
        cuda::launch_apply_token_mask(dLogits.as<float>(), dMasks.as<uint32_t>(), dRows.as<int32_t>(),
                                      dMaskOf.as<int32_t>(), int(rows.size()), vocab, words, nullptr);
        std::vector<float> gpu(logits.size());
        BROOK_CUDA_CHECK(cudaMemcpy(gpu.data(), dLogits.get(), gpu.size() * sizeof(float), cudaMemcpyDeviceToHost));
        for (int r = 0; r < R; ++r) {
            std::vector<float> expected(logits.begin() + size_t(r) * vocab, logits.begin() + size_t(r + 1) * vocab);
            if (!perRow[size_t(r)].empty()) structured::applyTokenBitmask(expected, perRow[size_t(r)]);
            QVERIFY2(std::memcmp(expected.data(), gpu.data() + size_t(r) * vocab, expected.size() * sizeof(float)) == 0,
                     qPrintable(QString("row %1").arg(r)));
        }
    }

    void samplerHonoursMasks()
    {
        BROOK_REQUIRE_GPU();
        constexpr int R = 8;
        std::mt19937 rng(7);
        std::vector<float> logits = randomFloats(size_t(R) * kVocab, 3, 3.0f);
        std::vector<SamplingParams> params(R);
        std::vector<std::vector<uint32_t>> masks(R);
        std::vector<SamplingContext> contexts(R);
        for (int r = 0; r < R; ++r) {
            params[size_t(r)].temperature = r % 2 ? 0.0f : 0.8f;
            params[size_t(r)].topP = r % 3 == 0 ? 0.9f : 1.0f;
            params[size_t(r)].logprobs = r % 4 == 0 ? 5 : -1;
            if (r != 3) masks[size_t(r)] = randomMask(rng, r % 3);
            contexts[size_t(r)].params = &params[size_t(r)];
            contexts[size_t(r)].seed = 100 + uint64_t(r);
            contexts[size_t(r)].step = r;
            contexts[size_t(r)].allowedTokens = masks[size_t(r)];
        }
        // Rows 1 and 6 in the same grammar state: one cached mask, the same span (uploaded once).
        masks[6] = masks[1];
        contexts[6].allowedTokens = masks[1];
        cuda::GpuSampler sampler(R, kVocab);
        cuda::DeviceBuffer dLogits = upload(logits);
        const std::vector<SampleResult> gpu = sampler.sample(dLogits.as<float>(), contexts, nullptr);
        for (int r = 0; r < R; ++r) {
            std::vector<float> row(logits.begin() + size_t(r) * kVocab, logits.begin() + size_t(r + 1) * kVocab);
            const SampleResult cpu = Sampler::sample(row, contexts[size_t(r)]);
            QCOMPARE(gpu[size_t(r)].token, cpu.token);
            if (!masks[size_t(r)].empty()) QVERIFY(allowed(masks[size_t(r)], gpu[size_t(r)].token));
            if (params[size_t(r)].logprobs >= 0) {
                QVERIFY(std::abs(gpu[size_t(r)].logprob - cpu.logprob) < 1e-4f);
                QCOMPARE(gpu[size_t(r)].topLogprobs.size(), cpu.topLogprobs.size());
                for (size_t k = 0; k < cpu.topLogprobs.size(); ++k)
                    QCOMPARE(gpu[size_t(r)].topLogprobs[k].token, cpu.topLogprobs[k].token);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestTokenMask)
#include "test_token_mask.moc"
