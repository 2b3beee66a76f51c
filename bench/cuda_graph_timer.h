// Times GPU work the way the decode graphs run it: record() is captured once into a CUDA graph on
// `stream`, replayed once to warm up, then `replays` times between two events. Shared by the
// CUDA micro-benchmarks in this folder.
#pragma once

#include "cuda/cuda_check.h"

#include <cuda_runtime.h>

#include <functional>

namespace brook::bench {

// Microseconds per replay of the graph captured from record().
inline double timeGraphReplays(cudaStream_t stream, int replays, const std::function<void()>& record)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    BROOK_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    record();
    BROOK_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    BROOK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    BROOK_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    cudaEvent_t begin, end;
    BROOK_CUDA_CHECK(cudaEventCreate(&begin));
    BROOK_CUDA_CHECK(cudaEventCreate(&end));
    BROOK_CUDA_CHECK(cudaEventRecord(begin, stream));
    for (int r = 0; r < replays; ++r) BROOK_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    BROOK_CUDA_CHECK(cudaEventRecord(end, stream));
    BROOK_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    BROOK_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return double(ms) * 1000.0 / replays;
}

} // namespace brook::bench
