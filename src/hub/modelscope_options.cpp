#include "hub/modelscope_options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace brook {

namespace {

std::string env(const char* name)
{
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

bool truthy(std::string value)
{
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return value == "1" || value == "on" || value == "yes" || value == "true";
}

}  // namespace

std::string ModelScopeOptions::endpointFromDomain(std::string domain)
{
    const auto notSpace = [](unsigned char c) { return !std::isspace(c); };
    domain.erase(domain.begin(), std::find_if(domain.begin(), domain.end(), notSpace));
    domain.erase(std::find_if(domain.rbegin(), domain.rend(), notSpace).base(), domain.end());
    while (!domain.empty() && domain.back() == '/') domain.pop_back();
    if (domain.empty()) return kDefaultEndpoint;
    // The SDK prepends "https://" to a bare domain; a full URL (a local test server) is kept.
    if (domain.rfind("http://", 0) == 0 || domain.rfind("https://", 0) == 0) return domain;
    return "https://" + domain;
}

ModelScopeOptions ModelScopeOptions::fromEnvironment()
{
    ModelScopeOptions o;
    if (std::string domain = env("MODELSCOPE_DOMAIN"); !domain.empty()) o.endpoint = endpointFromDomain(domain);
    if (std::string cache = env("MODELSCOPE_CACHE"); !cache.empty()) {
        if (cache.front() == '~' && !env("HOME").empty()) cache = env("HOME") + cache.substr(1);  // the SDK expands ~
        o.cacheDir = cache;
    } else {
        o.cacheDir =
            std::filesystem::path(env("HOME").empty() ? "/tmp" : env("HOME")) / ".cache" / "modelscope" / "hub";
    }
    o.offline = truthy(env("MODELSCOPE_OFFLINE"));
    return o;
}

}  // namespace brook
