// The YAML side of ServeConfig: vLLM's `--config` file. Keys are the long flag names without
// dashes, with '-' or '_' ("max-num-seqs" == "max_num_seqs"); `scheduler_config:` groups the
// scheduler keys as vLLM's engine config does. Unknown keys are errors so typos never pass silently;
// a few vLLM keys that have no meaning for Brook are accepted with a warning.
#include "server/serve_config.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace brook {

namespace {

using Setter = std::function<Result<void>(const YAML::Node&, ServeConfig&, const std::string& where)>;

std::string normalizeKey(std::string key)
{
    for (char& c : key)
        if (c == '-') c = '_';
    return key;
}

std::string q(const std::string& key) { return "key '" + key + "'"; }

std::string scalarText(const YAML::Node& node)
{
    if (node.IsScalar()) return node.Scalar();
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a mapping";
    return "null";
}

template <typename T>
Result<T> convert(const YAML::Node& node, const std::string& where, const char* expected)
{
    if (!node.IsScalar()) return makeError(q(where) + " must be " + expected + ", got " + scalarText(node));
    try {
        return node.as<T>();
    } catch (const YAML::Exception&) {
        return makeError(q(where) + " must be " + expected + ", got '" + node.Scalar() + "'");
    }
}

template <typename T>
Setter setField(T ServeConfig::*field, const char* expected)
{
    return [=](const YAML::Node& n, ServeConfig& c, const std::string& where) -> Result<void> {
        auto v = convert<T>(n, where, expected);
        if (!v) return v.failure();
        c.*field = *v;
        return {};
    };
}

// Owner: LaunchOptions or the ServingSettings it extends (where the knobs live).
template <typename T, typename Owner>
Setter setLaunch(T Owner::*field, const char* expected)
{
    return [=](const YAML::Node& n, ServeConfig& c, const std::string& where) -> Result<void> {
        auto v = convert<T>(n, where, expected);
        if (!v) return v.failure();
        c.launch.*field = *v;
        return {};
    };
}

Result<std::vector<std::string>> stringList(const YAML::Node& n, const std::string& where)
{
    std::vector<std::string> out;
    if (n.IsScalar()) {
        out.push_back(n.Scalar());
        return out;
    }
    if (!n.IsSequence()) return makeError(q(where) + " must be a string or a list of strings");
    for (size_t i = 0; i < n.size(); ++i) {
        if (!n[i].IsScalar()) return makeError(q(where + "[" + std::to_string(i) + "]") + " must be a string");
        out.push_back(n[i].Scalar());
    }
    return out;
}

Setter ignored(const char* why)
{
    return [=](const YAML::Node&, ServeConfig&, const std::string& where) -> Result<void> {
        spdlog::warn("{}: {}; ignored", q(where), why);
        return {};
    };
}

Setter mustBeOne()
{
    return [](const YAML::Node& n, ServeConfig&, const std::string& where) -> Result<void> {
        auto v = convert<int>(n, where, "an integer");
        if (!v) return v.failure();
        if (*v != 1)
            return makeError(q(where) + ": Brook runs on one device; only 1 is supported, got " + std::to_string(*v));
        return {};
    };
}

Result<void> applyMap(const YAML::Node& map, const std::map<std::string, Setter>& setters, const std::string& prefix,
                      ServeConfig& config);

const std::map<std::string, Setter>& schedulerSetters()
{
    static const std::map<std::string, Setter> setters = {
        {"policy", setLaunch(&LaunchOptions::schedulingPolicy, "fcfs or priority")},
        {"max_num_seqs", setLaunch(&LaunchOptions::maxNumSeqs, "an integer")},
        {"max_num_batched_tokens", setLaunch(&LaunchOptions::maxNumBatchedTokens, "an integer")},
        {"max_model_len", setLaunch(&LaunchOptions::maxModelLen, "an integer")},
        {"enable_chunked_prefill", ignored("chunked prefill is always on in Brook")},
    };
    return setters;
}

const std::map<std::string, Setter>& topSetters()
{
    static const std::map<std::string, Setter> setters = {
        {"model", setField(&ServeConfig::model, "a string")},
        {"host", setField(&ServeConfig::host, "a string")},
        {"port", setField(&ServeConfig::port, "an integer")},
        {"served_model_name",
         [](const YAML::Node& n, ServeConfig& c, const std::string& where) -> Result<void> {
             auto names = stringList(n, where);
             if (!names) return names.failure();
             c.servedModelNames = *names;
             return {};
         }},
        {"api_key", setField(&ServeConfig::apiKey, "a string")},
        {"request_timeout", setField(&ServeConfig::requestTimeoutSeconds, "a number of seconds")},
        {"max_queue_len", setField(&ServeConfig::maxQueueLen, "an integer")},
        {"allowed_origins",
         [](const YAML::Node& n, ServeConfig& c, const std::string& where) -> Result<void> {
             auto origins = stringList(n, where);
             if (!origins) return origins.failure();
             c.allowedOrigins = *origins;
             return {};
         }},
        {"generation_config", setField(&ServeConfig::generationConfig, "auto, vllm, none or a folder")},
        {"shutdown_timeout", setField(&ServeConfig::shutdownTimeoutSeconds, "a number of seconds")},
        {"max_request_body_bytes", setField(&ServeConfig::maxRequestBodyBytes, "an integer")},
        {"http_threads", setField(&ServeConfig::httpThreads, "an integer")},
        {"http_read_timeout", setField(&ServeConfig::httpReadTimeoutSeconds, "a number of seconds")},
        {"max_connections_per_client", setField(&ServeConfig::maxConnectionsPerClient, "an integer")},
        {"cpu_kv_cache_space", setField(&ServeConfig::cpuKvCacheSpaceGiB, "a number of GiB")},
        {"log_level", setField(&ServeConfig::logLevel, "a log level")},
        {"uvicorn_log_level", setField(&ServeConfig::logLevel, "a log level")},
        {"disable_log_stats", setField(&ServeConfig::disableLogStats, "true or false")},
        {"device", setLaunch(&LaunchOptions::device, "auto, cpu or cuda")},
        {"dtype", setLaunch(&LaunchOptions::dtype, "a dtype")},
        {"quantization", setLaunch(&LaunchOptions::quantization, "a quantization method")},
        {"max_model_len", setLaunch(&LaunchOptions::maxModelLen, "an integer")},
        {"max_num_seqs", setLaunch(&LaunchOptions::maxNumSeqs, "an integer")},
        {"max_num_batched_tokens", setLaunch(&LaunchOptions::maxNumBatchedTokens, "an integer")},
        {"gpu_memory_utilization", setLaunch(&LaunchOptions::gpuMemoryUtilization, "a number")},
        {"block_size", setLaunch(&LaunchOptions::blockSize, "an integer")},
        {"num_kv_blocks", setLaunch(&LaunchOptions::numKvBlocks, "an integer")},
        {"enforce_eager", setLaunch(&LaunchOptions::enforceEager, "true or false")},
        {"enable_prefix_caching", setLaunch(&LaunchOptions::enablePrefixCaching, "true or false")},
        {"scheduling_policy", setLaunch(&LaunchOptions::schedulingPolicy, "fcfs or priority")},
        {"batch_invariant", setLaunch(&LaunchOptions::batchInvariant, "true or false")},
        {"scheduler_config",
         [](const YAML::Node& n, ServeConfig& c, const std::string& where) -> Result<void> {
             if (!n.IsMap()) return makeError(q(where) + " must be a mapping");
             return applyMap(n, schedulerSetters(), where + ".", c);
         }},
        // vLLM keys that mean nothing here: accepted so vLLM's YAML files load.
        {"tensor_parallel_size", mustBeOne()},
        {"pipeline_parallel_size", mustBeOne()},
        {"enable_chunked_prefill", ignored("chunked prefill is always on in Brook")},
        {"disable_log_requests", ignored("Brook does not log request bodies")},
        {"trust_remote_code", ignored("Brook runs no model code")},
        {"swap_space", ignored("preemption recomputes; there is no swap space")},
    };
    return setters;
}

Result<void> applyMap(const YAML::Node& map, const std::map<std::string, Setter>& setters, const std::string& prefix,
                      ServeConfig& config)
{
    for (const auto& item : map) {
        const std::string rawKey = item.first.IsScalar() ? item.first.Scalar() : std::string("?");
        const std::string where = prefix + rawKey;
        auto it = setters.find(normalizeKey(rawKey));
        if (it == setters.end()) return makeError("unknown " + q(where));
        if (auto r = it->second(item.second, config, where); !r) return r;
    }
    return {};
}

}  // namespace

std::vector<std::string> serveConfigYamlKeys()
{
    std::vector<std::string> keys;
    for (const auto& [key, setter] : topSetters())
        if (key != "scheduler_config") keys.push_back(key);
    for (const auto& [key, setter] : schedulerSetters()) keys.push_back("scheduler_config." + key);
    return keys;
}

Result<void> applyServeConfigYaml(const std::string& yamlText, const std::string& source, ServeConfig& config)
{
    YAML::Node root;
    try {
        root = YAML::Load(yamlText);
    } catch (const YAML::Exception& e) {
        return makeError(source + ": not valid YAML: " + e.what());
    }
    if (root.IsNull()) return {};  // an empty file
    if (!root.IsMap()) return makeError(source + ": expected a mapping of option: value");
    if (auto r = applyMap(root, topSetters(), "", config); !r) return makeError(source + ": " + r.error());
    return {};
}

Result<void> loadServeConfigYaml(const std::filesystem::path& file, ServeConfig& config)
{
    std::ifstream in(file);
    if (!in) return makeError("--config: cannot read " + file.string());
    std::stringstream text;
    text << in.rdbuf();
    return applyServeConfigYaml(text.str(), file.string(), config);
}

}  // namespace brook
