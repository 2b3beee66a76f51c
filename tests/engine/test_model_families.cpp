// The CPU backend runs Qwen3 and Llama 3 as transformers does: tiny random-weight models of each
// family (tests/data/families, made with transformers 5.17) give transformers' fp32 greedy
// continuation, and at every step the top-5 logprobs within 1e-4, on three prompts each (a chat, a
// mixed-language line, a ~400-token text). The exact mode (fp32 arithmetic on the bf16 weights)
// is the one the bound is for; a wrong RoPE pairing, a missing q/k norm or unscaled Llama 3
// frequencies fail it. Also: the family comes from config.json's architectures, and one Brook
// does not run is refused by name, with the list of those it does.
#include "engine/checkpoint.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model_config.h"
#include "engine/models/model_family.h"

#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace brook;

namespace {

const std::filesystem::path kFamilies = std::filesystem::path(BROOK_TEST_DATA_DIR) / "families";

std::vector<int32_t> idList(const QJsonValue& value)
{
    std::vector<int32_t> ids;
    for (const QJsonValue& id : value.toArray()) ids.push_back(int32_t(id.toInteger()));
    return ids;
}

// log_softmax of one row, in double.
std::vector<double> logprobs(std::span<const float> logits)
{
    const float top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float x : logits) sum += std::exp(double(x) - top);
    const double logSum = std::log(sum) + top;
    std::vector<double> out(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - logSum;
    return out;
}

}  // namespace

