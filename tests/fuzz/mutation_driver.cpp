// Brook's small fuzzing driver, for builds without libFuzzer (g++, the default): runs the
// target's LLVMFuzzerTestOneInput on every corpus file, then on seeded random mutations of them
// (bit flips, byte inserts and erases, splices, repeated chunks, interesting integers in binary
// and as JSON numbers, JSON tokens) for a number of seconds or runs. No coverage feedback: it
// finds what blind mutation near valid inputs finds, deterministically for a seed.
// A crash is the process dying (a signal or a sanitizer report): nothing is caught, so the exit
// status is the verdict. Before dying, the input that did it is written to <prefix>crash-input.
//
//   fuzz_target [-seconds=60] [-runs=0] [-seed=1] [-max_len=65536] [-artifact_prefix=P] DIR|FILE...
// Directories are corpora; with only files, each file is run once (to reproduce a crash).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Present when linked with a sanitizer runtime: called before a sanitizer report ends the process.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// With a sanitizer runtime: end a report with abort() (the default is _exit, which no handler
// sees), so the SIGABRT handler below saves the input. Unused without sanitizers.
extern "C" const char* __asan_default_options() { return "abort_on_error=1"; }
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

namespace {

using Bytes = std::vector<uint8_t>;

// What the crash handlers write; set before each run. Plain globals: read in a signal handler.
const uint8_t* g_input = nullptr;
size_t g_inputSize = 0;
std::string g_crashPath = "crash-input";

void saveCurrentInput()
{
    // Only async-signal-safe calls from here on.
    const int fd = ::open(g_crashPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        size_t done = 0;
        while (done < g_inputSize) {
            const ssize_t n = ::write(fd, g_input + done, g_inputSize - done);
            if (n <= 0) break;
            done += size_t(n);
        }
        ::close(fd);
        const char note[] = "\nbrook-fuzz: the crashing input was written to ";
        (void)!::write(2, note, sizeof note - 1);
        (void)!::write(2, g_crashPath.c_str(), g_crashPath.size());
        (void)!::write(2, "\n", 1);
    }
}

void onFatalSignal(int sig)
{
    saveCurrentInput();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void installCrashHandlers()
{
    // Its own stack, so a stack overflow can still be reported.
    static std::vector<char> altStack(1 << 16);
    stack_t ss{};
    ss.ss_sp = altStack.data();
    ss.ss_size = altStack.size();
    ::sigaltstack(&ss, nullptr);
    struct sigaction action {};
    action.sa_handler = onFatalSignal;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::sigaction(sig, &action, nullptr);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(saveCurrentInput);
}

int runOne(const Bytes& input)
{
    g_input = input.data();
    g_inputSize = input.size();
    return LLVMFuzzerTestOneInput(input.data(), input.size());
}

Bytes readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

// Seeded random mutations of one input.
class Mutator {
public:
    Mutator(uint64_t seed, size_t maxLen, const std::vector<Bytes>& corpus)
        : m_rng(seed), m_maxLen(maxLen), m_corpus(corpus)
    {}

    Bytes next()
    {
        Bytes input = (!m_last.empty() && below(4) == 0) ? m_last
                      : m_corpus.empty()                 ? Bytes{}
                                                         : m_corpus[below(m_corpus.size())];
        const size_t count = 1 + below(4);
        for (size_t i = 0; i < count; ++i) mutate(input);
        if (input.size() > m_maxLen) input.resize(m_maxLen);
        m_last = input;
        return input;
    }

private:
    size_t below(size_t n) { return n == 0 ? 0 : size_t(m_rng() % n); }

    void insert(Bytes& b, size_t at, std::string_view text)
    {
        b.insert(b.begin() + long(at), text.begin(), text.end());
    }

    void mutate(Bytes& b)
    {
        switch (below(10)) {
        case 0:  // flip a bit
            if (!b.empty()) b[below(b.size())] ^= uint8_t(1u << below(8));
            break;
        case 1:  // set a byte
            if (!b.empty()) b[below(b.size())] = uint8_t(m_rng());
            break;
        case 2: {  // insert random bytes
            const size_t at = below(b.size() + 1), n = 1 + below(4);
            for (size_t i = 0; i < n; ++i) b.insert(b.begin() + long(at), uint8_t(m_rng()));
            break;
        }
        case 3: {  // erase a range
            if (b.empty()) break;
            const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(16, b.size() - at));
            b.erase(b.begin() + long(at), b.begin() + long(at + n));
            break;
        }
        case 4: {  // splice in a piece of another corpus input
            if (m_corpus.empty()) break;
            const Bytes& other = m_corpus[below(m_corpus.size())];
            if (other.empty()) break;
            const size_t from = below(other.size()), n = 1 + below(other.size() - from);
            b.insert(b.begin() + long(below(b.size() + 1)), other.begin() + long(from), other.begin() + long(from + n));
            break;
        }
        case 5: {  // repeat a chunk 2^k times: deep nesting, long strings, many keys
            if (b.empty()) break;
            const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(8, b.size() - at));
            const size_t copies = size_t(1) << below(17);
            if (b.size() + n * copies > m_maxLen) break;
            const Bytes chunk(b.begin() + long(at), b.begin() + long(at + n));
            Bytes repeated;
            repeated.reserve(n * copies);
            for (size_t i = 0; i < copies; ++i) repeated.insert(repeated.end(), chunk.begin(), chunk.end());
            b.insert(b.begin() + long(at), repeated.begin(), repeated.end());
            break;
        }
        case 6: {  // an interesting integer, little-endian, over 1, 2, 4 or 8 bytes
            static const uint64_t values[] = {0,
                                              1,
                                              0x7f,
                                              0x80,
                                              0xff,
                                              0x7fff,
                                              0x8000,
                                              0xffff,
                                              0x7fffffff,
                                              0x80000000,
                                              0xffffffff,
                                              uint64_t(1) << 40,
                                              0x7fffffffffffffff,
                                              0x8000000000000000,
                                              ~uint64_t(0),
                                              ~uint64_t(0) - 7};
            const size_t width = size_t(1) << below(4);
            if (b.size() < width) break;
            const uint64_t v = values[below(std::size(values))];
            const size_t at = below(b.size() - width + 1);
            for (size_t i = 0; i < width; ++i) b[at + i] = uint8_t(v >> (8 * i));
            break;
        }
        case 7: {  // an interesting JSON number in place of the digits near a random position
            static const char* numbers[] = {"0",
                                            "-1",
                                            "-2",
                                            "2147483647",
                                            "2147483648",
                                            "-2147483649",
                                            "4294967296",
                                            "1099511627776",
                                            "100000000",
                                            "9223372036854775807",
                                            "9223372036854775808",
                                            "-9223372036854775809",
                                            "18446744073709551615",
                                            "18446744073709551616",
                                            "1e309",
                                            "-1e309",
                                            "1e-400",
                                            "0.5",
                                            "-0",
                                            "3.4e38",
                                            "1e39"};
            const std::string_view number = numbers[below(std::size(numbers))];
            size_t at = below(b.size() + 1);
            while (at < b.size() && !(b[at] >= '0' && b[at] <= '9')) ++at;
            size_t end = at;
            while (end < b.size() && ((b[end] >= '0' && b[end] <= '9') || b[end] == '.' || b[end] == 'e')) ++end;
            b.erase(b.begin() + long(at), b.begin() + long(end));
            insert(b, at, number);
            break;
        }
        case 8: {  // a JSON token
            static const char* tokens[] = {"[",
                                           "]",
                                           "{",
                                           "}",
                                           "\"",
                                           ":",
                                           ",",
                                           "null",
                                           "true",
                                           "false",
                                           "\"\":",
                                           "\\u0000",
                                           "\\ud800",
                                           "\\",
                                           "\xff",
                                           "\xc3",
                                           "[[[[[[[[",
                                           "{\"a\":",
                                           "\"__metadata__\":",
                                           "\"dtype\":\"F32\"",
                                           "\"shape\":[",
                                           "\"data_offsets\":["};
            insert(b, below(b.size() + 1), tokens[below(std::size(tokens))]);
            break;
        }
        default: {  // copy a piece of the input over another place
            if (b.size() < 2) break;
            const size_t from = below(b.size()), to = below(b.size());
            const size_t n = 1 + below(std::min(b.size() - from, b.size() - to));
            std::memmove(b.data() + to, b.data() + from, n);
            break;
        }
        }
    }

