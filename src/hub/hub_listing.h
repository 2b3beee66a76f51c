// The file listings of the Hugging Face Hub and ModelScope, parsed from the body the server sent
// and checked before any name in them reaches the file system: sha256 digests are 64 hex digits,
// git blob ids 40, commits 40, sizes non-negative integers, and every model file's path passes
// unsafePathReason (cache_path.h). A listing that breaks a rule is an error naming the file, not
// a file skipped, since it is either broken or hostile. Pure functions (no network, no files),
// so the fuzz target drives them directly; thread-safe.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brook {

struct HubFile {
    std::string path;    // inside the repository ("model.safetensors")
    int64_t size = -1;   // -1: unknown
    std::string blobId;  // git object id: 40 hex digits (for non-LFS files, the content's check)
    std::string sha256;  // LFS files: the content's sha256, 64 hex digits (also their blob name)
    bool isLfs() const { return !sha256.empty(); }
    std::string blobName() const { return isLfs() ? sha256 : blobId; }
};

struct HubRepoInfo {
    std::string commit;
    std::vector<HubFile> files;  // model files only
};

struct ModelScopeFile {
    std::string path;    // inside the repository ("model.safetensors")
    int64_t size = -1;   // -1: unknown
    std::string sha256;  // empty: the listing gave none (then only the size is checked)
};

// Whether a repository file belongs in a model folder Brook loads: top-level JSON, safetensors
// and tokenizer.model (sub-folders hold other formats: onnx, gguf).
bool isModelFilePath(const std::string& path);
// `text` is `digits` lowercase hex digits.
bool isLowerHex(std::string_view text, size_t digits);

// GET /api/models/<id>/revision/<rev>?blobs=true answered 200 with `body`.
Result<HubRepoInfo> parseHubListing(std::string_view body, const std::string& repoId);

// GET /api/v1/models/<id>/repo/files answered 200 with `body` ({"Code": 200, "Data": {"Files": [...]}}).
Result<std::vector<ModelScopeFile>> parseModelScopeListing(std::string_view body, const std::string& modelId);
// ModelScope's "Message" in an answer (errors carry one); empty when there is none.
std::string modelScopeMessage(std::string_view body);

}  // namespace brook
