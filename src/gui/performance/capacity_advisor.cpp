#include "gui/performance/capacity_advisor.h"

#include <functional>

namespace brook {

namespace {

bool fitsWith(const CapacityInput& input, const std::function<void(CapacityInput&)>& change)
{
    CapacityInput changed = input;
    change(changed);
    return CapacityPlanner::plan(changed).fits();
}

}  // namespace

bool CapacityAdvisor::alreadyFourBit(const CapacityInput& input)
{
    if (input.quantization == "int4" || input.quantization == "awq") return true;
    return input.quantization.empty() && input.model.quantization && input.model.quantization->bits == 4;
}

QStringList CapacityAdvisor::alternativesThatFit(const CapacityInput& input)
{
    QStringList out;
    // The mildest value of each knob that fits, so the advice costs as little throughput as it can.
    for (int tokens : {4096, 2048, 1024, 512}) {
        if (tokens >= input.maxNumBatchedTokens) continue;
        if (fitsWith(input, [tokens](CapacityInput& in) { in.maxNumBatchedTokens = tokens; })) {
            out << tr("max-num-batched-tokens %1").arg(tokens);
            break;
        }
    }
    for (int seqs : {64, 32, 16, 8, 4, 1}) {
        if (seqs >= input.maxNumSeqs) continue;
        if (fitsWith(input, [seqs](CapacityInput& in) { in.maxNumSeqs = seqs; })) {
            out << tr("max-num-seqs %1").arg(seqs);
            break;
        }
    }
    if (input.device != "cpu" && !input.enforceEager &&
        fitsWith(input, [](CapacityInput& in) { in.enforceEager = true; }))
        out << tr("CUDA graphs off");
    if (!alreadyFourBit(input) && !input.model.quantization &&
        fitsWith(input, [](CapacityInput& in) { in.quantization = "int4"; }))
        out << tr("quantization int4");
    return out;
}

}  // namespace brook
