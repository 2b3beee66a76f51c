// HubClient and ModelResolver against a local server with the Hugging Face Hub's URL layout:
// the cache layout huggingface_hub uses, resumable Range downloads, sha256 and size checks,
// tokens (never sent to the CDN host), offline use and the messages when things go wrong.
#include "fake_hub.h"

#include "engine/model_folder.h"
#include "hub/blob_downloader.h"
#include "hub/cancel_signal.h"
#include "hub/hub_client.h"
#include "hub/hub_http.h"
#include "hub/model_resolver.h"
#include "hub/sha256.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>
#include <QtTest>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

using namespace brook;
namespace fs = std::filesystem;
using nlohmann::json;
using namespace brook::testsupport;

class TestHubClient : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_modelDir;

    HubOptions options(const FakeHub& hub, const QTemporaryDir& cache)
    {
        HubOptions o;
        o.endpoint = hub.endpoint();
        o.cacheDir = cache.path().toStdString();
        o.token = "hf_test_token";
        o.connectTimeoutSeconds = 2;
        o.readTimeoutSeconds = 5;
        return o;
    }

private slots:
    void initTestCase()
    {
        testing::TestModelOptions model;
        model.shape = testing::TestModelShape::tiny();
        auto written = testing::writeTestModel(m_modelDir.path().toStdString(), model);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
    }

    void downloadsIntoTheHfCacheLayout()
    {
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        std::vector<DownloadProgress> progress;
        auto snapshot = HubClient(options(hub, cache)).download(kRepo, [&](const DownloadProgress& p) {
            progress.push_back(p);
            return true;
        });
        QVERIFY2(snapshot.ok(), snapshot.ok() ? "" : snapshot.error().c_str());
        const fs::path repo = fs::path(cache.path().toStdString()) / "models--test-org--tiny-ernie";
        QCOMPARE(*snapshot, repo / "snapshots" / kCommit);
        QCOMPARE(readFile(repo / "refs" / "main"), kCommit);
        // Snapshot files are relative links into blobs/, LFS blobs named by their sha256.
        QVERIFY(fs::is_symlink(*snapshot / "config.json"));
        QCOMPARE(fs::read_symlink(*snapshot / "model.safetensors").parent_path(), fs::path("../../blobs"));
        const std::string weights = hub.content("model.safetensors");
        QVERIFY(fs::exists(repo / "blobs" / Sha256::hash(weights)));
        QCOMPARE(readFile(*snapshot / "model.safetensors"), weights);
        QVERIFY(!fs::exists(*snapshot / "README.md"));
        QVERIFY(!fs::exists(*snapshot / "onnx"));
        // It is a model folder Brook loads.
        auto folder = ModelFolder::load(*snapshot);
        QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().c_str());
        // Progress counted every byte, in order.
        QVERIFY(!progress.empty());
        for (size_t i = 1; i < progress.size(); ++i) QVERIFY(progress[i].bytesDone >= progress[i - 1].bytesDone);
        QCOMPARE(progress.back().bytesDone, progress.back().bytesTotal);
        // The token went to the hub, never to the CDN host it redirected to.
        bool sawCdn = false;
        for (const auto& s : hub.seen()) {
            if (s.path.rfind("/cdn/", 0) == 0) {
                sawCdn = true;
                QVERIFY(s.authorization.empty());
            } else {
                QCOMPARE(s.authorization, std::string("Bearer hf_test_token"));
            }
        }
        QVERIFY(sawCdn);

        // A second run fetches no file; offline and unreachable runs use the cache.
        hub.clearSeen();
        QCOMPARE(*HubClient(options(hub, cache)).download(kRepo), *snapshot);
        for (const auto& s : hub.seen()) QVERIFY2(s.path.find("/resolve/") == std::string::npos, s.path.c_str());
        HubOptions offline = options(hub, cache);
        offline.offline = true;
        hub.clearSeen();
        QCOMPARE(*HubClient(offline).download(kRepo), *snapshot);
        QVERIFY(hub.seen().empty());
        HubOptions unreachable = options(hub, cache);
        unreachable.endpoint = "http://127.0.0.1:1";
        QCOMPARE(*HubClient(unreachable).download(kRepo), *snapshot);
        QCOMPARE(*ModelResolver(offline).resolve(kRepo), *snapshot);
    }

    void unreachableWithoutCacheSaysWhatToDo()
    {
        QTemporaryDir cache;
        HubOptions o;
        o.endpoint = "http://127.0.0.1:1";
        o.cacheDir = cache.path().toStdString();
        o.connectTimeoutSeconds = 1;
        auto r = HubClient(o).download(kRepo);
        QVERIFY(!r.ok());
        for (const char* part : {"cannot download test-org/tiny-ernie", "HF_ENDPOINT", "local model folder"})
            QVERIFY2(r.error().find(part) != std::string::npos, r.error().c_str());
        QVERIFY(r.error().find(cache.path().toStdString()) != std::string::npos);
        o.offline = true;
        auto offline = HubClient(o).download(kRepo);
        QVERIFY(!offline.ok());
        QVERIFY2(offline.error().find("HF_HUB_OFFLINE") != std::string::npos, offline.error().c_str());
    }

    void resumesInterruptedDownloads()
    {
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        const std::string weights = hub.content("model.safetensors");
        // The connection drops half-way; the retry asks for the rest only.
        hub.dropLfsOnce = int(weights.size() / 2);
        auto snapshot = HubClient(options(hub, cache)).download(kRepo);
        QVERIFY2(snapshot.ok(), snapshot.ok() ? "" : snapshot.error().c_str());
        QCOMPARE(readFile(*snapshot / "model.safetensors"), weights);
        std::vector<std::string> ranges;
        for (const auto& s : hub.seen())
            if (s.path.rfind("/cdn/", 0) == 0 && !s.range.empty()) ranges.push_back(s.range);
        QCOMPARE(ranges.size(), size_t(1));
        QVERIFY2(ranges[0].rfind("bytes=", 0) == 0 && ranges[0] != "bytes=0-", ranges[0].c_str());

        // A partial blob left by an earlier run is continued, not restarted.
        QTemporaryDir cache2;
        const fs::path blobs = fs::path(cache2.path().toStdString()) / "models--test-org--tiny-ernie" / "blobs";
        fs::create_directories(blobs);
        const size_t have = weights.size() / 3;
        std::ofstream(blobs / (Sha256::hash(weights) + ".incomplete"), std::ios::binary) << weights.substr(0, have);
        hub.clearSeen();
        auto resumed = HubClient(options(hub, cache2)).download(kRepo);
        QVERIFY2(resumed.ok(), resumed.ok() ? "" : resumed.error().c_str());
        QCOMPARE(readFile(*resumed / "model.safetensors"), weights);
        bool sawRange = false;
        for (const auto& s : hub.seen())
            if (s.range == "bytes=" + std::to_string(have) + "-") sawRange = true;
        QVERIFY(sawRange);
    }

    void checksumAndSizeMismatchesAreErrors()
    {
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        hub.corruptLfs = true;  // the listing keeps the true sha256; the bytes served differ
        auto r = HubClient(options(hub, cache)).download(kRepo);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find("sha256") != std::string::npos &&
                     r.error().find("model.safetensors") != std::string::npos,
                 r.error().c_str());
        const fs::path repo = fs::path(cache.path().toStdString()) / "models--test-org--tiny-ernie";
        const std::string blob = Sha256::hash(hub.content("model.safetensors"));
        QVERIFY(!fs::exists(repo / "blobs" / blob));
        QVERIFY(!fs::exists(repo / "blobs" / (blob + ".incomplete")));  // not resumed from later
        QVERIFY(!fs::exists(repo / "snapshots" / kCommit / "model.safetensors"));
        hub.corruptLfs = false;
        QVERIFY(HubClient(options(hub, cache)).download(kRepo).ok());

        BlobRequest request;
        request.url = hub.endpoint() + "/cdn/config.json";
        request.destination = fs::path(cache.path().toStdString()) / "sized";
        request.expectedSize = int64_t(hub.content("config.json").size()) + 1;
        auto sized = BlobDownloader::download(request);
        QVERIFY(!sized.ok());
        QVERIFY2(sized.error().find("expected") != std::string::npos, sized.error().c_str());
    }

    void gatedAndMissingRepositories()
    {
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        hub.gated = true;
        HubOptions noToken = options(hub, cache);
        noToken.token.clear();
        auto gated = HubClient(noToken).download(kRepo);
        QVERIFY(!gated.ok());
        QVERIFY2(gated.error().find("HF_TOKEN") != std::string::npos, gated.error().c_str());
        QVERIFY(HubClient(options(hub, cache)).download(kRepo).ok());  // with the token

        auto missing = HubClient(options(hub, cache)).download("test-org/absent");
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().find("no repository test-org/absent") != std::string::npos, missing.error().c_str());
    }

    void aCancelStopsAReadASilentServerBlocks()
    {
        // A mirror that sends the head and 64 KiB of a file (or nothing of a listing), then goes
        // silent with the connection open. Reads wait 10 minutes, so only the cancel can end them.
        std::atomic<bool> release{false}, started{false};
        httplib::Server server;
        server.Get("/blob", [&](const httplib::Request&, httplib::Response& res) {
            res.set_content_provider(1 << 20, "application/octet-stream",
                                     [&](size_t offset, size_t, httplib::DataSink& sink) {
                                         if (offset == 0) {
                                             const std::string chunk(64 << 10, 'x');
                                             sink.write(chunk.data(), chunk.size());
                                             started = true;
                                             return true;
                                         }
                                         for (int i = 0; !release && i < 12000; ++i)
                                             std::this_thread::sleep_for(std::chrono::milliseconds(10));
                                         return false;
                                     });
        });
        server.Get("/listing", [&](const httplib::Request&, httplib::Response& res) {
            started = true;
            for (int i = 0; !release && i < 12000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            res.set_content("{}", "application/json");
        });
        const int port = server.bind_to_any_port("127.0.0.1");
        std::thread serving([&] { server.listen_after_bind(); });
        while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const std::string base = "http://127.0.0.1:" + std::to_string(port);
        QTemporaryDir dir;

        BlobRequest request;
        request.url = base + "/blob";
        request.destination = dir.filePath("blob").toStdString();
        request.readTimeoutSeconds = 600;
        request.cancel = std::make_shared<CancelSignal>();
        auto blob = std::async(std::launch::async, [&] { return BlobDownloader::download(request); });
        QTRY_VERIFY_WITH_TIMEOUT(started.load(), 30000);
        request.cancel->cancel();
        QVERIFY2(blob.wait_for(std::chrono::seconds(30)) == std::future_status::ready,
                 "the cancel did not reach the blocked read");
        const Result<void> blobResult = blob.get();
        QVERIFY(!blobResult.ok());
        QCOMPARE(blobResult.error(), std::string("download cancelled"));
        QVERIFY(fs::exists(request.destination.string() + ".incomplete"));  // kept, to resume from

        started = false;
        HttpGetOptions get;
        get.readTimeoutSeconds = 600;
        get.cancel = std::make_shared<CancelSignal>();
        auto listing = std::async(std::launch::async, [&] { return HubHttp::getText(base + "/listing", get); });
        QTRY_VERIFY_WITH_TIMEOUT(started.load(), 30000);
        get.cancel->cancel();
        QVERIFY2(listing.wait_for(std::chrono::seconds(30)) == std::future_status::ready,
                 "the cancel did not reach the blocked listing read");
        const auto listingResult = listing.get();
        QVERIFY(!listingResult.ok());
        QCOMPARE(listingResult.error(), std::string("download cancelled"));

        // Cancelled before it starts: no request at all.
        started = false;
        auto early = BlobDownloader::download(request);
        QVERIFY(!early.ok());
        QCOMPARE(early.error(), std::string("download cancelled"));
        QVERIFY(!started);

        release = true;
        server.stop();
        serving.join();
    }

    void resolverTellsFoldersFromIds()
    {
        QVERIFY(HubClient::isRepoId("baidu/ERNIE-4.5-0.3B-PT"));
        QVERIFY(!HubClient::isRepoId("baidu"));
        QVERIFY(!HubClient::isRepoId("a/b/c"));
        QVERIFY(!HubClient::isRepoId("../etc"));
        QVERIFY(!HubClient::isRepoId("org/name with space"));
        QVERIFY(HubClient::isModelFile("model-00001-of-00002.safetensors"));
        QVERIFY(HubClient::isModelFile("tokenizer.model"));
        QVERIFY(!HubClient::isModelFile("pytorch_model.bin"));

        HubOptions o;
        o.endpoint = "http://127.0.0.1:1";
        o.offline = true;
        ModelResolver resolver(o);
        QCOMPARE(*resolver.resolve(m_modelDir.path().toStdString()), fs::path(m_modelDir.path().toStdString()));
        auto noFolder = resolver.resolve("/no/such/model");
        QVERIFY(!noFolder.ok() && noFolder.error().find("no model folder") != std::string::npos);
        auto notId = resolver.resolve("just-a-name");
        QVERIFY(!notId.ok() && notId.error().find("neither a model folder nor a Hugging Face id") != std::string::npos);
        auto file = resolver.resolve((fs::path(m_modelDir.path().toStdString()) / "config.json").string());
        QVERIFY(!file.ok() && file.error().find("is a file") != std::string::npos);
    }

    void optionsComeFromTheEnvironment()
    {
        QTemporaryDir home;
        const std::string h = home.path().toStdString();
        qputenv("HF_HOME", home.path().toUtf8());
        qunsetenv("HF_HUB_CACHE");
        qunsetenv("HUGGINGFACE_HUB_CACHE");
        qunsetenv("HF_TOKEN");
        qunsetenv("HUGGING_FACE_HUB_TOKEN");
        qunsetenv("HF_TOKEN_PATH");
        qputenv("HF_ENDPOINT", "https://hf-mirror.example/");
        qputenv("HF_HUB_OFFLINE", "1");
        std::ofstream(fs::path(h) / "token") << "hf_from_file\n";
        HubOptions o = HubOptions::fromEnvironment();
        QCOMPARE(o.cacheDir, fs::path(h) / "hub");
        QCOMPARE(o.endpoint, std::string("https://hf-mirror.example"));
        QCOMPARE(o.token, std::string("hf_from_file"));
        QVERIFY(o.offline);
        qputenv("HF_HUB_CACHE", "/elsewhere/cache");
        qputenv("HF_TOKEN", "hf_env");
        qputenv("HF_HUB_OFFLINE", "0");
        o = HubOptions::fromEnvironment();
        QCOMPARE(o.cacheDir, fs::path("/elsewhere/cache"));
        QCOMPARE(o.token, std::string("hf_env"));
        QVERIFY(!o.offline);
        for (const char* name : {"HF_HOME", "HF_HUB_CACHE", "HF_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE"})
            qunsetenv(name);
    }
};

QTEST_APPLESS_MAIN(TestHubClient)
#include "test_hub_client.moc"
