#include "engine/structured/grammar.h"

#include <algorithm>
#include <map>

namespace brook::structured {

namespace {

Error grammarError(const std::string& field, std::string message)
{
    return makeError(ErrorCode::InvalidArgument, field, std::move(message));
}

// Rules that derive the empty string (fixpoint over the alternatives).
std::vector<bool> nullableRules(const std::vector<GrammarRule>& rules)
{
    std::vector<bool> nullable(rules.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < rules.size(); ++r) {
            if (nullable[r]) continue;
            for (const GrammarSequence& alt : rules[r].alternatives) {
                const bool all = std::all_of(alt.begin(), alt.end(), [&](const GrammarSymbol& s) {
                    return s.rule >= 0 && nullable[size_t(s.rule)];
                });
                if (all) {
                    nullable[r] = changed = true;
                    break;
                }
            }
        }
    }
    return nullable;
}

// Rules that derive at least one finite string.
std::vector<bool> productiveRules(const std::vector<GrammarRule>& rules)
{
    std::vector<bool> productive(rules.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < rules.size(); ++r) {
            if (productive[r]) continue;
            for (const GrammarSequence& alt : rules[r].alternatives) {
                const bool all = std::all_of(alt.begin(), alt.end(), [&](const GrammarSymbol& s) {
                    return s.rule < 0 || productive[size_t(s.rule)];
                });
                if (all) {
                    productive[r] = changed = true;
                    break;
                }
            }
        }
    }
    return productive;
}

// Left recursion the matcher cannot run: a cycle of "derives at its left edge" that contains a
// non-tail step (one where something follows the reference, so each turn pushes a return
// position). Strongly connected components (iterative Tarjan) over the left-edge graph; a non-tail
// edge inside one component is such a cycle. Returns the name of a rule on it, or "".
std::string growingLeftRecursion(const std::vector<GrammarRule>& rules, const std::vector<bool>& nullable)
{
    const size_t n = rules.size();
    struct Edge {
        int32_t to;
        bool tail;
    };
    std::vector<std::vector<Edge>> edges(n);
    for (size_t r = 0; r < n; ++r)
        for (const GrammarSequence& alt : rules[r].alternatives)
            for (size_t i = 0; i < alt.size(); ++i) {
                if (alt[i].rule < 0) break;
                edges[r].push_back({alt[i].rule, i + 1 == alt.size()});
                if (!nullable[size_t(alt[i].rule)]) break;
            }
    std::vector<int32_t> index(n, -1), low(n, 0), component(n, -1);
    std::vector<bool> onStack(n, false);
    std::vector<int32_t> stack;
    int32_t counter = 0, components = 0;
    struct Frame {
        int32_t node;
        size_t edge;
    };
    for (size_t start = 0; start < n; ++start) {
        if (index[start] >= 0) continue;
        std::vector<Frame> frames{{int32_t(start), 0}};
        index[start] = low[start] = counter++;
        stack.push_back(int32_t(start));
        onStack[start] = true;
        while (!frames.empty()) {
            Frame& f = frames.back();
            const auto u = size_t(f.node);
            if (f.edge < edges[u].size()) {
                const auto v = size_t(edges[u][f.edge++].to);
                if (index[v] < 0) {
                    index[v] = low[v] = counter++;
                    stack.push_back(int32_t(v));
                    onStack[v] = true;
                    frames.push_back({int32_t(v), 0});
                } else if (onStack[v]) {
                    low[u] = std::min(low[u], index[v]);
                }
                continue;
            }
            if (low[u] == index[u]) {
                for (;;) {
                    const auto w = size_t(stack.back());
                    stack.pop_back();
                    onStack[w] = false;
                    component[w] = components;
                    if (w == u) break;
                }
                ++components;
            }
            frames.pop_back();
            if (!frames.empty()) {
                const auto parent = size_t(frames.back().node);
                low[parent] = std::min(low[parent], low[u]);
            }
        }
    }
    for (size_t r = 0; r < n; ++r)
        for (const Edge& e : edges[r])
            if (!e.tail && component[r] == component[size_t(e.to)]) return rules[r].name;
    return {};
}

}  // namespace

int32_t GrammarBuilder::newRule(std::string name)
{
    if (m_rules.size() >= m_limits.maxRules)
        failLimit("the grammar needs more than " + std::to_string(m_limits.maxRules) + " rules");
    m_rules.push_back({std::move(name), {}});
    return int32_t(m_rules.size() - 1);
}

int32_t GrammarBuilder::ruleNamed(const std::string& name)
{
    for (size_t r = 0; r < m_rules.size(); ++r)
        if (m_rules[r].name == name) return int32_t(r);
    return newRule(name);
}

bool GrammarBuilder::hasRule(const std::string& name) const
{
    return std::any_of(m_rules.begin(), m_rules.end(), [&](const GrammarRule& r) { return r.name == name; });
}

void GrammarBuilder::addAlternative(int32_t rule, GrammarSequence sequence)
{
    m_numSymbols += sequence.size() + 1;
    if (m_numSymbols > m_limits.maxSymbols)
        failLimit("the grammar needs more than " + std::to_string(m_limits.maxSymbols) + " symbols");
    if (overLimit()) return;  // stop growing; finish() reports
    m_rules[size_t(rule)].alternatives.push_back(std::move(sequence));
}

