// Structured outputs over HTTP: OpenAI's response_format (json_object, json_schema) and vLLM's
// structured_outputs (json, regex, choice, grammar) and guided_* in chat and completions,
// streamed and not, give text that parses and validates; unsupported schema features, bad
// regexes and conflicting fields get a 400 naming the field and the feature, and the server
// keeps serving after hostile specs.
#include "../engine/json_schema_checker.h"
#include "server_test_support.h"

#include <QtTest>

#include <regex>

using namespace brook;
using namespace brook::testsupport;
using json = nlohmann::json;

namespace {

json personSchema()
{
    return json::parse(R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},)"
                       R"("age":{"type":"integer","minimum":0,"maximum":120},)"
                       R"("tags":{"type":"array","items":{"enum":["a","b"]},"maxItems":3}},)"
                       R"("required":["name","age"],"additionalProperties":false})");
}

json sampled(json body)
{
    body["temperature"] = 1.0;
    body["seed"] = 7;
    body["max_tokens"] = 400;
    return body;
}

}  // namespace

class TestStructuredOutputsServer : public QObject {
    Q_OBJECT

    std::unique_ptr<InProcessServer> m_server;

    std::string chatContent(const json& body)
    {
        auto r = m_server->client().post("/v1/chat/completions", body);
        if (r.status != 200) return "HTTP " + std::to_string(r.status) + ": " + r.body;
        return r.json["choices"][0]["message"]["content"].get<std::string>();
    }

    void expect400(const json& body, const std::string& param, const std::string& words,
                   const std::string& path = "/v1/chat/completions")
    {
        auto r = m_server->client().post(path, body);
        QVERIFY2(r.status == 400, (std::to_string(r.status) + " " + r.body).c_str());
        QCOMPARE(r.json["error"]["param"].get<std::string>(), param);
        const std::string message = r.json["error"]["message"];
        QVERIFY2(message.find(words) != std::string::npos, message.c_str());
    }

private slots:
    void initTestCase() { m_server = std::make_unique<InProcessServer>(); }
    void cleanupTestCase() { m_server.reset(); }

    void responseFormatJsonSchema()
    {
        for (int seed = 0; seed < 4; ++seed) {
            json body = sampled(chatBody("Describe a person", 0));
            body["seed"] = seed;
            body["response_format"] = {
                {"type", "json_schema"},
                {"json_schema", {{"name", "person"}, {"schema", personSchema()}, {"strict", true}}}};
            auto r = m_server->client().post("/v1/chat/completions", body);
            QVERIFY2(r.status == 200, r.body.c_str());
            QCOMPARE(r.json["choices"][0]["finish_reason"].get<std::string>(), std::string("stop"));
            const std::string content = r.json["choices"][0]["message"]["content"];
            const json value = json::parse(content, nullptr, false);
            QVERIFY2(!value.is_discarded(), content.c_str());
            const auto errors = JsonSchemaChecker(personSchema()).check(value);
            QVERIFY2(errors.empty(), (errors.empty() ? content : errors[0] + " in " + content).c_str());
        }
    }

    void responseFormatJsonObjectStreamed()
    {
        json body = sampled(chatBody("Give me JSON", 0, true));
        body["max_tokens"] = 600;
        body["response_format"] = {{"type", "json_object"}};
        auto r = m_server->client().stream("/v1/chat/completions", body);
        const std::string text = streamedText(r)[0];
        QVERIFY(!text.empty());
        QCOMPARE(text.front(), '{');
        // Whatever the model says, the text so far is a prefix of a JSON object; a finished one parses.
        const json& last = r.events.back().data;
        for (const auto& c : last["choices"])
            if (c["finish_reason"] == "stop") QVERIFY2(json::parse(text, nullptr, false).is_object(), text.c_str());
    }

