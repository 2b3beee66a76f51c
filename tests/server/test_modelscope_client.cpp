// ModelScopeClient and ModelResolver's "modelscope:" form against a local server with
// ModelScope's URL layout (fake_modelscope.h): the SDK's cache layout, only model files, a folder
// ModelFolder loads, resumable Range downloads after a dropped connection and from a partial file,
// sha256 and size checks, stale files re-fetched, offline use and the messages when things fail.
#include "fake_modelscope.h"

#include "engine/model_folder.h"
#include "hub/model_resolver.h"
#include "hub/modelscope_client.h"
#include "hub/sha256.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>

using namespace brook;
namespace fs = std::filesystem;
using namespace brook::testsupport;

namespace {

std::string slurp(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

class TestModelScopeClient : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_modelDir;

    static ModelScopeOptions options(const FakeModelScope& site, const QTemporaryDir& cache)
    {
        ModelScopeOptions o;
        o.endpoint = site.endpoint();
        o.cacheDir = cache.path().toStdString();
        o.connectTimeoutSeconds = 2;
        o.readTimeoutSeconds = 5;
        return o;
    }
    static fs::path expectedDir(const QTemporaryDir& cache)
    {
        return fs::path(cache.path().toStdString()) / "models" / "test-org" / "tiny-ernie-4___5";
    }

private slots:
    void initTestCase()
    {
        testing::TestModelOptions model;
        model.shape = testing::TestModelShape::tiny();
        auto written = testing::writeTestModel(m_modelDir.path().toStdString(), model);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
    }

    void downloadsIntoTheModelScopeCacheLayout()
    {
        FakeModelScope site(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        std::vector<DownloadProgress> progress;
        auto dir = ModelScopeClient(options(site, cache)).download(kModelScopeModel, [&](const DownloadProgress& p) {
            progress.push_back(p);
            return true;
        });
        QVERIFY2(dir.ok(), dir.ok() ? "" : dir.error().c_str());
        QCOMPARE(*dir, expectedDir(cache));
        for (const char* file : {"config.json", "model.safetensors", "tokenizer.model", "configuration.json"})
            QVERIFY2(slurp(*dir / file) == site.content(file), file);
        QVERIFY(!fs::exists(*dir / "README.md"));
        QVERIFY(!fs::exists(*dir / "onnx"));
        auto folder = ModelFolder::load(*dir);
        QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().c_str());

        // The listing asked for master, recursively; each file by FilePath; the weights via the CDN.
        const auto seen = site.seen();
        QVERIFY(!seen.empty());
        QCOMPARE(seen.front().path, "/api/v1/models/" + kModelScopeModel + "/repo/files");
        bool sawOss = false;
        for (const auto& s : seen) sawOss = sawOss || s.path == "/oss/model.safetensors";
        QVERIFY(sawOss);
        for (const auto& s : site.fileRequests())
            if (s.path.rfind("/oss/", 0) != 0)
                QVERIFY2(s.filePath != "README.md" && !s.filePath.empty(), s.filePath.c_str());
        // Progress counted every byte, in order.
        QVERIFY(!progress.empty());
        for (size_t i = 1; i < progress.size(); ++i) QVERIFY(progress[i].bytesDone >= progress[i - 1].bytesDone);
        QCOMPARE(progress.back().bytesDone, progress.back().bytesTotal);
        QVERIFY(fs::exists(*dir / ".brook_sha256.json"));

        // A second run fetches nothing; offline and unreachable runs use the cache.
        site.clearSeen();
        QCOMPARE(*ModelScopeClient(options(site, cache)).download(kModelScopeModel), *dir);
        QVERIFY(site.fileRequests().empty());
        ModelScopeOptions offline = options(site, cache);
        offline.offline = true;
        site.clearSeen();
        QCOMPARE(*ModelScopeClient(offline).download(kModelScopeModel), *dir);
        QVERIFY(site.seen().empty());
        ModelScopeOptions unreachable = options(site, cache);
        unreachable.endpoint = "http://127.0.0.1:1";
        QCOMPARE(*ModelScopeClient(unreachable).download(kModelScopeModel), *dir);

        // The resolver's "modelscope:" form goes to ModelScope, never to the Hugging Face hub.
        HubOptions hub;
        hub.endpoint = "http://127.0.0.1:1";
        hub.cacheDir = cache.filePath("hf").toStdString();
        QCOMPARE(*ModelResolver(hub, options(site, cache)).resolve("modelscope:" + kModelScopeModel), *dir);
        hub.offline = true;  // HF_HUB_OFFLINE reaches ModelScope too when options come from the environment
        qputenv("MODELSCOPE_CACHE", cache.path().toUtf8());
        site.clearSeen();
        QCOMPARE(*ModelResolver(hub).resolve("modelscope:" + kModelScopeModel), *dir);
        QVERIFY(site.seen().empty());
        qunsetenv("MODELSCOPE_CACHE");
    }

    void refetchesStaleFilesAndReusesSdkDownloads()
    {
        FakeModelScope site(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        auto dir = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
        QVERIFY2(dir.ok(), dir.ok() ? "" : dir.error().c_str());

        // A new revision changes config.json without changing its size: only it is fetched again.
        std::string config = site.content("config.json");
        const size_t space = config.find(' ');
        QVERIFY(space != std::string::npos);
        config[space] = '\n';
        site.setContent("config.json", config);
        site.clearSeen();
        QVERIFY(ModelScopeClient(options(site, cache)).download(kModelScopeModel).ok());
        QCOMPARE(slurp(*dir / "config.json"), config);
        const auto requests = site.fileRequests();
        QCOMPARE(requests.size(), size_t(1));
        QCOMPARE(requests[0].filePath, std::string("config.json"));

        // Files the modelscope SDK left (no index of ours) are hashed once and kept, not fetched.
        QTemporaryDir sdkCache;
        const fs::path sdkDir = expectedDir(sdkCache);
        fs::create_directories(sdkDir);
        for (const auto& entry : fs::directory_iterator(m_modelDir.path().toStdString()))
            fs::copy_file(entry.path(), sdkDir / entry.path().filename());
        std::ofstream(sdkDir / "configuration.json", std::ios::binary) << site.content("configuration.json");
        site.clearSeen();
        auto reused = ModelScopeClient(options(site, sdkCache)).download(kModelScopeModel);
        QVERIFY2(reused.ok(), reused.ok() ? "" : reused.error().c_str());
        for (const auto& s : site.fileRequests()) QVERIFY2(s.filePath != "model.safetensors", s.filePath.c_str());
        QVERIFY(slurp(sdkDir / ".brook_sha256.json").find(Sha256::hash(site.content("model.safetensors"))) !=
                std::string::npos);
    }

    void resumesInterruptedDownloads()
    {
        FakeModelScope site(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        const std::string weights = site.content("model.safetensors");
        // The connection drops half-way; the retry asks for the rest only.
        site.dropLfsOnce = int(weights.size() / 2);
        auto dir = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
        QVERIFY2(dir.ok(), dir.ok() ? "" : dir.error().c_str());
        QCOMPARE(slurp(*dir / "model.safetensors"), weights);
        std::vector<std::string> ranges;
        for (const auto& s : site.seen())  // (the API hop that redirects sees the Range too)
            if (s.path == "/oss/model.safetensors" && !s.range.empty()) ranges.push_back(s.range);
        QCOMPARE(ranges.size(), size_t(1));
        QVERIFY2(ranges[0].rfind("bytes=", 0) == 0 && ranges[0] != "bytes=0-", ranges[0].c_str());

        // A partial file an earlier run left in the SDK's temporary folder is continued.
        QTemporaryDir cache2;
        const fs::path temp =
            fs::path(cache2.path().toStdString()) / "models" / "._____temp" / "test-org" / "tiny-ernie-4.5";
        fs::create_directories(temp);
        const size_t have = weights.size() / 3;
        std::ofstream(temp / "model.safetensors.incomplete", std::ios::binary) << weights.substr(0, have);
        site.redirectLfs = false;  // straight from the API host this time
        site.clearSeen();
        auto resumed = ModelScopeClient(options(site, cache2)).download(kModelScopeModel);
        QVERIFY2(resumed.ok(), resumed.ok() ? "" : resumed.error().c_str());
        QCOMPARE(slurp(*resumed / "model.safetensors"), weights);
        bool sawRange = false;
        for (const auto& s : site.seen())
            if (s.range == "bytes=" + std::to_string(have) + "-" && s.filePath == "model.safetensors") sawRange = true;
        QVERIFY(sawRange);
        QVERIFY(!fs::exists(temp / "model.safetensors.incomplete"));
    }

    void wrongChecksumsAreRejected()
    {
        FakeModelScope site(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        for (bool listedWrong : {false, true}) {
            site.corruptLfs = !listedWrong;  // bytes differ from the listing, or the listing is wrong
            site.wrongSha = listedWrong;
            auto r = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
            QVERIFY(!r.ok());
            QVERIFY2(r.error().find("sha256") != std::string::npos &&
                         r.error().find("model.safetensors") != std::string::npos,
                     r.error().c_str());
            QVERIFY(!fs::exists(expectedDir(cache) / "model.safetensors"));
            const fs::path temp =
                fs::path(cache.path().toStdString()) / "models" / "._____temp" / "test-org" / "tiny-ernie-4.5";
            QVERIFY(!fs::exists(temp / "model.safetensors.incomplete"));  // not resumed from later
        }
        site.corruptLfs = false;
        site.wrongSha = false;
        auto fixed = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
        QVERIFY2(fixed.ok(), fixed.ok() ? "" : fixed.error().c_str());
        QVERIFY(ModelFolder::load(*fixed).ok());
    }

    void unreachableSaysWhatToDo()
    {
        QTemporaryDir cache;
        ModelScopeOptions o;
        o.endpoint = "http://127.0.0.1:1";
        o.cacheDir = cache.path().toStdString();
        o.connectTimeoutSeconds = 1;
        auto r = ModelScopeClient(o).download(kModelScopeModel);
        QVERIFY(!r.ok());
        for (const char* part :
             {"cannot download test-org/tiny-ernie-4.5 from ModelScope", "MODELSCOPE_DOMAIN", "local model folder"})
            QVERIFY2(r.error().find(part) != std::string::npos, r.error().c_str());
        QVERIFY(r.error().find(cache.path().toStdString()) != std::string::npos);
        o.offline = true;
        auto offline = ModelScopeClient(o).download(kModelScopeModel);
        QVERIFY(!offline.ok());
        QVERIFY2(offline.error().find("MODELSCOPE_OFFLINE") != std::string::npos, offline.error().c_str());
    }

    void missingModelsAndRefusals()
    {
        FakeModelScope site(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        auto missing = ModelScopeClient(options(site, cache)).download("test-org/absent");
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().find("no model test-org/absent") != std::string::npos &&
                     missing.error().find("model not found") != std::string::npos,
                 missing.error().c_str());
        site.refuse = true;  // HTTP 200 carrying an error Code
        auto refused = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().find("10010101004") != std::string::npos &&
                     refused.error().find("unauthorized permission") != std::string::npos,
                 refused.error().c_str());
        QVERIFY(!fs::exists(expectedDir(cache) / "config.json"));

        HubOptions hub;
        hub.offline = true;
        ModelResolver resolver(hub, options(site, cache));
        auto bad = resolver.resolve("modelscope:not-an-id");
        QVERIFY2(!bad.ok() && bad.error().find("not a ModelScope id") != std::string::npos,
                 bad.ok() ? "" : bad.error().c_str());
        auto notId = resolver.resolve("just-a-name");
        QVERIFY(!notId.ok() && notId.error().find("modelscope:") != std::string::npos);
    }

    void idsCacheFoldersAndEnvironment()
    {
        QCOMPARE(*ModelScopeClient::stripPrefix("modelscope:PaddlePaddle/ERNIE-4.5-0.3B-PT"),
                 std::string("PaddlePaddle/ERNIE-4.5-0.3B-PT"));
        QVERIFY(!ModelScopeClient::stripPrefix("PaddlePaddle/ERNIE-4.5-0.3B-PT"));
        QVERIFY(ModelScopeClient::isModelId(ModelScopeClient::kDefaultModel));
        ModelScopeOptions o;
        o.cacheDir = "/c";
        QCOMPARE(ModelScopeClient(o).modelDir(ModelScopeClient::kDefaultModel),
                 fs::path("/c/models/PaddlePaddle/ERNIE-4___5-0___3B-PT"));

        QTemporaryDir home;
        const QByteArray oldHome = qgetenv("HOME");
        qputenv("HOME", home.path().toUtf8());
        for (const char* name : {"MODELSCOPE_DOMAIN", "MODELSCOPE_CACHE", "MODELSCOPE_OFFLINE"}) qunsetenv(name);
        ModelScopeOptions env = ModelScopeOptions::fromEnvironment();
        QCOMPARE(env.endpoint, std::string("https://www.modelscope.cn"));
        QCOMPARE(env.cacheDir, fs::path(home.path().toStdString()) / ".cache" / "modelscope" / "hub");
        QVERIFY(!env.offline);
        qputenv("MODELSCOPE_DOMAIN", "modelscope.example/");
        qputenv("MODELSCOPE_CACHE", "/elsewhere/ms");
        qputenv("MODELSCOPE_OFFLINE", "1");
        env = ModelScopeOptions::fromEnvironment();
        QCOMPARE(env.endpoint, std::string("https://modelscope.example"));
        QCOMPARE(env.cacheDir, fs::path("/elsewhere/ms"));
        QVERIFY(env.offline);
        qputenv("MODELSCOPE_DOMAIN", "http://127.0.0.1:8080/");
        QCOMPARE(ModelScopeOptions::fromEnvironment().endpoint, std::string("http://127.0.0.1:8080"));
        for (const char* name : {"MODELSCOPE_DOMAIN", "MODELSCOPE_CACHE", "MODELSCOPE_OFFLINE"}) qunsetenv(name);
        qputenv("HOME", oldHome);
    }
};

QTEST_APPLESS_MAIN(TestModelScopeClient)
#include "test_modelscope_client.moc"