GrammarSymbol GrammarBuilder::bytes(const ByteSet& set)
{
    for (size_t i = m_byteSets.size(); i-- > 0 && i + 64 >= m_byteSets.size();)  // recent sets repeat
        if (m_byteSets[i] == set) return {-1, int32_t(i)};
    m_byteSets.push_back(set);
    return {-1, int32_t(m_byteSets.size() - 1)};
}

GrammarSymbol GrammarBuilder::byte(uint8_t b)
{
    ByteSet set;
    set.add(b);
    return bytes(set);
}

void GrammarBuilder::appendLiteral(GrammarSequence& sequence, std::string_view text)
{
    for (char c : text) sequence.push_back(byte(uint8_t(c)));
}

int32_t GrammarBuilder::literalRule(std::string_view text)
{
    const int32_t rule = newRule("literal");
    GrammarSequence sequence;
    appendLiteral(sequence, text);
    addAlternative(rule, std::move(sequence));
    return rule;
}

Result<int32_t> GrammarBuilder::repeat(GrammarSymbol item, int min, int max, const std::string& field)
{
    const int bound = std::max(min, max);
    if (min < 0 || bound > m_limits.maxRepetition)
        return grammarError(field, "'" + field + "' repeats " + std::to_string(bound) + " times; at most " +
                                       std::to_string(m_limits.maxRepetition) + " are supported");
    // tail: what follows the first `min` copies: item* (unbounded) or up to max - min optional
    // copies, each a rule opt_k ::= item opt_{k+1} | "" so the matcher's stack never grows.
    int32_t tail = newRule("repeat-tail");
    if (max < 0) {
        addAlternative(tail, {item, ref(tail)});
        addAlternative(tail, {});
    } else {
        addAlternative(tail, {});
        for (int k = 0; k < max - min && !overLimit(); ++k) {
            const int32_t outer = newRule("repeat-optional");
            addAlternative(outer, {item, ref(tail)});
            addAlternative(outer, {});
            tail = outer;
        }
    }
    const int32_t rule = newRule("repeat");
    GrammarSequence sequence(size_t(min), item);
    if (size_t(min) > m_limits.maxSymbols) return grammarError(field, "'" + field + "' repeats too often");
    sequence.push_back(ref(tail));
    addAlternative(rule, std::move(sequence));
    return rule;
}

int32_t GrammarBuilder::choice(std::vector<GrammarSequence> alternatives, std::string name)
{
    const int32_t rule = newRule(std::move(name));
    for (GrammarSequence& alt : alternatives) addAlternative(rule, std::move(alt));
    return rule;
}

Result<std::shared_ptr<const Grammar>> GrammarBuilder::finish(int32_t root, const std::string& field)
{
    if (overLimit()) return grammarError(field, "'" + field + "' is too large: " + m_overLimit);
    for (const GrammarRule& rule : m_rules)
        for (const GrammarSequence& alt : rule.alternatives)
            for (const GrammarSymbol& s : alt)
                if (s.rule >= 0 && m_rules[size_t(s.rule)].alternatives.empty())
                    return grammarError(field, "'" + field + "': rule '" + m_rules[size_t(s.rule)].name +
                                                   "' is used but never defined or can never match");
    const std::vector<bool> productive = productiveRules(m_rules);
    if (!productive[size_t(root)])
        return grammarError(field, "'" + field + "' can never be satisfied: no output matches it");
    const std::vector<bool> nullable = nullableRules(m_rules);
    if (std::string rule = growingLeftRecursion(m_rules, nullable); !rule.empty())
        return grammarError(field, "'" + field + "': rule '" + rule + "' is left-recursive, which is not supported");

    auto grammar = std::make_shared<Grammar>();
    grammar->m_byteSets = m_byteSets;
    grammar->m_root = root;
    grammar->m_ruleStarts.resize(m_rules.size());
    grammar->m_ruleNames.reserve(m_rules.size());
    for (size_t r = 0; r < m_rules.size(); ++r) {
        grammar->m_ruleNames.push_back(m_rules[r].name);
        for (const GrammarSequence& alt : m_rules[r].alternatives) {
            // An alternative through an unproductive rule can never complete: leave it out.
            if (std::any_of(alt.begin(), alt.end(),
                            [&](const GrammarSymbol& s) { return s.rule >= 0 && !productive[size_t(s.rule)]; }))
                continue;
            grammar->m_ruleStarts[r].push_back(int32_t(grammar->m_elements.size()));
            for (const GrammarSymbol& s : alt)
                grammar->m_elements.push_back(s.rule >= 0 ? Grammar::Element{Grammar::ElementKind::Rule, s.rule}
                                                          : Grammar::Element{Grammar::ElementKind::Bytes, s.byteSet});
            grammar->m_elements.push_back({Grammar::ElementKind::End, 0});
        }
    }
    return std::shared_ptr<const Grammar>(std::move(grammar));
}

}  // namespace brook::structured
