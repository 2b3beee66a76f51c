#include "hub/model_resolver.h"

#include "engine/utf8_path.h"

#include "hub/modelscope_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>

namespace brook {

namespace fs = std::filesystem;

ModelResolver::ModelResolver(HubOptions options)
    : m_options(std::move(options)), m_modelScope(ModelScopeOptions::fromEnvironment())
{
    m_modelScope.offline = m_modelScope.offline || m_options.offline;
}

ModelResolver::ModelResolver(HubOptions options, ModelScopeOptions modelScope)
    : m_options(std::move(options)), m_modelScope(std::move(modelScope))
{}

Result<fs::path> ModelResolver::resolve(const std::string& model, const DownloadProgressCallback& progress) const
{
    if (model.empty()) return makeError("no model given");
    std::error_code ec;
    const fs::path asPath = pathFromUtf8(model);
    if (fs::is_directory(asPath, ec)) {
        if (!fs::exists(asPath / "config.json", ec)) return makeError("model folder " + model + " has no config.json");
        return asPath;
    }
    if (fs::exists(asPath, ec)) return makeError(model + " is a file; give the model's folder");
    if (auto modelScopeId = ModelScopeClient::stripPrefix(model)) {
        if (const std::string why = HubClient::repoIdProblem(*modelScopeId); !why.empty())
            return makeError("'" + model + "' is not a ModelScope id like modelscope:" +
                             ModelScopeClient::kDefaultModel + " (" + why + ")");
        return ModelScopeClient(m_modelScope).download(*modelScopeId, progress);
    }
    // Paths that look like paths never go to the hub.
    if (model.front() == '/' || model.front() == '.' || model.front() == '~')
        return makeError("no model folder at " + model);
    // One '/' reads as an id meant for the hub: say which of the hub's rules it breaks.
    if (std::count(model.begin(), model.end(), '/') == 1 && !HubClient::isRepoId(model))
        return makeError("'" + model + "' is not a valid Hugging Face repository id: " +
                         HubClient::repoIdProblem(model) + " (or no model folder is there)");
    if (!HubClient::isRepoId(model))
        return makeError("'" + model +
                         "' is neither a model folder nor a Hugging Face id like baidu/ERNIE-4.5-0.3B-PT "
                         "(or a ModelScope id like modelscope:" +
                         ModelScopeClient::kDefaultModel + ")");
    return HubClient(m_options).download(model, progress);
}

DownloadProgressCallback ModelResolver::loggingProgress(double intervalSeconds)
{
    using Clock = std::chrono::steady_clock;
    auto last = std::make_shared<Clock::time_point>(Clock::now());
    auto lastFile = std::make_shared<std::string>();
    return [=](const DownloadProgress& p) {
        const auto now = Clock::now();
        const bool fileDone = p.fileBytesTotal >= 0 && p.fileBytesDone == p.fileBytesTotal;
        if (std::chrono::duration<double>(now - *last).count() < intervalSeconds && !fileDone) return true;
        if (fileDone && *lastFile == p.file) return true;  // log a finished file once
        *last = now;
        if (fileDone) *lastFile = p.file;
        const double mib = 1024.0 * 1024.0;
        if (p.bytesTotal > 0)
            spdlog::info("downloading {}: {:.1f}/{:.1f} MiB ({:.0f}% of all files)", p.file, p.fileBytesDone / mib,
                         p.fileBytesTotal / mib, 100.0 * double(p.bytesDone) / double(p.bytesTotal));
        else spdlog::info("downloading {}: {:.1f} MiB", p.file, p.fileBytesDone / mib);
        return true;
    };
}

}  // namespace brook