class TestModelFamilies : public QObject {
    Q_OBJECT
private slots:
    void matchesTransformers_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("family");
        QTest::newRow("Qwen3") << "qwen3_tiny" << "Qwen3";
        QTest::newRow("Llama 3") << "llama3_tiny" << "Llama";
    }

    void matchesTransformers()
    {
        QFETCH(QString, folder);
        QFETCH(QString, family);
        const std::filesystem::path dir = kFamilies / folder.toStdString();
        auto config = loadModelConfig(dir / "config.json");
        QVERIFY2(config.ok(), config.ok() ? "" : config.error().c_str());
        QCOMPARE(QString::fromUtf8(config->family->name.data(), qsizetype(config->family->name.size())), family);
        auto checkpoint = Checkpoint::open(dir);
        QVERIFY2(checkpoint.ok(), checkpoint.ok() ? "" : checkpoint.error().c_str());
        QFile file(QString::fromStdString((dir / "reference.json").string()));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject reference = QJsonDocument::fromJson(file.readAll()).object();
        const QJsonArray cases = reference.value("cases").toArray();
        QCOMPARE(cases.size(), 3);

        cpu::CpuBackendOptions options;
        options.numKvBlocks = 64;  // 16-token blocks: 1,024 positions, the longest case needs 457
        options.arithmetic = cpu::Bf16Arithmetic::Fp32;
        options.warmupTokens = 0;
        auto backend = cpu::CpuBackend::create(*config, **checkpoint, options);
        QVERIFY2(backend.ok(), backend.ok() ? "" : backend.error().c_str());
        std::vector<int32_t> blocks(64);
        std::iota(blocks.begin(), blocks.end(), 0);

        for (const QJsonValue& c : cases) {
            const QJsonObject one = c.toObject();
            std::vector<int32_t> tokens = idList(one.value("prompt_token_ids"));
            const std::vector<int32_t> want = idList(one.value("greedy_token_ids"));
            const QJsonArray steps = one.value("steps").toArray();
            QCOMPARE(size_t(steps.size()), want.size());
            std::vector<int32_t> got;
            double worst = 0;
            int cached = 0;
            for (size_t step = 0; step < want.size(); ++step) {
                BatchSequence s{std::span(tokens.data() + cached, tokens.size() - size_t(cached)), cached, blocks,
                                true, {}};
                const std::vector<float> logits = (*backend)->logits(std::span(&s, 1));
                QCOMPARE(logits.size(), size_t(config->vocabSize));
                const std::vector<double> lp = logprobs(logits);
                for (const QJsonValue& pair : steps[qsizetype(step)].toObject().value("top").toArray()) {
                    const int32_t id = int32_t(pair.toArray()[0].toInteger());
                    worst = std::max(worst, std::abs(lp[size_t(id)] - pair.toArray()[1].toDouble()));
                }
                got.push_back(int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin()));
                // Teacher-forced: the next step continues transformers' sequence, so one early
                // difference cannot hide how far the rest agrees.
                cached = int(tokens.size());
                tokens.push_back(want[step]);
            }
            qInfo("%s %s: worst top-5 logprob error %.3g over %zu steps", qPrintable(family),
                  qPrintable(one.value("name").toString()), worst, want.size());
            QCOMPARE(got, want);
            QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
        }
    }

    void chosenByArchitecture()
    {
        QCOMPARE(findModelFamily("Qwen3ForCausalLM")->ropePairing, RopePairing::Halves);
        QVERIFY(findModelFamily("Qwen3ForCausalLM")->qkNorm);
        QCOMPARE(findModelFamily("LlamaForCausalLM")->ropePairing, RopePairing::Halves);
        QVERIFY(!findModelFamily("LlamaForCausalLM")->qkNorm);
        QCOMPARE(findModelFamily("Ernie4_5_ForCausalLM"), findModelFamily("Ernie4_5ForCausalLM"));
        QCOMPARE(findModelFamily("Ernie4_5ForCausalLM")->ropePairing, RopePairing::Neighbours);
        QCOMPARE(findModelFamily("qwen3forcausallm"), nullptr);  // as transformers: exact names
    }

    void anUnknownArchitectureIsNamed()
    {
        QFile file(QString::fromStdString((kFamilies / "qwen3_tiny" / "config.json").string()));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        json["architectures"] = QJsonArray{"MistralForCausalLM"};
        auto config = parseModelConfig(QJsonDocument(json).toJson().toStdString(), "config.json");
        QVERIFY(!config.ok());
        QVERIFY2(config.error().find("unsupported architecture 'MistralForCausalLM'") != std::string::npos &&
                     config.error().find("Qwen3ForCausalLM") != std::string::npos &&
                     config.error().find("LlamaForCausalLM") != std::string::npos &&
                     config.error().find("Ernie4_5ForCausalLM") != std::string::npos,
                 config.error().c_str());
    }

    void llamaReadsAllItsStopIdsAndItsRopeScaling()
    {
        auto config = loadModelConfig(kFamilies / "llama3_tiny" / "config.json");
        QVERIFY(config.ok());
        QCOMPARE(config->eosTokenIds, (std::vector<int>{128001, 128008, 128009}));
        QCOMPARE(config->eosTokenId, 128001);
        QVERIFY(config->llama3RopeScaling.has_value());
        QCOMPARE(config->llama3RopeScaling->factor, 32.0);
        QCOMPARE(config->llama3RopeScaling->originalMaxPositions, 8192);
    }

    void aBiasIsRefusedByItsFamilysKey()
    {
        QFile file(QString::fromStdString((kFamilies / "llama3_tiny" / "config.json").string()));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        json["mlp_bias"] = true;
        auto config = parseModelConfig(QJsonDocument(json).toJson().toStdString(), "config.json");
        QVERIFY(!config.ok());
        QVERIFY2(config.error().find("mlp_bias") != std::string::npos, config.error().c_str());
    }

    void qwen3WithoutItsHeadNormsIsRefused()
    {
        // The Qwen3 config over a checkpoint without q_norm / k_norm: the missing tensor is named.
        auto config = loadModelConfig(kFamilies / "qwen3_tiny" / "config.json");
        QVERIFY(config.ok());
        auto llamaCheckpoint = Checkpoint::open(kFamilies / "llama3_tiny");
        QVERIFY(llamaCheckpoint.ok());
        ModelConfig shaped = *config;
        shaped.vocabSize = 128256;  // the Llama fixture's vocabulary, so only the norms differ
        auto valid = (*llamaCheckpoint)->validate(shaped);
        QVERIFY(!valid.ok());
        QVERIFY2(valid.error().find("self_attn.q_norm.weight") != std::string::npos, valid.error().c_str());
    }
};

QTEST_GUILESS_MAIN(TestModelFamilies)
#include "test_model_families.moc"
