// attention_bench: paged decode attention at ERNIE-4.5-0.3B's shape (16 query heads, 2 kv heads,
// head dim 128, 16-slot blocks, bf16), over batch sizes and context lengths, as the decode
// graphs launch it (maxContextLen = the graph's, so the split count is the captured one).
//   warm: 100 launches back to back in one CUDA graph, the same K/V each time (L2-resident when
//         small): the kernel's own latency chain.
//   cold: 20 x (a 128 MB memset that evicts L2, then the launch) minus 20 memsets alone: K/V
//         from HBM, as in a real step where the layer's weights have streamed through L2 since.
// GB/s counts the K/V bytes a launch must read. --no-clusters turns thread-block
// clusters off (workspace merge instead) for an A/B. Usage: attention_bench [maxContextLen (4096)] [--no-clusters]
#include "cuda_graph_timer.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_features.h"
#include "cuda/device_buffer.h"
#include "cuda/paged_attention.h"
#include "engine/tensor_view.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace brook;
using namespace brook::cuda;

namespace {

constexpr int kHeads = 16, kKvHeads = 2, kHeadDim = 128, kBlockSize = 16;
constexpr int kWarmLaunches = 100, kColdLaunches = 20;
constexpr size_t kFlushBytes = size_t(128) << 20;

void benchCase(int batch, const std::vector<int>& contexts, const char* label, int maxContextLen, cudaStream_t stream,
               DeviceBuffer& flush)
{
    std::mt19937 rng(uint32_t(batch * 7919 + contexts.front()));
    int maxBlocks = 1;
    int64_t totalKeys = 0;
    for (int c : contexts) {
        maxBlocks = std::max(maxBlocks, (c + kBlockSize - 1) / kBlockSize);
        totalKeys += c;
    }
    const int numBlocks = batch * maxBlocks;
    std::vector<int32_t> table(size_t(batch) * maxBlocks);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);  // scattered blocks, as a long-running cache has them

    const size_t cacheElems = size_t(numBlocks) * kBlockSize * kKvHeads * kHeadDim;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<uint16_t> host(std::max(cacheElems, size_t(batch) * kHeads * kHeadDim));
    for (auto& x : host) x = floatToBf16(normal(rng));
    DeviceBuffer k(cacheElems * 2), v(cacheElems * 2), q(size_t(batch) * kHeads * kHeadDim * 2),
        out(size_t(batch) * kHeads * kHeadDim * 2), lens(size_t(batch) * 4), tables(table.size() * 4);
    BROOK_CUDA_CHECK(cudaMemcpy(k.get(), host.data(), cacheElems * 2, cudaMemcpyHostToDevice));
    BROOK_CUDA_CHECK(cudaMemcpy(v.get(), host.data(), cacheElems * 2, cudaMemcpyHostToDevice));
    BROOK_CUDA_CHECK(cudaMemcpy(q.get(), host.data(), q.bytes(), cudaMemcpyHostToDevice));
    BROOK_CUDA_CHECK(cudaMemcpy(lens.get(), contexts.data(), lens.bytes(), cudaMemcpyHostToDevice));
    BROOK_CUDA_CHECK(cudaMemcpy(tables.get(), table.data(), tables.bytes(), cudaMemcpyHostToDevice));
    DeviceBuffer workspace(paged_attention_decode_workspace_bytes(batch, kHeads, kKvHeads, kHeadDim, maxContextLen));
    if (workspace.bytes()) BROOK_CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));

    AttentionBatch b;
    b.numSeqs = batch;
    b.contextLens = lens.as<int32_t>();
    b.blockTables = tables.as<int32_t>();
    b.maxBlocksPerSeq = maxBlocks;
    AttentionShape shape{kHeads, kKvHeads, kHeadDim, kBlockSize, 0};
    auto launch = [&] {
        launch_paged_attention_decode(ElementType::BF16, q.get(), out.get(), k.get(), v.get(), b, maxContextLen, shape,
                                      workspace.get(), workspace.bytes(), stream);
    };
    launch();
    BROOK_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double warm = bench::timeGraphReplays(stream, 20,
                                                [&] {
                                                    for (int i = 0; i < kWarmLaunches; ++i) launch();
                                                }) /
                        kWarmLaunches;
    auto evict = [&] { BROOK_CUDA_CHECK(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream)); };
    const double withFlush = bench::timeGraphReplays(stream, 5, [&] {
        for (int i = 0; i < kColdLaunches; ++i) {
            evict();
            launch();
        }
    });
    const double flushOnly = bench::timeGraphReplays(stream, 5, [&] {
        for (int i = 0; i < kColdLaunches; ++i) evict();
    });
    const double cold = (withFlush - flushOnly) / kColdLaunches;
    const double bytes = double(totalKeys) * 2 * kKvHeads * kHeadDim * 2;
    std::printf("batch %4d  context %-12s splits %3d  warm %8.2f us %7.0f GB/s   cold %8.2f us %7.0f GB/s\n", batch,
                label, paged_attention_decode_splits(batch, kHeads, kKvHeads, maxContextLen), warm, bytes / warm * 1e-3,
                cold, bytes / cold * 1e-3);
}

}  // namespace

int main(int argc, char** argv)
{
    // Usage: attention_bench [MAX_CONTEXT_LEN] [--no-clusters]
    int maxContextLen = 4096;
    CudaFeatures features;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--no-clusters") features.threadBlockClusters = false;
        else maxContextLen = std::atoi(argv[i]);
    }
    setCudaFeatures(features);
    cudaStream_t stream;
    BROOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    DeviceBuffer flush(kFlushBytes);
    std::printf("paged decode attention, NH %d / KVH %d / HD %d, bf16, maxContextLen %d, clusters %s\n", kHeads,
                kKvHeads, kHeadDim, maxContextLen, threadBlockClustersSupported() ? "on" : "off");
    for (int batch : {1, 8, 64, 256}) {
        for (int ctx : {128, 384, 1024, 4096}) {
            if (ctx > maxContextLen) continue;
            benchCase(batch, std::vector<int>(size_t(batch), ctx), std::to_string(ctx).c_str(), maxContextLen, stream,
                      flush);
        }
    }
    // The nano-vllm mix mid-run: 256 sequences of uniform 100..2048 keys.
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> len(100, std::min(2048, maxContextLen));
    std::vector<int> mixed(256);
    for (auto& c : mixed) c = len(rng);
    benchCase(256, mixed, "100..2048", maxContextLen, stream, flush);
    cudaStreamDestroy(stream);
    return 0;
}
