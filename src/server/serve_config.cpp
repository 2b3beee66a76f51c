#include "server/serve_config.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace brook {

namespace {

template <typename T>
std::string str(const T& value)
{
    std::ostringstream s;
    s << value;
    return s.str();
}

bool oneOf(const std::string& value, std::initializer_list<const char*> allowed)
{
    return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return value == a; });
}

std::string trimmed(std::string s, const char* chars)
{
    const size_t first = s.find_first_not_of(chars);
    if (first == std::string::npos) return {};
    return s.substr(first, s.find_last_not_of(chars) - first + 1);
}

// vLLM takes --allowed-origins as a JSON list ('["http://a", "http://b"]'); a comma list works
// too. CLI11 reads a value in brackets as a list of its own and hands the pieces over with their
// brackets gone and their JSON quotes kept ('"http://a"'), so the pieces are joined again and
// read as one text.
std::vector<std::string> expandOrigins(const std::vector<std::string>& given)
{
    std::string text;
    for (const std::string& item : given) text += (text.empty() ? "" : ",") + item;
    text = trimmed(text, " \t");
    std::vector<std::string> out;
    if (!text.empty() && text.front() == '[') {
        auto list = nlohmann::json::parse(text, nullptr, false);
        if (list.is_array()) {
            for (const auto& v : list)
                if (v.is_string() && !v.get<std::string>().empty()) out.push_back(v.get<std::string>());
            return out;
        }
    }
    std::stringstream parts(text);
    std::string part;
    while (std::getline(parts, part, ',')) {
        part = trimmed(trimmed(part, " \t[]"), "\"' \t");
        if (!part.empty()) out.push_back(part);
    }
    return out;
}

}  // namespace

std::string ServeConfig::primaryModelName() const
{
    return servedModelNames.empty() ? model : servedModelNames.front();
}

void addServeFlags(CLI::App& app, ServeConfig& c)
{
    app.add_option("model", c.model, "model folder or Hugging Face id")->capture_default_str();
    app.add_option("--model", c.model, "the same as the positional MODEL");
    app.add_option("--config", "YAML file with the same keys as the flags (flags win)");
    app.add_option("--host", c.host, "address to listen on")->capture_default_str();
    app.add_option("--port", c.port, "port to listen on (0: any free port)")->capture_default_str();
    app.add_option("--served-model-name", c.servedModelNames, "name(s) the API answers to (default: MODEL)");
    app.add_option("--api-key", c.apiKey, "require 'Authorization: Bearer KEY' (default: $BROOK_API_KEY)");
    app.add_option("--request-timeout", c.requestTimeoutSeconds, "seconds a request may take (0: no limit)");
    app.add_option("--max-queue-len", c.maxQueueLen, "requests that may wait beyond max-num-seqs (0: no limit)");
    app.add_option("--allowed-origins", c.allowedOrigins,
                   "web origins browsers may call from (CORS): a JSON list or comma list, * for any (default: none)");
    app.add_option("--generation-config", c.generationConfig,
                   "auto (the model's generation_config.json), vllm/none (no defaults) or a folder")
        ->capture_default_str();
    app.add_option("--scheduling-policy", c.launch.schedulingPolicy, "fcfs or priority")->capture_default_str();
    app.add_option("--shutdown-timeout", c.shutdownTimeoutSeconds,
                   "seconds in-flight requests may finish after SIGINT/SIGTERM")
        ->capture_default_str();
    app.add_option("--max-request-body-bytes", c.maxRequestBodyBytes, "larger request bodies get 413")
        ->capture_default_str();
    app.add_option("--http-threads", c.httpThreads, "HTTP worker threads (0: from max-num-seqs)");
    app.add_option("--http-read-timeout", c.httpReadTimeoutSeconds,
                   "seconds a client has to send a request's headers and body (else 408)")
        ->capture_default_str();
    app.add_option(
        "--max-connections-per-client", c.maxConnectionsPerClient,
        "slow connections (request not in after a grace time) one client address may hold (0: half the HTTP threads)");
    app.add_option("--cpu-kv-cache-space", c.cpuKvCacheSpaceGiB,
                   "CPU backend: GiB of KV cache (vLLM's VLLM_CPU_KVCACHE_SPACE)");
    app.add_option("--log-level", c.logLevel, "trace, debug, info, warn, error")->capture_default_str();
    app.add_flag("--disable-log-stats", c.disableLogStats, "no throughput line every 5 s");
}

