#include "gui/chat/prompt_preset.h"

#include <QJsonArray>

namespace brook {

QString PromptPreset::expand(const QString& input) const
{
    if (inputTemplate.isEmpty()) return input;
    QString out = inputTemplate;
    return out.replace(QLatin1String("{input}"), input);
}

void PromptPreset::applyTo(ChatSettings& s) const
{
    s.systemPrompt = systemPrompt;
    s.inputTemplate = inputTemplate;
    s.presetName = id;
    s.jsonSchema = jsonSchema;
    if (temperature) s.temperature = *temperature;
    if (topP) s.topP = *topP;
    if (topK) s.topK = *topK;
    if (maxTokens) s.maxTokens = *maxTokens;
    if (repetitionPenalty) s.repetitionPenalty = *repetitionPenalty;
}

int PromptPreset::matchLength(const QString& text) const
{
    int best = 0;
    for (const QString& k : keywords)
        if (!k.isEmpty() && k.size() > best && text.contains(k, Qt::CaseInsensitive)) best = int(k.size());
    return best;
}

QJsonObject PromptPreset::toJson() const
{
    QJsonObject o{{"id", id},
                  {"name", name},
                  {"system_prompt", systemPrompt},
                  {"input_template", inputTemplate},
                  {"keywords", QJsonArray::fromStringList(keywords)},
                  {"builtin", builtin}};
    if (temperature) o["temperature"] = *temperature;
    if (topP) o["top_p"] = *topP;
    if (topK) o["top_k"] = *topK;
    if (maxTokens) o["max_tokens"] = *maxTokens;
    if (repetitionPenalty) o["repetition_penalty"] = *repetitionPenalty;
    if (!jsonSchema.isEmpty()) o["json_schema"] = jsonSchema;
    return o;
}

PromptPreset PromptPreset::fromJson(const QJsonObject& o)
{
    PromptPreset p;
    p.id = o.value("id").toString();
    p.name = o.value("name").toString();
    p.systemPrompt = o.value("system_prompt").toString();
    p.inputTemplate = o.value("input_template").toString();
    for (const QJsonValue& k : o.value("keywords").toArray())
        if (k.isString()) p.keywords << k.toString();
    p.builtin = o.value("builtin").toBool();
    if (o.value("temperature").isDouble()) p.temperature = o.value("temperature").toDouble();
    if (o.value("top_p").isDouble()) p.topP = o.value("top_p").toDouble();
    if (o.value("top_k").isDouble()) p.topK = o.value("top_k").toInt();
    if (o.value("max_tokens").isDouble()) p.maxTokens = o.value("max_tokens").toInt();
    if (o.value("repetition_penalty").isDouble()) p.repetitionPenalty = o.value("repetition_penalty").toDouble();
    if (o.value("json_schema").isString()) p.jsonSchema = o.value("json_schema").toString();
    return p;
}

}  // namespace brook