    void structuredOutputsInChatAndCompletions()
    {
        json regexBody = sampled(chatBody("phone?", 0));
        regexBody["structured_outputs"] = {{"regex", "\\d{3}-\\d{4}"}};
        const std::string phone = chatContent(regexBody);
        QVERIFY2(std::regex_match(phone, std::regex("\\d{3}-\\d{4}")), phone.c_str());

        json choiceBody = sampled(chatBody("sentiment?", 0));
        choiceBody["structured_outputs"] = {{"choice", {"positive", "negative"}}};
        const std::string sentiment = chatContent(choiceBody);
        QVERIFY2(sentiment == "positive" || sentiment == "negative", sentiment.c_str());

        json grammarBody = sampled(chatBody("sql?", 0));
        grammarBody["structured_outputs"] = {{"grammar", "root ::= \"SELECT \" [a-z]{1,6} \" FROM t\""}};
        const std::string sql = chatContent(grammarBody);
        QVERIFY2(std::regex_match(sql, std::regex("SELECT [a-z]{1,6} FROM t")), sql.c_str());

        // Completions, with vLLM's structured_outputs.json and the older guided_choice; n = 3.
        json completion = {{"model", "tiny-ernie"},
                           {"prompt", "A person:"},
                           {"max_tokens", 400},
                           {"temperature", 1.0},
                           {"seed", 3},
                           {"n", 3}};
        completion["structured_outputs"] = {{"json", personSchema()}};
        auto r = m_server->client().post("/v1/completions", completion);
        QVERIFY2(r.status == 200, r.body.c_str());
        QCOMPARE(r.json["choices"].size(), size_t(3));
        for (const auto& c : r.json["choices"]) {
            const json value = json::parse(c["text"].get<std::string>(), nullptr, false);
            QVERIFY2(JsonSchemaChecker(personSchema()).check(value).empty(), c["text"].get<std::string>().c_str());
        }
        completion.erase("structured_outputs");
        completion["guided_choice"] = {"yes", "no"};
        r = m_server->client().post("/v1/completions", completion);
        QVERIFY2(r.status == 200, r.body.c_str());
        for (const auto& c : r.json["choices"]) QVERIFY(c["text"] == "yes" || c["text"] == "no");
    }

    void unsupportedFeaturesAre400s()
    {
        auto schemaBody = [](json schema) {
            json body = chatBody("x", 10);
            body["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}};
            return body;
        };
        const std::string schemaField = "response_format.json_schema.schema";
        expect400(schemaBody({{"type", "integer"}, {"multipleOf", 5}}), schemaField, "'multipleOf'");
        expect400(schemaBody({{"type", "object"}, {"not", json::object()}}), schemaField, "'not'");
        expect400(schemaBody({{"type", "string"}, {"format", "hostname"}}), schemaField, "format 'hostname'");
        expect400(schemaBody({{"type", "array"}, {"uniqueItems", true}}), schemaField, "'uniqueItems'");
        json regex = chatBody("x", 10);
        regex["structured_outputs"] = {{"regex", "(a)\\1"}};
        expect400(regex, "structured_outputs.regex", "backreference");
        json grammar = chatBody("x", 10);
        grammar["structured_outputs"] = {{"grammar", "root ::= root \"a\" | \"b\""}};
        expect400(grammar, "structured_outputs.grammar", "left-recursive");
        json both = chatBody("x", 10);
        both["response_format"] = {{"type", "json_object"}};
        both["structured_outputs"] = {{"regex", "a"}};
        expect400(both, "structured_outputs", "both");
        json two = chatBody("x", 10);
        two["structured_outputs"] = {{"regex", "a"}, {"choice", {"b"}}};
        expect400(two, "structured_outputs", "exactly one");
        json type = chatBody("x", 10);
        type["response_format"] = {{"type", "yaml"}};
        expect400(type, "response_format.type", "'yaml'");
        json completion = {
            {"model", "tiny-ernie"}, {"prompt", "x"}, {"guided_json", {{"type", "object"}, {"if", json::object()}}}};
        expect400(completion, "guided_json", "'if'", "/v1/completions");
    }

    void hostileSpecsLeaveTheServerServing()
    {
        std::string deep;
        for (int i = 0; i < 5000; ++i) deep += "(";
        deep += "a";
        for (int i = 0; i < 5000; ++i) deep += ")";
        json body = chatBody("x", 10);
        body["structured_outputs"] = {{"regex", deep}};
        QCOMPARE(m_server->client().post("/v1/chat/completions", body).status, 400);
        json huge = chatBody("x", 10);
        huge["structured_outputs"] = {{"regex", "a{20000}"}};
        QCOMPARE(m_server->client().post("/v1/chat/completions", huge).status, 400);
        // A million-character language from a small grammar is fine: no backtracking, shared rules.
        json big = chatBody("x", 10);
        big["structured_outputs"] = {{"regex", "(a{1000}){1000}"}};
        auto million = m_server->client().post("/v1/chat/completions", big);
        QCOMPARE(million.status, 200);
        QCOMPARE(million.json["choices"][0]["message"]["content"].get<std::string>(), std::string(10, 'a'));
        json nested = json::object();
        for (int i = 0; i < 100; ++i) nested = {{"type", "array"}, {"items", nested}};
        json schema = chatBody("x", 10);
        schema["structured_outputs"] = {{"json", nested}};
        QCOMPARE(m_server->client().post("/v1/chat/completions", schema).status, 400);
        // Still serving.
        auto r = m_server->client().post("/v1/chat/completions", chatBody("hi", 3));
        QCOMPARE(r.status, 200);
    }
};

QTEST_MAIN(TestStructuredOutputsServer)
#include "test_structured_outputs_server.moc"
