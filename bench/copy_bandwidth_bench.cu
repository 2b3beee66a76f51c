// copy_bandwidth_bench: what the GPU's memory delivers, measured beside the engine's figures
// (issue 51: every README GPU figure re-measured next to the copy bandwidth in the same call).
//
//   copy_bandwidth_bench [--gib G] [--repeats N] [--warmup N]
//
// Two measures over one buffer of G GiB (default 1, far larger than any L2):
//   copy  cudaMemcpyAsync device to device, GB/s counting the bytes read plus the bytes written;
//   read  a kernel that sums the buffer with 16-byte loads, GB/s of bytes read (the sum is
//         checked against the value the buffer was filled with, so the loads cannot be skipped).
// Each is timed with CUDA events around every repeat, after untimed warm-up runs; the line gives
// the median and the best repeat. GB = 1e9 bytes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(cudaError_t status, const char* what, int line)
{
    if (status == cudaSuccess) return;
    std::fprintf(stderr, "copy_bandwidth_bench: %s failed (line %d): %s (%s)\n", what, line,
                 cudaGetErrorName(status), cudaGetErrorString(status));
    std::exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // independent 16-byte loads in flight per thread per iteration

// Sums the buffer as 32-bit words. Each thread walks the buffer in a grid-stride loop, kUnroll
// uint4 loads at a time, then the block reduces in shared memory and adds into *total.
__global__ void sumKernel(const uint4* __restrict__ data, size_t count, unsigned long long* total)
{
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned long long acc = 0;
    for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(data + i + u * stride);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            acc += static_cast<unsigned long long>(v[u].x) + v[u].y + v[u].z + v[u].w;
    }
    for (; i < count; i += stride) {
        const uint4 v = __ldcs(data + i);
        acc += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
    }
    __shared__ unsigned long long partial[kThreads];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}

struct Stats {
    double medianMs = 0;
    double bestMs = 0;
};

Stats summarize(std::vector<float> ms)
{
    std::sort(ms.begin(), ms.end());
    Stats s;
    s.bestMs = ms.front();
    const size_t n = ms.size();
    s.medianMs = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    return s;
}

