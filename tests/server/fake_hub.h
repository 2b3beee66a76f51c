// FakeHub: a local HTTP server with the Hugging Face Hub's URL layout, serving one repository
// (kRepo at kCommit) from a model folder, for the hub client and brook-serve tests:
//   GET /api/models/<repo>/revision/<rev>?blobs=true   the listing, LFS files with sha256
//   GET /<repo>/resolve/<commit>/<file>                  small files; LFS files redirect to
//   GET /cdn/<file>                                      ... a "CDN" under another host name
// Range requests are honoured; knobs make it gated, cut an LFS body short once, or corrupt it,
// and make it hostile: an edited listing, redirects to another server, a malformed
// Content-Length, or a Range answered with 206 and the whole file.
#pragma once

#include "hub/sha1.h"
#include "hub/sha256.h"

#include <QtGlobal>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace brook::testsupport {

inline const std::string kRepo = "test-org/tiny-ernie";
inline const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

inline std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A hub serving one repository from a model folder. LFS files (safetensors) redirect to a "CDN"
// reached under another host name (localhost vs 127.0.0.1), as the real hub does.
class FakeHub {
public:
    explicit FakeHub(const std::filesystem::path& modelDir)
    {
        for (const auto& entry : std::filesystem::directory_iterator(modelDir))
            m_files[entry.path().filename().string()] = readFile(entry.path());
        m_files["README.md"] = "# tiny\n";
        m_files["onnx/model.onnx"] = "not for us";
        m_server.Get(R"(/api/models/([^/]+/[^/]+)/revision/([^/]+))", [this](const httplib::Request& req,
                                                                             httplib::Response& res) {
            record(req);
            if (const std::string elsewhere = knob(m_redirectListingTo); !elsewhere.empty())
                return res.set_redirect(elsewhere + req.path + "?blobs=true", 302);
            if (gated && !req.has_header("Authorization")) return void(res.status = 401);
            if (std::string(req.matches[1]) == knob(m_renamedFrom))  // as the hub answers for renamed repositories
                return res.set_redirect(
                    "/api/models/" + kRepo + "/revision/" + std::string(req.matches[2]) + "?blobs=true", 307);
            if (std::string(req.matches[1]) != kRepo) return void(res.status = 404);
            nlohmann::json siblings = nlohmann::json::array();
            for (const auto& [name, content] : m_files) {
                nlohmann::json s = {
                    {"rfilename", name}, {"size", content.size()}, {"blobId", Sha1::gitBlobId(content)}};
                if (isLfs(name))
                    s["lfs"] = {{"sha256", Sha256::hash(content)}, {"size", content.size()}, {"pointerSize", 134}};
                siblings.push_back(s);
            }
            {
                std::lock_guard lock(m_mutex);
                if (m_editListing) m_editListing(siblings);
            }
            res.set_content(nlohmann::json{{"id", kRepo}, {"sha", kCommit}, {"siblings", siblings}}.dump(),
                            "application/json");
        });
        m_server.Get(R"(/([^/]+/[^/]+)/resolve/([^/]+)/(.+))",
                     [this](const httplib::Request& req, httplib::Response& res) {
                         record(req);
                         const std::string file = req.matches[3];
                         if (gated && !req.has_header("Authorization")) return void(res.status = 401);
                         if (!m_files.count(file)) return void(res.status = 404);
                         if (const std::string elsewhere = knob(m_redirectFilesTo); !elsewhere.empty())
                             return res.set_redirect(elsewhere + "/cdn/" + file, 302);
                         if (isLfs(file))
                             return res.set_redirect("http://localhost:" + std::to_string(port) + "/cdn/" + file, 302);
                         serve(req, res, file);
                     });
        m_server.Get(R"(/cdn/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            serve(req, res, req.matches[1]);
        });
        port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        while (!m_server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~FakeHub()
    {
        m_server.stop();
        m_thread.join();
    }

    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port); }
    const std::string& content(const std::string& file) { return m_files.at(file); }
    // Adds (or replaces) a repository file; call before a download starts.
    void setFile(const std::string& file, std::string content) { m_files[file] = std::move(content); }

    // Hostile knobs (call before a download starts):
    // edits the listing's "siblings" array before it is sent,
    void setListingEditor(std::function<void(nlohmann::json&)> edit)
    {
        std::lock_guard lock(m_mutex);
        m_editListing = std::move(edit);
    }
    // redirects the listing to the same path under another endpoint ("http://host:port"),
    void setRedirectListingTo(std::string endpoint) { setKnob(m_redirectListingTo, std::move(endpoint)); }
    // redirects every /resolve/ to <endpoint>/cdn/<file>,
    void setRedirectFilesTo(std::string endpoint) { setKnob(m_redirectFilesTo, std::move(endpoint)); }
    // answers the listing of this repository id with a relative redirect to kRepo's,
    void setRenamedFrom(std::string repoId) { setKnob(m_renamedFrom, std::move(repoId)); }
    // sends this Content-Length (before the true one) with every file body.
    void setBadContentLength(std::string value) { setKnob(m_badContentLength, std::move(value)); }

    struct Seen {
        std::string path, authorization, range;
    };
    std::vector<Seen> seen()
    {
        std::lock_guard lock(m_mutex);
        return m_seen;
    }
    void clearSeen()
    {
        std::lock_guard lock(m_mutex);
        m_seen.clear();
    }

    int port = 0;
    std::atomic<bool> gated{false};
    std::atomic<int> dropLfsOnce{0};      // > 0: the next LFS body stops after this many bytes
    std::atomic<bool> corruptLfs{false};  // serve LFS bytes that do not match the listed sha256
    std::atomic<bool> wholeAs206{false};  // answer a Range with 206 and the whole file ("bytes 0-...")

