#include "gui/chat/chat_settings.h"

namespace brook {

ChatSettings ChatSettings::fromDefaults(const GenerationDefaults& d)
{
    ChatSettings s;
    applyGenerationDefaults(d, s);  // the same mapping the server and brook-run use
    if (d.maxNewTokens && *d.maxNewTokens > 0) s.maxTokens = *d.maxNewTokens;
    return s;
}

SamplingParams ChatSettings::toSamplingParams() const
{
    SamplingParams p;
    p.temperature = float(temperature);
    p.topP = float(topP);
    p.topK = topK;
    p.maxTokens = maxTokens;
    p.repetitionPenalty = float(repetitionPenalty);
    p.presencePenalty = float(presencePenalty);
    p.frequencyPenalty = float(frequencyPenalty);
    if (seed >= 0) p.seed = uint64_t(seed);
    if (!jsonSchema.trimmed().isEmpty())
        p.structured = {StructuredOutput::Kind::JsonSchema, jsonSchema.toStdString(), {}, "json_schema"};
    return p;
}

QString ChatSettings::expandInput(const QString& input) const
{
    if (inputTemplate.isEmpty()) return input;
    QString out = inputTemplate;
    return out.replace(QLatin1String("{input}"), input);
}

QJsonObject ChatSettings::toJson() const
{
    return QJsonObject{
        {"system_prompt", systemPrompt},
        {"input_template", inputTemplate},
        {"preset", presetName},
        {"temperature", temperature},
        {"top_p", topP},
        {"top_k", topK},
        {"max_tokens", maxTokens},
        {"repetition_penalty", repetitionPenalty},
        {"presence_penalty", presencePenalty},
        {"frequency_penalty", frequencyPenalty},
        {"seed", seed},
        {"json_schema", jsonSchema},
    };
}

ChatSettings ChatSettings::fromJson(const QJsonObject& o)
{
    ChatSettings s;
    auto number = [&](const char* key, double& out) {
        if (o.value(key).isDouble()) out = o.value(key).toDouble();
    };
    auto integer = [&](const char* key, auto& out) {
        if (o.value(key).isDouble())
            out = static_cast<std::remove_reference_t<decltype(out)>>(o.value(key).toInteger());
    };
    if (o.value("system_prompt").isString()) s.systemPrompt = o.value("system_prompt").toString();
    if (o.value("input_template").isString()) s.inputTemplate = o.value("input_template").toString();
    if (o.value("preset").isString()) s.presetName = o.value("preset").toString();
    number("temperature", s.temperature);
    number("top_p", s.topP);
    integer("top_k", s.topK);
    integer("max_tokens", s.maxTokens);
    number("repetition_penalty", s.repetitionPenalty);
    number("presence_penalty", s.presencePenalty);
    number("frequency_penalty", s.frequencyPenalty);
    integer("seed", s.seed);
    if (o.value("json_schema").isString()) s.jsonSchema = o.value("json_schema").toString();
    return s;
}

}  // namespace brook
