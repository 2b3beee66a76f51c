// Paths from and to UTF-8 text. Brook's strings are UTF-8 everywhere (argv under the programs'
// UTF-8 manifest on Windows, JSON, Qt's toStdString), but on Windows std::filesystem::path(std::string)
// and path::string() in mingw's libstdc++ convert byte by byte, so 模型 became a mojibake folder
// name, and a name outside Latin-1 could not be turned back into text at all. The u8 forms
// convert properly everywhere; on Linux they are the same bytes. Use these wherever text becomes a
// path or a path becomes text.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace brook {

inline std::filesystem::path pathFromUtf8(std::string_view text)
{
    return std::filesystem::path(std::u8string(text.begin(), text.end()));
}

inline std::string utf8FromPath(const std::filesystem::path& path)
{
    const std::u8string text = path.u8string();
    return std::string(text.begin(), text.end());
}

}  // namespace brook
