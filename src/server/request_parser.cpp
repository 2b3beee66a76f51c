#include "server/request_parser.h"

#include "engine/chat_template.h"
#include "engine/model_config.h"
#include "engine/prompt_builder.h"
#include "engine/tokenizer.h"
#include "server/field_reader.h"
#include "server/structured_output_request.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace brook {

using nlohmann::json;

namespace {

constexpr int kMaxN = 128;
constexpr size_t kMaxChoices = 256;

#define BROOK_TRY(expr)                                                                                                \
    do {                                                                                                               \
        if (auto _err = (expr)) return _err;                                                                           \
    } while (0)

std::string indexed(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::optional<ApiError> readContent(const json& content, const std::string& where, std::string& out)
{
    if (content.is_string()) {
        out = content.get<std::string>();
        return std::nullopt;
    }
    if (content.is_null()) {
        out.clear();
        return std::nullopt;
    }
    if (!content.is_array())
        return ApiError::badRequest("'" + where + "' must be a string or an array of content parts", where);
    out.clear();
    for (size_t j = 0; j < content.size(); ++j) {
        const json& part = content[j];
        const std::string partName = indexed(where, j);
        if (!part.is_object()) return ApiError::badRequest("'" + partName + "' must be an object", partName);
        auto typeField = part.find("type");
        if (typeField != part.end() && !typeField->is_string())
            return ApiError::badRequest("'" + partName + ".type' must be a string, got " +
                                            FieldReader::typeName(*typeField),
                                        partName + ".type");
        const std::string type = typeField == part.end() ? std::string() : typeField->get<std::string>();
        if (type != "text")
            return ApiError::badRequest("'" + partName + ".type' " +
                                            (type.empty() ? "is missing" : "'" + type + "' is not supported") +
                                            ": this model takes text only",
                                        partName + ".type");
        auto text = part.find("text");
        if (text == part.end() || !text->is_string())
            return ApiError::badRequest("'" + partName + ".text' must be a string", partName + ".text");
        out += text->get<std::string>();
    }
    return std::nullopt;
}

}  // namespace

ApiError RequestParser::fromEngineError(const Error& error, const char* promptField)
{
    // The engine names its own fields ("prompt", "top_p"); a chat request's prompt is its messages.
    const std::string field = error.field == "prompt" ? promptField : error.field;
    switch (error.code) {
    case ErrorCode::ShuttingDown: return ApiError::unavailable(error.message);
    case ErrorCode::InvalidArgument:
    case ErrorCode::ContextTooLong: return ApiError::badRequest(error.message, field);
    case ErrorCode::OutOfMemory: return ApiError::unavailable(error.message);
    case ErrorCode::Failed: break;
    }
    return ApiError::badRequest(error.message, field.empty() ? std::string(promptField) : field);
}

std::optional<ApiError> RequestParser::rejectToolCalling(const json& body)
{
    // Brook renders no tool definitions into the prompt and parses no tool calls out of the answer,
    // so a request that lets the model call tools would silently get plain text back. Only
    // tool_choice "none" (tools sent but never to be called) is honoured. An absent, null or empty
    // `tools` is no tools.
    FieldReader f(body);
    const json* tools = f.get("tools");
    const bool hasTools = tools && !(tools->is_array() && tools->empty());
    const json* choice = f.get("tool_choice");
    const bool choiceNone = choice && choice->is_string() && choice->get<std::string>() == "none";
    if (choiceNone || (!hasTools && !choice)) return std::nullopt;
    // Name the field the client would change: its tools, or a tool_choice sent without tools.
    const std::string field = hasTools ? "tools" : "tool_choice";
    return ApiError::badRequest("'" + field +
                                    "' is not supported: this model has no tool-calling template, so Brook cannot "
                                    "offer it tools or parse tool calls; send \"tool_choice\": \"none\" to run "
                                    "without calling tools",
                                field);
}

std::optional<ApiError> RequestParser::rejectUnsupported(ApiKind kind, const json& body) const
{
    FieldReader f(body);
    auto unsupported = [](const std::string& field, const std::string& why) {
        return ApiError::badRequest("'" + field + "' is not supported: " + why, field);
    };
    if (const json* bias = f.get("logit_bias"); bias && !(bias->is_object() && bias->empty()))
        return unsupported("logit_bias", "Brook does not bias logits");
    // response_format, structured_outputs and guided_*: parseStructuredOutput (parseCommon).
    if (auto error = rejectToolCalling(body)) return error;
    if (const json* functions = f.get("functions"); functions && !(functions->is_array() && functions->empty()))
        return unsupported("functions", "this server does not parse function calls");
    for (const char* key : {"prompt_logprobs", "chat_template"})
        if (f.has(key)) return unsupported(key, "not implemented");
    bool flag = false;
    BROOK_TRY(f.readBool("use_beam_search", flag));
    if (flag) return unsupported("use_beam_search", "beam search is not implemented");
    flag = false;
    BROOK_TRY(f.readBool("continue_final_message", flag));
    if (flag) return unsupported("continue_final_message", "not implemented");
    if (kind == ApiKind::Completion) {
        std::string suffix;
        BROOK_TRY(f.readString("suffix", suffix));
        if (!suffix.empty()) return unsupported("suffix", "this model has no fill-in-the-middle mode");
    }
    return std::nullopt;
}

std::optional<ApiError> RequestParser::parseCommon(const json& body, ParsedRequest& out,
                                                   std::optional<int64_t>& maxTokens) const
{
    FieldReader f(body);
    std::string model;
    BROOK_TRY(f.readString("model", model));
    if (f.has("model") && !m_model.answersTo(model)) return ApiError::modelNotFound(model);
    out.model = f.has("model") ? model : m_model.names.front();

    BROOK_TRY(f.readInt("n", out.n));
    if (out.n < 1 || out.n > kMaxN)
        return ApiError::badRequest(
            "'n' must be between 1 and " + std::to_string(kMaxN) + ", got " + std::to_string(out.n), "n");
    int bestOf = out.n;
    BROOK_TRY(f.readInt("best_of", bestOf));
    if (bestOf != out.n) return ApiError::badRequest("'best_of' other than n is not supported", "best_of");

    BROOK_TRY(f.readBool("stream", out.stream));
    if (const json* options = f.get("stream_options")) {
        if (!options->is_object()) return f.wrongType("stream_options", "an object");
        if (!out.stream)
            return ApiError::badRequest("'stream_options' is only allowed when 'stream' is true", "stream_options");
        FieldReader so(*options, "stream_options.");
        BROOK_TRY(so.readBool("include_usage", out.includeUsage));
        BROOK_TRY(so.readBool("continuous_usage_stats", out.continuousUsage));
    }

    SamplingParams& p = out.params;
    p = m_model.defaults;
    BROOK_TRY(f.readFloat("temperature", p.temperature));
    BROOK_TRY(f.readFloat("top_p", p.topP));
    BROOK_TRY(f.readInt("top_k", p.topK));
    BROOK_TRY(f.readFloat("min_p", p.minP));
    BROOK_TRY(f.readFloat("presence_penalty", p.presencePenalty));
    BROOK_TRY(f.readFloat("frequency_penalty", p.frequencyPenalty));
    BROOK_TRY(f.readFloat("repetition_penalty", p.repetitionPenalty));
    BROOK_TRY(f.readInt("min_tokens", p.minTokens));
    BROOK_TRY(f.readBool("ignore_eos", p.ignoreEos));
    BROOK_TRY(f.readBool("include_stop_str_in_output", p.includeStopStrInOutput));
    BROOK_TRY(f.readBool("skip_special_tokens", p.skipSpecialTokens));
    BROOK_TRY(f.readIntList("stop_token_ids", p.stopTokenIds));
    p.stop.clear();
    BROOK_TRY(f.readStringOrList("stop", p.stop));
    if (p.stop.size() > kMaxStopStrings)
        return ApiError::badRequest("'stop' may list at most " + std::to_string(kMaxStopStrings) + " strings, got " +
                                        std::to_string(p.stop.size()),
                                    "stop");
    for (size_t i = 0; i < p.stop.size(); ++i)
        if (p.stop[i].empty()) return ApiError::badRequest("'" + indexed("stop", i) + "' must not be empty", "stop");
    if (f.has("seed")) {
        int64_t seed = 0;
        BROOK_TRY(f.readInt("seed", seed));
        p.seed = uint64_t(seed);
    } else {
        p.seed.reset();
    }
    BROOK_TRY(parseStructuredOutput(body, p.structured));

    const char* maxKey = f.has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    if (f.has(maxKey)) {
        int64_t value = 0;
        BROOK_TRY(f.readInt(maxKey, value));
        if (value < 1)
            return ApiError::badRequest(
                "'" + std::string(maxKey) + "' must be at least 1, got " + std::to_string(value), maxKey);
        maxTokens = value;
    }

    p.logprobs = -1;
    if (out.kind == ApiKind::Chat) {
        bool logprobs = false;
        int top = 0;
        BROOK_TRY(f.readBool("logprobs", logprobs));
        BROOK_TRY(f.readInt("top_logprobs", top));
        if (top < 0 || top > kMaxLogprobs)
            return ApiError::badRequest("'top_logprobs' must be between 0 and " + std::to_string(kMaxLogprobs) +
                                            ", got " + std::to_string(top),
                                        "top_logprobs");
        if (f.has("top_logprobs") && top > 0 && !logprobs)
            return ApiError::badRequest("'top_logprobs' needs 'logprobs' set to true", "top_logprobs");
        if (logprobs) out.logprobs = top;
    } else {
        if (const json* lp = f.get("logprobs"); lp && !lp->is_number_integer())
            return f.wrongType("logprobs", "an integer");
        int top = -1;
        BROOK_TRY(f.readInt("logprobs", top));
        if (f.has("logprobs") && (top < 0 || top > kMaxLogprobs))
            return ApiError::badRequest("'logprobs' must be between 0 and " + std::to_string(kMaxLogprobs) + ", got " +
                                            std::to_string(top),
                                        "logprobs");
        out.logprobs = top;
    }
    p.logprobs = out.logprobs;

    BROOK_TRY(f.readBool("echo", out.echo));
    if (out.kind == ApiKind::Completion && out.echo && out.logprobs >= 0)
        return ApiError::badRequest("'echo' together with 'logprobs' needs prompt logprobs, which are not implemented",
                                    "echo");
    BROOK_TRY(f.readInt("priority", out.priority));
    std::string user;
    BROOK_TRY(f.readString("user", user));  // accepted, as OpenAI's API takes it; not used
    return std::nullopt;
}

std::optional<ApiError> RequestParser::parseMessages(const json& body, ParsedRequest& out,
                                                     bool contentSpecialTokens) const
{
    FieldReader f(body);
    const json* messages = f.get("messages");
    if (!messages) return ApiError::badRequest("'messages' is required", "messages");
    if (!messages->is_array()) return f.wrongType("messages", "an array");
    if (messages->empty()) return ApiError::badRequest("'messages' must contain at least one message", "messages");
    std::vector<ChatMessage> conversation;
    for (size_t i = 0; i < messages->size(); ++i) {
        const json& m = (*messages)[i];
        const std::string where = indexed("messages", i);
        if (!m.is_object()) return ApiError::badRequest("'" + where + "' must be an object", where);
        FieldReader mf(m, where + ".");
        ChatMessage message;
        if (!mf.has("role")) return ApiError::badRequest("'" + where + ".role' is required", where + ".role");
        BROOK_TRY(mf.readString("role", message.role));
        if (message.role == "developer") message.role = "system";
        if (message.role != "system" && message.role != "user" && message.role != "assistant")
            return ApiError::badRequest("'" + where + ".role' '" + message.role +
                                            "' is not supported (use system, user or assistant)",
                                        where + ".role");
        auto content = m.find("content");
        if (content == m.end()) return ApiError::badRequest("'" + where + ".content' is required", where + ".content");
        BROOK_TRY(readContent(*content, where + ".content", message.content));
        conversation.push_back(std::move(message));
    }
    bool addGenerationPrompt = true;
    BROOK_TRY(f.readBool("add_generation_prompt", addGenerationPrompt));

    const Tokenizer& tokenizer = m_model.engine->tokenizer();
    ParsedPrompt prompt;
    const auto tokenizeStart = std::chrono::steady_clock::now();
    if (contentSpecialTokens) {
        // /tokenize on request: the whole rendered text parsed for special tokens, as a raw prompt is.
        prompt.text =
            ChatTemplate(tokenizer.clsToken(), tokenizer.sepToken()).render(conversation, addGenerationPrompt);
        prompt.tokens = tokenizer.encode(prompt.text, true);
    } else {
        // Message contents are text: "<|end_of_sentence|>" typed by a user cannot end a turn.
        prompt.tokens = encodeChat(tokenizer, conversation, addGenerationPrompt, &prompt.text);
    }
    out.tokenizeSeconds += secondsSince(tokenizeStart);
    out.prompts.push_back(std::move(prompt));

    // vLLM's chat echo: repeat the last message when it has the role being generated.
    const std::string role = addGenerationPrompt ? "assistant" : conversation.back().role;
    if (out.echo && conversation.back().role == role) out.chatEcho = conversation.back().content;
    return std::nullopt;
}

std::optional<ApiError> RequestParser::parsePrompts(const json& body, ParsedRequest& out) const
{
    FieldReader f(body);
    const json* prompt = f.get("prompt");
    if (!prompt) return ApiError::badRequest("'prompt' is required", "prompt");
    const Tokenizer& tokenizer = m_model.engine->tokenizer();
    const int vocab = m_model.engine->modelConfig().vocabSize;
    auto fromText = [&](const std::string& text, const std::string& where) -> std::optional<ApiError> {
        if (text.empty()) return ApiError::badRequest("'" + where + "' must not be empty", "prompt");
        const auto tokenizeStart = std::chrono::steady_clock::now();
        out.prompts.push_back({tokenizer.encode(text, true), text, 0});
        out.tokenizeSeconds += secondsSince(tokenizeStart);
        return std::nullopt;
    };
    auto fromIds = [&](const json& ids, const std::string& where) -> std::optional<ApiError> {
        if (ids.empty()) return ApiError::badRequest("'" + where + "' must not be empty", "prompt");
        ParsedPrompt p;
        for (size_t i = 0; i < ids.size(); ++i) {
            const json& id = ids[i];
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab)
                return ApiError::badRequest(
                    "'" + indexed(where, i) + "' must be a token id in [0, " + std::to_string(vocab) + ")", "prompt");
            p.tokens.push_back(id.get<int32_t>());
        }
        p.text = tokenizer.decode(p.tokens, false);
        out.prompts.push_back(std::move(p));
        return std::nullopt;
    };

