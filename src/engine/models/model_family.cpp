#include "engine/models/model_family.h"

#include "engine/model_config.h"

#include <array>

namespace brook {

namespace {

// Baidu's remote-code checkpoints say "Ernie4_5_ForCausalLM"; transformers' own class drops the
// second underscore.
constexpr std::string_view kErnieArchitectures[] = {"Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"};
constexpr std::string_view kErnieBiasKeys[] = {"use_bias"};
constexpr std::string_view kQwen3Architectures[] = {"Qwen3ForCausalLM"};
constexpr std::string_view kQwen3BiasKeys[] = {"attention_bias"};
constexpr std::string_view kLlamaArchitectures[] = {"LlamaForCausalLM"};
constexpr std::string_view kLlamaBiasKeys[] = {"attention_bias", "mlp_bias"};

const std::array<ModelFamily, 3> kFamilies = {{
    {"ERNIE-4.5", kErnieArchitectures, RopePairing::Neighbours, false, kErnieBiasKeys, true},
    {"Qwen3", kQwen3Architectures, RopePairing::Halves, true, kQwen3BiasKeys, false},
    {"Llama", kLlamaArchitectures, RopePairing::Halves, false, kLlamaBiasKeys, false},
}};

}  // namespace

const ModelFamily& familyOf(const ModelConfig& config) { return config.family ? *config.family : kFamilies[0]; }

const ModelFamily* findModelFamily(std::string_view architecture)
{
    for (const ModelFamily& family : kFamilies)
        for (std::string_view name : family.architectures)
            if (name == architecture) return &family;
    return nullptr;
}

std::string supportedArchitectures()
{
    std::string list;
    for (const ModelFamily& family : kFamilies)
        for (std::string_view name : family.architectures) {
            if (!list.empty()) list += ", ";
            list += name;
        }
    return list;
}

}  // namespace brook
