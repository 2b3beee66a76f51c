// PromptPreset: a named system prompt, optional sampling overrides and an optional template
// that wraps the user's text ("{input}" marks where), plus the keywords that pick it
// automatically. Plain data with JSON (de)serialization for the settings file.
#pragma once

#include "gui/chat/chat_settings.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace brook {

struct PromptPreset {
    QString id;  // stable key; built-ins use "general", "writing", "summary"
    QString name;
    QString systemPrompt;
    QString inputTemplate;  // empty: the text as typed
    QStringList keywords;   // any of them in a message picks this preset (when enabled)
    std::optional<double> temperature;
    std::optional<double> topP;
    std::optional<int> topK;
    std::optional<int> maxTokens;
    std::optional<double> repetitionPenalty;
    QString jsonSchema;  // structured output for the conversation; empty: free text
    bool builtin = false;

    QString expand(const QString& input) const;
    // Sets the conversation's system prompt, template and structured output (none when the
    // preset has no schema) and the overrides this preset has.
    void applyTo(ChatSettings& settings) const;
    // The longest keyword of this preset found in `text` (0: none): longer is more specific.
    int matchLength(const QString& text) const;

    QJsonObject toJson() const;
    static PromptPreset fromJson(const QJsonObject& object);
};

}  // namespace brook