    if (prompt->is_string()) return fromText(prompt->get<std::string>(), "prompt");
    if (!prompt->is_array())
        return f.wrongType("prompt", "a string, an array of strings, an array of token ids or an array of those");
    if (prompt->empty()) return ApiError::badRequest("'prompt' must not be empty", "prompt");
    const json& first = prompt->front();
    if (first.is_number()) return fromIds(*prompt, "prompt");
    for (size_t i = 0; i < prompt->size(); ++i) {
        const json& item = (*prompt)[i];
        if (item.is_string()) BROOK_TRY(fromText(item.get<std::string>(), indexed("prompt", i)));
        else if (item.is_array()) BROOK_TRY(fromIds(item, indexed("prompt", i)));
        else
            return ApiError::badRequest("'" + indexed("prompt", i) + "' must be a string or an array of token ids",
                                        "prompt");
    }
    return std::nullopt;
}

std::optional<ApiError> RequestParser::renderMessages(const json& body, ParsedPrompt& out) const
{
    FieldReader f(body);
    bool contentSpecialTokens = false;
    BROOK_TRY(f.readBool("special_tokens_in_content", contentSpecialTokens));
    ParsedRequest parsed;
    if (auto error = parseMessages(body, parsed, contentSpecialTokens)) return error;
    out = std::move(parsed.prompts.front());
    return std::nullopt;
}

