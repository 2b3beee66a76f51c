#include "hub/hub_listing.h"

#include "hub/cache_path.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>

namespace brook {

namespace {

using nlohmann::json;

bool endsWith(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

json parseBody(std::string_view body) { return json::parse(body.begin(), body.end(), nullptr, false); }

// Files over a petabyte are a lie; the bound keeps byte sums far from int64_t overflow.
constexpr int64_t kMaxFileSize = int64_t(1) << 50;

// A size field: absent or null is "unknown" (-1); anything else must be an integer in range.
std::optional<int64_t> readSize(const json& object, const char* key)
{
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return int64_t(-1);
    if (it->is_number_unsigned()) {
        if (it->get<uint64_t>() > uint64_t(kMaxFileSize)) return std::nullopt;
        return int64_t(it->get<uint64_t>());
    }
    if (it->is_number_integer()) {
        const int64_t v = it->get<int64_t>();
        if (v < 0 || v > kMaxFileSize) return std::nullopt;
        return v;
    }
    return std::nullopt;
}

// A string field: absent or null is empty; another type is nullopt (malformed).
std::optional<std::string> readString(const json& object, const char* key)
{
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::string();
    if (!it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

// A short, non-recursive rendering of a JSON value for a message (a hostile value may be deeply
// nested, and dump() recurses).
std::string describe(const json& value)
{
    if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
    if (value.is_string()) return value.dump(-1, ' ', false, json::error_handler_t::replace);
    return std::string("a ") + value.type_name();
}

}  // namespace

bool isModelFilePath(const std::string& path)
{
    if (path.find('/') != std::string::npos) return false;
    return endsWith(path, ".json") || endsWith(path, ".safetensors") || path == "tokenizer.model";
}

bool isLowerHex(std::string_view text, size_t digits)
{
    return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

Result<HubRepoInfo> parseHubListing(std::string_view body, const std::string& repoId)
{
    const json listing = parseBody(body);
    const std::string where = "the hub's answer for " + repoId;
    if (listing.is_discarded() || !listing.is_object()) return makeError(where + " is not JSON");
    HubRepoInfo info;
    const auto sha = readString(listing, "sha");
    if (!sha || sha->empty()) return makeError(where + " has no 'sha'");
    info.commit = lower(*sha);
    if (!isLowerHex(info.commit, 40)) return makeError(where + " has a malformed 'sha'");
    const auto siblings = listing.find("siblings");
    if (siblings == listing.end() || !siblings->is_array()) return makeError(where + " has no 'siblings' list");
    for (const json& s : *siblings) {
        if (!s.is_object()) continue;
        const auto name = readString(s, "rfilename");
        if (!name || name->empty()) continue;
        HubFile file;
        file.path = *name;
        if (!isModelFilePath(file.path)) continue;
        const std::string what = where + ", file '" + file.path + "'";
        if (const std::string why = unsafePathReason(file.path); !why.empty())
            return makeError(what + ": unsafe file name (" + why + ")");
        const auto size = readSize(s, "size");
        const auto blobId = readString(s, "blobId");
        if (!size) return makeError(what + ": malformed size");
        if (!blobId) return makeError(what + ": malformed blob id");
        file.size = *size;
        file.blobId = lower(*blobId);
        if (const auto lfs = s.find("lfs"); lfs != s.end() && !lfs->is_null()) {
            if (!lfs->is_object()) return makeError(what + ": malformed 'lfs'");
            const auto sha256 = readString(*lfs, "sha256");
            const auto lfsSize = readSize(*lfs, "size");
            if (!sha256 || !isLowerHex(lower(*sha256), 64))
                return makeError(what + ": malformed LFS sha256 (not 64 hex digits)");
            if (!lfsSize) return makeError(what + ": malformed LFS size");
            file.sha256 = lower(*sha256);
            if (*lfsSize >= 0) file.size = *lfsSize;
        }
        // LFS blobs are named by their sha256; git blobs by their id, which is also their check.
        if (!file.blobId.empty() && !isLowerHex(file.blobId, 40))
            return makeError(what + ": malformed blob id (not 40 hex digits)");
        if (file.blobName().empty()) return makeError(what + ": no blob id");
        info.files.push_back(std::move(file));
    }
    const bool hasConfig =
        std::any_of(info.files.begin(), info.files.end(), [](const HubFile& f) { return f.path == "config.json"; });
    if (!hasConfig) return makeError(repoId + " has no config.json: it is not a transformers model repository");
    return info;
}

std::string modelScopeMessage(std::string_view body)
{
    const json answer = parseBody(body);
    if (!answer.is_object()) return {};
    return readString(answer, "Message").value_or(std::string());
}

Result<std::vector<ModelScopeFile>> parseModelScopeListing(std::string_view body, const std::string& modelId)
{
    const json answer = parseBody(body);
    const std::string where = "ModelScope's file list for " + modelId;
    if (answer.is_discarded() || !answer.is_object()) return makeError(where + " is not JSON");
    if (const auto code = answer.find("Code"); code != answer.end() && *code != 200) {
        const std::string message = readString(answer, "Message").value_or(std::string());
        return makeError("ModelScope refused the file list of " + modelId + " (code " + describe(*code) + ")" +
                         (message.empty() ? "" : " (ModelScope says: " + message + ")"));
    }
    const auto data = answer.find("Data");
    const json* files =
        data != answer.end() && data->is_object() && data->contains("Files") ? &(*data)["Files"] : nullptr;
    if (!files || !files->is_array()) return makeError(where + " has no Data.Files");

    std::vector<ModelScopeFile> out;
    for (const json& f : *files) {
        if (!f.is_object()) continue;
        const auto path = readString(f, "Path");
        const std::string what = where + ", entry '" + (path ? *path : std::string("?")) + "'";
        const auto type = readString(f, "Type");
        if (!type) return makeError(what + ": malformed Type (" + describe(f["Type"]) + ")");
        if (*type == "tree") continue;
        if (!path) return makeError(what + ": malformed Path");
        if (path->empty()) continue;
        ModelScopeFile file;
        file.path = *path;
        if (!isModelFilePath(file.path)) continue;
        if (const std::string why = unsafePathReason(file.path); !why.empty())
            return makeError(what + ": unsafe file name (" + why + ")");
        const auto size = readSize(f, "Size");
        if (!size) return makeError(what + ": malformed Size (" + describe(f["Size"]) + ")");
        file.size = *size;
        const auto sha256 = readString(f, "Sha256");
        if (!sha256) return makeError(what + ": malformed Sha256 (" + describe(f["Sha256"]) + ")");
        file.sha256 = lower(*sha256);
        if (!file.sha256.empty() && !isLowerHex(file.sha256, 64))
            return makeError(what + ": malformed Sha256 (not 64 hex digits)");
        out.push_back(std::move(file));
    }
    const bool hasConfig =
        std::any_of(out.begin(), out.end(), [](const ModelScopeFile& f) { return f.path == "config.json"; });
    if (!hasConfig)
        return makeError(modelId + " on ModelScope has no config.json: it is not a transformers model repository");
    return out;
}

}  // namespace brook
