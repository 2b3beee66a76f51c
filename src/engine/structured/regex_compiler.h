// RegexCompiler: a regular expression (the ECMAScript subset JSON Schema's `pattern` and vLLM's
// structured_outputs.regex use) -> a grammar rule deriving exactly the strings it matches in
// full. Supported: literals (UTF-8), . [...] [^...] ranges, \d \w \s \D \W \S, \n \t \r \f \v \0
// \xHH \uHHHH and escaped punctuation, groups (...) (?:...) (?<name>...), | and the quantifiers
// * + ? {n} {n,} {n,m} (lazy forms match the same strings), ^ at the start and $ at the end.
// Anything else (backreferences, lookaround, \b, anchors inside) is refused with a message that
// names it. There is no backtracking: the matcher runs the grammar, so "catastrophic" patterns
// cost no more than others; size is bounded by GrammarLimits.
#pragma once

#include "engine/structured/char_ranges.h"
#include "engine/structured/grammar.h"

#include <string>
#include <string_view>

namespace brook::structured {

enum class RegexTarget {
    Raw,         // the output bytes are the matched text
    JsonString,  // the matched text is a JSON string's value: the grammar derives its escaped
                 // spelling (without the quotes); control characters other than \n \t \r are never produced
};

// Returns the rule; `field` names the request field in errors ("structured_outputs.regex").
Result<int32_t> compileRegex(GrammarBuilder& builder, CharRuleCache& chars, std::string_view pattern,
                             RegexTarget target, const std::string& field);

// The symbol for one character of `set` in `target` spelling (JSON escapes where needed).
GrammarSymbol charSymbol(GrammarBuilder& builder, CharRuleCache& chars, const CharRanges& set, RegexTarget target);

}  // namespace brook::structured
