#include "gui/performance/serving_profile.h"

#include "server/serve_config.h"

#include <QLocale>

namespace brook {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A YAML double-quoted scalar: safe for paths with spaces, colons or non-ASCII characters.
QString quoted(const QString& text)
{
    QString out = QStringLiteral("\"");
    for (const QChar c : text) {
        if (c == QLatin1Char('\\') || c == QLatin1Char('"')) out += QLatin1Char('\\');
        out += c;
    }
    return out + QLatin1Char('"');
}

// The shortest of 10 or 17 significant digits that reads back as the same double.
QString number(double value)
{
    const QString shortText = QString::number(value, 'g', 10);
    return shortText.toDouble() == value ? shortText : QString::number(value, 'g', 17);
}

}  // namespace

void ServingProfile::copyKnobs(const LaunchOptions& from, LaunchOptions& into)
{
    static_cast<ServingSettings&>(into) = from;  // the knobs are exactly ServingSettings
}

bool ServingProfile::sameKnobs(const LaunchOptions& a, const LaunchOptions& b)
{
    return a.device == b.device && a.dtype == b.dtype && a.quantization == b.quantization &&
           a.maxModelLen == b.maxModelLen && a.maxNumSeqs == b.maxNumSeqs &&
           a.maxNumBatchedTokens == b.maxNumBatchedTokens &&
           qAbs(a.gpuMemoryUtilization - b.gpuMemoryUtilization) < 1e-9 && a.cpuKvCacheBytes == b.cpuKvCacheBytes &&
           a.blockSize == b.blockSize && a.enforceEager == b.enforceEager && a.schedulingPolicy == b.schedulingPolicy;
}

LaunchOptions ServingProfile::desktopDefaults()
{
    LaunchOptions o;
    o.maxModelLen = 8192;
    o.maxNumSeqs = 64;
    return o;
}

QJsonObject ServingProfile::toJson() const
{
    const LaunchOptions& o = options;
    return QJsonObject{{QStringLiteral("name"), name},
                       {QStringLiteral("device"), QString::fromStdString(o.device)},
                       {QStringLiteral("dtype"), QString::fromStdString(o.dtype)},
                       {QStringLiteral("quantization"), QString::fromStdString(o.quantization)},
                       {QStringLiteral("max_model_len"), o.maxModelLen},
                       {QStringLiteral("max_num_seqs"), o.maxNumSeqs},
                       {QStringLiteral("max_num_batched_tokens"), o.maxNumBatchedTokens},
                       {QStringLiteral("gpu_memory_utilization"), o.gpuMemoryUtilization},
                       {QStringLiteral("cpu_kv_cache_bytes"), double(o.cpuKvCacheBytes)},
                       {QStringLiteral("block_size"), o.blockSize},
                       {QStringLiteral("enforce_eager"), o.enforceEager},
                       {QStringLiteral("scheduling_policy"), QString::fromStdString(o.schedulingPolicy)}};
}

ServingProfile ServingProfile::fromJson(const QJsonObject& j)
{
    ServingProfile p;
    p.options = desktopDefaults();
    LaunchOptions& o = p.options;
    p.name = j.value(QStringLiteral("name")).toString();
    auto text = [&](const char* key, std::string& field) {
        if (j.contains(QLatin1String(key))) field = j.value(QLatin1String(key)).toString().toStdString();
    };
    auto integer = [&](const char* key, int& field) { field = j.value(QLatin1String(key)).toInt(field); };
    text("device", o.device);
    text("dtype", o.dtype);
    text("quantization", o.quantization);
    text("scheduling_policy", o.schedulingPolicy);
    integer("max_model_len", o.maxModelLen);
    integer("max_num_seqs", o.maxNumSeqs);
    integer("max_num_batched_tokens", o.maxNumBatchedTokens);
    integer("block_size", o.blockSize);
    o.gpuMemoryUtilization = j.value(QStringLiteral("gpu_memory_utilization")).toDouble(o.gpuMemoryUtilization);
    o.cpuKvCacheBytes = int64_t(j.value(QStringLiteral("cpu_kv_cache_bytes")).toDouble(double(o.cpuKvCacheBytes)));
    o.enforceEager = j.value(QStringLiteral("enforce_eager")).toBool(o.enforceEager);
    return p;
}

QString ServingProfile::toServeYaml(const QString& model) const
{
    const LaunchOptions& o = options;
    QStringList lines;
    lines << QStringLiteral("# Brook serving profile \"%1\": brook-serve --config FILE").arg(name);
    if (!model.isEmpty()) lines << QStringLiteral("model: ") + quoted(model);
    lines << QStringLiteral("device: ") + QString::fromStdString(o.device);
    lines << QStringLiteral("dtype: ") + QString::fromStdString(o.dtype);
    if (!o.quantization.empty()) lines << QStringLiteral("quantization: ") + QString::fromStdString(o.quantization);
    if (o.maxModelLen > 0) lines << QStringLiteral("max-model-len: %1").arg(o.maxModelLen);
    lines << QStringLiteral("max-num-seqs: %1").arg(o.maxNumSeqs);
    lines << QStringLiteral("max-num-batched-tokens: %1").arg(o.maxNumBatchedTokens);
    lines << QStringLiteral("gpu-memory-utilization: ") + number(o.gpuMemoryUtilization);
    lines << QStringLiteral("block-size: %1").arg(o.blockSize);
    lines << QStringLiteral("enforce-eager: ") + (o.enforceEager ? QStringLiteral("true") : QStringLiteral("false"));
    lines << QStringLiteral("scheduling-policy: ") + QString::fromStdString(o.schedulingPolicy);
    lines << QStringLiteral("cpu-kv-cache-space: ") + number(double(o.cpuKvCacheBytes) / kGiB);
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

Result<ServingProfile> ServingProfile::fromServeYaml(const QString& yaml, const QString& name, QString* model)
{
    ServeConfig config;
    config.launch = desktopDefaults();
    config.launch.maxModelLen = 0;  // absent from the file: the model's own, as brook-serve does
    if (auto r = applyServeConfigYaml(yaml.toStdString(), name.toStdString(), config); !r) return r.failure();
    normalizeServeConfig(config);
    if (auto r = validateServeConfig(config); !r) return r.failure();
    ServingProfile p;
    p.name = name;
    p.options = desktopDefaults();
    copyKnobs(config.launch, p.options);
    // brook-serve's own mapping of --cpu-kv-cache-space (serve_main.cpp).
    if (config.cpuKvCacheSpaceGiB > 0) p.options.cpuKvCacheBytes = int64_t(config.cpuKvCacheSpaceGiB * kGiB);
    if (model) *model = QString::fromStdString(config.model);
    return p;
}

QJsonArray ServingProfile::listToJson(const QList<ServingProfile>& profiles)
{
    QJsonArray out;
    for (const ServingProfile& p : profiles) out.append(p.toJson());
    return out;
}

QList<ServingProfile> ServingProfile::listFromJson(const QJsonArray& json)
{
    QList<ServingProfile> out;
    for (const QJsonValue& v : json)
        if (v.isObject()) out << fromJson(v.toObject());
    return out;
}

}  // namespace brook
