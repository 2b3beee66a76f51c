// Prompt attention in bf16 pairs (engine/cpu/cpu_attention_bf16.h), on CPUs with AVX-512 BF16
// (elsewhere the backend never takes this path, and these tests skip):
//  - each conversion rounds to nearest even and puts the lower index in the low half, with
//    never-written slots (NaN here) becoming 0;
//  - the two kernels equal double sums of the rounded values (vdpbf16ps' products of two bf16 are
//    exact in fp32; only the fp32 sums differ), and write nothing past `count`;
//  - the whole attention stays within bf16 rounding of cpu_ops' fp32 reference, and a decode
//    (one new token) still gets the fp32 path's floats exactly.
#include "engine_test_support.h"
#include "random_paged_cache.h"

#include "engine/cpu/cpu_attention.h"
#include "engine/cpu/cpu_attention_bf16.h"
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_gemm_kernels.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>

using namespace brook;
using namespace brook::cpu;
namespace bf16 = brook::cpu::attention_bf16;

namespace {

uint16_t bf16Bits(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest, ties to even
    return uint16_t(u >> 16);
}

double fromBits(uint16_t bits)
{
    const uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

double low(uint32_t pair) { return fromBits(uint16_t(pair & 0xFFFFu)); }
double high(uint32_t pair) { return fromBits(uint16_t(pair >> 16)); }
uint32_t pairOf(float lo, float hi) { return uint32_t(bf16Bits(lo)) | (uint32_t(bf16Bits(hi)) << 16); }

bool cpuHasBf16()
{
    const auto isas = supportedCpuIsas();
    return std::find(isas.begin(), isas.end(), CpuIsa::Avx512Bf16) != isas.end();
}

}  // namespace

class TestCpuAttentionBf16 : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        if (!cpuHasBf16()) QSKIP("this CPU has no AVX-512 BF16: the backend never runs attention in pairs here");
    }

    void conversionsRoundAndInterleave()
    {
        std::mt19937 rng(3);
        std::normal_distribution<float> dist(0.0f, 3.0f);
        for (int n : {1, 16, 37, 128}) {
            std::vector<float> x(static_cast<size_t>(n));
            for (float& f : x) f = dist(rng);
            std::vector<uint32_t> out(size_t(n + 1) / 2 + 1, 0xDEADBEEFu);
            kernels::toBf16PairsAvx512Bf16(x.data(), 1, n, out.data());  // queries and probabilities
            for (int i = 0; i < n; i += 2)
                QCOMPARE(out[size_t(i / 2)], pairOf(x[size_t(i)], i + 1 < n ? x[size_t(i + 1)] : 0.0f));
            QCOMPARE(out.back(), 0xDEADBEEFu);  // nothing past (n + 1) / 2 words
        }
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (auto [n, bs, count] : {std::tuple{128, 16, 16}, {128, 16, 7}, {16, 8, 3}, {64, 32, 32}, {32, 32, 1}}) {
            std::vector<float> kt(size_t(n * bs));
            for (int d = 0; d < n; ++d)
                for (int j = 0; j < bs; ++j) kt[size_t(d * bs + j)] = j < count ? dist(rng) : nan;
            std::vector<uint32_t> kp(size_t(n / 2 * bs), 0xDEADBEEFu);
            bf16::keyTilePairs(kt.data(), bs, count, n, kp.data());
            for (int p = 0; p < n / 2; ++p)
                for (int j = 0; j < bs; ++j)
                    QCOMPARE(kp[size_t(p * bs + j)],
                             j < count ? pairOf(kt[size_t(2 * p * bs + j)], kt[size_t((2 * p + 1) * bs + j)]) : 0u);
            const int64_t stride = 2 * n + 16;
            std::vector<float> rows(size_t(bs * stride));
            for (int r = 0; r < bs; ++r)
                for (int i = 0; i < stride; ++i) rows[size_t(r * stride + i)] = r < count ? dist(rng) : nan;
            std::vector<uint32_t> vp(size_t(bs / 2 * n), 0xDEADBEEFu);
            bf16::valueRowPairs(rows.data(), stride, bs, count, n, vp.data());
            for (int r = 0; r < bs / 2; ++r)
                for (int i = 0; i < n; ++i) {
                    const float lo = 2 * r < count ? rows[size_t(2 * r * stride + i)] : 0.0f;
                    const float hi = 2 * r + 1 < count ? rows[size_t((2 * r + 1) * stride + i)] : 0.0f;
                    QCOMPARE(vp[size_t(r * n + i)], pairOf(lo, hi));
                }
        }
    }

    void kernelsMatchDoubleSumsOfTheRoundedValues()
    {
        std::mt19937 rng(5);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        for (auto [n, bs, count, heads] : {std::tuple{128, 16, 16, 8},
                                           {128, 16, 5, 8},
                                           {64, 16, 13, 11},
                                           {16, 8, 7, 2},
                                           {128, 32, 29, 3},
                                           {256, 16, 1, 1}}) {
            const QString where = QString("n %1 bs %2 count %3 heads %4").arg(n).arg(bs).arg(count).arg(heads);
            const int pairs = n / 2;
            const int64_t qpStride = pairs + 5, outStride = bs + 3;
            std::vector<uint32_t> qp(size_t(heads * qpStride)), kp(size_t(pairs * bs));
            for (uint32_t& w : qp) w = pairOf(dist(rng), dist(rng));
            for (uint32_t& w : kp) w = pairOf(dist(rng), dist(rng));
            std::vector<float> scores(size_t(heads * outStride), -7.0f);
            bf16::scoresPairs(qp.data(), heads, qpStride, kp.data(), bs, count, pairs, 0.125f, scores.data(),
                              outStride);
            for (int h = 0; h < heads; ++h) {
                for (int j = 0; j < count; ++j) {
                    double want = 0, magnitude = 0;
                    for (int p = 0; p < pairs; ++p) {
                        const uint32_t a = qp[size_t(h * qpStride + p)], b = kp[size_t(p * bs + j)];
                        want += low(a) * low(b) + high(a) * high(b);
                        magnitude += std::abs(low(a) * low(b)) + std::abs(high(a) * high(b));
                    }
                    QVERIFY2(std::abs(scores[size_t(h * outStride + j)] - 0.125 * want) <= 1e-6 * (1 + magnitude),
                             qPrintable("scoresPairs " + where));
                }
                for (int j = count; j < outStride; ++j) QCOMPARE(scores[size_t(h * outStride + j)], -7.0f);
            }

            const int pairRows = (count + 1) / 2;
            const int64_t yStride = n + 16, wpStride = pairRows + 3;
            std::vector<uint32_t> wp(size_t(heads * wpStride)), vp(size_t(pairRows * n));
            std::vector<float> y0(size_t(heads * yStride));
            for (uint32_t& w : wp) w = pairOf(std::abs(dist(rng)), std::abs(dist(rng)));
            for (uint32_t& w : vp) w = pairOf(dist(rng), dist(rng));
            for (float& f : y0) f = dist(rng);
            std::vector<float> y(y0);
            bf16::weightedPairs(y.data(), heads, yStride, wp.data(), wpStride, vp.data(), pairRows, n);
            for (int h = 0; h < heads; ++h) {
                for (int i = 0; i < n; ++i) {
                    double want = y0[size_t(h * yStride + i)], magnitude = std::abs(want);
                    for (int r = 0; r < pairRows; ++r) {
                        const uint32_t a = wp[size_t(h * wpStride + r)], b = vp[size_t(r * n + i)];
                        want += low(a) * low(b) + high(a) * high(b);
                        magnitude += std::abs(low(a) * low(b)) + std::abs(high(a) * high(b));
                    }
                    QVERIFY2(std::abs(y[size_t(h * yStride + i)] - want) <= 1e-6 * (1 + magnitude),
                             qPrintable("weightedPairs " + where));
                }
                for (int64_t i = n; i < yStride; ++i) QCOMPARE(y[size_t(h * yStride + i)], y0[size_t(h * yStride + i)]);
            }
        }
    }

    // Prompts over a cached history (blocks scattered, the last one partly written and the rest
    // of it NaN) against the fp32 reference. Rounding q, k, the probabilities and v to bf16 moves
    // each by at most 2^-9 of itself; an output is a convex mix of v rows, so it moves by ~2^-9 of
    // max |v| from v's rounding, and the scores' (|q| |k| / sqrt(HD) ~ 1 here) shift each
    // probability by ~2^-8 of itself. Both together stay under 1e-2 of the largest output
    // (measured ~3e-3); a kernel that drops or double-counts one key of 20+ moves it by ~5e-2.
    void promptAttentionStaysWithinBf16Rounding()
    {
        constexpr int kHeads = 16, kKvHeads = 2, kHeadDim = 128;
        std::mt19937 rng(31);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        const CpuVectorOps& ops = CpuVectorOps::forIsa(CpuIsa::Avx512Bf16);
        CpuThreadPool pool(2);
        for (auto [blockSize, n, context] :
             {std::tuple{16, 40, 0}, {16, 17, 70}, {16, 1, 90}, {8, 9, 30}, {32, 3, 61}, {16, 2, 15}}) {
            const testsupport::RandomPagedCache cache(blockSize, context + n, kKvHeads, kHeadDim, rng);
            std::vector<float> q(size_t(n) * kHeads * kHeadDim);
            for (float& f : q) f = dist(rng);
            const std::vector<int32_t>& table = cache.table;
            const PagedKv rowsKv = cache.rows(), tilesKv = cache.tiles();
            std::vector<float> want(q.size()), fp32(q.size()), paired(q.size());
            pagedAttention(q.data(), want.data(), n, kHeads, context, table, rowsKv);
            pagedAttentionFast(q.data(), fp32.data(), n, kHeads, context, table, tilesKv, ops, &pool,
                               PromptAttention::Fp32);
            pagedAttentionFast(q.data(), paired.data(), n, kHeads, context, table, tilesKv, ops, &pool,
                               PromptAttention::Bf16);
            const QString where = QString("bs %1 n %2 context %3").arg(blockSize).arg(n).arg(context);
            if (n == 1) {
                QVERIFY2(paired == fp32, qPrintable("a decode must keep the fp32 path, " + where));
                continue;
            }
            QVERIFY2(std::all_of(paired.begin(), paired.end(), [](float f) { return std::isfinite(f); }),
                     qPrintable("NaN from a never-written slot, " + where));
            const double e = testsupport::relativeError(paired, want);
            QVERIFY2(e < 1e-2, qPrintable(QString("%1: %2").arg(where).arg(e)));
            QVERIFY2(e > 0, qPrintable("the prompt did not run in pairs, " + where));
        }
    }
};

QTEST_APPLESS_MAIN(TestCpuAttentionBf16)
#include "test_cpu_attention_bf16.moc"
