// GenerationOutcome: how one chat generation ended, with the per-message numbers the pane
// shows (tokens, cached prompt tokens, time to first token, tokens/s). Plain data, passed by queued signals.
#pragma once

#include <QMetaType>
#include <QString>

namespace brook {

struct GenerationOutcome {
    QString text;  // everything generated
    int promptTokens = 0;
    int outputTokens = 0;
    int cachedTokens = 0;  // prompt tokens the engine's prefix cache supplied
    double ttftSeconds = 0;
    double tokensPerSecond = 0;  // (outputTokens - 1) over first -> last token
    QString finishReason;        // "stop", "length" or "abort"
};

}  // namespace brook

Q_DECLARE_METATYPE(brook::GenerationOutcome)
