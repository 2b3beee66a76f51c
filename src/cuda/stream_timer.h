// Times GPU work between two CUDA events on a stream: the one timing loop that
// CudaBackend::timeForward and the micro-benchmarks in bench/ share.
#pragma once

#include "cuda/cuda_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>

namespace brook::cuda {

// Microseconds per call of `enqueue` (which puts work on `stream`), over `runs` calls back to back.
inline double microsecondsPerRun(cudaStream_t stream, int runs, const std::function<void()>& enqueue)
{
    cudaEvent_t begin = nullptr, end = nullptr;
    BROOK_CUDA_CHECK(cudaEventCreate(&begin));
    BROOK_CUDA_CHECK(cudaEventCreate(&end));
    BROOK_CUDA_CHECK(cudaEventRecord(begin, stream));
    for (int r = 0; r < runs; ++r) enqueue();
    BROOK_CUDA_CHECK(cudaEventRecord(end, stream));
    BROOK_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0.0f;
    BROOK_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    return 1e3 * double(ms) / std::max(runs, 1);
}

}  // namespace brook::cuda
