// HubClient: downloads a model repository from the Hugging Face Hub (or a mirror) into the
// standard cache layout huggingface_hub uses, so caches are shared with vLLM and transformers:
//   <cache>/models--org--name/blobs/<sha256 or git oid>
//   <cache>/models--org--name/snapshots/<commit>/<file> -> ../../blobs/<...>
//   <cache>/models--org--name/refs/<revision>            (the commit, as text)
// Only the files a model folder needs are fetched (JSON, safetensors, tokenizer.model). The
// listing is checked before any name in it touches the disk (hub_listing.h), every file is
// checked after download (LFS files by sha256, git files by their blob id), and a cached git
// file that fails its blob id is fetched again; LFS blobs, checked when written, are trusted by
// size, as huggingface_hub does, so a start does not re-hash gigabytes.
// Thread-safe in the sense that separate instances may run in parallel; one instance is not.
#pragma once

#include "engine/result.h"
#include "hub/hub_listing.h"
#include "hub/hub_options.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace brook {

struct DownloadProgress {
    std::string file;   // repository path of the file being fetched
    int fileIndex = 0;  // 0-based, among fileCount files still to fetch
    int fileCount = 0;
    int64_t fileBytesDone = 0;
    int64_t fileBytesTotal = -1;  // -1: unknown
    int64_t bytesDone = 0;        // over all files to fetch
    int64_t bytesTotal = -1;
};
// Return false to cancel the download.
using DownloadProgressCallback = std::function<bool(const DownloadProgress&)>;

// The byte callback for file `fileIndex` of `fileCount` being fetched, reporting to `progress`
// (which may be empty) with `bytesBefore` bytes of earlier files done out of `bytesTotal`.
// Shared by the Hugging Face and ModelScope clients.
std::function<bool(int64_t, int64_t)> fileProgressReporter(const DownloadProgressCallback& progress,
                                                           const std::string& file, int fileIndex, int fileCount,
                                                           int64_t bytesBefore, int64_t bytesTotal);

class HubClient {
public:
    explicit HubClient(HubOptions options);

    // "org/name" by the hub's own rules (huggingface_hub's validate_repo_id): each part 1-96 of
    // [A-Za-z0-9._-], starting with a letter or digit and ending with one or '_', no "--" or "..",
    // the name not ending in ".git".
    static bool isRepoId(const std::string& text) { return repoIdProblem(text).empty(); }
    // Why `text` is not a repository id, for messages; empty when it is one.
    static std::string repoIdProblem(const std::string& text);
    // Whether a repository file belongs in a model folder Brook loads.
    static bool isModelFile(const std::string& path) { return isModelFilePath(path); }

    // Lists the revision's files (GET /api/models/<id>/revision/<rev>?blobs=true).
    Result<HubRepoInfo> repoInfo(const std::string& repoId) const;
    // Fetches whatever of the snapshot is missing and returns its folder. Offline (or when the
    // hub cannot be reached) a complete cached snapshot is used instead.
    Result<std::filesystem::path> download(const std::string& repoId,
                                           const DownloadProgressCallback& progress = {}) const;
    // The cached snapshot for the options' revision, when one with a config.json exists.
    std::optional<std::filesystem::path> cachedSnapshot(const std::string& repoId) const;
    // <cache>/models--org--name
    std::filesystem::path repoCacheDir(const std::string& repoId) const;

    const HubOptions& options() const { return m_options; }

private:
    Result<void> fetchFile(const std::string& repoId, const std::string& commit, const HubFile& file,
                           const std::function<bool(int64_t, int64_t)>& progress) const;
    std::string notReachableMessage(const std::string& repoId, const std::string& why) const;

    HubOptions m_options;
};

}  // namespace brook
