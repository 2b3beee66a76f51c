// brook-serve's configuration: vLLM's YAML (keys with '-' or '_', scheduler_config), the command
// line winning over the file, and errors that name the key or flag before anything loads.
#include "app/launch_flags.h"
#include "server/serve_config.h"

#include <CLI/CLI.hpp>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace brook;

class TestServeConfig : public QObject {
    Q_OBJECT

private slots:
    void yamlTakesVllmSpellings()
    {
        // (No raw string literal: moc cannot read them.)
        const std::string yaml = "model: /models/ernie\n"
                                 "host: 0.0.0.0\n"
                                 "port: 9000\n"
                                 "max-num-seqs: 12\n"
                                 "max_num_batched_tokens: 2048\n"
                                 "max_model_len: 8192\n"
                                 "gpu-memory-utilization: 0.5\n"
                                 "dtype: half\n"
                                 "enforce-eager: true\n"
                                 "block_size: 32\n"
                                 "served-model-name: [ernie-a, ernie-b]\n"
                                 "allowed_origins: [\"http://x.example\"]\n"
                                 "api-key: secret\n"
                                 "generation-config: none\n"
                                 "request_timeout: 30\n"
                                 "max_queue_len: 5\n"
                                 "device: cpu\n"
                                 "enable_chunked_prefill: true\n"
                                 "tensor_parallel_size: 1\n"
                                 "scheduler_config:\n"
                                 "  policy: priority\n"
                                 "  max_num_seqs: 7\n";
        ServeConfig c;
        auto r = applyServeConfigYaml(yaml, "serve.yaml", c);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().c_str());
        normalizeServeConfig(c);
        QCOMPARE(c.model, std::string("/models/ernie"));
        QCOMPARE(c.host, std::string("0.0.0.0"));
        QCOMPARE(c.port, 9000);
        QCOMPARE(c.launch.maxNumSeqs, 7);  // scheduler_config comes later in the file
        QCOMPARE(c.launch.maxNumBatchedTokens, 2048);
        QCOMPARE(c.launch.maxModelLen, 8192);
        QCOMPARE(c.launch.gpuMemoryUtilization, 0.5);
        QCOMPARE(c.launch.dtype, std::string("float16"));
        QVERIFY(c.launch.enforceEager);
        QCOMPARE(c.launch.blockSize, 32);
        QCOMPARE(c.launch.schedulingPolicy, std::string("priority"));
        QCOMPARE(c.launch.device, std::string("cpu"));
        QCOMPARE(c.servedModelNames, (std::vector<std::string>{"ernie-a", "ernie-b"}));
        QCOMPARE(c.primaryModelName(), std::string("ernie-a"));
        QCOMPARE(c.allowedOrigins, (std::vector<std::string>{"http://x.example"}));
        QCOMPARE(c.apiKey, std::string("secret"));
        QCOMPARE(c.generationConfig, std::string("none"));
        QCOMPARE(c.requestTimeoutSeconds, 30.0);
        QCOMPARE(c.maxQueueLen, 5);
        QVERIFY(validateServeConfig(c).ok());
    }

    void yamlErrorsNameTheKey_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown key") << "max_num_sequences: 4"
                                     << "serve.yaml: unknown key 'max_num_sequences'";
        QTest::newRow("unknown nested key") << "scheduler_config:\n  preemption: swap"
                                            << "unknown key 'scheduler_config.preemption'";
        QTest::newRow("not an integer") << "max-num-seqs: many"
                                        << "key 'max-num-seqs' must be an integer, got 'many'";
        QTest::newRow("list for a number") << "port: [1, 2]"
                                           << "key 'port' must be an integer, got a list";
        QTest::newRow("not a boolean") << "enforce_eager: maybe"
                                       << "key 'enforce_eager' must be true or false";
        QTest::newRow("prefix caching not a boolean") << "enable_prefix_caching: 2"
                                                      << "key 'enable_prefix_caching' must be true or false";
        QTest::newRow("scheduler not a map") << "scheduler_config: fcfs"
                                             << "key 'scheduler_config' must be a mapping";
        QTest::newRow("tensor parallel") << "tensor_parallel_size: 2"
                                         << "only 1 is supported";
        QTest::newRow("not a mapping") << "- a\n- b"
                                       << "expected a mapping";
        QTest::newRow("broken yaml") << "port: [1, 2"
                                     << "not valid YAML";
    }

    void yamlErrorsNameTheKey()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, message);
        ServeConfig c;
        auto r = applyServeConfigYaml(yaml.toStdString(), "serve.yaml", c);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find(message.toStdString()) != std::string::npos, r.error().c_str());
    }

    void prefixCachingIsOnByDefaultWithVllmsFlags()
    {
        ServeConfig fromYaml;
        QVERIFY(fromYaml.launch.enablePrefixCaching);
        QVERIFY(applyServeConfigYaml("enable-prefix-caching: false\n", "serve.yaml", fromYaml).ok());
        QVERIFY(!fromYaml.launch.enablePrefixCaching);
        QVERIFY(applyServeConfigYaml("enable_prefix_caching: true\n", "serve.yaml", fromYaml).ok());
        QVERIFY(fromYaml.launch.enablePrefixCaching);

        const auto parsed = [](std::vector<const char*> argv) {
            LaunchOptions o;
            CLI::App app;
            addLaunchFlags(app, o);
            app.parse(int(argv.size()), const_cast<char**>(argv.data()));
            return o.enablePrefixCaching;
        };
        QVERIFY(parsed({"brook-serve"}));
        QVERIFY(!parsed({"brook-serve", "--no-enable-prefix-caching"}));
        QVERIFY(parsed({"brook-serve", "--enable-prefix-caching"}));
        // The last one given wins, as with vLLM's argparse flags.
        QVERIFY(parsed({"brook-serve", "--no-enable-prefix-caching", "--enable-prefix-caching"}));
    }

    void commandLineWinsOverTheFile()
    {
        QTemporaryDir dir;
        const std::string file = dir.filePath("serve.yaml").toStdString();
        std::ofstream(file) << "port: 9000\nmax_num_seqs: 12\nhost: 0.0.0.0\nserved_model_name: from-yaml\n";
        const char* argv[] = {"brook-serve", "/models/x", "--config",     file.c_str(),
                              "--port",      "1234",      "--block-size", "8"};
        const int argc = int(std::size(argv));
        QCOMPARE(findConfigArgument(argc, argv), file);
        const std::string eqArg = "--config=" + file;
        const char* eqArgv[] = {"brook-serve", eqArg.c_str()};
        QCOMPARE(findConfigArgument(2, eqArgv), file);

        ServeConfig c;
        QVERIFY(loadServeConfigYaml(file, c).ok());
        CLI::App app;
        addServeFlags(app, c);
        addLaunchFlags(app, c.launch);
        app.parse(argc, const_cast<char**>(argv));
        QCOMPARE(c.port, 1234);             // flag
        QCOMPARE(c.launch.blockSize, 8);    // flag
        QCOMPARE(c.launch.maxNumSeqs, 12);  // file
        QCOMPARE(c.host, std::string("0.0.0.0"));
        QCOMPARE(c.model, std::string("/models/x"));
        QCOMPARE(c.primaryModelName(), std::string("from-yaml"));
        QVERIFY(!loadServeConfigYaml(dir.filePath("missing.yaml").toStdString(), c).ok());
    }

    void validationNamesTheFlag_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("message");
        QTest::newRow("port") << 0 << "--port must be in 0..65535";
        QTest::newRow("block size") << 1 << "--block-size must be 8, 16 or 32, got 7";
        QTest::newRow("max seqs") << 2 << "--max-num-seqs must be at least 1";
        QTest::newRow("generation config") << 3 << "--generation-config must be auto, vllm, none or a folder";
        QTest::newRow("dtype") << 4 << "--dtype must be auto, bfloat16, float16 or float32, got 'int3'";
        QTest::newRow("gpu memory") << 5 << "--gpu-memory-utilization must be in (0, 1]";
        QTest::newRow("policy") << 6 << "--scheduling-policy must be fcfs or priority";
        QTest::newRow("queue") << 7 << "--max-queue-len must not be negative";
        QTest::newRow("device") << 8 << "--device must be auto, cpu or cuda";
        QTest::newRow("http read timeout") << 9 << "--http-read-timeout must be in 0.05..3600";
        QTest::newRow("connections per client") << 10 << "--max-connections-per-client must not be negative";
        QTest::newRow("origin") << 11 << "--allowed-origins: 'good.example' is not an origin";
    }

    void validationNamesTheFlag()
    {
        QFETCH(int, which);
        QFETCH(QString, message);
        ServeConfig c;
        QVERIFY(validateServeConfig(c).ok());
        switch (which) {
        case 0: c.port = 70000; break;
        case 1: c.launch.blockSize = 7; break;
        case 2: c.launch.maxNumSeqs = 0; break;
        case 3: c.generationConfig = "/no/such/folder"; break;
        case 4: c.launch.dtype = "int3"; break;
        case 5: c.launch.gpuMemoryUtilization = 1.5; break;
        case 6: c.launch.schedulingPolicy = "lifo"; break;
        case 7: c.maxQueueLen = -1; break;
        case 8: c.launch.device = "tpu"; break;
        case 9: c.httpReadTimeoutSeconds = 0; break;
        case 10: c.maxConnectionsPerClient = -1; break;
        case 11: c.allowedOrigins = {"good.example"}; break;
        }
        auto r = validateServeConfig(c);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find(message.toStdString()) != std::string::npos, r.error().c_str());
    }

    void allowedOriginsFlagTakesJsonAndCommaLists_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("json, one") << "[\"http://good.example\"]" << QStringList{"http://good.example"};
        QTest::newRow("json, two") << "[\"http://a.example\", \"http://b.example:8080\"]"
                                   << QStringList{"http://a.example", "http://b.example:8080"};
        QTest::newRow("comma list") << "http://a.example,http://b.example"
                                    << QStringList{"http://a.example", "http://b.example"};
        QTest::newRow("one word") << "http://a.example" << QStringList{"http://a.example"};
        QTest::newRow("any") << "*" << QStringList{"*"};
    }

    void allowedOriginsFlagTakesJsonAndCommaLists()
    {
        QFETCH(QString, value);
        QFETCH(QStringList, expected);
        std::vector<std::string> want;
        for (const QString& e : expected) want.push_back(e.toStdString());

        // On the command line, as brook-serve parses it.
        ServeConfig flags;
        CLI::App app;
        addServeFlags(app, flags);
        const std::string v = value.toStdString();
        const char* argv[] = {"brook-serve", "--allowed-origins", v.c_str()};
        app.parse(3, argv);
        normalizeServeConfig(flags);
        QCOMPARE(flags.allowedOrigins, want);
        QVERIFY(validateServeConfig(flags).ok());

        // In YAML, as a quoted string and (for lists) as a YAML sequence.
        ServeConfig yaml;
        std::string quoted = v;
        for (size_t at = quoted.find('\''); at != std::string::npos; at = quoted.find('\'', at + 2))
            quoted.insert(at, "'");
        QVERIFY(applyServeConfigYaml("allowed-origins: '" + quoted + "'\n", "serve.yaml", yaml).ok());
        normalizeServeConfig(yaml);
        QCOMPARE(yaml.allowedOrigins, want);
        std::string sequence = "allowed_origins:\n";
        for (const std::string& o : want) sequence += "  - \"" + o + "\"\n";
        ServeConfig yamlList;
        QVERIFY(applyServeConfigYaml(sequence, "serve.yaml", yamlList).ok());
        normalizeServeConfig(yamlList);
        QCOMPARE(yamlList.allowedOrigins, want);
    }

    void corsIsOffByDefault()
    {
        ServeConfig c;
        normalizeServeConfig(c);
        QVERIFY(c.allowedOrigins.empty());
        QVERIFY(validateServeConfig(c).ok());
        QCOMPARE(c.host, std::string("127.0.0.1"));
    }

    void originsAndLoopback()
    {
        ServeConfig c;
        c.allowedOrigins = {"[\"http://a.example\", \"http://b.example\"]"};
        normalizeServeConfig(c);
        QCOMPARE(c.allowedOrigins, (std::vector<std::string>{"http://a.example", "http://b.example"}));
        c.allowedOrigins = {"http://c.example,http://d.example"};
        normalizeServeConfig(c);
        QCOMPARE(c.allowedOrigins.size(), size_t(2));
        QVERIFY(isLoopbackHost("127.0.0.1"));
        QVERIFY(isLoopbackHost("localhost"));
        QVERIFY(isLoopbackHost("::1"));
        QVERIFY(!isLoopbackHost("0.0.0.0"));
        QVERIFY(!isLoopbackHost("192.168.1.4"));
    }
};

QTEST_APPLESS_MAIN(TestServeConfig)
#include "test_serve_config.moc"
