// Every response shape brook-serve answers, validated against OpenAI's published response schemas:
// chat and completions whole and streamed (each chunk, the usage chunk, an error event), the model
// list and card, and the error body of every kind of failure. The schemas are a copy, in
// tests/data/openai-openapi/openai-schemas.json, of the bundle cut from openai/openai-openapi's
// openapi.yaml (its README there says where it comes from and how to refresh it); the test reads
// only that copy.
#include "json_schema_validator.h"
#include "server/response_writer.h"
#include "server_test_support.h"

#include <QtTest>

#include <fstream>
#include <sstream>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

JsonSchemaValidator loadSchemas()
{
    const std::string path = std::string(BROOK_TEST_DATA_DIR) + "/openai-openapi/openai-schemas.json";
    std::ifstream in(path);
    if (!in) qFatal("cannot read %s", path.c_str());
    return JsonSchemaValidator(json::parse(in));
}

std::string joined(const std::vector<std::string>& errors)
{
    std::string out;
    for (const std::string& e : errors) out += "\n  " + e;
    return out;
}

json with(json body, const json& extra)
{
    for (auto it = extra.begin(); it != extra.end(); ++it) body[it.key()] = it.value();
    return body;
}

json completionBody(const json& prompt, int maxTokens, bool stream = false)
{
    return {
        {"model", "tiny-ernie"}, {"prompt", prompt}, {"max_tokens", maxTokens}, {"temperature", 0}, {"stream", stream}};
}

const json kTools = json::array(
    {{{"type", "function"},
      {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}, {"properties", json::object()}}}}}}});

}  // namespace

class TestOpenAiSchemas : public QObject {
    Q_OBJECT

private:
    JsonSchemaValidator m_schemas = loadSchemas();
    std::unique_ptr<InProcessServer> m_server;

    void expectValid(const json& value, const std::string& root, const std::string& what)
    {
        const auto errors = m_schemas.validate(value, root);
        QVERIFY2(errors.empty(),
                 (what + " is not a valid " + root + ":" + joined(errors) + "\n" + value.dump()).c_str());
    }

    // OpenAI streams completions as CreateCompletionResponse objects, but that schema is written for
    // the whole response: it allows no null finish_reason (the last chunk carries it; the bundle's
    // README says so) and no null usage (with stream_options.include_usage every chunk but the last
    // carries "usage": null, as OpenAI's stream_options documentation says and as the chat chunk
    // schema allows). The stream's schema is that root with exactly these two fields made nullable.
    json completionChunkSchema() const
    {
        json schema = m_schemas.root("CreateCompletionResponse");
        auto nullable = [](json& field) { field = {{"anyOf", json::array({field, {{"type", "null"}}})}}; };
        nullable(schema["properties"]["choices"]["items"]["properties"]["finish_reason"]);
        nullable(schema["properties"]["usage"]);
        return schema;
    }

    void expectValidStream(const std::string& path, const json& body, const std::string& what)
    {
        const StreamResult r = m_server->client().stream(path, body);
        QVERIFY2(r.ok(), (what + ": " + r.errorBody + r.transportError).c_str());
        QVERIFY2(r.raw.find("data: [DONE]") != std::string::npos, (what + ": no [DONE]").c_str());
        QVERIFY2(r.events.size() >= 2, (what + ": too few chunks").c_str());
        const bool chat = path == "/v1/chat/completions";
        const json chunkSchema = completionChunkSchema();
        for (size_t i = 0; i < r.events.size(); ++i) {
            const json& event = r.events[i].data;
            const std::string label = what + " chunk " + std::to_string(i);
            if (chat) {
                expectValid(event, "CreateChatCompletionStreamResponse", label);
            } else {
                const auto errors = m_schemas.validateAgainst(event, chunkSchema);
                QVERIFY2(errors.empty(), (label + " is not a valid completion chunk:" + joined(errors)).c_str());
            }
            if (QTest::currentTestFailed()) return;
        }
        if (body.contains("stream_options") && body["stream_options"].value("include_usage", false)) {
            const json& last = r.events.back().data;
            QVERIFY2(last["choices"].empty() && last["usage"].is_object(), (what + ": no usage chunk").c_str());
        }
    }

