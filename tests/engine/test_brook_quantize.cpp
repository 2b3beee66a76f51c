// The built brook-quantize (BROOK_BIN_DIR) on the tiny random-weight model, for rtn 8-bit,
// rtn 4-bit and awq 4-bit. The tiny model's hidden size is 64 and its intermediate size 192,
// so the group size here is 32 (128, the default, divides neither).
//  - the folder: AWQ gemm tensors (I32/I32/F16, AutoAWQ's shapes) for the 7 Linears of each
//    layer and no dense copy of them; every other tensor as in the source (AWQ: folded norms);
//    config.json with quantization_config; tokenizer and generation config copied; a report;
//  - the tensors decode (fromAwqGemm) to the source weights within the bits' error, with AWQ's
//    scales recovered from the folded norms, and RTN's reported errors are the decoded ones;
//  - the folder loads on the CPU backend, logits close to the dense model's, 8-bit closer
//    than 4-bit; brook-bench quality (also a built binary) reports the same ordering;
//  - bad arguments are errors that say what is wrong.
#include "engine_test_support.h"

#include "engine/awq_format.h"
#include "engine/quality_metrics.h"
#include "engine/quantized_weight.h"
#include "engine/safetensors_file.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <cmath>
#include <map>
#include <random>

using namespace brook;

namespace {

const QString kQuantize = QStringLiteral(BROOK_BIN_DIR "/brook-quantize");
const QString kBench = QStringLiteral(BROOK_BIN_DIR "/brook-bench");
constexpr int kGroup = 32;
const char* const kLinears[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};

std::pair<int, std::string> run(const QString& program, const QStringList& args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(300000)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAll().toStdString()};
}

QJsonObject readJson(const std::filesystem::path& path)
{
    QFile file(QString::fromStdString(path.string()));
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
    return QJsonDocument::fromJson(file.readAll()).object();
}

std::vector<float> floats(const TensorView& t)
{
    std::vector<float> v(size_t(t.numElements()));
    convertToFloat32(t, v.data());
    return v;
}

// The number after `label` in brook-bench's report.
double reported(const std::string& out, const std::string& label)
{
    const size_t at = out.find(label);
    if (at == std::string::npos) return NAN;
    return std::stod(out.substr(at + label.size()));
}

}  // namespace

