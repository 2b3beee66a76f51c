#include "platform/resource_path.h"

#include "platform/executable_path.h"

#include <system_error>

namespace brook {

std::filesystem::path findResource(const std::string& relative)
{
    const std::filesystem::path exe = executablePath();
    if (exe.empty()) return {};
    const std::filesystem::path candidate = exe.parent_path().parent_path() / "share" / "brook" / relative;
    std::error_code ec;
    return std::filesystem::exists(candidate, ec) ? candidate : std::filesystem::path{};
}

}  // namespace brook
