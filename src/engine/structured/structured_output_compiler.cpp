#include "engine/structured/structured_output_compiler.h"

#include "engine/structured/ebnf_parser.h"
#include "engine/structured/json_schema_compiler.h"
#include "engine/structured/regex_compiler.h"

namespace brook::structured {

namespace {

constexpr size_t kMaxChoices = 10000;

Result<std::shared_ptr<const Grammar>> compileChoices(const StructuredOutput& output)
{
    if (output.choices.empty())
        return makeError(ErrorCode::InvalidArgument, output.field,
                         "'" + output.field + "' must list at least one choice");
    if (output.choices.size() > kMaxChoices)
        return makeError(ErrorCode::InvalidArgument, output.field,
                         "'" + output.field + "' lists more than " + std::to_string(kMaxChoices) + " choices");
    GrammarBuilder builder;
    size_t bytes = 0;
    const int32_t root = builder.newRule("root");
    for (const std::string& choice : output.choices) {
        bytes += choice.size();
        if (bytes > builder.limits().maxInputBytes)
            return makeError(ErrorCode::InvalidArgument, output.field, "'" + output.field + "' is too large");
        GrammarSequence sequence;
        builder.appendLiteral(sequence, choice);
        builder.addAlternative(root, std::move(sequence));
    }
    return builder.finish(root, output.field);
}

Result<std::shared_ptr<const Grammar>> compileRegexOutput(const StructuredOutput& output)
{
    GrammarBuilder builder;
    CharRuleCache chars(builder);
    auto rule = compileRegex(builder, chars, output.text, RegexTarget::Raw, output.field);
    if (!rule) return rule.failure();
    return builder.finish(*rule, output.field);
}

std::string cacheKey(const StructuredOutput& output)
{
    std::string key = std::to_string(int(output.kind)) + '\n' + output.text;
    for (const std::string& choice : output.choices) key += '\n' + std::to_string(choice.size()) + ':' + choice;
    return key;
}

}  // namespace

Result<std::shared_ptr<const Grammar>> compileStructuredOutput(const StructuredOutput& output)
{
    switch (output.kind) {
    case StructuredOutput::Kind::JsonObject: return compileAnyJsonObject();
    case StructuredOutput::Kind::JsonSchema: return compileJsonSchema(output.text, output.field);
    case StructuredOutput::Kind::Regex: return compileRegexOutput(output);
    case StructuredOutput::Kind::Choice: return compileChoices(output);
    case StructuredOutput::Kind::Grammar: return compileEbnf(output.text, output.field);
    case StructuredOutput::Kind::None: break;
    }
    return makeError(ErrorCode::InvalidArgument, output.field, "no structured output was asked for");
}

Result<std::shared_ptr<GrammarAutomaton>> StructuredOutputCache::automaton(
    const StructuredOutput& output, const std::shared_ptr<const TokenVocabulary>& vocabulary)
{
    const std::string key = cacheKey(output);
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
            if (it->first != key || &it->second->vocabulary() != vocabulary.get()) continue;
            m_entries.splice(m_entries.begin(), m_entries, it);
            return m_entries.front().second;
        }
    }
    auto grammar = compileStructuredOutput(output);  // outside the lock: may take milliseconds
    if (!grammar) return grammar.failure();
    auto automaton = std::make_shared<GrammarAutomaton>(std::move(grammar).value(), vocabulary);
    std::lock_guard lock(m_mutex);
    m_entries.emplace_front(key, automaton);
    if (m_entries.size() > m_capacity) m_entries.pop_back();
    return automaton;
}

}  // namespace brook::structured

namespace brook {

Result<void> checkStructuredOutput(const StructuredOutput& output)
{
    if (!output.active()) return {};
    auto grammar = structured::compileStructuredOutput(output);
    if (!grammar) return grammar.failure();
    return {};
}

}  // namespace brook