class TestBrookQuantize : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!QFileInfo::exists(kQuantize)) QSKIP("brook-quantize is not built");
        m_source = testsupport::tinyModelDir();
        auto config = loadModelConfig(m_source / "config.json");
        QVERIFY(config.ok());
        m_config = *config;
        QVERIFY(m_config.kvDim() != m_config.qDim());  // GQA: AWQ leaves v_proj's rows alone
        QVERIFY(m_dir.isValid());
    }

    void writesAwqGemmFolder_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<int>("bits");
        QTest::newRow("rtn8") << "rtn" << 8;
        QTest::newRow("rtn4") << "rtn" << 4;
        QTest::newRow("awq4") << "awq" << 4;
    }

    void writesAwqGemmFolder()
    {
        QFETCH(QString, method);
        QFETCH(int, bits);
        const bool awq = method == "awq";
        const std::filesystem::path out =
            std::filesystem::path(m_dir.path().toStdString()) / (method.toStdString() + std::to_string(bits));
        auto [code, log] =
            run(kQuantize, {QString::fromStdString(m_source.string()), QString::fromStdString(out.string()), "--method",
                            method, "--bits", QString::number(bits), "--group-size", QString::number(kGroup),
                            "--calibration-tokens", "1024"});
        QVERIFY2(code == 0, log.c_str());
        m_outputs[method.toStdString() + std::to_string(bits)] = out;
        for (const char* file : {"model.safetensors", "config.json", "tokenizer.model", "tokenizer_config.json",
                                 "generation_config.json", "quantization_report.json"})
            QVERIFY2(std::filesystem::exists(out / file), file);

        const QJsonObject config = readJson(out / "config.json");
        const QJsonObject q = config["quantization_config"].toObject();
        QCOMPARE(q["quant_method"].toString(), QString("awq"));
        QCOMPARE(q["bits"].toInt(), bits);
        QCOMPARE(q["group_size"].toInt(), kGroup);
        QCOMPARE(q["zero_point"].toBool(), true);
        QCOMPARE(q["version"].toString(), QString("gemm"));
        QCOMPARE(q.contains("brook_method"), !awq);
        QCOMPARE(config["hidden_size"].toInt(), m_config.hiddenSize);

        auto source = SafetensorsFile::open(m_source / "model.safetensors");
        auto written = SafetensorsFile::open(out / "model.safetensors");
        QVERIFY(source.ok() && written.ok());
        const SafetensorsFile& src = **source;
        const SafetensorsFile& dst = **written;
        for (const char* name : {"model.embed_tokens.weight", "model.norm.weight"}) {
            const TensorView* a = src.find(name);
            const TensorView* b = dst.find(name);
            QVERIFY2(a && b && a->dtype == b->dtype && a->shape == b->shape && a->numBytes == b->numBytes &&
                         std::memcmp(a->data, b->data, a->numBytes) == 0,
                     name);
        }
        const QJsonArray report = readJson(out / "quantization_report.json")["linears"].toArray();
        QCOMPARE(report.size(), qsizetype(7 * m_config.numLayers));
        const double bound = bits == 8 ? 0.01 : 0.15;
        int entry = 0;
        for (int layer = 0; layer < m_config.numLayers; ++layer) {
            const std::string p = "model.layers." + std::to_string(layer) + ".";
            const auto srcNorm = floats(*src.find(p + "input_layernorm.weight"));
            const auto dstNorm = floats(*dst.find(p + "input_layernorm.weight"));
            const auto srcPost = floats(*src.find(p + "post_attention_layernorm.weight"));
            const auto dstPost = floats(*dst.find(p + "post_attention_layernorm.weight"));
            QCOMPARE(srcNorm != dstNorm, awq);  // AWQ folds 1/s into the norms
            QCOMPARE(srcPost != dstPost, awq);
            for (int li = 0; li < 7; ++li) {
                const std::string which = kLinears[li];
                const std::string name = p + which;
                const TensorView* dense = src.find(name + ".weight");
                QVERIFY(dense && !dst.find(name + ".weight"));
                const int N = int(dense->shape[0]), K = int(dense->shape[1]);
                const TensorView* qweight = dst.find(name + ".qweight");
                const TensorView* qzeros = dst.find(name + ".qzeros");
                const TensorView* scales = dst.find(name + ".scales");
                QVERIFY2(qweight && qzeros && scales, name.c_str());
                QCOMPARE(qweight->dtype, DType::I32);
                QCOMPARE(qzeros->dtype, DType::I32);
                QCOMPARE(scales->dtype, DType::F16);
                QCOMPARE(qweight->shape, (std::vector<int64_t>{K, N * bits / 32}));
                QCOMPARE(qzeros->shape, (std::vector<int64_t>{K / kGroup, N * bits / 32}));
                QCOMPARE(scales->shape, (std::vector<int64_t>{K / kGroup, N}));

                auto decoded = fromAwqGemm(*qweight, *qzeros, *scales, N, K, bits, kGroup, name);
                QVERIFY2(decoded.ok(), decoded.ok() ? "" : decoded.error().c_str());
                std::vector<float> w(size_t(N) * K);
                dequantize(*decoded, w);
                // AWQ: W' = W diag(s) with s = source norm / folded norm for the Linears fed by a
                // norm (v too: under GQA nothing is folded into its rows). o, up and down carry
                // scales that cannot be read back from the folder.
                const bool attnIn =
                    which == "self_attn.q_proj" || which == "self_attn.k_proj" || which == "self_attn.v_proj";
                const bool mlpIn = which == "mlp.gate_proj";
                if (awq && !attnIn && !mlpIn) continue;
                if (awq)
                    for (int n = 0; n < N; ++n)
                        for (int k = 0; k < K; ++k) {
                            const float s = attnIn ? srcNorm[size_t(k)] / dstNorm[size_t(k)]
                                                   : srcPost[size_t(k)] / dstPost[size_t(k)];
                            w[size_t(n) * K + k] /= s;
                        }
                const std::vector<float> original = floats(*dense);
                double diff = 0, norm = 0;
                for (size_t i = 0; i < w.size(); ++i) {
                    diff += (double(w[i]) - original[i]) * (double(w[i]) - original[i]);
                    norm += double(original[i]) * original[i];
                }
                const double error = std::sqrt(diff / norm);
                QVERIFY2(error > 0 && error < bound, qPrintable(QString("%1: %2").arg(name.c_str()).arg(error)));
                if (!awq) {
                    const QJsonObject r = report[7 * layer + li].toObject();
                    QCOMPARE(r["name"].toString().toStdString(), name);
                    QVERIFY2(std::abs(r["weight_error"].toDouble() - error) < 1e-4 * error,
                             qPrintable(QString("%1 reported %2, decoded %3")
                                            .arg(name.c_str())
                                            .arg(r["weight_error"].toDouble())
                                            .arg(error)));
                }
            }
        }
        for (const QJsonValue& v : report) {
            const QJsonObject r = v.toObject();
            QVERIFY(r["weight_error"].toDouble() > 0 && r["weight_error"].toDouble() < bound);
            QCOMPARE(r.contains("alpha"), awq);
            ++entry;
        }
        QCOMPARE(entry, 7 * m_config.numLayers);
        if (awq) {
            const QJsonObject summary = readJson(out / "quantization_report.json")["summary"].toObject();
            QVERIFY(summary["mean_awq_output_error"].toDouble() <= summary["mean_rtn_output_error"].toDouble());
            QVERIFY(summary["mean_awq_output_error"].toDouble() > 0);
        }
    }

    void quantizedFoldersLoadCloseToTheDenseModel()
    {
        if (m_outputs.size() != 3) QSKIP("writesAwqGemmFolder failed");
        std::mt19937 rng(31);
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, 40, m_config.vocabSize);
        const auto logitsOf = [&](const std::filesystem::path& dir) {
            LaunchOptions o = testsupport::cpuOptions();
            o.modelDir = dir;
            auto engine = testsupport::launch(o);
            auto logits = engine->promptLogits(tokens);
            if (!logits) qFatal("%s", logits.error().c_str());
            return std::move(logits).value();
        };
        const std::vector<float> dense = logitsOf(m_source);
        std::map<std::string, double> error, kl;
        for (const auto& [name, dir] : m_outputs) {
            const std::vector<float> q = logitsOf(dir);
            QualityMetrics metrics;
            metrics.addSequence(dense, q, tokens, m_config.vocabSize);
            error[name] = testsupport::relativeError(q, dense);
            kl[name] = metrics.summary().meanKl;
            qInfo("%s: max relative logit error %.4f, mean KL %.5f, top-1 %.3f", name.c_str(), error[name], kl[name],
                  metrics.summary().top1Agreement);
            QVERIFY(error[name] > 0);
        }
        QVERIFY(error["rtn8"] < 0.05);
        QVERIFY(error["rtn8"] < error["rtn4"] && error["rtn8"] < error["awq4"]);
        QVERIFY(kl["rtn8"] < kl["rtn4"] && kl["rtn8"] < kl["awq4"]);
        QVERIFY(error["rtn4"] < 0.5 && error["awq4"] < 0.5);
    }

    void benchQualityComparesTheModels()
    {
        if (m_outputs.size() != 3) QSKIP("writesAwqGemmFolder failed");
        if (!QFileInfo::exists(kBench)) QSKIP("brook-bench is not built");
        const QString source = QString::fromStdString(m_source.string());
        const auto bench = [&](const std::filesystem::path& model) {
            return run(kBench, {"quality", "--model", QString::fromStdString(model.string()), "--reference", source,
                                "--device", "cpu", "--max-tokens", "96"});
        };
        auto [code8, out8] = bench(m_outputs["rtn8"]);
        auto [code4, out4] = bench(m_outputs["rtn4"]);
        auto [codeSame, outSame] = bench(m_source);
        QVERIFY2(code8 == 0, out8.c_str());
        QVERIFY2(code4 == 0, out4.c_str());
        QVERIFY2(codeSame == 0, outSame.c_str());
        const std::string kl = "mean KL(reference || model): ";
        QVERIFY2(reported(out8, kl) > 0 && reported(out8, kl) < reported(out4, kl), (out8 + out4).c_str());
        QVERIFY(reported(out8, "top-1 agreement: ") >= reported(out4, "top-1 agreement: "));
        QCOMPARE(reported(outSame, kl), 0.0);
        QCOMPARE(reported(outSame, "top-1 agreement: "), 100.0);
        QCOMPARE(reported(outSame, "ratio "), 1.0);
    }

    void rejectsBadArguments()
    {
        const QString source = QString::fromStdString(m_source.string());
        const QString out = m_dir.filePath("bad");
        auto [missing, missingLog] = run(kQuantize, {m_dir.filePath("no-such-model"), out, "--method", "rtn"});
        QVERIFY(missing != 0);
        QVERIFY2(missingLog.find("does not exist") != std::string::npos, missingLog.c_str());

        auto [group, groupLog] = run(kQuantize, {source, out, "--method", "rtn", "--group-size", "48"});
        QVERIFY(group != 0);
        QVERIFY2(groupLog.find("--group-size 48 does not divide") != std::string::npos, groupLog.c_str());
        auto [defaultGroup, defaultLog] = run(kQuantize, {source, out, "--method", "rtn"});  // 128 > hidden 64
        QVERIFY(defaultGroup != 0);
        QVERIFY2(defaultLog.find("does not divide hidden_size 64") != std::string::npos, defaultLog.c_str());

        QVERIFY(QDir().mkpath(out));
        QFile stray(out + "/stray.txt");
        QVERIFY(stray.open(QIODevice::WriteOnly));
        stray.close();
        auto [full, fullLog] = run(kQuantize, {source, out, "--method", "rtn", "--group-size", "32"});
        QVERIFY(full != 0);
        QVERIFY2(fullLog.find("not empty") != std::string::npos, fullLog.c_str());
        auto [forced, forcedLog] = run(kQuantize, {source, out, "--method", "rtn", "--group-size", "32", "--force"});
        QVERIFY2(forced == 0, forcedLog.c_str());

        auto [twice, twiceLog] =
            run(kQuantize, {out, m_dir.filePath("twice"), "--method", "rtn", "--group-size", "32"});
        QVERIFY(twice != 0);
        QVERIFY2(twiceLog.find("already quantized") != std::string::npos, twiceLog.c_str());
        auto [calib, calibLog] = run(kQuantize, {source, m_dir.filePath("c"), "--calibration",
                                                 m_dir.filePath("none.txt"), "--group-size", "32"});
        QVERIFY(calib != 0);
        QVERIFY2(calibLog.find("none.txt") != std::string::npos, calibLog.c_str());
    }

private:
    QTemporaryDir m_dir;
    std::filesystem::path m_source;
    ModelConfig m_config;
    std::map<std::string, std::filesystem::path> m_outputs;
};

QTEST_APPLESS_MAIN(TestBrookQuantize)
#include "test_brook_quantize.moc"
