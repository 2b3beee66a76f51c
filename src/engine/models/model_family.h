// ModelFamily: what one family of dense decoders does differently from the others, beyond the
// dimensions config.json gives. Both backends read it; a new family is one entry in
// model_family.cpp plus its tests (docs/architecture.md, "Model families").
//
// The families Brook runs share one layer: RMSNorm, attention with grouped KV heads and RoPE, a
// SwiGLU MLP, RMSNorm on the residual stream, the checkpoint's tensors named as transformers
// names them (model.layers.N.self_attn.q_proj.weight, ...). They differ in:
//   - how RoPE pairs a head's dimensions: ERNIE-4.5 rotates neighbours (2i, 2i+1), as GPT-J;
//     Llama and Qwen3 rotate the halves (i, i + HD/2), transformers' rotate_half;
//   - Qwen3's RMSNorm of each q and k head before RoPE (self_attn.q_norm / k_norm, [HD] each);
//   - Llama 3's rope_scaling of type "llama3" (the frequencies, model_config.h).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace brook {

struct ModelConfig;

enum class RopePairing {
    Neighbours,  // dimensions (2i, 2i+1): ERNIE-4.5
    Halves,      // dimensions (i, i + HD/2): Llama, Qwen3
};

struct ModelFamily {
    std::string_view name;                         // "ERNIE-4.5", "Qwen3", "Llama"
    std::span<const std::string_view> architectures;  // config.json's architectures[0] values
    RopePairing ropePairing = RopePairing::Neighbours;
    bool qkNorm = false;  // RMSNorm over each q and k head, before RoPE (Qwen3)
    // The config.json keys that would add biases to the Linears; Brook's families have none, so
    // any of them set true is refused.
    std::span<const std::string_view> biasKeys;
    // Whether the CUDA backend has this family's layer. Without it --device auto picks the CPU
    // and --device cuda is refused with the reason.
    bool cudaKernels = false;
};

// config.family, or ERNIE-4.5's row for a config built in code rather than parsed (the test
// models and tools that fill a ModelConfig by hand describe ERNIE-4.5 shapes).
const ModelFamily& familyOf(const ModelConfig& config);

// The family whose architectures include `architecture`, or nullptr.
const ModelFamily* findModelFamily(std::string_view architecture);
// "Ernie4_5ForCausalLM, Ernie4_5_ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM": for errors.
std::string supportedArchitectures();

}  // namespace brook