double gbPerS(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

int parseInt(const char* flag, const char* value)
{
    char* end = nullptr;
    const long v = std::strtol(value, &end, 10);
    if (!end || *end || v < 0 || v > 1000000) {
        std::fprintf(stderr, "copy_bandwidth_bench: bad value '%s' for %s\n", value, flag);
        std::exit(2);
    }
    return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv)
{
    double gib = 1.0;
    int repeats = 20;
    int warmup = 3;
    for (int a = 1; a < argc; ++a) {
        const std::string flag = argv[a];
        if (flag == "-h" || flag == "--help") {
            std::printf("usage: copy_bandwidth_bench [--gib G] [--repeats N] [--warmup N]\n");
            return 0;
        }
        if (a + 1 >= argc) {
            std::fprintf(stderr, "copy_bandwidth_bench: %s needs a value\n", flag.c_str());
            return 2;
        }
        const char* value = argv[++a];
        if (flag == "--gib") {
            gib = std::atof(value);
            if (!(gib > 0 && gib <= 64)) {
                std::fprintf(stderr, "copy_bandwidth_bench: --gib must be in (0, 64]\n");
                return 2;
            }
        } else if (flag == "--repeats") {
            repeats = std::max(1, parseInt("--repeats", value));
        } else if (flag == "--warmup") {
            warmup = parseInt("--warmup", value);
        } else {
            std::fprintf(stderr, "copy_bandwidth_bench: unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    // Whole 64 KiB chunks: every uint4 belongs to the buffer.
    const size_t chunk = size_t{64} << 10;
    const size_t bytes = std::max<size_t>(chunk, static_cast<size_t>(gib * double(size_t{1} << 30)) / chunk * chunk);

    int device = 0;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, device));
    int driverVersion = 0, runtimeVersion = 0, memClockKHz = 0, busBits = 0;
    CHECK(cudaDriverGetVersion(&driverVersion));
    CHECK(cudaRuntimeGetVersion(&runtimeVersion));
    CHECK(cudaDeviceGetAttribute(&memClockKHz, cudaDevAttrMemoryClockRate, device));
    CHECK(cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, device));
    // Double data rate: two transfers per clock over the whole bus.
    const double peakGBs = 2.0 * memClockKHz * 1e3 * (busBits / 8.0) / 1e9;
    std::printf("GPU: %s (sm_%d%d, %d SMs, %.1f GiB), CUDA driver %d.%d, runtime %d.%d, "
                "memory peak from clock x bus %.0f GB/s (%d kHz x %d bits, DDR)\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                double(prop.totalGlobalMem) / double(size_t{1} << 30), driverVersion / 1000,
                (driverVersion % 1000) / 10, runtimeVersion / 1000, (runtimeVersion % 1000) / 10,
                peakGBs, memClockKHz, busBits);

    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    void* src = nullptr;
    void* dst = nullptr;
    unsigned long long* total = nullptr;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMalloc(&total, sizeof(unsigned long long)));
    CHECK(cudaMemsetAsync(src, 0x01, bytes, stream));
    CHECK(cudaMemsetAsync(dst, 0, bytes, stream));
    CHECK(cudaStreamSynchronize(stream));

    // prepare() runs before the start event, op() between the two events.
    auto timeIt = [&](auto&& prepare, auto&& op) {
        std::vector<float> ms;
        for (int r = -warmup; r < repeats; ++r) {
            prepare();
            CHECK(cudaEventRecord(start, stream));
            op();
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(stop, stream));
            CHECK(cudaEventSynchronize(stop));
            float elapsed = 0;
            CHECK(cudaEventElapsedTime(&elapsed, start, stop));
            if (r >= 0) ms.push_back(elapsed);
        }
        return summarize(ms);
    };

    const double gibShown = double(bytes) / double(size_t{1} << 30);

    const Stats copy = timeIt([] {},
                              [&] { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)); });
    std::printf("copy (cudaMemcpyAsync device to device) %.2f GiB: median %.0f GB/s, best %.0f GB/s "
                "(read + write bytes; median %.3f ms, %d repeats after %d warm-up)\n",
                gibShown, gbPerS(2.0 * bytes, copy.medianMs), gbPerS(2.0 * bytes, copy.bestMs), copy.medianMs,
                repeats, warmup);

    const size_t count = bytes / sizeof(uint4);
    const int blocks = prop.multiProcessorCount * std::max(1, prop.maxThreadsPerMultiProcessor / kThreads);
    // The sum of the last repeat is checked: every 32-bit word holds 0x01010101.
    const Stats read = timeIt(
        [&] { CHECK(cudaMemsetAsync(total, 0, sizeof(unsigned long long), stream)); },
        [&] { sumKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(src), count, total); });
    unsigned long long got = 0;
    CHECK(cudaMemcpy(&got, total, sizeof(got), cudaMemcpyDeviceToHost));
    const unsigned long long want = static_cast<unsigned long long>(bytes / 4) * 0x01010101ull;
    std::printf("read (sum kernel, 16-byte loads, %d x %d threads) %.2f GiB: median %.0f GB/s, best %.0f GB/s "
                "(read bytes; median %.3f ms, %d repeats after %d warm-up)\n",
                blocks, kThreads, gibShown, gbPerS(double(bytes), read.medianMs), gbPerS(double(bytes), read.bestMs),
                read.medianMs, repeats, warmup);
    if (got != want) {
        std::fprintf(stderr, "copy_bandwidth_bench: read kernel sum %llu, expected %llu\n", got, want);
        return 1;
    }

    // The copy landed: the first and last words of the destination hold the fill.
    uint32_t ends[2] = {0, 0};
    CHECK(cudaMemcpy(&ends[0], dst, 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&ends[1], static_cast<char*>(dst) + bytes - 4, 4, cudaMemcpyDeviceToHost));
    if (ends[0] != 0x01010101u || ends[1] != 0x01010101u) {
        std::fprintf(stderr, "copy_bandwidth_bench: the copy's destination does not hold the source\n");
        return 1;
    }

    CHECK(cudaFree(total));
    CHECK(cudaFree(dst));
    CHECK(cudaFree(src));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaStreamDestroy(stream));
    return 0;
}
