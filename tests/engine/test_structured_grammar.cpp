// The structured-output compilers and matcher without a model: regexes against std::regex on
// random strings, integer and number ranges exhaustively, EBNF, JSON schemas accepting and
// refusing texts, hostile input refused with a message naming what, and the token mask equal to
// a token-by-token check over a random vocabulary, cached or not, and the same masks when many
// rows of one schema are filled and advanced at once on several threads.
#include "engine/structured/ebnf_parser.h"
#include "engine/structured/grammar_automaton.h"
#include "engine/structured/grammar_matcher.h"
#include "engine/structured/json_schema_compiler.h"
#include "engine/structured/regex_compiler.h"
#include "engine/structured/row_pool.h"
#include "engine/structured/structured_output_compiler.h"

#include <QtTest>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <regex>

using namespace brook;
using namespace brook::structured;

namespace {

// A vocabulary of every single byte (token id = byte value): enough to run any text.
std::shared_ptr<const TokenVocabulary> byteVocabulary()
{
    static auto vocabulary = [] {
        std::vector<std::string> bytes;
        for (int b = 0; b < 256; ++b) bytes.push_back(std::string(1, char(b)));
        return std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{});
    }();
    return vocabulary;
}

struct Runner {
    std::shared_ptr<GrammarAutomaton> automaton;
    explicit Runner(std::shared_ptr<const Grammar> grammar)
        : automaton(std::make_shared<GrammarAutomaton>(std::move(grammar), byteVocabulary()))
    {}
    bool accepts(std::string_view text)
    {
        const int32_t state = automaton->advance(automaton->startState(), text);
        return state >= 0 && automaton->accepts(state);
    }
};

Runner regexRunner(const std::string& pattern)
{
    StructuredOutput output;
    output.kind = StructuredOutput::Kind::Regex;
    output.text = pattern;
    auto grammar = compileStructuredOutput(output);
    if (!grammar) qFatal("regex %s: %s", pattern.c_str(), grammar.error().c_str());
    return Runner(*grammar);
}

Runner schemaRunner(const std::string& schema)
{
    auto grammar = compileJsonSchema(schema, "schema");
    if (!grammar) qFatal("schema %s: %s", schema.c_str(), grammar.error().c_str());
    return Runner(*grammar);
}

std::string schemaError(const std::string& schema)
{
    auto grammar = compileJsonSchema(schema, "response_format.json_schema.schema");
    return grammar ? std::string() : grammar.error();
}

}  // namespace

class TestStructuredGrammar : public QObject {
    Q_OBJECT
private slots:
    void regexMatchesAsStdRegexDoes()
    {
        const std::vector<std::string> patterns = {
            "abc",        "a|b|cd",      "(ab)*c",
            "a+b?",       "[a-c]{2,3}",  "[^ab]x",
            "a{2}",       "(a|b)*abb",   "\\d+(\\.\\d{1,2})?",
            "x(y|z)+w",   "[abc-]+",     "(?:ab|a)(bc|c)",
            "^a.c$",      "(a*)*b",      "((a|b)(c|d)){1,2}",
            "[\\w]{1,3}", "a{0,2}b{1,}", "\\s?[xyz]",
        };
        std::mt19937 rng(7);
        const std::string alphabet = "abcdxyzw.1 -";
        for (const std::string& pattern : patterns) {
            Runner runner = regexRunner(pattern);
            const std::regex reference(pattern, std::regex::ECMAScript);
            for (int i = 0; i < 3000; ++i) {
                std::string text;
                const int length = int(rng() % 7);
                for (int k = 0; k < length; ++k) text += alphabet[rng() % alphabet.size()];
                const bool expected = std::regex_match(text, reference);
                if (runner.accepts(text) != expected)
                    QFAIL(qPrintable(QString("pattern %1 on '%2': expected %3")
                                         .arg(QString::fromStdString(pattern), QString::fromStdString(text))
                                         .arg(expected)));
            }
        }
    }

    void regexUnicodeClasses()
    {
        Runner cjk = regexRunner("[一-龥]{2}");
        QVERIFY(cjk.accepts("你好"));
        QVERIFY(!cjk.accepts("你"));
        QVERIFY(!cjk.accepts("ab"));
        Runner notA = regexRunner("[^a]");
        QVERIFY(notA.accepts("é"));
        QVERIFY(notA.accepts("😀"));
        QVERIFY(!notA.accepts("a"));
        QVERIFY(!notA.accepts("\xC3"));  // half a character
    }

