#include "gui/chat/preset_library.h"

#include <QRegularExpression>

namespace brook {

PresetLibrary::PresetLibrary() : m_presets(builtins()) {}

QList<PromptPreset> PresetLibrary::builtins()
{
    PromptPreset general;
    general.id = QStringLiteral("general");
    general.name = QStringLiteral("General");
    general.builtin = true;

    PromptPreset writing;
    writing.id = QStringLiteral("writing");
    writing.name = QStringLiteral("Writing");
    writing.inputTemplate =
        QStringLiteral("【任务】{input}\n【要求】语言简洁专业，段落清晰，不使用markdown格式，直接输出正文。\n【输出】");
    writing.keywords = {QStringLiteral("写"), QStringLiteral("生成"), QStringLiteral("创作")};
    writing.temperature = 0.8;
    writing.topP = 0.8;
    writing.builtin = true;

    PromptPreset summary;
    summary.id = QStringLiteral("summary");
    summary.name = QStringLiteral("Summary");
    summary.inputTemplate =
        QStringLiteral("【任务】{input}\n【要求】用3句话以内完成，每句不超过25字，不加序号。\n【输出】");
    summary.keywords = {QStringLiteral("总结"), QStringLiteral("概括")};
    summary.temperature = 0.3;
    summary.topP = 0.8;
    summary.maxTokens = 256;
    summary.builtin = true;

    // Structured output: the reply is JSON valid against the schema (the engine masks every token).
    PromptPreset extract;
    extract.id = QStringLiteral("json-extract");
    extract.name = QStringLiteral("JSON extraction");
    extract.inputTemplate = QStringLiteral("【任务】从下文提取摘要和关键词：{input}\n【输出】JSON");
    extract.keywords = {QStringLiteral("提取"), QStringLiteral("JSON")};
    extract.jsonSchema = QStringLiteral(
        "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"summary\": {\"type\": \"string\", \"maxLength\": 200},\n"
        "    \"keywords\": {\"type\": \"array\", \"items\": {\"type\": \"string\", \"maxLength\": 20}, \"maxItems\": 8}\n"
        "  },\n  \"required\": [\"summary\", \"keywords\"],\n  \"additionalProperties\": false\n}");
    extract.temperature = 0.3;
    extract.builtin = true;

    return {general, writing, summary, extract};
}

const PromptPreset* PresetLibrary::find(const QString& id) const
{
    for (const PromptPreset& p : m_presets)
        if (p.id == id) return &p;
    return nullptr;
}

QString PresetLibrary::add(PromptPreset preset)
{
    QString base = preset.name.toLower();
    base.replace(QRegularExpression(QStringLiteral("[^\\w]+")), QStringLiteral("-"));
    if (base.isEmpty() || base == QLatin1String("-")) base = QStringLiteral("preset");
    QString id = base;
    for (int n = 2; find(id); ++n) id = base + QLatin1Char('-') + QString::number(n);
    preset.id = id;
    preset.builtin = false;
    m_presets.append(preset);
    return id;
}

bool PresetLibrary::update(const PromptPreset& preset)
{
    for (PromptPreset& p : m_presets) {
        if (p.id != preset.id) continue;
        const bool builtin = p.builtin;
        p = preset;
        p.builtin = builtin;
        return true;
    }
    return false;
}

bool PresetLibrary::remove(const QString& id)
{
    for (qsizetype i = 0; i < m_presets.size(); ++i) {
        if (m_presets[i].id == id) {
            m_presets.removeAt(i);
            return true;
        }
    }
    return false;
}

void PresetLibrary::restoreBuiltins()
{
    for (const PromptPreset& b : builtins())
        if (!find(b.id)) m_presets.append(b);
}

std::optional<PromptPreset> PresetLibrary::chooseFor(const QString& text) const
{
    const PromptPreset* best = nullptr;
    int bestLength = 0;
    for (const PromptPreset& p : m_presets) {
        const int length = p.matchLength(text);
        if (length > bestLength) {
            best = &p;
            bestLength = length;
        }
    }
    if (!best) return std::nullopt;
    return *best;
}

QJsonArray PresetLibrary::toJson() const
{
    QJsonArray out;
    for (const PromptPreset& p : m_presets) out.append(p.toJson());
    return out;
}

PresetLibrary PresetLibrary::fromJson(const QJsonArray& array)
{
    PresetLibrary library;
    if (array.isEmpty()) return library;
    QList<PromptPreset> presets;
    for (const QJsonValue& v : array) {
        if (!v.isObject()) continue;
        PromptPreset p = PromptPreset::fromJson(v.toObject());
        if (!p.id.isEmpty()) presets.append(p);
    }
    if (!presets.isEmpty()) library.m_presets = presets;
    return library;
}

}  // namespace brook
