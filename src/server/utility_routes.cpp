#include "server/utility_routes.h"

#include "engine/engine_metrics.h"
#include "engine/tokenizer.h"
#include "server/field_reader.h"
#include "server/http_reply.h"
#include "server/request_parser.h"

namespace brook {

using nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

namespace {

OrderedJson modelCard(const ServedModel& model, const std::string& name)
{
    OrderedJson permission = {{"id", "modelperm-brook"},
                              {"object", "model_permission"},
                              {"created", model.created},
                              {"allow_create_engine", false},
                              {"allow_sampling", true},
                              {"allow_logprobs", true},
                              {"allow_search_indices", false},
                              {"allow_view", true},
                              {"allow_fine_tuning", false},
                              {"organization", "*"},
                              {"group", nullptr},
                              {"is_blocking", false}};
    return {{"id", name},
            {"object", "model"},
            {"created", model.created},
            {"owned_by", "brook"},
            {"root", model.root},
            {"parent", nullptr},
            {"max_model_len", model.maxModelLen},
            {"permission", json::array({permission})}};
}

std::optional<json> parseBody(const httplib::Request& req, httplib::Response& res)
{
    try {
        json body = json::parse(req.body);
        if (!body.is_object()) {
            HttpReply::error(res, ApiError::badRequest("the request body must be a JSON object"));
            return std::nullopt;
        }
        return body;
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
        HttpReply::error(res, ApiError::badRequest(std::string("the request body is not valid JSON: ") + e.what()));
        return std::nullopt;
    }
}

}  // namespace

const ServedModel* UtilityRoutes::readyModel(httplib::Response& res) const
{
    const ServedModel* model = m_context.model();
    if (!model) HttpReply::error(res, ApiError::unavailable("the model is still loading"));
    return model;
}

void UtilityRoutes::models(const httplib::Request&, httplib::Response& res) const
{
    const ServedModel* model = readyModel(res);
    if (!model) return;
    OrderedJson data = OrderedJson::array();
    for (const std::string& name : model->names) data.push_back(modelCard(*model, name));
    HttpReply::json(res, 200, OrderedJson{{"object", "list"}, {"data", data}});
}

void UtilityRoutes::model(const httplib::Request& req, httplib::Response& res) const
{
    const ServedModel* model = readyModel(res);
    if (!model) return;
    const std::string name = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
    if (!model->answersTo(name)) {
        HttpReply::error(res, ApiError::modelNotFound(name));
        return;
    }
    HttpReply::json(res, 200, modelCard(*model, name));
}

void UtilityRoutes::health(const httplib::Request&, httplib::Response& res) const
{
    if (m_context.draining()) {
        HttpReply::error(res, ApiError::unavailable("the server is shutting down"));
    } else if (m_context.model()) {
        res.status = 200;  // vLLM answers an empty 200
    } else if (std::string error = m_context.loadError(); !error.empty()) {
        HttpReply::error(res, ApiError::unavailable("the model failed to load: " + error));
    } else {
        HttpReply::error(res, ApiError::unavailable("the model is still loading"));
    }
}

void UtilityRoutes::metrics(const httplib::Request&, httplib::Response& res) const
{
    const ServedModel* model = readyModel(res);
    if (!model) return;
    Engine& engine = *model->engine;
    // Memory as the engine sees it, for dashboards and brook-bench baseline (not vLLM names).
    const EngineStats stats = engine.stats();
    const Labels labels = {{"model_name", engine.config().modelName}, {"engine", "0"}};
    MetricsRegistry& registry = engine.metrics().registry();
    registry.gauge("brook:weights_bytes", "Bytes of model weights.", labels).set(double(stats.memory.weightsBytes));
    registry.gauge("brook:kv_cache_bytes", "Bytes of KV cache.", labels).set(double(stats.memory.kvCacheBytes));
    const double used =
        stats.memory.deviceTotalBytes > 0
            ? double(stats.memory.deviceTotalBytes - stats.memory.deviceFreeBytes)
            : double(stats.memory.weightsBytes + stats.memory.kvCacheBytes + stats.memory.activationsBytes);
    registry
        .gauge("brook:device_memory_used_bytes", "Bytes of device memory in use (host memory for the CPU backend).",
               labels)
        .set(used);
    registry.gauge("brook:http_requests_in_flight", "Generation calls being served.", labels)
        .set(double(m_context.activeRequests().load()));
    res.status = 200;
    res.set_content(engine.metrics().renderPrometheus(), "text/plain; version=0.0.4; charset=utf-8");
}

void UtilityRoutes::version(const httplib::Request&, httplib::Response& res) const
{
    HttpReply::json(res, 200, json{{"version", BROOK_VERSION}});
}

void UtilityRoutes::load(const httplib::Request&, httplib::Response& res) const
{
    HttpReply::json(res, 200, json{{"server_load", m_context.activeSequences()->load()}});
}

void UtilityRoutes::tokenize(const httplib::Request& req, httplib::Response& res) const
{
    const ServedModel* model = readyModel(res);
    if (!model) return;
    auto body = parseBody(req, res);
    if (!body) return;
    FieldReader f(*body);
    std::string name;
    if (auto e = f.readString("model", name)) return HttpReply::error(res, *e);
    if (f.has("model") && !model->answersTo(name)) return HttpReply::error(res, ApiError::modelNotFound(name));
    bool tokenStrs = false;
    if (auto e = f.readBool("return_token_strs", tokenStrs)) return HttpReply::error(res, *e);
    const Tokenizer& tokenizer = model->engine->tokenizer();
    ParsedPrompt prompt;
    if (f.has("messages")) {
        if (auto e = RequestParser(*model).renderMessages(*body, prompt)) return HttpReply::error(res, *e);
    } else {
        std::string text;
        if (!f.has("prompt"))
            return HttpReply::error(res, ApiError::badRequest("give 'prompt' or 'messages'", "prompt"));
        if (auto e = f.readString("prompt", text)) return HttpReply::error(res, *e);
        prompt.tokens = tokenizer.encode(text, true);
    }
    OrderedJson strs = nullptr;
    if (tokenStrs) {
        strs = OrderedJson::array();
        for (int32_t id : prompt.tokens) strs.push_back(tokenizer.idToPiece(id));
    }
    HttpReply::json(res, 200,
                    OrderedJson{{"count", prompt.tokens.size()},
                                {"max_model_len", model->maxModelLen},
                                {"tokens", prompt.tokens},
                                {"token_strs", strs}});
}

void UtilityRoutes::detokenize(const httplib::Request& req, httplib::Response& res) const
{
    const ServedModel* model = readyModel(res);
    if (!model) return;
    auto body = parseBody(req, res);
    if (!body) return;
    FieldReader f(*body);
    std::vector<int32_t> tokens;
    if (!f.has("tokens")) return HttpReply::error(res, ApiError::badRequest("'tokens' is required", "tokens"));
    if (auto e = f.readIntList("tokens", tokens)) return HttpReply::error(res, *e);
    const int vocab = model->engine->tokenizer().vocabSize();
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] < 0 || tokens[i] >= vocab)
            return HttpReply::error(res, ApiError::badRequest("'tokens[" + std::to_string(i) +
                                                                  "]' must be a token id in [0, " +
                                                                  std::to_string(vocab) + ")",
                                                              "tokens"));
    HttpReply::json(res, 200, json{{"prompt", model->engine->tokenizer().decode(tokens, false)}});
}

}  // namespace brook