    void regexRefusesWhatItCannotRun()
    {
        const std::vector<std::pair<std::string, std::string>> bad = {
            {"(a)\\1", "backreference"}, {"a(?=b)", "lookaround"}, {"\\bword", "word boundary"},
            {"a{3,1}", "m < n"},         {"(ab", "missing ')'"},   {"[ab", "missing ']'"},
            {"a**+", "possessive"},      {"a$b", "'$' inside"},    {"a{20000}", "repeats 20000"},
        };
        for (const auto& [pattern, words] : bad) {
            StructuredOutput output;
            output.kind = StructuredOutput::Kind::Regex;
            output.text = pattern;
            output.field = "structured_outputs.regex";
            auto result = checkStructuredOutput(output);
            QVERIFY2(!result, qPrintable(QString::fromStdString(pattern)));
            QVERIFY2(result.failure().message.find(words) != std::string::npos,
                     qPrintable(QString::fromStdString(result.failure().message)));
            QCOMPARE(result.failure().field, std::string("structured_outputs.regex"));
        }
        // Deep nesting is refused, not recursed into.
        StructuredOutput deep;
        deep.kind = StructuredOutput::Kind::Regex;
        deep.text = std::string(5000, '(') + "a" + std::string(5000, ')');
        QVERIFY(!checkStructuredOutput(deep));
        // "Catastrophic" patterns for a backtracker cost nothing here.
        Runner runner = regexRunner("(a+)+b");
        QVERIFY(!runner.accepts(std::string(5000, 'a') + "c"));
        QVERIFY(runner.accepts(std::string(5000, 'a') + "b"));
    }

    void integerRangesAreExact()
    {
        std::mt19937 rng(3);
        for (int trial = 0; trial < 60; ++trial) {
            const int lo = int(rng() % 3000) - 1500;
            const int hi = lo + int(rng() % 2500);
            Runner runner = schemaRunner("{\"type\":\"integer\",\"minimum\":" + std::to_string(lo) +
                                         ",\"maximum\":" + std::to_string(hi) + "}");
            for (int v = lo - 30; v <= hi + 30; v += (hi - lo > 400 ? 7 : 1))
                QVERIFY2(runner.accepts(std::to_string(v)) == (v >= lo && v <= hi),
                         qPrintable(QString("%1 in [%2, %3]").arg(v).arg(lo).arg(hi)));
            QVERIFY(!runner.accepts("-0"));
            QVERIFY(!runner.accepts("01"));
        }
    }

    void numberRangesStayInside()
    {
        Runner runner = schemaRunner("{\"type\":\"number\",\"minimum\":-2.5,\"exclusiveMaximum\":3}");
        for (const char* ok : {"-2", "-1.75", "0", "0.5", "1.999", "2.0", "1"}) QVERIFY2(runner.accepts(ok), ok);
        for (const char* no : {"-3", "3", "3.0", "2.5e1", "-2.5", "4"}) QVERIFY2(!runner.accepts(no), no);
        // Bounds are rounded inward to integers (-2 .. 2.0 here): a subset of the valid values.
        QVERIFY(!runner.accepts("2.5"));
        Runner free = schemaRunner("{\"type\":\"number\"}");
        for (const char* ok : {"-12.5e3", "0", "7E-2", "123456789012345"}) QVERIFY2(free.accepts(ok), ok);
        for (const char* no : {"01", "1.", ".5", "+1", "1e"}) QVERIFY2(!free.accepts(no), no);
    }

    void schemasAcceptTheirJson()
    {
        Runner runner = schemaRunner(
            "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":5},\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"b\"]},\"maxItems\":2},\"ok\":{\"type\":\"boolean\"},\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{4}$\"}},\"required\":[\"name\",\"id\"],\"additionalProperties\":false}");
        QVERIFY(runner.accepts("{\"name\":\"ab\",\"id\":\"00ff\"}"));
        // A JSON escape inside a string (written without a raw literal: moc misreads \" in one).
        QVERIFY(runner.accepts("{ \"name\": \"ab\\\"\", \"tags\": [\"a\", \"b\"], \"ok\": true, \"id\": \"beef\"}"));
        QVERIFY(runner.accepts("{\"name\":\"\",\"tags\":[],\"id\":\"1234\"}"));
        QVERIFY(!runner.accepts("{\"name\":\"abcdef\",\"id\":\"00ff\"}"));                           // too long
        QVERIFY(!runner.accepts("{\"name\":\"ab\"}"));                                               // id required
        QVERIFY(!runner.accepts("{\"name\":\"ab\",\"id\":\"00fg\"}"));                               // pattern
        QVERIFY(!runner.accepts("{\"name\":\"ab\",\"tags\":[\"a\",\"b\",\"a\"],\"id\":\"0000\"}"));  // maxItems
        QVERIFY(!runner.accepts("{\"name\":\"ab\",\"id\":\"0000\",\"x\":1}"));                       // additional