    std::mt19937_64 m_rng;
    size_t m_maxLen;
    const std::vector<Bytes>& m_corpus;
    Bytes m_last;
};

bool readOption(std::string_view arg, std::string_view name, uint64_t& out)
{
    if (arg.substr(0, name.size()) != name) return false;
    out = std::strtoull(std::string(arg.substr(name.size())).c_str(), nullptr, 10);
    return true;
}

}  // namespace

int main(int argc, char** argv)
{
    uint64_t seconds = 60, runs = 0, seed = 1, maxLen = 65536;
    std::string artifactPrefix;
    std::vector<std::filesystem::path> dirs, files;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (readOption(arg, "-seconds=", seconds) || readOption(arg, "-max_total_time=", seconds) ||
            readOption(arg, "-runs=", runs) || readOption(arg, "-seed=", seed) || readOption(arg, "-max_len=", maxLen))
            continue;
        if (arg.substr(0, 17) == "-artifact_prefix=") {
            artifactPrefix = std::string(arg.substr(17));
            continue;
        }
        if (!arg.empty() && arg[0] == '-') {
            std::fprintf(stderr, "brook-fuzz: unknown option %s\n", argv[i]);
            return 2;
        }
        std::error_code ec;
        if (std::filesystem::is_directory(arg, ec)) dirs.emplace_back(arg);
        else if (std::filesystem::is_regular_file(arg, ec)) files.emplace_back(arg);
        else {
            std::fprintf(stderr, "brook-fuzz: no such file or folder: %s\n", argv[i]);
            return 2;
        }
    }
    g_crashPath = artifactPrefix + "crash-input";
    installCrashHandlers();

    if (dirs.empty()) {  // reproduce: each file once
        for (const auto& file : files) {
            std::fprintf(stderr, "brook-fuzz: running %s\n", file.string().c_str());
            runOne(readFile(file));
        }
        std::printf("brook-fuzz: ran %zu file(s), no crash\n", files.size());
        return 0;
    }

    std::vector<std::filesystem::path> paths = files;
    for (const auto& dir : dirs) {
        for (const auto& entry : std::filesystem::directory_iterator(dir))
            if (entry.is_regular_file()) paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());  // the same order everywhere, so a seed means one run
    std::vector<Bytes> corpus;
    for (const auto& path : paths) corpus.push_back(readFile(path));
    for (const Bytes& input : corpus) runOne(input);

    Mutator mutator(seed, size_t(maxLen), corpus);
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::seconds(seconds);
    uint64_t iterations = 0;
    while (runs == 0 || iterations < runs) {
        if (runs == 0 && (iterations & 63) == 0 && std::chrono::steady_clock::now() >= deadline) break;
        runOne(mutator.next());
        ++iterations;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("brook-fuzz: %zu corpus inputs, %llu mutated inputs in %.1f s (seed %llu), no crash\n", corpus.size(),
                (unsigned long long)iterations, elapsed, (unsigned long long)seed);
    return 0;
}
