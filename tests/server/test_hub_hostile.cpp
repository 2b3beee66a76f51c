// HubClient against a hostile or broken hub (fake_hub.h's knobs): malformed Content-Length,
// blob names and file names that would leave the cache folder, redirects that would carry the
// token to another origin, stale or corrupt partial and cached files, a Range answered with the
// whole file, and repository ids the hub itself would refuse. Each must fail with a message or
// heal, never crash or write outside the cache.
#include "fake_hub.h"

#include "hub/hub_client.h"
#include "hub/model_resolver.h"
#include "hub/sha256.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace brook;
namespace fs = std::filesystem;
using nlohmann::json;
using namespace brook::testsupport;

namespace {

json& sibling(json& siblings, const std::string& name)
{
    for (auto& s : siblings)
        if (s["rfilename"] == name) return s;
    throw std::runtime_error("no sibling " + name);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every file under `dir` (nothing may be written outside the cache).
std::vector<std::string> filesUnder(const fs::path& dir)
{
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
         it.increment(ec))
        out.push_back(it->path().string());
    return out;
}

}  // namespace

class TestHubHostile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_modelDir;

    static HubOptions options(const FakeHub& hub, const fs::path& cache)
    {
        HubOptions o;
        o.endpoint = hub.endpoint();
        o.cacheDir = cache;
        o.token = "hf_secret_token";
        o.connectTimeoutSeconds = 2;
        o.readTimeoutSeconds = 5;
        o.maxRetries = 1;
        return o;
    }
    static fs::path repoDir(const fs::path& cache) { return cache / "models--test-org--tiny-ernie"; }

