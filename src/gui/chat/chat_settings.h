// ChatSettings: what one conversation asks of the engine: a system prompt, the sampling
// knobs people tune (temperature, top-p, top-k, max tokens, penalties, seed) and optionally a
// JSON schema the replies must follow (structured output). Stored as JSON in
// the conversation's row; defaults come from the model's generation_config.json.
#pragma once

#include "engine/generation_config.h"
#include "engine/sampling_params.h"

#include <QJsonObject>
#include <QString>

namespace brook {

struct ChatSettings {
    QString systemPrompt;
    QString inputTemplate;  // wraps each user message; "{input}" marks where; empty: as typed
    QString presetName;     // id of the preset last applied (shown in the pane)
    double temperature = 0.8;
    double topP = 0.8;
    int topK = 0;  // 0: off
    int maxTokens = 1024;
    double repetitionPenalty = 1.0;
    double presencePenalty = 0.0;
    double frequencyPenalty = 0.0;
    qint64 seed = -1;  // -1: a new seed per request
    // Structured output: a JSON schema every reply must validate against; empty: free text.
    QString jsonSchema;

    // The model's generation_config values over Brook's chat defaults.
    static ChatSettings fromDefaults(const GenerationDefaults& defaults);

    SamplingParams toSamplingParams() const;
    // The user's text as the template wraps it (every "{input}" replaced).
    QString expandInput(const QString& input) const;
    QJsonObject toJson() const;
    // Missing or mistyped fields keep their defaults: an old or hand-edited row still opens.
    static ChatSettings fromJson(const QJsonObject& object);

    bool operator==(const ChatSettings& other) const = default;
};

}  // namespace brook
