#pragma once

#include "engine/scheduler.h"

#include <string>

namespace brook {

// Engine-wide limits (vLLM's flags of the same names).
struct EngineConfig {
    std::string modelName = "ernie-4.5";  // served model name: metrics label, API "model"
    int maxModelLen = 4096;               // prompt + output tokens per request
    SchedulerConfig scheduler;            // max_num_seqs, max_num_batched_tokens, policy
    bool enablePrefixCaching = true;      // reuse the KV blocks of prompts seen before (block_manager.h)
    bool logStats = false;                // a vLLM-style throughput line every statsIntervalSeconds
    double statsIntervalSeconds = 5.0;
};

}  // namespace brook
