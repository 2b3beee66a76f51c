// Where the tools find the data files Brook ships (resources/ in the source tree). Installed,
// they are in <prefix>/share/brook/ next to <prefix>/bin/; the build mirrors that layout
// (build/bin/ beside build/share/brook/), so one rule serves both and no source path is compiled in.
#pragma once

#include <filesystem>
#include <string>

namespace brook {

// Thread-safe. `relative` is a path under share/brook/ (e.g. "calibration/calibration.txt" or
// "test-corpus"); the file or folder's path, or empty if it is not there.
std::filesystem::path findResource(const std::string& relative);

}  // namespace brook