        // Recursion through $defs, and anyOf with null.
        Runner tree = schemaRunner(
            "{\"$ref\":\"#/$defs/node\",\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"v\"],\"additionalProperties\":false}}}");
        QVERIFY(tree.accepts("{\"v\":1,\"kids\":[{\"v\":2},{\"v\":3,\"kids\":[]}]}"));
        QVERIFY(!tree.accepts("{\"kids\":[]}"));
        Runner nullable = schemaRunner("{\"anyOf\":[{\"type\":\"null\"},{\"type\":\"string\",\"format\":\"date\"}]}");
        QVERIFY(nullable.accepts("null"));
        QVERIFY(nullable.accepts("\"2024-02-28\""));
        QVERIFY(!nullable.accepts("\"2024-13-01\""));

        auto any = compileAnyJsonObject();
        QVERIFY(any);
        Runner object(*any);
        QVERIFY(object.accepts("{\"a\":[1,{\"b\":null}],\"c\":\"é\\n\"}"));
        QVERIFY(!object.accepts("[1]"));
    }

    void schemasRefuseWhatTheyCannotHonour()
    {
        const std::vector<std::pair<std::string, std::string>> bad = {
            {"{\"type\":\"object\",\"not\":{}}", "'not'"},
            {"{\"type\":\"integer\",\"multipleOf\":3}", "'multipleOf'"},
            {"{\"type\":\"array\",\"uniqueItems\":true}", "'uniqueItems'"},
            {"{\"type\":\"string\",\"format\":\"hostname\"}", "format 'hostname'"},
            {"{\"type\":\"object\",\"patternProperties\":{}}", "'patternProperties'"},
            {"{\"$ref\":\"https://example.com/x.json\"}", "reference"},
            {"{\"type\":\"string\",\"maxLength\":100000}", "maxLength"},
            {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":1}", "bounds"},
            {"{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}", "backreference"},
            {"{\"type\":\"object\",\"required\":[\"x\"]}", "required property"},
            {"{", "not valid JSON"},
        };
        for (const auto& [schema, words] : bad) {
            const std::string error = schemaError(schema);
            QVERIFY2(error.find(words) != std::string::npos,
                     qPrintable(QString::fromStdString(schema + " -> " + error)));
            QVERIFY(error.find("response_format.json_schema.schema") != std::string::npos);
        }
        // Hostile sizes: deep nesting and a huge enum are refused with a message, quickly.
        std::string deep;
        for (int i = 0; i < 200; ++i) deep += "{\"type\":\"array\",\"items\":";
        deep += "{}" + std::string(200, '}');
        QVERIFY(schemaError(deep).find("nest") != std::string::npos);
        std::string huge = "{\"enum\":[";
        for (int i = 0; i < 20000; ++i) huge += (i ? "," : "") + std::to_string(i);
        huge += "]}";
        QVERIFY(schemaError(huge).find("enum") != std::string::npos);
    }

    void ebnfGrammars()
    {
        auto grammar = compileEbnf("root ::= item (\",\" ws item)*   # a list\n"
                                   "item ::= \"yes\" | \"no\" | num\n"
                                   "num  ::= [1-9] [0-9]{0,2}\n"
                                   "ws   ::= [ ]?\n",
                                   "structured_outputs.grammar");
        QVERIFY2(grammar, grammar ? "" : grammar.error().c_str());
        Runner runner(*grammar);
        QVERIFY(runner.accepts("yes, no,42"));
        QVERIFY(runner.accepts("999"));
        QVERIFY(!runner.accepts("1000"));
        QVERIFY(!runner.accepts("yes,"));
        auto leftRecursive = compileEbnf("root ::= root \"a\" | \"b\"", "g");
        QVERIFY(!leftRecursive);
        QVERIFY(leftRecursive.error().find("left-recursive") != std::string::npos);
        auto undefined = compileEbnf("root ::= missing", "g");
        QVERIFY(!undefined);
        QVERIFY(undefined.error().find("'missing'") != std::string::npos);
        auto noRoot = compileEbnf("a ::= \"x\"", "g");
        QVERIFY(!noRoot);
        // Tail recursion through a nullable prefix is fine.
        auto tail = compileEbnf("root ::= \"x\"* root | \"y\"", "g");
        QVERIFY2(tail, tail ? "" : tail.error().c_str());
        QVERIFY(Runner(*tail).accepts("xxxy"));
    }

    void maskEqualsTokenByTokenCheck()
    {
        // A random vocabulary over JSON's characters, with prefixes of each other (the trie's
        // skips are exercised), plus all single bytes so every text stays reachable.
        std::mt19937 rng(19);
        const std::string alphabet = "{}[]\":, abc01-.truefalsn\\";
        std::vector<std::string> tokens;
        for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
        for (int i = 0; i < 3000; ++i) {
            std::string t;
            const int length = 2 + int(rng() % 5);
            for (int k = 0; k < length; ++k) t += alphabet[rng() % alphabet.size()];
            tokens.push_back(t);
        }
        tokens.push_back("");  // a token without bytes is never allowed
        const int eos = int(tokens.size());
        tokens.push_back("");
        auto vocabulary = std::make_shared<const TokenVocabulary>(tokens, std::vector<int32_t>{});
        auto grammar = compileJsonSchema(
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"items\":{\"type\":\"boolean\"},\"maxItems\":3},\"b\":{\"type\":\"string\",\"maxLength\":4},\"c\":{\"type\":\"number\",\"minimum\":-5,\"maximum\":10}},\"required\":[\"a\"]}",
            "s");
        QVERIFY(grammar);
        auto automaton = std::make_shared<GrammarAutomaton>(*grammar, vocabulary);
        std::string walkText;
        for (int walk = 0; walk < 20; ++walk) {
            GrammarMatcher matcher(automaton, {eos});
            std::vector<uint32_t> mask(size_t(vocabulary->maskWords()));
            for (int step = 0; step < 60 && !matcher.terminated(); ++step) {
                QVERIFY(matcher.fillMask(mask));
                const int32_t here = automaton->advance(automaton->startState(), walkText);
                std::vector<int32_t> allowed;
                for (int32_t id = 0; id < int32_t(tokens.size()); ++id) {
                    const bool bit = (mask[size_t(id) >> 5] >> (id & 31)) & 1;
                    // The reference: the text so far, then this token's bytes, byte by byte.
                    bool expected;
                    if (id == eos) {
                        expected = matcher.accepting();
                    } else {
                        const std::string_view bytes = vocabulary->tokenBytes(id);
                        expected = !bytes.empty();
                        if (expected) expected = automaton->advance(here, bytes) >= 0;
                    }
                    QVERIFY2(bit == expected, qPrintable(QString("token %1 '%2' after '%3'")
                                                             .arg(id)
                                                             .arg(QString::fromStdString(tokens[size_t(id)]))
                                                             .arg(QString::fromStdString(walkText))));
                    if (bit) allowed.push_back(id);
                }
                QVERIFY(!allowed.empty());
                const int32_t pick = allowed[rng() % allowed.size()];
                QVERIFY(matcher.accept(pick));
                if (pick != eos) walkText += tokens[size_t(pick)];
            }
            walkText.clear();
        }
        QVERIFY(automaton->stats().maskHits > 0);  // revisited states came from the cache
    }

    void recursiveGrammarMaskIsExact()
    {
        // fuzz_structured_output's crash: a grammar whose rules recurse through a non-tail call
        // (item -> root root ")") and are ambiguous, so a state's stacks multiply step by step.
        // Its masks come from cut states' splits, which never build the full successors of the
        // tokens they accept; the fuzzer's walk reaches a state whose successor over '0' has more
        // stacks than the work limits allow, which accept() used to report as a refusal of a
        // token the mask allowed. The fuzzer's walk (its input's bytes pick among the allowed
        // tokens), then random walks, each on a fresh automaton (the limits end one for good): at
        // every step each token's mask bit must be what accept() does on a copy of the matcher,
        // and a matcher past the limits gives no mask.
        const std::string input("\x02root ::= item (\",\" item)*\nitem ::= \"x\" | [0-9]+  root root \")\"\n", 64);
        StructuredOutput output;
        output.kind = StructuredOutput::Kind::Grammar;
        output.text = input.substr(1);
        auto grammar = compileStructuredOutput(output);
        QVERIFY(grammar);
        std::vector<std::string> bytes;
        for (int b = 0; b < 256; ++b) bytes.push_back(std::string(1, char(b)));
        bytes.push_back({});  // 256: the stop token
        auto vocabulary = std::make_shared<const TokenVocabulary>(std::move(bytes), std::vector<int32_t>{});
        std::mt19937 rng(31);
        int overLimits = 0;
        for (int walk = 0; walk < 12; ++walk) {
            auto automaton = std::make_shared<GrammarAutomaton>(*grammar, vocabulary);
            GrammarMatcher matcher(automaton, {256});
            std::vector<uint32_t> mask(size_t(vocabulary->maskWords()));
            std::string text;
            for (int step = 0; step < 48 && !matcher.terminated(); ++step) {
                if (!matcher.fillMask(mask)) {
                    QVERIFY2(automaton->overLimits(), qPrintable(QString("no token after '%1'").arg(text.c_str())));
                    ++overLimits;
                    break;
                }
                std::vector<int32_t> allowed;
                for (int32_t t = 0; t <= 256; ++t) {
                    const bool bit = (mask[size_t(t) >> 5] >> (t & 31)) & 1u;
                    GrammarMatcher copy = matcher;
                    QVERIFY2(bit == copy.accept(t),
                             qPrintable(QString("token %1 after '%2': mask %3").arg(t).arg(text.c_str()).arg(bit)));
                    if (bit) allowed.push_back(t);
                }
                QVERIFY(!allowed.empty());
                const int32_t pick = walk == 0 ? allowed[uint8_t(input[size_t(step) % input.size()]) % allowed.size()]
                                               : allowed[rng() % allowed.size()];
                QVERIFY(matcher.accept(pick));
                if (pick != 256) text += char(pick);
            }
            if (walk == 0) QCOMPARE(overLimits, 1);  // the crash's walk runs into the limits
        }
    }

    void concurrentRowsGiveTheSerialMasks()
    {
        // Deep stacks (array > object > array > array > integer, bounded string) so masks go
        // through cut states and their uncertain tokens; a vocabulary with multi-byte tokens that
        // cross value boundaries ("],[", "\"}").
        std::mt19937 rng(23);
        const std::string alphabet = "{}[]\":,ab1209-\\";
        std::vector<std::string> tokens;
        for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
        for (int i = 0; i < 2000; ++i) {
            std::string t;
            for (int k = 1 + int(rng() % 5); k > 0; --k) t += alphabet[rng() % alphabet.size()];
            tokens.push_back(t);
        }
        const int eos = int(tokens.size());
        tokens.push_back("");
        auto vocabulary = std::make_shared<const TokenVocabulary>(tokens, std::vector<int32_t>{});
        auto grammar = compileJsonSchema(
            R"({"type":"array","minItems":4,"items":{"type":"object","properties":{"n":{"type":"string","maxLength":5},)"
            R"("t":{"type":"array","maxItems":3,"items":{"type":"array","items":{"type":"integer","minimum":-20,"maximum":300}}}},)"
            R"("required":["n","t"],"additionalProperties":false}})",
            "s");
        QVERIFY(grammar);
        const size_t words = size_t(vocabulary->maskWords());

        // The reference: one row after another on this thread, each mask also checked token by
        // token against the text so far (exact through the cuts).
        constexpr int kRows = 48, kSteps = 70;
        std::vector<std::vector<int32_t>> picks(kRows);
        std::vector<std::vector<std::vector<uint32_t>>> expected(kRows);
        {
            auto automaton = std::make_shared<GrammarAutomaton>(*grammar, vocabulary);
            for (int row = 0; row < kRows; ++row) {
                GrammarMatcher matcher(automaton, {eos});
                std::string text;
                std::vector<uint32_t> mask(words);
                for (int step = 0; step < kSteps && !matcher.terminated(); ++step) {
                    QVERIFY(matcher.fillMask(mask));
                    expected[size_t(row)].push_back(mask);
                    if (row < 4 || row >= kRows - 8) {  // early rows walk states, late ones splits
                        const int32_t here = automaton->advance(automaton->startState(), text);
                        for (int32_t id = 0; id < eos; ++id) {
                            const bool bit = (mask[size_t(id) >> 5] >> (id & 31)) & 1u;
                            const std::string_view bytes = vocabulary->tokenBytes(id);
                            QCOMPARE(bit, automaton->advance(here, bytes) >= 0);
                        }
                    }
                    std::vector<int32_t> allowed;
                    for (int32_t id = 0; id < eos; ++id)
                        if ((mask[size_t(id) >> 5] >> (id & 31)) & 1u) allowed.push_back(id);
                    if (allowed.empty()) break;  // only the end remains
                    const int32_t pick = allowed[rng() % allowed.size()];
                    QVERIFY(matcher.accept(pick));
                    text += tokens[size_t(pick)];
                    picks[size_t(row)].push_back(pick);
                }
            }
            // Cut states came back often enough to be split, and their splits were shared.
            QVERIFY(automaton->stats().splitsComputed > 0);
            QVERIFY(automaton->stats().splitsComputed < automaton->stats().masksComputed);
        }

        std::mutex failureMutex;
        QString failure;
        const auto fail = [&](int row, int step, const char* what) {
            std::lock_guard lock(failureMutex);
            if (failure.isEmpty()) failure = QString("row %1 step %2: %3").arg(row).arg(step).arg(what);
        };

        // The engine's way: every row's mask at once, then every row's advance, on a pool wider
        // than this machine (so rows interleave), the caches reset only between steps.
        {
            auto automaton = std::make_shared<GrammarAutomaton>(*grammar, vocabulary);
            std::vector<std::unique_ptr<GrammarMatcher>> matchers;
            for (int row = 0; row < kRows; ++row)
                matchers.push_back(std::make_unique<GrammarMatcher>(automaton, std::vector<int32_t>{eos}));
            std::vector<std::vector<uint32_t>> scratch(kRows, std::vector<uint32_t>(words));
            RowPool pool(8);
            for (int step = 0; step < kSteps; ++step) {
                automaton->maybeReset();
                pool.run(kRows, [&](size_t row) {
                    if (size_t(step) >= expected[row].size()) return;
                    const std::span<const uint32_t> mask = matchers[row]->mask(scratch[row]);
                    if (!std::equal(mask.begin(), mask.end(), expected[row][size_t(step)].begin(),
                                    expected[row][size_t(step)].end()))
                        fail(int(row), step, "mask differs (lockstep)");
                });
                pool.run(kRows, [&](size_t row) {
                    if (size_t(step) < picks[row].size() && !matchers[row]->accept(picks[row][size_t(step)]))
                        fail(int(row), step, "advance refused (lockstep)");
                });
            }
        }
        QVERIFY2(failure.isEmpty(), qPrintable(failure));

        // Free-running threads, each on its own rows, no step boundary: every interleaving of
        // misses, publications and cached reads.
        {
            auto automaton = std::make_shared<GrammarAutomaton>(*grammar, vocabulary);
            // Made here: a matcher's constructor may reset the caches, which only a quiet
            // automaton allows.
            std::vector<std::unique_ptr<GrammarMatcher>> matchers;
            for (int row = 0; row < kRows; ++row)
                matchers.push_back(std::make_unique<GrammarMatcher>(automaton, std::vector<int32_t>{eos}));
            std::vector<std::thread> threads;
            for (int t = 0; t < 6; ++t)
                threads.emplace_back([&, t] {
                    std::vector<uint32_t> scratch(words);
                    for (int row = t; row < kRows; row += 6) {
                        GrammarMatcher& matcher = *matchers[size_t(row)];
                        for (size_t step = 0; step < expected[size_t(row)].size(); ++step) {
                            const std::span<const uint32_t> mask = matcher.mask(scratch);
                            const auto& want = expected[size_t(row)][step];
                            if (!std::equal(mask.begin(), mask.end(), want.begin(), want.end()))
                                fail(row, int(step), "mask differs (free-running)");
                            if (step < picks[size_t(row)].size() && !matcher.accept(picks[size_t(row)][step]))
                                fail(row, int(step), "advance refused (free-running)");
                        }
                    }
                });
            for (std::thread& t : threads) t.join();
        }
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
};

QTEST_APPLESS_MAIN(TestStructuredGrammar)
#include "test_structured_grammar.moc"
