// Parses config.json's quantization_config. Unsupported methods, versions and widths are load
// errors here, before any tensor is read, so the user learns what the checkpoint is at once.
#include "engine/quantization_config.h"

#include <nlohmann/json.hpp>

#include <cctype>

namespace brook {

namespace {

using nlohmann::json;

// The first of `keys` present (and not null) in `object`, or null.
const json* findAny(const json& object, std::initializer_list<const char*> keys, std::string& foundKey)
{
    for (const char* key : keys) {
        auto it = object.find(key);
        if (it != object.end() && !it->is_null()) {
            foundKey = key;
            return &*it;
        }
    }
    return nullptr;
}

}  // namespace

Result<QuantizationConfig> parseQuantizationConfig(const json& value, const std::string& sourceName)
{
    const std::string where = sourceName + ": quantization_config";
    if (!value.is_object()) return makeError(where + " should be an object");
    QuantizationConfig q;
    std::string key;

    const json* method = findAny(value, {"quant_method"}, key);
    if (!method) return makeError(where + " has no 'quant_method'");
    if (!method->is_string()) return makeError(where + ".quant_method should be a string");
    q.method = method->get<std::string>();
    for (char& c : q.method) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (q.method != "awq")
        return makeError(where + ".quant_method '" + method->get<std::string>() +
                         "' is not supported (Brook reads AutoAWQ 'awq' checkpoints; for others use --quantization "
                         "int4|int8 on the unquantized model)");

    if (const json* bits = findAny(value, {"bits", "w_bit"}, key)) {
        if (!bits->is_number_integer()) return makeError(where + "." + key + " should be an integer");
        const int64_t b = bits->get<int64_t>();
        if (b != 4 && b != 8)
            return makeError(where + "." + key + " " + std::to_string(b) + " is not supported (4 or 8 bits)");
        q.bits = int(b);
    }
    if (const json* group = findAny(value, {"group_size", "q_group_size"}, key)) {
        if (!group->is_number_integer()) return makeError(where + "." + key + " should be an integer");
        const int64_t g = group->get<int64_t>();
        if (g <= 0 || g > (1 << 20))
            return makeError(where + "." + key + " " + std::to_string(g) +
                             " is not supported (a positive group size; -1, per-channel, is not)");
        q.groupSize = int(g);
    }
    if (const json* zero = findAny(value, {"zero_point"}, key)) {
        if (!zero->is_boolean()) return makeError(where + ".zero_point should be true or false");
        q.zeroPoint = zero->get<bool>();
        if (!q.zeroPoint) return makeError(where + ".zero_point false is not supported (only asymmetric groups)");
    }
    q.version = "gemm";
    if (const json* version = findAny(value, {"version"}, key)) {
        if (!version->is_string()) return makeError(where + ".version should be a string");
        q.version = version->get<std::string>();
        for (char& c : q.version) c = char(std::tolower(static_cast<unsigned char>(c)));
        if (q.version != "gemm")
            return makeError(where + ".version '" + version->get<std::string>() +
                             "' is not supported (only AutoAWQ 'gemm' packing)");
    }
    return q;
}

}  // namespace brook
