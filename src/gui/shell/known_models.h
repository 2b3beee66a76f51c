// KnownModels: the short list the download dialog offers besides a free-text id: models Brook is
// known to run, each with its download size (from its shape) and whether it fits this computer
// by the capacity planner (CPU backend, the app's serving knobs, this machine's memory).
#pragma once

#include "engine/model_config.h"
#include "launch/launch_options.h"

#include <QCoreApplication>
#include <QList>
#include <QString>

namespace brook {

struct KnownModel {
    QString repo;                  // Hugging Face id
    QString modelScopeRepo;        // the same model on ModelScope ("" when it is not there)
    ModelConfig shape;             // for the planner
    int downloadElementBytes = 2;  // bf16 checkpoints
};

struct KnownModelFit {
    qint64 downloadBytes = 0;
    qint64 neededBytes = 0;  // weights, KV cache and activations as the CPU backend sizes them
    bool fits = false;
};

class KnownModels {
    Q_DECLARE_TR_FUNCTIONS(KnownModels)
public:
    static QList<KnownModel> list();
    // `hostBytes`: this computer's memory (hostMemoryBytes()); the model fits when the plan does
    // and needs at most 80% of it (the desktop and the app want the rest).
    static KnownModelFit fit(const KnownModel& model, const LaunchOptions& serving, qint64 hostBytes);
    static qint64 hostMemoryBytes();  // 0 when unknown
    // One line for the list: "baidu/ERNIE-4.5-0.3B-PT · 0.7 GiB · fits this computer".
    static QString describe(const KnownModel& model, const KnownModelFit& fit);
};

}  // namespace brook
