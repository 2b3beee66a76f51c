// FakeModelScope: a local HTTP server (cpp-httplib, in-process) with ModelScope's URL layout,
// serving one model (kModelScopeModel) from a model folder, for the ModelScope client tests and
// the GUI download tests:
//   GET /api/v1/models/<owner>/<name>/repo/files?Revision=master&Recursive=True   the listing
//   GET /api/v1/models/<owner>/<name>/repo?Revision=master&FilePath=<path>         the bytes;
//       safetensors redirect to /oss/<path> under another host name (knob), like a CDN
// The listing carries Sha256 and Size per file, a "tree" entry and files Brook must skip.
// Range requests are honoured; knobs cut a safetensors body short once or corrupt it, or edit
// the listing (hostile answers).
#pragma once

#include "hub/sha256.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
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

inline const std::string kModelScopeModel = "test-org/tiny-ernie-4.5";  // the dot: cached as "4___5"
inline const std::string kModelScopeCommit = "89abcdef0123456789abcdef0123456789abcdef";

class FakeModelScope {
public:
    explicit FakeModelScope(const std::filesystem::path& modelDir)
    {
        for (const auto& entry : std::filesystem::directory_iterator(modelDir)) {
            std::ifstream in(entry.path(), std::ios::binary);
            std::stringstream s;
            s << in.rdbuf();
            m_files[entry.path().filename().string()] = s.str();
        }
        m_files["README.md"] = "# tiny\n";
        m_files["configuration.json"] = R"({"framework": "pytorch", "task": "text-generation"})";
        m_files["onnx/model.onnx"] = "not for us";

        m_server.Get(R"(/api/v1/models/([^/]+/[^/]+)/repo/files)", [this](const httplib::Request& req,
                                                                          httplib::Response& res) {
            record(req);
            if (req.get_param_value("Revision") != "master" || req.get_param_value("Recursive") != "True") {
                res.status = 400;
                return res.set_content(R"({"Code": 400, "Message": "bad parameters", "Success": false})",
                                       "application/json");
            }
            if (std::string(req.matches[1]) != kModelScopeModel) {
                res.status = 404;
                return res.set_content(R"({"Code": 10010205001, "Message": "model not found", "Success": false})",
                                       "application/json");
            }
            if (refuse)
                return res.set_content(
                    R"({"Code": 10010101004, "Message": "unauthorized permission", "Success": false})",
                    "application/json");
            nlohmann::json files = nlohmann::json::array();
            files.push_back({{"Name", "onnx"}, {"Path", "onnx"}, {"Type", "tree"}, {"Size", 0}, {"Sha256", ""}});
            std::lock_guard lock(m_mutex);
            for (const auto& [path, content] : m_files) {
                const std::string sha = isLfs(path) && wrongSha ? std::string(64, 'a') : Sha256::hash(content);
                files.push_back({{"Name", path.substr(path.rfind('/') + 1)},
                                 {"Path", path},
                                 {"Type", "blob"},
                                 {"Size", content.size()},
                                 {"Sha256", sha},
                                 {"Revision", kModelScopeCommit},
                                 {"IsLFS", isLfs(path)},
                                 {"CommitMessage", "upload"}});
            }
            if (m_editListing) m_editListing(files);
            res.set_content(
                nlohmann::json{{"Code", 200}, {"Data", {{"Files", files}}}, {"Message", "success"}, {"Success", true}}
                    .dump(),
                "application/json");
        });
        m_server.Get(R"(/api/v1/models/([^/]+/[^/]+)/repo)",
                     [this](const httplib::Request& req, httplib::Response& res) {
                         record(req);
                         const std::string file = req.get_param_value("FilePath");
                         if (std::string(req.matches[1]) != kModelScopeModel ||
                             req.get_param_value("Revision") != "master" || !has(file))
                             return void(res.status = 404);
                         if (isLfs(file) && redirectLfs)
                             return res.set_redirect("http://localhost:" + std::to_string(port) + "/oss/" + file, 302);
                         serve(res, file);
                     });
        m_server.Get(R"(/oss/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            if (!has(req.matches[1])) return void(res.status = 404);
            serve(res, req.matches[1]);
        });
        port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        while (!m_server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~FakeModelScope()
    {
        m_server.stop();
        m_thread.join();
    }

    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port); }
    std::string content(const std::string& file)
    {
        std::lock_guard lock(m_mutex);
        return m_files.at(file);
    }
    void setContent(const std::string& file, std::string content)
    {
        std::lock_guard lock(m_mutex);
        m_files[file] = std::move(content);
    }

    // Edits the listing's Data.Files array before it is sent (call before a download starts).
    void setListingEditor(std::function<void(nlohmann::json&)> edit)
    {
        std::lock_guard lock(m_mutex);
        m_editListing = std::move(edit);
    }

    struct Seen {
        std::string path, filePath, range;
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
    // Requests for file bytes (not the listing).
    std::vector<Seen> fileRequests()
    {
        std::vector<Seen> out;
        for (const Seen& s : seen())
            if (s.path.find("/repo/files") == std::string::npos) out.push_back(s);
        return out;
    }

    int port = 0;
    std::atomic<bool> redirectLfs{true};
    std::atomic<int> dropLfsOnce{0};      // > 0: the next safetensors body stops after this many bytes
    std::atomic<bool> corruptLfs{false};  // serve safetensors bytes that do not match the listed sha256
    std::atomic<bool> wrongSha{false};    // list a wrong sha256 for safetensors
    std::atomic<bool> refuse{false};      // HTTP 200 with an error Code, as ModelScope does
    std::atomic<int> slowMs{0};           // sleep per 4 KiB chunk of a safetensors body

private:
    static bool isLfs(const std::string& name)
    {
        return name.size() > 12 && name.substr(name.size() - 12) == ".safetensors";
    }

    bool has(const std::string& file)
    {
        std::lock_guard lock(m_mutex);
        return m_files.count(file) > 0;
    }

    void record(const httplib::Request& req)
    {
        std::lock_guard lock(m_mutex);
        m_seen.push_back({req.path, req.get_param_value("FilePath"), req.get_header_value("Range")});
    }

    void serve(httplib::Response& res, const std::string& file)
    {
        std::string body = content(file);
        if (isLfs(file) && corruptLfs) body[10] = char(body[10] ^ 0x55);
        const int drop = isLfs(file) ? dropLfsOnce.exchange(0) : 0;
        const int slow = isLfs(file) ? slowMs.load() : 0;
        // A content provider so cpp-httplib applies Range requests; `drop` cuts the body short.
        res.set_content_provider(body.size(), "application/octet-stream",
                                 [body, drop, slow](size_t offset, size_t length, httplib::DataSink& sink) {
                                     if (drop > 0 && offset >= size_t(drop)) return false;
                                     size_t n = std::min(length, size_t(4096));
                                     if (drop > 0) n = std::min(n, size_t(drop) - offset);
                                     if (slow > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow));
                                     sink.write(body.data() + offset, n);
                                     return true;
                                 });
    }

    std::map<std::string, std::string> m_files;
    httplib::Server m_server;
    std::thread m_thread;
    std::mutex m_mutex;
    std::vector<Seen> m_seen;
    std::function<void(nlohmann::json&)> m_editListing;
};

}  // namespace brook::testsupport