std::optional<ApiError> RequestParser::parse(ApiKind kind, const json& body, ParsedRequest& out) const
{
    out = ParsedRequest{};
    out.kind = kind;
    if (!body.is_object()) return ApiError::badRequest("the request body must be a JSON object");
    BROOK_TRY(rejectUnsupported(kind, body));
    std::optional<int64_t> maxTokens;
    BROOK_TRY(parseCommon(body, out, maxTokens));
    BROOK_TRY(kind == ApiKind::Chat ? parseMessages(body, out) : parsePrompts(body, out));
    if (out.numChoices() > kMaxChoices)
        return ApiError::badRequest("too many choices: " + std::to_string(out.prompts.size()) + " prompt(s) x n=" +
                                        std::to_string(out.n) + " exceeds " + std::to_string(kMaxChoices),
                                    "n");

    const char* promptField = kind == ApiKind::Chat ? "messages" : "prompt";
    const int vocab = m_model.engine->modelConfig().vocabSize;
    const PromptBuilder prompts(m_model.engine->tokenizer(), vocab,
                                {m_model.maxModelLen, m_model.kvCacheTokens, m_model.defaultMaxTokens});
    for (ParsedPrompt& prompt : out.prompts) {
        const int64_t length = int64_t(prompt.tokens.size());
        if (auto fits = prompts.checkContext(length, maxTokens); !fits)
            return fromEngineError(fits.failure(), promptField);
        // vLLM: without max_tokens, whatever the context leaves (here also what the KV cache can
        // hold), capped by generation_config's max_new_tokens.
        prompt.maxTokens = maxTokens ? int(*maxTokens) : prompts.defaultMaxTokens(length);
        SamplingParams check = out.params;
        check.maxTokens = prompt.maxTokens;
        if (auto valid = validateSamplingParams(check, vocab); !valid)
            return fromEngineError(valid.failure(), promptField);
    }
    return std::nullopt;
}

}  // namespace brook
