// ServingProfile: a named set of serving knobs (vLLM's: max-model-len, max-num-seqs,
// max-num-batched-tokens, gpu-memory-utilization, dtype, quantization, enforce-eager, block size,
// scheduling policy, plus device and the CPU KV-cache size). Stored as JSON in the app's settings
// and exported as the YAML `brook-serve --config` reads (and read back from such a file through
// brook-serve's own parser, so what loads here loads there).
#pragma once

#include "launch/launch_options.h"
#include "engine/result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace brook {

struct ServingProfile {
    QString name;
    LaunchOptions options;  // only the knobs matter; modelDir is not part of a profile

    QJsonObject toJson() const;
    static ServingProfile fromJson(const QJsonObject& json);  // missing keys keep the defaults

    // brook-serve's YAML for `model` (a folder or a Hugging Face id; empty: no model key).
    QString toServeYaml(const QString& model) const;
    // Reads a brook-serve YAML file's knobs with brook-serve's parser; `model` gets its model key.
    static Result<ServingProfile> fromServeYaml(const QString& yaml, const QString& name, QString* model = nullptr);

    // Copies the knob fields of `from` over `into` (everything else of `into` stays).
    static void copyKnobs(const LaunchOptions& from, LaunchOptions& into);
    static bool sameKnobs(const LaunchOptions& a, const LaunchOptions& b);
    // The app's starting point: a desktop's handful of chat panes and one local endpoint.
    static LaunchOptions desktopDefaults();

    static QJsonArray listToJson(const QList<ServingProfile>& profiles);
    static QList<ServingProfile> listFromJson(const QJsonArray& json);
};

}  // namespace brook
