// Every engine flag is honoured or refused on each backend (issue 43, item 4): the flags the
// tools define, the YAML keys brook-serve reads and launch/backend_support.h's table must agree,
// so a flag added to one without the others fails here rather than being silently ignored.
#include "app/launch_flags.h"
#include "launch/backend_support.h"
#include "server/serve_config.h"

#include <CLI/CLI.hpp>
#include <QtTest>

#include <algorithm>
#include <set>
#include <string>

using namespace brook;

namespace {

// brook-serve's flags that shape the HTTP front end or the process, not the engine: no backend
// can fail to honour them. A new flag must be added to the table or here, with a thought.
const std::set<std::string> kFrontEndFlags = {
    "--model",        "--config",          "--host",          "--port",
    "--served-model-name", "--api-key",    "--request-timeout", "--max-queue-len",
    "--allowed-origins", "--generation-config", "--shutdown-timeout", "--max-request-body-bytes",
    "--http-threads", "--http-read-timeout", "--max-connections-per-client", "--log-level",
    "--disable-log-stats",
};

// vLLM's YAML keys brook-serve accepts without a flag of its own (serve_config_yaml.cpp says
// what each means here) and vLLM's alias of log_level.
const std::set<std::string> kYamlOnlyKeys = {
    "tensor_parallel_size", "pipeline_parallel_size", "enable_chunked_prefill",
    "disable_log_requests", "trust_remote_code",      "swap_space",
    "uvicorn_log_level",
};

// The long names ("--max-num-seqs") of the app's options, the positional MODEL and --help left out.
std::set<std::string> longFlags(const CLI::App& app)
{
    std::set<std::string> flags;
    for (const CLI::Option* option : app.get_options()) {
        const auto& names = option->get_lnames();
        if (names.empty() || names.front() == "help") continue;
        flags.insert("--" + names.front());
    }
    return flags;
}

std::string flagOfYamlKey(std::string key)
{
    std::replace(key.begin(), key.end(), '_', '-');
    return "--" + key;
}

std::set<std::string> serveFlags()
{
    CLI::App app;
    ServeConfig config;
    addServeFlags(app, config);
    addLaunchFlags(app, config.launch);  // as serve_main.cpp does
    return longFlags(app);
}

}  // namespace

class TestBackendSupport : public QObject {
    Q_OBJECT

private slots:
    void everySharedEngineFlagHasARow()
    {
        // addLaunchFlags is what brook-run, brook-bench and brook-serve share: all engine flags.
        CLI::App app;
        LaunchOptions options;
        addLaunchFlags(app, options);
        const auto flags = longFlags(app);
        QVERIFY(flags.size() >= 10);
        for (const std::string& flag : flags)
            QVERIFY2(findEngineSetting(flag), ("no row in backend_support.cpp for " + flag).c_str());
    }

    void everyServeFlagIsAnEngineRowOrFrontEnd()
    {
        for (const std::string& flag : serveFlags()) {
            const bool engine = findEngineSetting(flag) != nullptr;
            const bool frontEnd = kFrontEndFlags.contains(flag);
            QVERIFY2(engine != frontEnd,
                     (flag + (engine ? " is listed both as an engine row and as front-end"
                                     : " is neither in backend_support.cpp's table nor a front-end flag"))
                         .c_str());
        }
    }

    void everyRowIsAFlagSomeToolDefines()
    {
        const auto flags = serveFlags();
        for (const auto& row : engineSettingSupport())
            QVERIFY2(flags.contains(row.flag), (std::string(row.flag) + " has a row but no tool defines it").c_str());
        for (const std::string& flag : kFrontEndFlags)
            QVERIFY2(flags.contains(flag), (flag + " is listed as front-end but brook-serve has no such flag").c_str());
    }

    void everyYamlKeyIsAFlag()
    {
        const auto flags = serveFlags();
        const auto keys = serveConfigYamlKeys();
        QVERIFY(std::find(keys.begin(), keys.end(), "batch_invariant") != keys.end());
        for (std::string key : keys) {
            if (key == "scheduler_config.policy") key = "scheduling_policy";  // vLLM's name inside the mapping
            if (key.starts_with("scheduler_config.")) key = key.substr(std::string("scheduler_config.").size());
            if (kYamlOnlyKeys.contains(key)) continue;
            QVERIFY2(flags.contains(flagOfYamlKey(key)), ("YAML key " + key + " has no flag of the same name").c_str());
        }
        // And the other way: every flag but --config can be written in the file.
        for (const std::string& flag : flags) {
            if (flag == "--config") continue;
            const bool inYaml = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
                return flagOfYamlKey(k) == flag;
            });
            QVERIFY2(inYaml, (flag + " has no YAML key").c_str());
        }
    }

    void defaultsAskNothingOfEitherBackend()
    {
        const LaunchOptions defaults;
        for (Device device : {Device::Cpu, Device::Cuda}) {
            auto warnings = checkSettingsForBackend(defaults, device);
            QVERIFY(warnings);
            QVERIFY(warnings->empty());
        }
    }

    void aSettingTheBackendIgnoresIsWarnedAboutByName()
    {
        LaunchOptions options;
        options.gpuMemoryUtilization = 0.5;
        options.enforceEager = true;
        auto onCpu = checkSettingsForBackend(options, Device::Cpu);
        QVERIFY(onCpu);
        QCOMPARE(onCpu->size(), size_t(2));
        QVERIFY(onCpu->at(0).starts_with("--gpu-memory-utilization has no effect on the CPU backend"));
        QVERIFY(onCpu->at(1).starts_with("--enforce-eager has no effect on the CPU backend"));
        auto onCuda = checkSettingsForBackend(options, Device::Cuda);
        QVERIFY(onCuda);
        QVERIFY(onCuda->empty());

        LaunchOptions cpuCache;
        cpuCache.cpuKvCacheBytes = int64_t(1) << 30;  // the default is 2 GiB
        auto cudaWarnings = checkSettingsForBackend(cpuCache, Device::Cuda);
        QVERIFY(cudaWarnings);
        QCOMPARE(cudaWarnings->size(), size_t(1));
        QVERIFY(cudaWarnings->front().starts_with("--cpu-kv-cache-space has no effect on the CUDA backend"));
        QVERIFY(checkSettingsForBackend(cpuCache, Device::Cpu)->empty());
    }

    void aSettingTheBackendCannotHonourIsRefusedByName()
    {
        LaunchOptions options;
        options.batchInvariant = true;
        QVERIFY(checkSettingsForBackend(options, Device::Cpu));
        auto onCuda = checkSettingsForBackend(options, Device::Cuda);
        QVERIFY(!onCuda);
        QCOMPARE(onCuda.failure().field, std::string("batch_invariant"));
        QVERIFY(onCuda.failure().message.find("CUDA backend") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestBackendSupport)
#include "test_backend_support.moc"
