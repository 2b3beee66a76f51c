#include "hub/hub_options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

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

std::string trim(std::string s)
{
    const auto notSpace = [](unsigned char c) { return !std::isspace(c); };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), notSpace));
    s.erase(std::find_if(s.rbegin(), s.rend(), notSpace).base(), s.end());
    return s;
}

}  // namespace

HubOptions HubOptions::fromEnvironment()
{
    HubOptions o;
    if (std::string endpoint = env("HF_ENDPOINT"); !endpoint.empty()) {
        while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
        o.endpoint = endpoint;
    }
    // huggingface_hub's precedence: HF_HUB_CACHE, then HF_HOME/hub, then XDG_CACHE_HOME, then ~/.cache.
    std::filesystem::path home;
    if (std::string hfHome = env("HF_HOME"); !hfHome.empty()) home = hfHome;
    else if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) home = std::filesystem::path(xdg) / "huggingface";
    else home = std::filesystem::path(env("HOME").empty() ? "/tmp" : env("HOME")) / ".cache" / "huggingface";
    if (std::string cache = env("HF_HUB_CACHE"); !cache.empty()) o.cacheDir = cache;
    else if (std::string legacy = env("HUGGINGFACE_HUB_CACHE"); !legacy.empty()) o.cacheDir = legacy;
    else o.cacheDir = home / "hub";

    o.token = env("HF_TOKEN");
    if (o.token.empty()) o.token = env("HUGGING_FACE_HUB_TOKEN");
    if (o.token.empty()) {
        const std::filesystem::path tokenFile =
            env("HF_TOKEN_PATH").empty() ? home / "token" : std::filesystem::path(env("HF_TOKEN_PATH"));
        std::ifstream in(tokenFile);
        std::string line;
        if (in && std::getline(in, line)) o.token = trim(line);
    }
    o.offline = truthy(env("HF_HUB_OFFLINE"));
    return o;
}

}  // namespace brook
