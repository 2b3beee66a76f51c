// Bad requests: each gets the right 4xx with an OpenAI error object whose message says what is
// wrong (and names the field), and the server keeps serving afterwards.
#include "server_test_support.h"

#include <QtTest>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

struct BadCase {
    const char* name;
    std::string path;
    std::string body;  // sent as is
    int status;
    std::string message;  // must appear in error.message
    std::string param;    // expected error.param ("" = not checked)
};

std::string chat(const json& extra)
{
    json body = {{"model", "tiny-ernie"}, {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
    for (auto it = extra.begin(); it != extra.end(); ++it) body[it.key()] = it.value();
    return body.dump();
}

std::string completion(const json& extra)
{
    json body = {{"model", "tiny-ernie"}, {"prompt", "hello"}};
    for (auto it = extra.begin(); it != extra.end(); ++it) body[it.key()] = it.value();
    return body.dump();
}

std::vector<int> ids(int count) { return std::vector<int>(size_t(count), 100); }

}  // namespace

class TestServerErrors : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<InProcessServer> m_server;

    void expectServing()
    {
        auto ok = m_server->client().post("/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}});
        QCOMPARE(ok.status, 200);
    }

private slots:
    void initTestCase() { m_server = std::make_unique<InProcessServer>(); }
    void cleanupTestCase() { m_server.reset(); }

    void badRequestsGetUsefulErrors_data()
    {
        QTest::addColumn<int>("index");
        static const std::vector<BadCase> cases = table();
        for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << int(i);
    }

    void badRequestsGetUsefulErrors()
    {
        QFETCH(int, index);
        const BadCase c = table()[size_t(index)];
        auto r = m_server->client().postRaw(c.path, c.body, "application/json");
        QCOMPARE(r.status, c.status);
        QVERIFY2(r.json.is_object() && r.json.contains("error"), r.body.c_str());
        const json& error = r.json["error"];
        const std::string message = error["message"].get<std::string>();
        QVERIFY2(message.find(c.message) != std::string::npos, message.c_str());
        QVERIFY(!error["type"].get<std::string>().empty());
        if (!c.param.empty()) {
            QVERIFY2(error["param"].is_string(), r.body.c_str());
            QCOMPARE(error["param"].get<std::string>(), c.param);
        }
        QCOMPARE(r.header("Content-Type"), std::string("application/json"));
        expectServing();
    }

    void unknownRoutesAndMethods()
    {
        for (const char* path : {"/v2/completions", "/v1/chat", "/"}) {
            auto r = m_server->client().get(path);
            QCOMPARE(r.status, 404);
            QVERIFY(r.json["error"]["message"].get<std::string>().find(path) != std::string::npos);
        }
        // A known route with the wrong method: 405, an OpenAI error, and the methods it takes.
        auto get = m_server->client().get("/v1/completions");
        QCOMPARE(get.status, 405);
        QCOMPARE(get.json["error"]["type"].get<std::string>(), std::string("invalid_request_error"));
        QCOMPARE(get.header("Allow"), std::string("POST, OPTIONS"));
        QCOMPARE(m_server->client().postRaw("/v1/models", "{}", "application/json").status, 405);
        httplib::Client raw("127.0.0.1", m_server->port());
        auto put = raw.Put("/v1/chat/completions", "{}", "application/json");
        QVERIFY(put);
        QCOMPARE(put->status, 405);
        QCOMPARE(json::parse(put->body)["error"]["code"].get<std::string>(), std::string("method_not_allowed"));
        auto del = raw.Delete("/v1/models/tiny-ernie");
        QCOMPARE(del->status, 405);
        QCOMPARE(del->get_header_value("Allow"), std::string("GET, OPTIONS"));
        expectServing();
    }

    void manyStopStringsAreRefusedQuickly()
    {
        // 300,000 stop strings once took 91 s of CPU (quadratic duplicate removal): now a 400 up front.
        json body = json::parse(chat({{"max_tokens", 2}}));
        body["stop"] = std::vector<std::string>(300000, "same");
        auto r = m_server->client().postRaw("/v1/chat/completions", body.dump(), "application/json");
        QCOMPARE(r.status, 400);
        QCOMPARE(r.json["error"]["param"].get<std::string>(), std::string("stop"));
        // 64 distinct stop strings (the cap) still work.
        std::vector<std::string> stops;
        for (int i = 0; i < 64; ++i) stops.push_back("stop-" + std::to_string(i));
        body["stop"] = stops;
        QCOMPARE(m_server->client().postRaw("/v1/chat/completions", body.dump(), "application/json").status, 200);
        expectServing();
    }

    void hugeBodyIs413()
    {
        std::string big = "{\"prompt\": \"" + std::string(10 << 20, 'a') + "\"}";
        auto r = m_server->client().postRaw("/v1/completions", big, "application/json");
        QCOMPARE(r.status, 413);
        QVERIFY(r.json["error"]["message"].get<std::string>().find("limit") != std::string::npos);
        expectServing();
    }

    void deepNestingDoesNotCrash()
    {
        std::string deep = std::string(200000, '[') + std::string(200000, ']');
        auto r = m_server->client().postRaw("/v1/completions", deep, "application/json");
        QCOMPARE(r.status, 400);
        expectServing();
    }

    void wrongKeyIs401()
    {
        ServeConfig config = testServeConfig();
        config.apiKey = "right";
        InProcessServer keyed(config);
        auto r = keyed.client("wrong").post("/v1/chat/completions", chatBody("hi", 2));
        QCOMPARE(r.status, 401);
        QCOMPARE(r.json["error"]["code"].get<std::string>(), std::string("invalid_api_key"));
        QCOMPARE(keyed.client("right").post("/v1/chat/completions", chatBody("hi", 2)).status, 200);
    }

private:
    static std::vector<BadCase> table()
    {
        const std::string chatPath = "/v1/chat/completions", completionPath = "/v1/completions";
        return {
            {"malformed JSON", chatPath, "{\"model\": \"tiny-ernie\", \"messages\": [", 400, "not valid JSON", ""},
            {"not an object", chatPath, "[1, 2, 3]", 400, "JSON object", ""},
            {"invalid UTF-8", chatPath, "{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\xfe\"}]}", 400,
             "not valid JSON", ""},
            {"lone surrogate", chatPath, "{\"messages\": [{\"role\": \"user\", \"content\": \"\\ud800\"}]}", 400,
             "not valid JSON", ""},
            {"messages not an array", chatPath, chat({{"messages", "hi"}}), 400, "'messages' must be an array",
             "messages"},
            {"empty messages", chatPath, chat({{"messages", json::array()}}), 400, "at least one message", "messages"},
            {"message without content", chatPath, chat({{"messages", json::array({{{"role", "user"}}})}}), 400,
             "'messages[0].content' is required", "messages[0].content"},
            {"unknown role", chatPath, chat({{"messages", json::array({{{"role", "tool"}, {"content", "x"}}})}}), 400,
             "'tool' is not supported", "messages[0].role"},
            {"image part", chatPath,
             chat({{"messages",
                    json::array({{{"role", "user"},
                                  {"content", json::array({{{"type", "image_url"}, {"image_url", "x"}}})}}})}}),
             400, "'image_url' is not supported", "messages[0].content[0].type"},
            {"temperature as string", chatPath, chat({{"temperature", "hot"}}), 400,
             "'temperature' must be a number, got a string", "temperature"},
            {"negative temperature", chatPath, chat({{"temperature", -1}}), 400, "temperature must be non-negative",
             "temperature"},
            {"top_p too large", chatPath, chat({{"top_p", 1.5}}), 400, "top_p must be in (0, 1]", "top_p"},
            {"negative max_tokens", chatPath, chat({{"max_tokens", -5}}), 400,
             "'max_tokens' must be at least 1, got -5", "max_tokens"},
            {"huge max_tokens", chatPath, chat({{"max_tokens", 1000000000000LL}}), 400,
             "maximum context length is 4096 tokens. However, you requested", "max_tokens"},
            {"fractional max_tokens", chatPath, chat({{"max_tokens", 1.5}}), 400, "'max_tokens' must be an integer",
             "max_tokens"},
            {"max_completion_tokens zero", chatPath, chat({{"max_completion_tokens", 0}}), 400, "at least 1",
             "max_completion_tokens"},
            {"min_tokens above max_tokens", chatPath, chat({{"max_tokens", 4}, {"min_tokens", 9}}), 400,
             "min_tokens must be between 0 and max_tokens", "min_tokens"},
            {"unknown model", chatPath, chat({{"model", "gpt-4o"}}), 404, "The model `gpt-4o` does not exist", "model"},
            {"n zero", chatPath, chat({{"n", 0}}), 400, "'n' must be between 1 and", "n"},
            {"top_logprobs without logprobs", chatPath, chat({{"top_logprobs", 3}}), 400, "needs 'logprobs'",
             "top_logprobs"},
            {"top_logprobs too many", chatPath, chat({{"logprobs", true}, {"top_logprobs", 21}}), 400,
             "between 0 and 20", "top_logprobs"},
            {"stream_options without stream", chatPath, chat({{"stream_options", {{"include_usage", true}}}}), 400,
             "only allowed when 'stream' is true", "stream_options"},
            {"stop as number", chatPath, chat({{"stop", 5}}), 400, "'stop' must be a string or an array of strings",
             "stop"},
            {"empty stop string", chatPath, chat({{"stop", json::array({"a", ""})}}), 400,
             "'stop[1]' must not be empty", "stop"},
            {"stop_token_ids outside vocab", chatPath, chat({{"stop_token_ids", json::array({99999999})}}), 400,
             "stop_token_ids must be inside the vocabulary", "stop_token_ids"},
            {"tools", chatPath, chat({{"tools", json::array({{{"type", "function"}}})}}), 400,
             "this model has no tool-calling template", "tools"},
            {"tools with tool_choice auto", chatPath,
             chat({{"tools", json::array({{{"type", "function"}}})}, {"tool_choice", "auto"}}), 400,
             "this model has no tool-calling template", "tools"},
            {"tool_choice without tools", chatPath, chat({{"tool_choice", "required"}}), 400,
             "this model has no tool-calling template", "tool_choice"},
            {"tool_choice naming a function", chatPath,
             chat({{"tool_choice", {{"type", "function"}, {"function", {{"name", "f"}}}}}}), 400,
             "this model has no tool-calling template", "tool_choice"},
            {"unsupported response_format type", chatPath, chat({{"response_format", {{"type", "xml"}}}}), 400,
             "must be 'text', 'json_object' or 'json_schema'", "response_format.type"},
            {"unsupported schema keyword", chatPath,
             chat({{"response_format",
                    {{"type", "json_schema"},
                     {"json_schema", {{"name", "n"}, {"schema", {{"type", "integer"}, {"multipleOf", 2}}}}}}}}),
             400, "the keyword 'multipleOf' is not supported", "response_format.json_schema.schema"},
            {"logit_bias", chatPath, chat({{"logit_bias", {{"5", 10}}}}), 400, "'logit_bias' is not supported",
             "logit_bias"},
            // Values of the wrong JSON type deep inside the request are the client's error (400), never a 500.
            {"content part type not a string", chatPath,
             chat({{"messages", json::array({{{"role", "user"}, {"content", json::array({{{"type", 5}}})}}})}}), 400,
             "'messages[0].content[0].type' must be a string", "messages[0].content[0].type"},
            {"response_format type not a string", chatPath, chat({{"response_format", {{"type", 5}}}}), 400,
             "'response_format.type' must be a string", "response_format.type"},
            {"max_tokens overflowing a double", chatPath,
             "{\"model\": \"tiny-ernie\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 1e400}",
             400, "not valid JSON", ""},
            // Found by fuzz_openai_request under UBSan: prompt + max_tokens overflowed int64.
            {"max_tokens at INT64_MAX", chatPath, chat({{"max_tokens", INT64_MAX}}), 400, "maximum context length is",
             "max_tokens"},
            {"too many stop strings", chatPath, chat({{"stop", std::vector<std::string>(65, "x")}}), 400,
             "'stop' may list at most 64 strings", "stop"},
            {"missing prompt", completionPath, json{{"model", "tiny-ernie"}}.dump(), 400, "'prompt' is required",
             "prompt"},
            {"empty prompt", completionPath, completion({{"prompt", ""}}), 400, "'prompt' must not be empty", "prompt"},
            {"prompt of wrong type", completionPath, completion({{"prompt", {{"a", 1}}}}), 400, "'prompt' must be",
             "prompt"},
            {"prompt id outside vocab", completionPath, completion({{"prompt", json::array({1, 2, -7})}}), 400,
             "'prompt[2]' must be a token id", "prompt"},
            {"prompt over max-model-len", completionPath, completion({{"prompt", ids(5000)}}), 400,
             "maximum context length is 4096 tokens. However, your request has 5000 input tokens", "prompt"},
            {"prompt plus max_tokens over", completionPath, completion({{"prompt", ids(4000)}, {"max_tokens", 200}}),
             400, "you requested 4200 tokens (4000 in the messages, 200 in the completion)", "max_tokens"},
            {"completion logprobs too many", completionPath, completion({{"logprobs", 50}}), 400,
             "'logprobs' must be between 0 and 20", "logprobs"},
            {"completion logprobs as bool", completionPath, completion({{"logprobs", true}}), 400,
             "'logprobs' must be an integer", "logprobs"},
            {"suffix", completionPath, completion({{"suffix", "end"}}), 400, "'suffix' is not supported", "suffix"},
            {"echo with logprobs", completionPath, completion({{"echo", true}, {"logprobs", 1}}), 400,
             "prompt logprobs", "echo"},
            {"detokenize bad id", "/detokenize", json{{"tokens", json::array({1, 99999999})}}.dump(), 400,
             "'tokens[1]' must be a token id", "tokens"},
            {"tokenize without prompt", "/tokenize", "{}", 400, "give 'prompt' or 'messages'", "prompt"},
        };
    }
};

QTEST_APPLESS_MAIN(TestServerErrors)
#include "test_server_errors.moc"
