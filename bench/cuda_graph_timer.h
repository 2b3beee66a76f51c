// Times GPU work the way the decode graphs run it: record() is captured once into a CUDA graph on
// `stream`, replayed once to warm up, then `replays` times between two events. Shared by the
// CUDA micro-benchmarks in this folder.
#pragma once

#include "cuda/cuda_check.h"
#include "cuda/stream_timer.h"

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
    BROOK_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up
    const double us =
        cuda::microsecondsPerRun(stream, replays, [&] { BROOK_CUDA_CHECK(cudaGraphLaunch(exec, stream)); });
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return us;
}

}  // namespace brook::bench
