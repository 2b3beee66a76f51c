// Programmatic dependent launch (Hopper and newer): a kernel launched with launchDependent()
// may start while the kernel before it on the stream is still finishing. It must call
// pdlWaitForPrevious() before it reads anything the previous kernels write (activations,
// the KV cache), and may do independent work first: the decode GEMVs issue their weight loads,
// so a layer's weight stream starts during the previous kernel's tail instead of after a full
// drain and launch (about a hundred kernel boundaries per decode step at batch 1).
// Each kernel calls pdlAllowNext() early so the next launch is not held back until it exits.
// After the wait, read what earlier kernels wrote with __ldcg (L2), never through L1 (plain or
// __ldg loads): kernels overlap on an SM, and a line an earlier kernel cached in that SM's L1
// can be stale once a later kernel rewrites it. Measured: with plain loads of the residual,
// logits drifted (test_cuda_backend) once three GEMV blocks fit per SM; with __ldcg they match.
// Safe transitively: kernel N+1 cannot finish before its wait returned, i.e. before kernel N
// finished, so kernel N+2's wait also covers kernel N. Captured into CUDA graphs as
// programmatic edges. On GPUs older than sm_90 both calls compile to nothing and launches are
// ordinary.
#pragma once

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"

#include <cuda_runtime.h>

#include <utility>

namespace brook::cuda {

__device__ __forceinline__ void pdlWaitForPrevious()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdlAllowNext()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// kernel<<<grid, block, sharedBytes, stream>>>(args...) with the programmatic-serialization
// attribute when supported, in thread-block clusters of `cluster` CTAs when that is more than one
// (the caller checks threadBlockClustersSupported() and makes grid a multiple of cluster).
// dependent: whether to ask for the attribute at all (a kernel that reads a feature switch);
// pdlSupported() decides as well.
template <typename... KernelArgs, typename... Args>
void launchDependentIf(bool dependent, dim3 cluster, void (*kernel)(KernelArgs...), dim3 grid, dim3 block,
                       size_t sharedBytes, cudaStream_t stream, Args&&... args)
{
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = sharedBytes;
    config.stream = stream;
    cudaLaunchAttribute attributes[2];
    unsigned count = 0;
    if (dependent && pdlSupported()) {
        attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attributes[count].val.programmaticStreamSerializationAllowed = 1;
        ++count;
    }
    if (cluster.x * cluster.y * cluster.z > 1) {
        attributes[count].id = cudaLaunchAttributeClusterDimension;
        attributes[count].val.clusterDim.x = cluster.x;
        attributes[count].val.clusterDim.y = cluster.y;
        attributes[count].val.clusterDim.z = cluster.z;
        ++count;
    }
    config.attrs = attributes;
    config.numAttrs = count;
    BROOK_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<KernelArgs>(args)...));
}

template <typename... KernelArgs, typename... Args>
void launchDependentClustered(dim3 cluster, void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t sharedBytes,
                              cudaStream_t stream, Args&&... args)
{
    launchDependentIf(true, cluster, kernel, grid, block, sharedBytes, stream, std::forward<Args>(args)...);
}

template <typename... KernelArgs, typename... Args>
void launchDependent(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t sharedBytes, cudaStream_t stream,
                     Args&&... args)
{
    launchDependentIf(true, dim3(1, 1, 1), kernel, grid, block, sharedBytes, stream, std::forward<Args>(args)...);
}

}  // namespace brook::cuda
