// ropeInverseFrequencies against transformers' own RoPE modules, bit for bit but for one ulp
// where torch's pow is not correctly rounded: the inv_freq buffers of Ernie4_5, Qwen3 and Llama rotary embeddings (default rope_type) as
// scripts/rope_reference.py recorded them on the GPU machine (tests/data/).
#include "engine/rope_frequencies.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <bit>
#include <cstdint>
#include <fstream>
#include <string>

using namespace brook;

class TestRopeFrequencies : public QObject {
    Q_OBJECT

private slots:
    void matchesTransformersWithinAnUlp()
    {
        std::ifstream file(BROOK_TEST_DATA_DIR "/rope_inv_freq_transformers.json");
        QVERIFY(file.good());
        const nlohmann::json reference = nlohmann::json::parse(file);
        QVERIFY(reference.at("cases").size() >= 5);
        int differing = 0, checked = 0;
        for (const auto& c : reference.at("cases")) {
            const int headDim = c.at("head_dim").get<int>();
            const std::vector<float> ours = ropeInverseFrequencies(c.at("rope_theta").get<double>(), headDim);
            const auto& theirs = c.at("inv_freq_bits");
            QCOMPARE(ours.size(), theirs.size());
            for (size_t i = 0; i < ours.size(); ++i) {
                const uint32_t want = uint32_t(std::stoul(theirs[i].get<std::string>(), nullptr, 16));
                const uint32_t got = std::bit_cast<uint32_t>(ours[i]);
                if (got == want) continue;
                ++differing;
                // torch's float32 pow (SLEEF) is within 1 ulp, not always correctly rounded.
                if (got + 1 != want && got != want + 1)
                    QFAIL(qPrintable(QStringLiteral("%1, theta %2, head_dim %3: inv_freq[%4] = %5, transformers %6")
                                         .arg(QString::fromStdString(c.at("family").get<std::string>()))
                                         .arg(c.at("rope_theta").get<double>())
                                         .arg(headDim)
                                         .arg(i)
                                         .arg(double(ours[i]), 0, 'g', 9)
                                         .arg(double(std::bit_cast<float>(want)), 0, 'g', 9)));
            }
            checked += int(ours.size());
        }
        // The double-precision formula this replaced differed in 81 of the 288.
        QVERIFY2(differing <= 1, qPrintable(QStringLiteral("%1 of %2 differ by an ulp").arg(differing).arg(checked)));
    }
};

QTEST_GUILESS_MAIN(TestRopeFrequencies)
#include "test_rope_frequencies.moc"