    void expectError(const HttpResult& r, int status, const std::string& what)
    {
        QVERIFY2(r.status == status, (what + ": status " + std::to_string(r.status) + " " + r.body).c_str());
        QVERIFY2(r.header("Content-Type").rfind("application/json", 0) == 0, (what + ": " + r.body).c_str());
        expectValid(r.json, "ErrorResponse", what);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_schemas.hasRoot("CreateChatCompletionResponse"));
        m_server = std::make_unique<InProcessServer>();
    }
    void cleanupTestCase() { m_server.reset(); }

    // The validator is not a yes-machine: the shapes OpenAI's schemas forbid are rejected.
    void validatorRejectsWhatTheSchemasForbid()
    {
        const json message = {{"role", "assistant"}, {"content", "hi"}, {"refusal", nullptr}};
        const json good = {
            {"id", "chatcmpl-1"},
            {"object", "chat.completion"},
            {"created", 1},
            {"model", "m"},
            {"choices",
             json::array({{{"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", "stop"}}})}};
        QVERIFY2(m_schemas.validate(good, "CreateChatCompletionResponse").empty(),
                 joined(m_schemas.validate(good, "CreateChatCompletionResponse")).c_str());

        json noRefusal = good;
        noRefusal["choices"][0]["message"].erase("refusal");
        QVERIFY(!m_schemas.validate(noRefusal, "CreateChatCompletionResponse").empty());
        QVERIFY(
            !m_schemas.validate(with(good, {{"system_fingerprint", nullptr}}), "CreateChatCompletionResponse").empty());
        json logprobsWithoutRefusal = good;
        logprobsWithoutRefusal["choices"][0]["logprobs"] = {{"content", json::array()}};
        QVERIFY(!m_schemas.validate(logprobsWithoutRefusal, "CreateChatCompletionResponse").empty());
        json abort = good;
        abort["choices"][0]["finish_reason"] = "abort";
        QVERIFY(!m_schemas.validate(abort, "CreateChatCompletionResponse").empty());
        QVERIFY(!m_schemas.validate(with(good, {{"created", 1.5}}), "CreateChatCompletionResponse").empty());
        QVERIFY(!m_schemas.validate({{"error", {{"message", "m"}, {"type", "t"}, {"code", nullptr}}}}, "ErrorResponse")
                     .empty());  // param missing
        QVERIFY(!m_schemas.validate(json::object(), "NoSuchRoot").empty());
    }

    void chatResponses_data()
    {
        QTest::addColumn<QString>("extra");
        QTest::newRow("plain") << QString("{}");
        QTest::newRow("logprobs") << QString(R"({"logprobs": true, "top_logprobs": 2})");
        QTest::newRow("logprobs without alternatives") << QString(R"({"logprobs": true})");
        QTest::newRow("n=2 with seed") << QString(R"({"n": 2, "seed": 5, "temperature": 1})");
        QTest::newRow("stop string") << QString(R"({"stop": ["e"], "max_tokens": 40})");
        QTest::newRow("tools with tool_choice none")
            << QString::fromStdString(json{{"tools", kTools}, {"tool_choice", "none"}}.dump());
        QTest::newRow("empty tools, null tool_choice") << QString(R"({"tools": [], "tool_choice": null})");
        QTest::newRow("ignore_eos") << QString(R"({"ignore_eos": true})");
    }
    void chatResponses()
    {
        QFETCH(QString, extra);
        const json body = with(chatBody("Tell me about the river.", 8), json::parse(extra.toStdString()));
        auto r = m_server->client().post("/v1/chat/completions", body);
        QVERIFY2(r.status == 200, r.body.c_str());
        expectValid(r.json, "CreateChatCompletionResponse", "chat response");
    }

    void chatStreams_data()
    {
        QTest::addColumn<QString>("extra");
        QTest::newRow("plain") << QString("{}");
        QTest::newRow("usage chunk") << QString(R"({"stream_options": {"include_usage": true}})");
        QTest::newRow("continuous usage")
            << QString(R"({"stream_options": {"include_usage": true, "continuous_usage_stats": true}})");
        QTest::newRow("logprobs") << QString(
            R"({"logprobs": true, "top_logprobs": 3, "stream_options": {"include_usage": true}})");
        QTest::newRow("n=2") << QString(R"({"n": 2, "seed": 1, "temperature": 1})");
        QTest::newRow("stop string") << QString(R"({"stop": ["e"], "max_tokens": 40})");
    }
    void chatStreams()
    {
        QFETCH(QString, extra);
        expectValidStream("/v1/chat/completions",
                          with(chatBody("Tell me about the river.", 8, true), json::parse(extra.toStdString())),
                          "chat stream");
    }

    void completionResponses_data()
    {
        QTest::addColumn<QString>("extra");
        QTest::newRow("plain") << QString("{}");
        QTest::newRow("logprobs") << QString(R"({"logprobs": 2})");
        QTest::newRow("echo") << QString(R"({"echo": true})");
        QTest::newRow("two prompts, n=2") << QString(R"({"prompt": ["one", "two"], "n": 2, "seed": 3})");
        QTest::newRow("token ids") << QString(R"({"prompt": [100, 101, 102]})");
        QTest::newRow("stop string") << QString(R"({"stop": ["e"], "max_tokens": 40})");
    }
    void completionResponses()
    {
        QFETCH(QString, extra);
        const json body = with(completionBody("Once upon a time", 8), json::parse(extra.toStdString()));
        auto r = m_server->client().post("/v1/completions", body);
        QVERIFY2(r.status == 200, r.body.c_str());
        expectValid(r.json, "CreateCompletionResponse", "completion response");
    }

    void completionStreams_data()
    {
        QTest::addColumn<QString>("extra");
        QTest::newRow("plain") << QString("{}");
        QTest::newRow("usage chunk") << QString(R"({"stream_options": {"include_usage": true}})");
        QTest::newRow("logprobs, continuous usage")
            << QString(R"({"logprobs": 2, "stream_options": {"include_usage": true, "continuous_usage_stats": true}})");
        QTest::newRow("echo") << QString(R"({"echo": true})");
        QTest::newRow("two prompts") << QString(R"({"prompt": ["one", "two"]})");
    }
    void completionStreams()
    {
        QFETCH(QString, extra);
        expectValidStream("/v1/completions",
                          with(completionBody("Once upon a time", 8, true), json::parse(extra.toStdString())),
                          "completion stream");
    }

    // A stream that fails midway (--request-timeout) ends with an error event, not a chunk.
    void streamErrorEvent()
    {
        const std::string events = ResponseWriter::streamError(ApiError::timeout("too slow"));
        const std::string prefix = "data: ";
        QVERIFY(events.rfind(prefix, 0) == 0);
        const json event = json::parse(events.substr(prefix.size(), events.find("\n\n") - prefix.size()));
        expectValid(event, "ErrorResponse", "stream error event");
        QVERIFY(events.find("data: [DONE]\n\n") != std::string::npos);
    }

    void models()
    {
        auto list = m_server->client().get("/v1/models");
        QCOMPARE(list.status, 200);
        expectValid(list.json, "ListModelsResponse", "GET /v1/models");
        auto card = m_server->client().get("/v1/models/tiny-ernie");
        QCOMPARE(card.status, 200);
        expectValid(card.json, "Model", "GET /v1/models/tiny-ernie");
    }

    void errorBodies_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("body");
        QTest::addColumn<int>("status");
        auto chatWith = [](const json& extra) { return QString::fromStdString(with(chatBody("hi", 4), extra).dump()); };
        QTest::newRow("not JSON") << "/v1/chat/completions"
                                  << "{" << 400;
        QTest::newRow("wrong type") << "/v1/chat/completions" << chatWith({{"max_tokens", "many"}}) << 400;
        QTest::newRow("no messages") << "/v1/chat/completions"
                                     << R"({"model": "tiny-ernie"})" << 400;
        QTest::newRow("unknown model") << "/v1/chat/completions" << chatWith({{"model", "gpt-5"}}) << 404;
        QTest::newRow("context too long") << "/v1/chat/completions" << chatWith({{"max_tokens", 100000}}) << 400;
        QTest::newRow("n out of range") << "/v1/chat/completions" << chatWith({{"n", 0}}) << 400;
        QTest::newRow("tools") << "/v1/chat/completions" << chatWith({{"tools", kTools}}) << 400;
        QTest::newRow("tool_choice") << "/v1/chat/completions" << chatWith({{"tool_choice", "auto"}}) << 400;
        QTest::newRow("logit_bias") << "/v1/chat/completions" << chatWith({{"logit_bias", {{"100", 5}}}}) << 400;
        QTest::newRow("completion without prompt") << "/v1/completions"
                                                   << R"({"model": "tiny-ernie"})" << 400;
        QTest::newRow("tokenize without input") << "/tokenize"
                                                << "{}" << 400;
    }
    void errorBodies()
    {
        QFETCH(QString, path);
        QFETCH(QString, body);
        QFETCH(int, status);
        auto r = m_server->client().postRaw(path.toStdString(), body.toStdString(), "application/json");
        expectError(r, status, path.toStdString() + " " + body.toStdString());
    }

    void routingErrorBodies()
    {
        expectError(m_server->client().get("/v1/models/gpt-5"), 404, "unknown model card");
        expectError(m_server->client().get("/v1/nothing"), 404, "unknown route");
        expectError(m_server->client().get("/v1/chat/completions"), 405, "wrong method");
        expectError(m_server->client().postRaw("/v1/chat/completions", chatBody("hi", 2).dump(), "application/json",
                                               {{"Origin", "http://evil.example"}}),
                    403, "refused web origin");

        // Refused by the guarded reader before routing.
        expectError(m_server->client().get("/v1/models?" + std::string(9000, 'a')), 414, "request target too long");
        expectError(m_server->client().postRaw("/v1/chat/completions", chatBody("hi", 2).dump(), "application/json",
                                               {{"Content-Encoding", "gzip"}}),
                    415, "compressed body");

        // A CORS preflight from an origin that is not allowed.
        httplib::Client raw("127.0.0.1", m_server->port());
        auto preflight =
            raw.Options("/v1/chat/completions",
                        httplib::Headers{{"Origin", "http://evil.example"}, {"Access-Control-Request-Method", "POST"}});
        QVERIFY(preflight);
        HttpResult r;
        r.status = preflight->status;
        r.body = preflight->body;
        r.headers.emplace_back("Content-Type", preflight->get_header_value("Content-Type"));
        r.json = json::parse(r.body, nullptr, false);
        expectError(r, 400, "refused CORS preflight");
    }

    // Failures before a model is attached or a key is given, on a server of their own.
    void gateErrorBodies()
    {
        ServeConfig config = testServeConfig();
        config.apiKey = "sk-test";
        config.maxRequestBodyBytes = 4096;
        InProcessServer gated(config, serverLaunchOptions(), /*attachNow=*/false);
        expectError(gated.client().get("/v1/models"), 401, "no API key");
        const OpenAiClient client = gated.client("sk-test");
        expectError(client.get("/v1/models"), 503, "model still loading (models)");
        expectError(client.post("/v1/chat/completions", chatBody("hi", 2)), 503, "model still loading (chat)");
        expectError(client.postRaw("/v1/completions", std::string(8192, ' '), "application/json"), 413,
                    "body too large");
    }
};

QTEST_APPLESS_MAIN(TestOpenAiSchemas)
#include "test_openai_schemas.moc"
