// readRegularFile: opens without blocking (O_NONBLOCK makes open() of a FIFO with no writer
// return at once), then decides on fstat of the open descriptor, so the file checked is the
// file read. Windows has no FIFOs in the file system; there a status check before reading suffices.
#include "engine/regular_file.h"

#include <cerrno>
#include <cstring>

#ifdef _WIN32
#include <fstream>
#include <sstream>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace brook {

namespace {

Error tooLarge(const std::filesystem::path& path, uint64_t size, uint64_t maxBytes)
{
    return makeError(path.string() + ": file is " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(maxBytes) + " a file of this kind may have");
}

}  // namespace

#ifdef _WIN32
Result<std::string> readRegularFile(const std::filesystem::path& path, uint64_t maxBytes)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) return makeError(path.string() + ": cannot read file (missing?)");
    if (!std::filesystem::is_regular_file(status)) return makeError(path.string() + ": not a regular file");
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) return makeError(path.string() + ": cannot read the file size");
    if (size > maxBytes) return tooLarge(path, size, maxBytes);
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(path.string() + ": cannot read file");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}
#else
Result<std::string> readRegularFile(const std::filesystem::path& path, uint64_t maxBytes)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int err = errno;
        return makeError(path.string() + ": cannot read file" + (err == ENOENT ? " (missing?)" : "") + ": " +
                         std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(path.string() + ": not a regular file");
    }
    if (uint64_t(st.st_size) > maxBytes) {
        ::close(fd);
        return tooLarge(path, uint64_t(st.st_size), maxBytes);
    }
    std::string text(size_t(st.st_size), '\0');
    size_t have = 0;
    // Read to the size fstat gave; a file that shrinks meanwhile ends early, one that grows is cut.
    while (have < text.size()) {
        const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return makeError(path.string() + ": cannot read file: " + std::strerror(err));
        }
        if (n == 0) break;
        have += size_t(n);
    }
    ::close(fd);
    text.resize(have);
    return text;
}
#endif

}  // namespace brook
