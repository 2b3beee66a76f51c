#include "server/response_writer.h"

#include "engine/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace brook {

using json = nlohmann::ordered_json;

namespace {

std::string randomHex(size_t length)
{
    thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char* kHex = "0123456789abcdef";
    std::string out(length, '0');
    for (char& c : out) c = kHex[rng() & 15];
    return out;
}

// JSON has no -inf: vLLM writes masked tokens' logprobs as -9999.0.
double finiteLogprob(float logprob) { return std::isfinite(logprob) ? double(logprob) : -9999.0; }

json bytesOf(const std::string& text)
{
    json bytes = json::array();
    for (unsigned char c : text) bytes.push_back(int(c));
    return bytes;
}

}  // namespace

ResponseWriter::ResponseWriter(const ParsedRequest& request, const Tokenizer& tokenizer)
    : m_request(request), m_tokenizer(tokenizer),
      m_id((request.kind == ApiKind::Chat ? "chatcmpl-" : "cmpl-") + randomHex(32)),
      m_created(
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count())
{
    for (const ParsedPrompt& p : request.prompts) m_promptTokens += int(p.tokens.size());
    // Every chunk's leading fields in OpenAI's order, serialized as sseEvent() would.
    const json head = {{"id", m_id},
                       {"object", request.kind == ApiKind::Chat ? "chat.completion.chunk" : "text_completion"},
                       {"created", m_created},
                       {"model", request.model},
                       {"choices", json::array()}};
    m_chunkHead = "data: " + head.dump(-1, ' ', false, json::error_handler_t::replace);
    m_chunkHead.resize(m_chunkHead.size() - 2);  // the empty array's "]" and the object's "}"
}

void ResponseWriter::accumulate(ChoiceState& state, const RequestOutput& output)
{
    state.text += output.textDelta;
    state.tokens.insert(state.tokens.end(), output.newTokenIds.begin(), output.newTokenIds.end());
    state.logprobs.insert(state.logprobs.end(), output.logprobs.begin(), output.logprobs.end());
    state.outputTokens = output.numOutputTokens;
    state.cachedTokens = output.numCachedTokens;
    if (output.finishReason) {
        state.finish = output.finishReason;
        state.stopReason = output.stopReason;
    }
}

std::string ResponseWriter::tokenText(int32_t token) const
{
    const int32_t ids[] = {token};
    return m_tokenizer.decode(ids, false);
}

json ResponseWriter::finishJson(const std::optional<FinishReason>& finish)
{
    return finish ? json(finishReasonName(*finish)) : json(nullptr);
}

json ResponseWriter::stopReasonJson(const std::string& stopReason) const
{
    if (stopReason.empty()) return nullptr;
    // A stop token id comes back as a number, a stop string as a string (vLLM).
    const auto& stops = m_request.params.stop;
    const bool digits = std::all_of(stopReason.begin(), stopReason.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && std::find(stops.begin(), stops.end(), stopReason) == stops.end() && stopReason.size() < 10)
        return std::stoi(stopReason);
    return stopReason;
}

