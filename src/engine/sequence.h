// Sequence: the scheduler's plain state record for one request (nano-vllm's `sequence`).
// `tokens` holds prompt then output; the first `numComputedTokens` of them are in the KV cache.
// Preemption by recompute sets numComputedTokens back to 0 and keeps the tokens (and the block
// hashes, which depend on tokens only).
// Engine thread only.
#pragma once

#include "engine/request.h"
#include "engine/sampling_params.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace brook {

enum class SequenceState { Waiting, Running, Finished };

struct Sequence {
    RequestId id = 0;
    std::vector<int32_t> tokens;  // prompt + output
    int numPromptTokens = 0;
    int numComputedTokens = 0;        // tokens whose K/V are in the cache
    std::vector<int32_t> blockTable;  // KV block ids, in position order
    // Prefix caching (block_manager.h): the chained hash of each full block of `tokens` computed
    // so far, how many leading blocks of blockTable have been offered to the cache, and how many
    // prompt tokens the cache supplied when the sequence was first scheduled (-1 until then).
    std::vector<uint64_t> blockHashes;
    int numCommittedBlocks = 0;
    int numCachedPromptTokens = -1;
    SamplingParams params;
    uint64_t seed = 0;
    SequenceState state = SequenceState::Waiting;
    int numPreemptions = 0;
    int priority = 0;  // lower runs first under the priority policy (FCFS ties)

    Clock::time_point arrivalTime;
    Clock::time_point firstScheduledTime;  // unset until scheduled once
    Clock::time_point firstTokenTime;
    Clock::time_point lastTokenTime;

    int numTokens() const { return static_cast<int>(tokens.size()); }
    int numOutputTokens() const { return numTokens() - numPromptTokens; }
    int numUncomputedTokens() const { return numTokens() - numComputedTokens; }
    bool wasScheduled() const { return firstScheduledTime != Clock::time_point{}; }
};

}  // namespace brook
