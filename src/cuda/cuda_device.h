#pragma once

#include <string>

namespace brook::cuda {

// Number of usable CUDA devices; 0 when there is no driver or no GPU (never throws).
int cudaDeviceCount();
// "NVIDIA H200 (sm_90, 139.8 GiB)"; empty when none.
std::string cudaDeviceDescription(int device = 0);
// Whether the device computes bf16 natively (sm_80 and newer).
bool cudaDeviceHasBf16(int device = 0);
// Streaming multiprocessors of the current device (at least 1), asked once per device: the
// launchers size their grids by it. Throws CudaError when there is no device.
int multiprocessorCount();
// Whether kernels may be launched as programmatic dependents (pdl.cuh): compute capability 9.0
// or newer (decided once per process) and CudaFeatures::programmaticDependentLaunch.
bool pdlSupported();
// Whether the unfused layer kernels and prefill attention launch as programmatic dependents:
// pdlSupported() and CudaFeatures::pdlPrefillKernels.
bool pdlPrefillKernels();
// Whether kernels may be launched in thread-block clusters that share shared memory: sm_90 and
// newer and CudaFeatures::threadBlockClusters.
bool threadBlockClustersSupported();
// CudaFeatures::pdlEarlyWaitMask of the active set (cuda_features.h).
int pdlEarlyWait();
// CudaFeatures::skinnyMaxRows of the active set, 0 outside 1..8.
int skinnyMaxRowsOverride();
// CudaFeatures::samplerClusterSize of the active set, 0 (choose by batch) outside 1..8.
int samplerClusterOverride();

}  // namespace brook::cuda