private:
    static bool isLfs(const std::string& name)
    {
        return name.size() > 12 && name.substr(name.size() - 12) == ".safetensors";
    }

    std::string knob(const std::string& value)
    {
        std::lock_guard lock(m_mutex);
        return value;
    }
    void setKnob(std::string& knob, std::string value)
    {
        std::lock_guard lock(m_mutex);
        knob = std::move(value);
    }

    void record(const httplib::Request& req)
    {
        std::lock_guard lock(m_mutex);
        m_seen.push_back({req.path, req.get_header_value("Authorization"), req.get_header_value("Range")});
    }

    void serve(const httplib::Request& req, httplib::Response& res, const std::string& file)
    {
        std::string content = m_files.at(file);
        if (isLfs(file) && corruptLfs) content[10] = char(content[10] ^ 0x55);
        if (const std::string length = knob(m_badContentLength); !length.empty())
            res.set_header("Content-Length", length);  // sent first, so clients read this one
        if (wholeAs206 && req.has_header("Range")) {
            // cpp-httplib applies a request's Range by itself; forget it to send the whole file.
            const_cast<httplib::Request&>(req).ranges.clear();
            res.status = 206;
            res.set_header("Content-Range",
                           "bytes 0-" + std::to_string(content.size() - 1) + "/" + std::to_string(content.size()));
            res.set_content(content, "application/octet-stream");
            return;
        }
        const int drop = isLfs(file) ? dropLfsOnce.exchange(0) : 0;
        // A content provider so cpp-httplib applies Range requests; `drop` cuts the body short.
        res.set_content_provider(content.size(), "application/octet-stream",
                                 [content, drop](size_t offset, size_t length, httplib::DataSink& sink) {
                                     if (drop > 0 && offset >= size_t(drop)) return false;
                                     size_t n = std::min(length, size_t(4096));
                                     if (drop > 0) n = std::min(n, size_t(drop) - offset);
                                     sink.write(content.data() + offset, n);
                                     return true;
                                 });
    }

    std::map<std::string, std::string> m_files;
    httplib::Server m_server;
    std::thread m_thread;
    std::mutex m_mutex;
    std::vector<Seen> m_seen;
    std::function<void(nlohmann::json&)> m_editListing;
    std::string m_redirectListingTo, m_redirectFilesTo, m_badContentLength, m_renamedFrom;
};

}  // namespace brook::testsupport
