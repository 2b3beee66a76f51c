// Fuzz target: every JSON reader of a model folder on the same text: config.json (with its
// quantization_config), generation_config.json and the three tokenizer files, each alone.
// All return errors; none may throw, crash or recurse without bound. An accepted config's
// derived sizes are computed too, so an overflow there is a sanitizer report.
#include "engine/generation_config.h"
#include "engine/model_config.h"
#include "engine/tokenizer_files.h"

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <string>

int brookFuzzModelJson(const uint8_t* data, size_t size)
{
    static const bool quiet = (spdlog::set_level(spdlog::level::off), true);  // warnings on odd model_type
    (void)quiet;
    const std::string text(reinterpret_cast<const char*>(data), size);
    int accepted = 0;
    if (auto config = brook::parseModelConfig(text, "fuzz/config.json")) {
        accepted += config->qDim() > 0 && config->kvDim() > 0 && config->groupSize() > 0;
        accepted += config->kvBytesPerToken(4) > 0;
    }
    if (auto defaults = brook::parseGenerationDefaults(text, "fuzz/generation_config.json"))
        accepted += int(defaults->eosTokenIds.size());
    using Texts = brook::TokenizerFiles::Texts;
    for (const Texts& texts : {Texts{text, {}, {}}, Texts{{}, text, {}}, Texts{{}, {}, text}}) {
        if (auto files = brook::TokenizerFiles::parse(texts, "fuzz")) accepted += int(files->addedTokens.size());
    }
    static volatile unsigned sink;  // keeps the derived values computed
    sink = sink + unsigned(accepted);
    return 0;
}
