// parseBoundedJson: a linear scan for the nesting depth first (strings skipped, escapes
// honoured), so deep input is refused before nlohmann builds anything; malformed text the
// scan lets through is left to nlohmann's parser to reject.
#include "engine/bounded_json.h"

namespace brook {

int jsonNestingDepth(std::string_view text, int maxDepth)
{
    int depth = 0, deepest = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') ++i;  // the escaped character cannot end the string
            else if (c == '"') inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest > maxDepth) return maxDepth + 1;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

Result<nlohmann::json> parseBoundedJson(std::string_view text, const std::string& source, int maxDepth)
{
    if (jsonNestingDepth(text, maxDepth) > maxDepth)
        return makeError(source + ": JSON nested deeper than " + std::to_string(maxDepth) + " levels");
    nlohmann::json value = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) return makeError(source + ": not valid JSON");
    return value;
}

}  // namespace brook
