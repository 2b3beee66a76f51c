// Fuzz target: what a client sends brook-serve. The bytes are read three ways: as a request head
// (parseRequestHead, the guarded server's first look at a connection), and as a JSON body for
// /v1/chat/completions, /v1/completions and /tokenize's message rendering (RequestParser, on a
// tiny random-weight model made once). Every path answers with an error or a request; none may
// throw, crash or hang. An accepted request's prompts are checked against the vocabulary.
#include "launch/engine_launcher.h"
#include "server/request_parser.h"
#include "server/request_reader.h"
#include "server/server_context.h"
#include "testing/test_model_writer.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace {

struct TinyModel {
    std::unique_ptr<brook::Engine> engine;
    brook::ServedModel served;
};

TinyModel& tinyModel()
{
    static TinyModel model = [] {
        spdlog::set_level(spdlog::level::off);
        const auto dir = std::filesystem::temp_directory_path() / ("brook-fuzz-openai-" + std::to_string(::getpid()));
        brook::testing::TestModelOptions options;
        options.shape = brook::testing::TestModelShape::tiny();
        if (auto written = brook::testing::writeTestModel(dir, options); !written) std::abort();
        brook::LaunchOptions launch;
        launch.modelDir = dir;
        launch.device = "cpu";
        launch.maxModelLen = 512;
        launch.cpuKvCacheBytes = 4 << 20;
        auto launched = brook::launchEngine(launch);
        if (!launched) std::abort();
        TinyModel m;
        m.engine = std::move(launched->engine);
        m.served.engine = m.engine.get();
        m.served.names = {"tiny"};
        m.served.root = dir.string();
        m.served.maxModelLen = 512;
        m.served.kvCacheTokens = 4096;
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);  // loaded: the folder is no longer needed
        return m;
    }();
    return model;
}

}  // namespace

int brookFuzzOpenAIRequest(const uint8_t* data, size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    [[maybe_unused]] static volatile size_t sink;

    const auto head = brook::parseRequestHead(text, brook::HttpLimits{});
    if (const auto* parsed = std::get_if<brook::RequestHead>(&head)) sink = parsed->headers.size();

    const nlohmann::json body = nlohmann::json::parse(text, nullptr, false);
    if (body.is_discarded()) return 0;
    TinyModel& model = tinyModel();
    const brook::RequestParser parser(model.served);
    const int vocab = model.engine->modelConfig().vocabSize;
    for (const brook::ApiKind kind : {brook::ApiKind::Chat, brook::ApiKind::Completion}) {
        brook::ParsedRequest request;
        if (parser.parse(kind, body, request)) continue;  // an error: fine
        for (const brook::ParsedPrompt& prompt : request.prompts)
            for (const int32_t id : prompt.tokens)
                if (id < 0 || id >= vocab) std::abort();  // an accepted prompt must be runnable
        sink = request.numChoices();
    }
    brook::ParsedPrompt rendered;
    if (!parser.renderMessages(body, rendered)) sink = rendered.tokens.size();
    return 0;
}
