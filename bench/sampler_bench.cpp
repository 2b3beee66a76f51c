// sampler_bench: GpuSampler::sample at ERNIE's vocabulary, one call's wall time (upload, kernel,
// download, sync) for a few sampling settings and row counts. Logits are normal with a standard
// deviation of 2..4 per row plus four spikes of 8..16 (a real model's rows are peakier, which
// only shortens the exp pass). With --profile one call per setting runs between
// cudaProfilerStart/Stop for `ncu --profile-from-start off`. --cluster 1 0 times each setting
// with one CTA a row, then with the cluster size the launcher picks (CudaFeatures::samplerClusterSize),
// alternating, for A/B runs in one process.
//   sampler_bench [--rows 1 256] [--calls 50] [--cluster 0] [--profile]
#include "cuda/device_buffer.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_features.h"
#include "cuda/gpu_sampler.h"
#include "cuda/gpu_sampler_kernel.h"
#include "engine/sampling_params.h"

#include <CLI/CLI.hpp>
#include <cuda_profiler_api.h>

#include <chrono>
#include <cstdio>
#include <random>

using namespace brook;

int main(int argc, char** argv)
{
    CLI::App app{"sampler_bench: the GPU sampler's time per call"};
    std::vector<int> rowCounts = {1, 8, 64, 256};
    int calls = 50;
    bool profile = false;
    std::vector<int> clusters = {0};
    app.add_option("--rows", rowCounts)->capture_default_str();
    app.add_option("--cluster", clusters, "CTAs a row: 0 the launcher's choice, 1 one, 2..8 forced")
        ->check(CLI::Range(0, 8))
        ->capture_default_str();
    app.add_option("--calls", calls)->capture_default_str();
    app.add_flag("--profile", profile, "one call per setting under cudaProfilerStart/Stop");
    CLI11_PARSE(app, argc, argv);

    constexpr int kVocab = 103424;
    int maxRows = 1;
    for (int r : rowCounts) maxRows = std::max(maxRows, r);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> host(size_t(maxRows) * kVocab);
    for (int r = 0; r < maxRows; ++r) {
        std::normal_distribution<float> normal(0.0f, 2.0f + 2.0f * uniform(rng));
        float* row = host.data() + size_t(r) * kVocab;
        for (int i = 0; i < kVocab; ++i) row[i] = normal(rng);
        for (int k = 0; k < 4; ++k) row[rng() % kVocab] = 8.0f + 8.0f * uniform(rng);
    }
    cuda::DeviceBuffer logits(host.size() * sizeof(float));
    BROOK_CUDA_CHECK(cudaMemcpy(logits.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    cuda::GpuSampler sampler(maxRows, kVocab);

    struct Setting {
        const char* name;
        float temperature;
        int topK;
        float topP;
    };
    std::printf("%-22s %6s %8s %12s\n", "setting", "rows", "CTAs/row", "us/call");
    for (const Setting s : {Setting{"greedy", 0.0f, 0, 1.0f}, Setting{"temperature 0.6", 0.6f, 0, 1.0f},
                            Setting{"top-k 50", 0.8f, 50, 1.0f}, Setting{"top-p 0.95", 0.8f, 0, 0.95f},
                            Setting{"top-k 50 + top-p 0.9", 0.8f, 50, 0.9f}}) {
        SamplingParams params;
        params.temperature = s.temperature;
        params.topK = s.topK;
        params.topP = s.topP;
        for (int rows : rowCounts) {
            std::vector<SamplingContext> contexts(static_cast<size_t>(rows));
            for (int r = 0; r < rows; ++r) {
                contexts[size_t(r)].params = &params;
                contexts[size_t(r)].seed = uint64_t(r);
            }
            for (int cluster : clusters) {
                cuda::CudaFeatures features;
                features.samplerClusterSize = cluster;
                cuda::setCudaFeatures(features);
                sampler.sample(logits.as<float>(), contexts, nullptr);  // warm-up
                if (profile) {
                    cudaProfilerStart();
                    sampler.sample(logits.as<float>(), contexts, nullptr);
                    cudaProfilerStop();
                }
                const auto start = std::chrono::steady_clock::now();
                for (int k = 0; k < calls; ++k) {
                    for (auto& c : contexts) c.step = k;
                    sampler.sample(logits.as<float>(), contexts, nullptr);
                }
                const double us =
                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
                std::printf("%-22s %6d %8d %12.1f\n", s.name, rows, cuda::gpu_sample_cluster_size(rows), us / calls);
            }
        }
    }
    return 0;
}
