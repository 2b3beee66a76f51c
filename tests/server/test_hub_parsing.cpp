// The pure parsing units under the hub clients, on hostile text: Content-Length and
// Content-Range (content_headers.h), cache paths (cache_path.h), URLs and redirects
// (BlobDownloader::splitUrl, HubHttp), and both hubs' listings (hub_listing.h).
#include "hub/blob_downloader.h"
#include "hub/cache_path.h"
#include "hub/content_headers.h"
#include "hub/hub_http.h"
#include "hub/hub_listing.h"

#include <QtTest>

#include <nlohmann/json.hpp>

using namespace brook;
using nlohmann::json;

namespace {

const std::string kSha256 = std::string(64, 'a');
const std::string kOid = std::string(40, 'b');
const std::string kCommit = std::string(40, 'c');

std::string hubListing(const json& siblings) { return json{{"sha", kCommit}, {"siblings", siblings}}.dump(); }
json config() { return {{"rfilename", "config.json"}, {"size", 10}, {"blobId", kOid}}; }

}  // namespace

class TestHubParsing : public QObject {
    Q_OBJECT

private slots:
    void contentLength()
    {
        QCOMPARE(*parseContentLength("1410"), int64_t(1410));
        QCOMPARE(*parseContentLength(" 0 "), int64_t(0));
        QCOMPARE(*parseContentLength("9223372036854775807"), int64_t(9223372036854775807));
        for (const char* bad :
             {"", "abc", "-5", "+5", "12x", "1 2", "99999999999999999999999", "9223372036854775808", "0x10"})
            QVERIFY2(!parseContentLength(bad), bad);
    }

    void contentRange()
    {
        auto r = parseContentRange("bytes 100-199/1000");
        QVERIFY(r);
        QCOMPARE(r->first, int64_t(100));
        QCOMPARE(r->last, int64_t(199));
        QCOMPARE(r->total, int64_t(1000));
        QCOMPARE(parseContentRange("bytes 0-0/*")->total, int64_t(-1));
        for (const char* bad : {"", "bytes */1000", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes -1-5/10",
                                "bytes 0-1", "bytes 0-99999999999999999999/*", "bytes a-b/c", "bytes 1-2/3/4"})
            QVERIFY2(!parseContentRange(bad), bad);
    }

    void cachePaths()
    {
        for (const char* good : {"config.json", "model-00001-of-00002.safetensors", "sub/dir/file.json", "..json",
                                 "a.b.c", "icon.json", "console.json"})
            QVERIFY2(isSafeRelativePath(good), good);
        for (const char* bad :
             {"",      "/etc/passwd", "..",    ".",        "../x", "a/../b",  "a/./b",    "a//b",     "a/",
              "..\\x", "C:x.json",    "C:\\x", "x:stream", "CON",  "con.d/x", "nul.json", "com1.txt", "LPT9",
              "aux/x", "a.",          "a ",    "a\nb",     "a*b",  "a|b",     "a?b"})
            QVERIFY2(!isSafeRelativePath(bad), bad);
        const std::filesystem::path root = "/cache/blobs";
        QCOMPARE(*pathInside(root, "abc"), root / "abc");
        auto outside = pathInside(root, "../../x");
        QVERIFY(!outside.ok());
        QVERIFY2(outside.error().find("'..'") != std::string::npos, outside.error().c_str());
        QVERIFY(!pathInside(root, "/tmp/x").ok());
    }

    void urlsAndOrigins()
    {
        auto u = BlobDownloader::splitUrl("https://Hub.example:8443/a/b?x=1#frag");
        QVERIFY(u);
        QCOMPARE(u->scheme, std::string("https"));
        QCOMPARE(u->host, std::string("Hub.example"));
        QCOMPARE(u->port, 8443);
        QCOMPARE(u->path, std::string("/a/b?x=1"));
        QCOMPARE(u->schemeHostPort, std::string("https://Hub.example:8443"));
        QCOMPARE(BlobDownloader::splitUrl("http://h")->port, 80);
        QCOMPARE(BlobDownloader::splitUrl("https://h?q")->path, std::string("/?q"));
        auto v6 = BlobDownloader::splitUrl("http://[::1]:9000/x");
        QVERIFY(v6);
        QCOMPARE(v6->host, std::string("[::1]"));
        QCOMPARE(v6->port, 9000);
        for (const char* bad : {"ftp://h/x", "h/x", "http://", "http://h:0/", "http://h:65536/", "http://h:x/",
                                "http://h:/", "http://u:p@h/", "http://[::1/x", "http://h:99999999999999999999/"})
            QVERIFY2(!BlobDownloader::splitUrl(bad).ok(), bad);

        const auto origin = [](const char* a, const char* b) {
            return HubHttp::sameOrigin(*BlobDownloader::splitUrl(a), *BlobDownloader::splitUrl(b));
        };
        QVERIFY(origin("https://hf.co/a", "https://HF.co:443/b"));
        QVERIFY(origin("http://127.0.0.1:80/a", "http://127.0.0.1/b"));
        QVERIFY(!origin("https://hf.co/a", "http://hf.co/a"));
        QVERIFY(!origin("http://127.0.0.1:8000/a", "http://127.0.0.1:8001/a"));
        QVERIFY(!origin("https://hf.co/a", "https://cdn.hf.co/a"));

        const std::string from = "https://hf.co:8443/api/models/x?blobs=true";
        QCOMPARE(*HubHttp::resolveLocation(from, "/other"), std::string("https://hf.co:8443/other"));
        QCOMPARE(*HubHttp::resolveLocation(from, "//cdn.example/f"), std::string("https://cdn.example/f"));
        QCOMPARE(*HubHttp::resolveLocation(from, "y?z=1"), std::string("https://hf.co:8443/api/models/y?z=1"));
        QCOMPARE(*HubHttp::resolveLocation(from, "?q=2"), std::string("https://hf.co:8443/api/models/x?q=2"));
        QCOMPARE(*HubHttp::resolveLocation(from, "http://elsewhere:1/x"), std::string("http://elsewhere:1/x"));
        QVERIFY(!HubHttp::resolveLocation(from, "file:///etc/passwd").ok());
        QVERIFY(!HubHttp::resolveLocation(from, "").ok());
    }