json ResponseWriter::logprobsJson(const std::vector<TokenLogprobs>& logprobs, size_t textOffset) const
{
    if (m_request.kind == ApiKind::Chat) {
        json content = json::array();
        for (const TokenLogprobs& lp : logprobs) {
            const std::string text = tokenText(lp.token);
            json top = json::array();
            for (size_t i = 0; i < lp.top.size() && int(i) < m_request.logprobs; ++i) {
                const std::string alt = tokenText(lp.top[i].token);
                top.push_back({{"token", alt}, {"logprob", finiteLogprob(lp.top[i].logprob)}, {"bytes", bytesOf(alt)}});
            }
            content.push_back({{"token", text},
                               {"logprob", finiteLogprob(lp.logprob)},
                               {"bytes", bytesOf(text)},
                               {"top_logprobs", top}});
        }
        // OpenAI's chat logprobs object always carries both lists; a refusal never has tokens here.
        return {{"content", content}, {"refusal", nullptr}};
    }
    json tokens = json::array(), tokenLogprobs = json::array(), tops = json::array(), offsets = json::array();
    for (const TokenLogprobs& lp : logprobs) {
        const std::string text = tokenText(lp.token);
        tokens.push_back(text);
        tokenLogprobs.push_back(finiteLogprob(lp.logprob));
        json top = json::object();
        for (size_t i = 0; i < lp.top.size() && int(i) < m_request.logprobs; ++i)
            top[tokenText(lp.top[i].token)] = finiteLogprob(lp.top[i].logprob);
        top[text] = finiteLogprob(lp.logprob);  // vLLM lists the sampled token too
        tops.push_back(top);
        offsets.push_back(textOffset);
        textOffset += text.size();
    }
    return {{"tokens", tokens}, {"token_logprobs", tokenLogprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json ResponseWriter::usage(const std::vector<ChoiceState>& states) const
{
    int completion = 0;
    for (const ChoiceState& s : states) completion += s.outputTokens;
    // Like the prompt, the cached part is counted once per prompt: its first choice's lookup.
    int cached = 0;
    for (size_t i = 0; i < states.size(); i += size_t(m_request.n)) cached += states[i].cachedTokens;
    return {{"prompt_tokens", m_promptTokens},
            {"completion_tokens", completion},
            {"total_tokens", m_promptTokens + completion},
            {"prompt_tokens_details", {{"cached_tokens", cached}}}};
}

std::string ResponseWriter::echoText(size_t choice) const
{
    if (!m_request.echo) return {};
    if (m_request.kind == ApiKind::Chat) return m_request.chatEcho;
    return m_request.prompts[choice / size_t(m_request.n)].text;
}

json ResponseWriter::response(const std::vector<ChoiceState>& choices) const
{
    json out = {{"id", m_id},
                {"object", m_request.kind == ApiKind::Chat ? "chat.completion" : "text_completion"},
                {"created", m_created},
                {"model", m_request.model}};
    json list = json::array();
    for (size_t i = 0; i < choices.size(); ++i) {
        const ChoiceState& s = choices[i];
        json choice = {{"index", i}};
        const std::string echo = echoText(i);
        if (m_request.kind == ApiKind::Chat) {
            // OpenAI's message always carries `refusal` (null: Brook never refuses by itself).
            choice["message"] = {
                {"role", "assistant"}, {"content", echo + s.text}, {"refusal", nullptr}, {"tool_calls", json::array()}};
        } else {
            choice["text"] = echo + s.text;
        }
        choice["logprobs"] = m_request.logprobs >= 0 ? logprobsJson(s.logprobs, echo.size()) : json(nullptr);
        choice["finish_reason"] = finishJson(s.finish);
        choice["stop_reason"] = stopReasonJson(s.stopReason);
        list.push_back(std::move(choice));
    }
    out["choices"] = std::move(list);
    out["usage"] = usage(choices);
    // No `system_fingerprint`: OpenAI's schema allows a string or nothing, never null, and Brook
    // has no backend fingerprint that would tell clients anything.
    return out;
}

std::string ResponseWriter::sseEvent(const json& data)
{
    return "data: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

void ResponseWriter::appendChunkEvent(std::string& out, const json& choice, const json* usage) const
{
    out += m_chunkHead;
    out += choice.dump(-1, ' ', false, json::error_handler_t::replace);
    out += ']';
    if (usage) {
        out += ",\"usage\":";
        out += usage->dump(-1, ' ', false, json::error_handler_t::replace);
    } else if (m_request.includeUsage) {
        out += ",\"usage\":null";
    }
    out += "}\n\n";
}

void ResponseWriter::appendStreamEvents(std::string& events, size_t choice, const RequestOutput& output,
                                        std::vector<ChoiceState>& states) const
{
    ChoiceState& state = states[choice];
    const size_t offsetBefore = state.textOffset;
    accumulate(state, output);
    const bool chat = m_request.kind == ApiKind::Chat;
    std::string prefix;  // completions: the echo rides on the first text chunk
    if (!state.started) {
        state.started = true;
        const std::string echo = echoText(choice);
        state.textOffset += echo.size();
        if (chat) {
            // OpenAI opens every chat choice with the role (and vLLM's echo) before any content.
            json delta = {{"role", "assistant"}, {"content", echo}};
            appendChunkEvent(events,
                             {{"index", choice}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", nullptr}},
                             nullptr);
        } else {
            prefix = echo;
        }
    }
    // An aborted choice (the server shutting down) gets no chunk of its own: OpenAI has no "abort"
    // finish_reason, so streamEnd() ends the stream with an error event instead, as a whole
    // response gets a 503.
    if (output.finishReason == FinishReason::Abort) return;
    const bool hasLogprobs = m_request.logprobs >= 0 && !output.logprobs.empty();
    // One chunk per token, even when its text is held back (half a character, a possible stop
    // string) or skipped (a special token), as vLLM does: clients time and count tokens by chunk.
    if (output.newTokenIds.empty() && prefix.empty() && !output.finished()) return;

    const json logprobs = hasLogprobs ? logprobsJson(output.logprobs, state.textOffset) : json(nullptr);
    for (const TokenLogprobs& lp : output.logprobs) state.textOffset += tokenText(lp.token).size();
    if (!hasLogprobs) state.textOffset = offsetBefore + prefix.size() + output.textDelta.size();
    json c = {{"index", choice}};
    if (chat) {
        c["delta"] =
            output.textDelta.empty() && output.finished() ? json::object() : json{{"content", output.textDelta}};
    } else {
        c["text"] = prefix + output.textDelta;
    }
    c["logprobs"] = logprobs;
    c["finish_reason"] = finishJson(output.finishReason);
    if (output.finished()) c["stop_reason"] = stopReasonJson(output.stopReason);
    if (m_request.continuousUsage) {
        const int completion = state.outputTokens;
        const int prompt = int(m_request.prompts[choice / size_t(m_request.n)].tokens.size());
        const json usage = {{"prompt_tokens", prompt},
                            {"completion_tokens", completion},
                            {"total_tokens", prompt + completion},
                            {"prompt_tokens_details", {{"cached_tokens", state.cachedTokens}}}};
        appendChunkEvent(events, c, &usage);
        return;
    }
    appendChunkEvent(events, c, nullptr);
}

ApiError ResponseWriter::abortedError()
{
    return ApiError::unavailable("the request was aborted: the server is shutting down");
}

std::string ResponseWriter::streamEnd(const std::vector<ChoiceState>& states) const
{
    for (const ChoiceState& s : states)
        if (s.finish == FinishReason::Abort) return streamError(abortedError());
    std::string events;
    if (m_request.includeUsage) {
        json last = {{"id", m_id},
                     {"object", m_request.kind == ApiKind::Chat ? "chat.completion.chunk" : "text_completion"},
                     {"created", m_created},
                     {"model", m_request.model},
                     {"choices", json::array()},
                     {"usage", usage(states)}};
        events += sseEvent(last);
    }
    return events + "data: [DONE]\n\n";
}

std::string ResponseWriter::streamError(const ApiError& error)
{
    return "data: " + error.body() + "\n\ndata: [DONE]\n\n";
}

}  // namespace brook