private slots:
    void initTestCase()
    {
        testing::TestModelOptions model;
        model.shape = testing::TestModelShape::tiny();
        auto written = testing::writeTestModel(m_modelDir.path().toStdString(), model);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
    }

    void malformedContentLengthFailsTheDownload()
    {
        for (const char* length : {"abc", "99999999999999999999999", "12x"}) {
            FakeHub hub(m_modelDir.path().toStdString());
            QTemporaryDir cache;
            hub.setBadContentLength(length);
            auto r = HubClient(options(hub, cache.path().toStdString())).download(kRepo);
            QVERIFY2(!r.ok(), length);
            QVERIFY2(contains(r.error(), "Content-Length"), r.error().c_str());
        }
    }

    void blobNamesCannotLeaveTheCache()
    {
        QTemporaryDir root;
        const fs::path cache = fs::path(root.path().toStdString()) / "cache";
        const fs::path outside = fs::path(root.path().toStdString()) / "outside";
        fs::create_directories(outside);
        // LFS sha256 values and git blob ids that are paths, not digests. (A failed check removes
        // a stray file again, but not the folders made for it.)
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"sha256", "../../../outside/rel/x"},   {"sha256", (outside / "abs" / "x").string()}, {"sha256", "a/b/c"},
            {"sha256", std::string(63, 'a') + "g"}, {"blobId", "../../../outside/oid"},           {"blobId", "abc"},
        };
        for (const auto& [field, value] : cases) {
            FakeHub hub(m_modelDir.path().toStdString());
            hub.setListingEditor([field = field, value = value](json& siblings) {
                if (field == "sha256") sibling(siblings, "model.safetensors")["lfs"]["sha256"] = value;
                else sibling(siblings, "config.json")["blobId"] = value;
            });
            auto r = HubClient(options(hub, cache)).download(kRepo);
            QVERIFY2(!r.ok(), value.c_str());
            QVERIFY2(contains(r.error(), field == "sha256" ? "sha256" : "blob id"), r.error().c_str());
            const auto written = filesUnder(outside);
            QVERIFY2(written.empty(), written.empty() ? "" : written.front().c_str());
            QVERIFY(!fs::exists(repoDir(cache) / "blobs" / "a"));
        }
    }

    void unsafeFileNamesAreRejected()
    {
        // Names that are paths on Windows (a target): backslashes, drive letters, device names.
        for (const std::string name :
             {"..\\..\\evil.json", "C:evil.json", "sub\\evil.json", "CON.json", "evil:x.json"}) {
            FakeHub hub(m_modelDir.path().toStdString());
            hub.setFile(name, "{}");
            QTemporaryDir cache;
            auto r = HubClient(options(hub, cache.path().toStdString())).download(kRepo);
            QVERIFY2(!r.ok(), name.c_str());
            QVERIFY2(contains(r.error(), "unsafe file name") && contains(r.error(), name), r.error().c_str());
        }
    }

    void theTokenStaysWithTheHubsOrigin()
    {
        // The listing and every file redirect to a server on the same host, another port.
        FakeHub hub(m_modelDir.path().toStdString());
        FakeHub elsewhere(m_modelDir.path().toStdString());
        hub.setRedirectListingTo(elsewhere.endpoint());
        hub.setRedirectFilesTo(elsewhere.endpoint());
        QTemporaryDir cache;
        auto r = HubClient(options(hub, cache.path().toStdString())).download(kRepo);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().c_str());
        QCOMPARE(readFile(*r / "config.json"), hub.content("config.json"));
        QVERIFY(!elsewhere.seen().empty());
        for (const auto& s : elsewhere.seen())
            QVERIFY2(s.authorization.empty(), (s.path + ": " + s.authorization).c_str());
        for (const auto& s : hub.seen()) QCOMPARE(s.authorization, std::string("Bearer hf_secret_token"));
    }

    void aRedirectWithinTheHubKeepsTheToken()
    {
        // A renamed repository: the hub answers with a relative redirect, the token must follow it.
        FakeHub hub(m_modelDir.path().toStdString());
        hub.gated = true;
        hub.setRenamedFrom("old-org/old-name");
        QTemporaryDir cache;
        auto info = HubClient(options(hub, cache.path().toStdString())).repoInfo("old-org/old-name");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().c_str());
        QCOMPARE(info->commit, kCommit);
        const auto seen = hub.seen();
        QCOMPARE(seen.size(), size_t(2));
        QCOMPARE(seen[1].path, "/api/models/" + kRepo + "/revision/main");
        QCOMPARE(seen[1].authorization, std::string("Bearer hf_secret_token"));
    }

    void aStalePartialFileIsNotTrusted()
    {
        // An earlier run left wrong bytes in config.json's partial blob; the hub honours the Range.
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        const fs::path cacheDir = cache.path().toStdString();
        auto info = HubClient(options(hub, cacheDir)).repoInfo(kRepo);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().c_str());
        std::string blob;
        for (const HubFile& f : info->files)
            if (f.path == "config.json") blob = f.blobName();
        fs::create_directories(repoDir(cacheDir) / "blobs");
        std::ofstream(repoDir(cacheDir) / "blobs" / (blob + ".incomplete"), std::ios::binary) << "XXXXXXXXXX";
        auto r = HubClient(options(hub, cacheDir)).download(kRepo);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().c_str());
        QCOMPARE(readFile(*r / "config.json"), hub.content("config.json"));
    }

    void aCorruptCachedFileIsFetchedAgain()
    {
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        const fs::path cacheDir = cache.path().toStdString();
        auto first = HubClient(options(hub, cacheDir)).download(kRepo);
        QVERIFY2(first.ok(), first.ok() ? "" : first.error().c_str());
        // Same size, other bytes (what an older Brook could leave behind).
        const fs::path blob = fs::canonical(*first / "config.json");
        const std::string good = hub.content("config.json");
        std::ofstream(blob, std::ios::binary | std::ios::trunc) << std::string(good.size(), ' ');
        auto second = HubClient(options(hub, cacheDir)).download(kRepo);
        QVERIFY2(second.ok(), second.ok() ? "" : second.error().c_str());
        QCOMPARE(readFile(*second / "config.json"), good);
    }

    void aRangeAnsweredWithTheWholeFileStartsOver()
    {
        FakeHub hub(m_modelDir.path().toStdString());
        QTemporaryDir cache;
        const fs::path cacheDir = cache.path().toStdString();
        const std::string weights = hub.content("model.safetensors");
        const fs::path blobs = repoDir(cacheDir) / "blobs";
        fs::create_directories(blobs);
        std::ofstream(blobs / (Sha256::hash(weights) + ".incomplete"), std::ios::binary)
            << weights.substr(0, weights.size() / 3);
        hub.wholeAs206 = true;  // 206, "Content-Range: bytes 0-...", the whole file
        auto r = HubClient(options(hub, cacheDir)).download(kRepo);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().c_str());
        QCOMPARE(readFile(*r / "model.safetensors"), weights);
    }

    void repositoryIdsFollowTheHubsRules()
    {
        for (const char* good : {"baidu/ERNIE-4.5-0.3B-PT", "a/b", "Org_1/model_v2", "PaddlePaddle/ERNIE-4.5-0.3B-PT"})
            QVERIFY2(HubClient::isRepoId(good), good);
        const std::string longName(97, 'a');
        for (const std::string& bad :
             std::vector<std::string>{"owner/.", "owner/..", "./name", "owner/.hidden", "owner/-x", "a--b/c", "a/b--c",
                                      "a/b..c", "owner/name.", "owner/name-", "owner/x.git", "owner/" + longName,
                                      "a/b/c", "owner/", "/name", "owner\\name/x"})
            QVERIFY2(!HubClient::isRepoId(bad), bad.c_str());

        HubOptions o;
        o.endpoint = "http://127.0.0.1:1";
        o.offline = true;
        QTemporaryDir cache;
        o.cacheDir = cache.path().toStdString();
        auto r = ModelResolver(o).resolve("owner/.");
        QVERIFY(!r.ok());
        QVERIFY2(contains(r.error(), "not a valid Hugging Face repository id") && contains(r.error(), "'.'"),
                 r.error().c_str());
        auto direct = HubClient(o).download("owner/a--b");
        QVERIFY(!direct.ok());
        QVERIFY2(contains(direct.error(), "--"), direct.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestHubHostile)
#include "test_hub_hostile.moc"
