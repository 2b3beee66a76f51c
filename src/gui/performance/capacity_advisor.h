// CapacityAdvisor: when a plan does not fit and no single suggested value (gpu-memory-utilization,
// max-model-len, CPU KV cache) fixes it, the other knobs that would, each tried alone through the
// capacity planner: fewer batched tokens or sequences (smaller activations), CUDA graphs off, and
// int4 when the weights are not 4-bit already. Pure arithmetic; the words are translated.
#pragma once

#include "engine/capacity_planner.h"

#include <QCoreApplication>
#include <QString>
#include <QStringList>

namespace brook {

class CapacityAdvisor {
    Q_DECLARE_TR_FUNCTIONS(CapacityAdvisor)
public:
    // Each change that makes `input` fit on its own, in the panel's words ("max-num-seqs 16").
    static QStringList alternativesThatFit(const CapacityInput& input);
    // True for int4 and AWQ: suggesting "int4" again would be no advice.
    static bool alreadyFourBit(const CapacityInput& input);
};

}  // namespace brook
