// brook-run: offline inference from the command line. Streams the answer to stdout, or with
// --json prints one JSON object (token_ids, text, finish_reason, logprobs).
#include "platform/console_utf8.h"
#include "platform/executable_path.h"
#include "app/cli_logging.h"
#include "app/launch_flags.h"
#include "launch/engine_launcher.h"
#include "engine/model_config.h"
#include "engine/prompt_builder.h"
#include "engine/request_stream.h"
#include "engine/structured_output.h"
#include "engine/utf8_path.h"
#include "hub/model_resolver.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

using namespace brook;

namespace {

Result<std::vector<int32_t>> parseTokenIds(const std::string& text)
{
    std::vector<int32_t> ids;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        try {
            size_t used = 0;
            ids.push_back(int32_t(std::stoll(item, &used)));
            if (used != item.size() && item.find_first_not_of(" \t", used) != std::string::npos)
                throw std::invalid_argument(item);
        } catch (const std::exception&) {
            return makeError("--prompt-token-ids: '" + item + "' is not an integer");
        }
    }
    return ids;
}

}  // namespace

int main(int argc, char** argv)
{
    brook::rememberArgv0(argc > 0 ? argv[0] : nullptr);
    brook::useUtf8Console();
    CLI::App app{"brook-run: generate text with a local ERNIE-4.5 model"};
    LaunchOptions launch;
    std::string prompt, chat, tokenIds, system, logLevel = "warn";
    bool json = false;
    std::optional<int> maxTokens, topK, logprobs, minTokens;
    std::optional<float> temperature, topP, minP, repetitionPenalty, presencePenalty, frequencyPenalty;
    std::optional<uint64_t> seed;
    std::vector<std::string> stop;
    bool ignoreEos = false;
    std::string jsonSchemaFile, regex, grammarFile;
    std::vector<std::string> choices;

    std::string model;
    app.add_option("--model,-m", model,
                   "model folder (config.json, model.safetensors, tokenizer.model) or a Hugging Face id "
                   "(baidu/ERNIE-4.5-0.3B-PT), downloaded into the Hugging Face cache once")
        ->required();
    auto* promptOpt = app.add_option("--prompt,-p", prompt, "raw prompt text (no chat template)");
    auto* chatOpt = app.add_option("--chat,-c", chat, "a user message, sent through the chat template");
    auto* idsOpt = app.add_option("--prompt-token-ids", tokenIds, "comma-separated prompt token ids");
    promptOpt->excludes(chatOpt)->excludes(idsOpt);
    chatOpt->excludes(idsOpt);
    app.add_option("--system", system, "system message for --chat");
    app.add_option("--max-tokens,-n", maxTokens, "tokens to generate at most (default 256)");
    app.add_option("--min-tokens", minTokens, "tokens to generate before stop tokens count");
    app.add_option("--temperature,-t", temperature, "0 = greedy (default: the model's generation_config)");
    app.add_option("--top-p", topP);
    app.add_option("--top-k", topK);
    app.add_option("--min-p", minP);
    app.add_option("--repetition-penalty", repetitionPenalty);
    app.add_option("--presence-penalty", presencePenalty);
    app.add_option("--frequency-penalty", frequencyPenalty);
    app.add_option("--seed", seed);
    app.add_option("--stop", stop, "stop string (repeatable)");
    app.add_option("--logprobs", logprobs, "return the top-N logprobs of each generated token (with --json)");
    app.add_flag("--ignore-eos", ignoreEos, "keep generating past end-of-sequence tokens");
    app.add_flag("--json", json, "print one JSON object instead of streaming text");
    auto* schemaOpt =
        app.add_option("--json-schema", jsonSchemaFile, "constrain the answer to JSON valid against this schema file");
    auto* regexOpt = app.add_option("--regex", regex, "constrain the answer to a full match of this regex");
    auto* choiceOpt = app.add_option("--choice", choices, "constrain the answer to one of these strings (repeatable)");
    auto* grammarOpt =
        app.add_option("--grammar", grammarFile, "constrain the answer to this EBNF grammar file (root ::= ...)");
    schemaOpt->excludes(regexOpt)->excludes(choiceOpt)->excludes(grammarOpt);
    regexOpt->excludes(choiceOpt)->excludes(grammarOpt);
    choiceOpt->excludes(grammarOpt);
    app.add_option("--log-level", logLevel, "trace, debug, info, warn, error")->capture_default_str();
    addLaunchFlags(app, launch);
    CLI11_PARSE(app, argc, argv);
    setUpCliLogging(logLevel);

    if (prompt.empty() && chat.empty() && tokenIds.empty()) {
        std::cerr << "brook-run: give one of --prompt, --chat or --prompt-token-ids\n";
        return 2;
    }
    // Checked before the model loads, so a schema the engine cannot honour fails at once.
    StructuredOutput structured;
    if (!jsonSchemaFile.empty() || !grammarFile.empty()) {
        const bool isSchema = !jsonSchemaFile.empty();
        const std::string& file = isSchema ? jsonSchemaFile : grammarFile;
        std::ifstream in(brook::pathFromUtf8(file), std::ios::binary);
        if (!in) {
            std::cerr << "brook-run: cannot read " << file << "\n";
            return 2;
        }
        structured.text.assign(std::istreambuf_iterator<char>(in), {});
        structured.kind = isSchema ? StructuredOutput::Kind::JsonSchema : StructuredOutput::Kind::Grammar;
        structured.field = isSchema ? "--json-schema" : "--grammar";
    } else if (!regex.empty()) {
        structured = {StructuredOutput::Kind::Regex, regex, {}, "--regex"};
    } else if (!choices.empty()) {
        structured = {StructuredOutput::Kind::Choice, {}, choices, "--choice"};
    }
    if (auto valid = checkStructuredOutput(structured); !valid) {
        std::cerr << "brook-run: " << valid.error() << "\n";
        return 2;
    }
    auto folder = ModelResolver().resolve(model, ModelResolver::loggingProgress());
    if (!folder) {
        std::cerr << "brook-run: " << folder.error() << "\n";
        return 1;
    }
    launch.modelDir = *folder;
    if (launch.maxModelLen == 0) launch.maxModelLen = 4096;  // a CLI run needs no 128K context
    launch.maxNumSeqs = 1;

    auto launched = launchEngine(launch);
    if (!launched) {
        std::cerr << "brook-run: " << launchErrorForCli(launched.failure()) << "\n";
        return 1;
    }

    GenerationRequest request;
    request.source = "cli";
    if (!chat.empty()) {
        std::vector<ChatMessage> messages;
        if (!system.empty()) messages.push_back({"system", system});
        messages.push_back({"user", chat});
        request.prompt = messages;
    } else if (!tokenIds.empty()) {
        auto ids = parseTokenIds(tokenIds);
        if (!ids) {
            std::cerr << "brook-run: " << ids.error() << "\n";
            return 2;
        }
        request.prompt = *ids;
    } else {
        request.prompt = prompt;
    }
    SamplingParams& p = request.params;
    p = samplingDefaults(launched->generationDefaults);
    // Without --max-tokens: 256, or less where the context leaves less (prompt_builder.h's rule).
    const Engine& engine = *launched->engine;
    const PromptBuilder prompts(engine.tokenizer(), engine.modelConfig().vocabSize,
                                {engine.config().maxModelLen, 0, 256});
    auto promptTokens = prompts.tokens(request.prompt);
    if (!promptTokens) {
        std::cerr << "brook-run: " << promptTokens.error() << "\n";
        return 2;
    }
    p.maxTokens = maxTokens.value_or(prompts.defaultMaxTokens(int64_t(promptTokens->size())));
    request.prompt = std::move(promptTokens).value();  // built once
    if (minTokens) p.minTokens = *minTokens;
    if (temperature) p.temperature = *temperature;
    if (topP) p.topP = *topP;
    if (topK) p.topK = *topK;
    if (minP) p.minP = *minP;
    if (repetitionPenalty) p.repetitionPenalty = *repetitionPenalty;
    if (presencePenalty) p.presencePenalty = *presencePenalty;
    if (frequencyPenalty) p.frequencyPenalty = *frequencyPenalty;
    if (seed) p.seed = *seed;
    if (logprobs) p.logprobs = *logprobs;
    p.stop = stop;
    p.ignoreEos = ignoreEos;
    p.structured = structured;

    auto stream = RequestStream::submit(*launched->engine, request);
    if (!stream) {
        std::cerr << "brook-run: " << stream.error() << "\n";
        return 1;
    }
    std::vector<int32_t> generated;
    std::string text;
    nlohmann::json logprobsJson = nlohmann::json::array();
    std::optional<FinishReason> finish;
    while (auto out = (*stream)->next()) {
        generated.insert(generated.end(), out->newTokenIds.begin(), out->newTokenIds.end());
        text += out->textDelta;
        for (const TokenLogprobs& lp : out->logprobs) {
            nlohmann::json top = nlohmann::json::array();
            for (const TokenLogprob& t : lp.top) top.push_back({{"id", t.token}, {"logprob", t.logprob}});
            logprobsJson.push_back({{"id", lp.token}, {"logprob", lp.logprob}, {"top_logprobs", top}});
        }
        if (!json) std::cout << out->textDelta << std::flush;
        if (out->finishReason) finish = out->finishReason;
    }
    if (json) {
        nlohmann::json result = {
            {"token_ids", generated}, {"text", text}, {"finish_reason", finish ? finishReasonName(*finish) : "abort"}};
        if (logprobs) result["logprobs"] = logprobsJson;
        std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::cout << "\n";
    }
    return 0;
}
