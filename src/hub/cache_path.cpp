#include "hub/cache_path.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace brook {

namespace {

bool isWindowsDeviceName(std::string_view part)
{
    // The name before the first dot counts: "nul.json" is the NUL device too.
    std::string base(part.substr(0, part.find('.')));
    std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    static const std::array<std::string_view, 4> kNames = {"CON", "PRN", "AUX", "NUL"};
    if (std::find(kNames.begin(), kNames.end(), base) != kNames.end()) return true;
    return base.size() == 4 && (base.compare(0, 3, "COM") == 0 || base.compare(0, 3, "LPT") == 0) && base[3] >= '1' &&
           base[3] <= '9';
}

}  // namespace

std::string unsafePathReason(std::string_view path)
{
    if (path.empty()) return "it is empty";
    if (path.size() > 1024) return "it is longer than 1024 characters";
    if (path.front() == '/') return "it is absolute";
    for (unsigned char c : path) {
        if (c < 0x20 || c == 0x7f) return "it has a control character";
        if (c == '\\') return "it has a backslash";
        if (c == ':') return "it has a ':' (a drive letter or stream on Windows)";
        if (c == '<' || c == '>' || c == '"' || c == '|' || c == '?' || c == '*')
            return "it has a character Windows forbids";
    }
    size_t start = 0;
    while (true) {
        const size_t slash = path.find('/', start);
        const std::string_view part =
            path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (part.empty()) return "it has an empty part";
        if (part == "." || part == "..") return "it has a '" + std::string(part) + "' part";
        if (part.back() == '.' || part.back() == ' ') return "a part ends in '.' or ' '";
        if (isWindowsDeviceName(part)) return "'" + std::string(part) + "' is a device name on Windows";
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return {};
}

Result<std::filesystem::path> pathInside(const std::filesystem::path& root, std::string_view relative)
{
    if (const std::string why = unsafePathReason(relative); !why.empty())
        return makeError("'" + std::string(relative) + "' cannot be placed under " + root.string() + ": " + why);
    // The listing's names are UTF-8; a u8string keeps them so on Windows too.
    return root / std::filesystem::path(std::u8string(relative.begin(), relative.end()));
}

}  // namespace brook
