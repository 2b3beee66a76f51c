#include "engine/request.h"

namespace brook {

const char* finishReasonName(FinishReason reason)
{
    switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Abort: return "abort";
    }
    return "stop";
}

const char* requestPhaseName(RequestPhase phase)
{
    switch (phase) {
    case RequestPhase::Queued: return "queued";
    case RequestPhase::Prefill: return "prefill";
    case RequestPhase::Decode: return "decode";
    case RequestPhase::Preempted: return "preempted";
    }
    return "queued";
}

}  // namespace brook