    void hubListings()
    {
        json lfs = {{"rfilename", "model.safetensors"},
                    {"size", 134},
                    {"blobId", kOid},
                    {"lfs", {{"sha256", std::string(64, 'A')}, {"size", 5000}}}};
        auto info = parseHubListing(
            hubListing({config(), lfs, {{"rfilename", "onnx/x.onnx"}}, {{"rfilename", "README.md"}}}), "o/n");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().c_str());
        QCOMPARE(info->commit, kCommit);
        QCOMPARE(info->files.size(), size_t(2));
        QCOMPARE(info->files[0].blobName(), kOid);
        QVERIFY(!info->files[0].isLfs());
        QCOMPARE(info->files[1].blobName(), kSha256);  // lowercased
        QCOMPARE(info->files[1].size, int64_t(5000));

        // Each breaks one rule; the message names the file.
        const std::vector<std::pair<json, std::string>> bad = {
            {json{{"rfilename", "config.json"}, {"size", 10}, {"blobId", "../../x"}}, "blob id"},
            {json{{"rfilename", "config.json"}, {"size", 10}}, "no blob id"},
            {json{{"rfilename", "config.json"}, {"size", -1}, {"blobId", kOid}}, "size"},
            {json{{"rfilename", "config.json"}, {"size", "10"}, {"blobId", kOid}}, "size"},
            {json{{"rfilename", "config.json"}, {"size", 10}, {"blobId", 5}}, "blob id"},
            {json{{"rfilename", "config.json"}, {"size", 10}, {"blobId", kOid}, {"lfs", 5}}, "lfs"},
            {json{{"rfilename", "config.json"}, {"size", 10}, {"blobId", kOid}, {"lfs", {{"sha256", "/tmp/x"}}}},
             "sha256"},
            {json{{"rfilename", "config.json"},
                  {"size", 10},
                  {"blobId", kOid},
                  {"lfs", {{"sha256", kSha256}, {"size", 1.5}}}},
             "size"},
            {json{{"rfilename", "C:config.json"}, {"size", 10}, {"blobId", kOid}}, "unsafe file name"},
        };
        for (const auto& [sibling, part] : bad) {
            auto r = parseHubListing(hubListing({config(), sibling}), "o/n");
            QVERIFY2(!r.ok(), sibling.dump().c_str());
            QVERIFY2(r.error().find(part) != std::string::npos, r.error().c_str());
        }
        for (const std::string body :
             {std::string("[]"), std::string("{"), json{{"sha", 5}}.dump(), json{{"sha", "../x"}}.dump(),
              json{{"sha", kCommit}, {"siblings", 5}}.dump(), hubListing(json::array())})
            QVERIFY2(!parseHubListing(body, "o/n").ok(), body.c_str());
    }

    void modelScopeListings()
    {
        const auto listing = [](const json& files) { return json{{"Code", 200}, {"Data", {{"Files", files}}}}.dump(); };
        const json configEntry = {
            {"Path", "config.json"}, {"Type", "blob"}, {"Size", 10}, {"Sha256", std::string(64, 'F')}};
        auto files = parseModelScopeListing(listing({configEntry, {{"Path", "onnx"}, {"Type", "tree"}}}), "o/n");
        QVERIFY2(files.ok(), files.ok() ? "" : files.error().c_str());
        QCOMPARE(files->size(), size_t(1));
        QCOMPARE(files->front().sha256, std::string(64, 'f'));

        for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
                 {"Type", 5}, {"Path", 5}, {"Size", -1}, {"Size", json::array()}, {"Sha256", "abc"}, {"Sha256", 5}}) {
            json entry = configEntry;
            entry[field] = value;
            auto r = parseModelScopeListing(listing(json::array({entry})), "o/n");
            QVERIFY2(!r.ok(), (field + "=" + value.dump()).c_str());
            QVERIFY2(r.error().find(field) != std::string::npos, r.error().c_str());
        }
        auto refused =
            parseModelScopeListing(json{{"Code", json::array({json::array({1})})}, {"Message", "no"}}.dump(), "o/n");
        QVERIFY(!refused.ok() && refused.error().find("ModelScope says: no") != std::string::npos);
        QCOMPARE(modelScopeMessage(json{{"Message", "hi"}}.dump()), std::string("hi"));
        QCOMPARE(modelScopeMessage(json{{"Message", 5}}.dump()), std::string());
        QCOMPARE(modelScopeMessage("not json"), std::string());
    }

    void deeplyNestedJsonIsJustMalformed()
    {
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        QVERIFY(!parseHubListing(deep, "o/n").ok());
        QVERIFY(!parseModelScopeListing(deep, "o/n").ok());
        const std::string deepCode = "{\"Code\": " + deep + "}";
        QVERIFY(!parseModelScopeListing(deepCode, "o/n").ok());
    }
};

QTEST_APPLESS_MAIN(TestHubParsing)
#include "test_hub_parsing.moc"
