// Where the tools find the data files Brook ships (resources/ in the source tree): installed,
// they are in <prefix>/share/brook/ next to <prefix>/bin/; in a build tree, the tools fall back
// to the source tree the build was configured from (BROOK_SOURCE_DIR, set by src/app/CMakeLists).
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace brook {

// `relative` is a path under resources/ (e.g. "calibration/calibration.txt"); empty if neither
// location has it.
inline std::filesystem::path findResource(const std::string& relative)
{
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "brook" / relative;
        if (std::filesystem::is_regular_file(installed, ec)) return installed;
    }
#ifdef BROOK_SOURCE_DIR
    const std::filesystem::path source = std::filesystem::path(BROOK_SOURCE_DIR) / "resources" / relative;
    if (std::filesystem::is_regular_file(source, ec)) return source;
#endif
    return {};
}

} // namespace brook