std::string findConfigArgument(int argc, const char* const* argv)
{
    std::string file;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) file = argv[++i];
        else if (std::strncmp(argv[i], "--config=", 9) == 0) file = argv[i] + 9;
    }
    return file;
}

bool isLoopbackHost(const std::string& host)
{
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Result<void> validateServeConfig(const ServeConfig& c)
{
    const LaunchOptions& l = c.launch;
    if (c.model.empty()) return makeError("MODEL: give a model folder or a Hugging Face id");
    if (c.host.empty()) return makeError("--host must not be empty");
    if (c.port < 0 || c.port > 65535) return makeError("--port must be in 0..65535, got " + str(c.port));
    for (const auto& name : c.servedModelNames)
        if (name.empty()) return makeError("--served-model-name must not be empty");
    if (!parseDeviceChoice(l.device)) return makeError("--device must be auto, cpu or cuda, got '" + l.device + "'");
    if (!parseDTypeChoice(l.dtype))
        return makeError("--dtype must be auto, bfloat16, float16 or float32, got '" + l.dtype + "'");
    if (!oneOf(l.quantization, {"", "int8", "int4", "awq"}))
        return makeError("--quantization must be int8, int4 or awq, got '" + l.quantization + "'");
    if (l.maxModelLen < 0) return makeError("--max-model-len must be positive, got " + str(l.maxModelLen));
    if (l.maxNumSeqs < 1) return makeError("--max-num-seqs must be at least 1, got " + str(l.maxNumSeqs));
    if (l.maxNumBatchedTokens < 1)
        return makeError("--max-num-batched-tokens must be at least 1, got " + str(l.maxNumBatchedTokens));
    if (!(l.gpuMemoryUtilization > 0.0 && l.gpuMemoryUtilization <= 1.0))
        return makeError("--gpu-memory-utilization must be in (0, 1], got " + str(l.gpuMemoryUtilization));
    if (l.blockSize != 8 && l.blockSize != 16 && l.blockSize != 32)
        return makeError("--block-size must be 8, 16 or 32, got " + str(l.blockSize));
    if (l.numKvBlocks < 0) return makeError("--num-kv-blocks must not be negative, got " + str(l.numKvBlocks));
    if (!parseSchedulingPolicy(l.schedulingPolicy))
        return makeError("--scheduling-policy must be fcfs or priority, got '" + l.schedulingPolicy + "'");
    if (!(c.requestTimeoutSeconds >= 0)) return makeError("--request-timeout must not be negative");
    if (c.maxQueueLen < 0) return makeError("--max-queue-len must not be negative, got " + str(c.maxQueueLen));
    for (const auto& origin : c.allowedOrigins)
        if (origin != "*" && origin.find("://") == std::string::npos)
            return makeError("--allowed-origins: '" + origin + "' is not an origin (scheme://host[:port]) or *");
    if (!oneOf(c.generationConfig, {"auto", "vllm", "none"}) && !std::filesystem::is_directory(c.generationConfig))
        return makeError("--generation-config must be auto, vllm, none or a folder, got '" + c.generationConfig + "'");
    if (!(c.shutdownTimeoutSeconds >= 0)) return makeError("--shutdown-timeout must not be negative");
    if (c.maxRequestBodyBytes < 1024) return makeError("--max-request-body-bytes must be at least 1024");
    if (c.httpThreads != 0 && (c.httpThreads < 4 || c.httpThreads > 4096))
        return makeError("--http-threads must be 0 or in 4..4096, got " + str(c.httpThreads));
    if (!(c.httpReadTimeoutSeconds >= 0.05 && c.httpReadTimeoutSeconds <= 3600))
        return makeError("--http-read-timeout must be in 0.05..3600 seconds, got " + str(c.httpReadTimeoutSeconds));
    if (c.maxConnectionsPerClient < 0)
        return makeError("--max-connections-per-client must not be negative, got " + str(c.maxConnectionsPerClient));
    if (!(c.cpuKvCacheSpaceGiB >= 0)) return makeError("--cpu-kv-cache-space must not be negative");
    if (!oneOf(c.logLevel, {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}))
        return makeError("--log-level must be trace, debug, info, warn or error, got '" + c.logLevel + "'");
    return {};
}

// Used by applyServeConfigYaml too: normalizes what both inputs may spell loosely.
void normalizeServeConfig(ServeConfig& c)
{
    c.allowedOrigins = expandOrigins(c.allowedOrigins);
    if (auto dtype = parseDTypeChoice(c.launch.dtype)) c.launch.dtype = dtypeChoiceName(*dtype);
    if (c.logLevel == "warning") c.logLevel = "warn";
}

}  // namespace brook
