#pragma once

#include <string>

namespace brook::cuda {

// Number of usable CUDA devices; 0 when there is no driver or no GPU (never throws).
int cudaDeviceCount();
// "NVIDIA H200 (sm_90, 139.8 GiB)"; empty when none.
std::string cudaDeviceDescription(int device = 0);
// Whether the device computes bf16 natively (sm_80 and newer).
bool cudaDeviceHasBf16(int device = 0);
// Whether kernels may be launched as programmatic dependents (pdl.cuh): compute capability 9.0
// or newer, unless the environment sets BROOK_NO_PDL=1. Decided once per process.
bool pdlSupported();
// Whether kernels may be launched in thread-block clusters that share shared memory (sm_90 and
// newer), unless the environment sets BROOK_NO_CLUSTERS=1. Decided once per process.
bool threadBlockClustersSupported();
// BROOK_PDL_EARLY_WAIT=mask: kernels launched as programmatic dependents wait for the previous
// kernel before the work they may do ahead of the wait (pdl.cuh): bit 0 decode attention, bit 1
// the skinny GEMV (all of it), bit 2 the skinny GEMV's RoPE inputs only. An A/B switch for what
// that early work buys and for hunting ordering bugs. Decided once per process.
int pdlEarlyWait();
// BROOK_SKINNY_MAX_ROWS=n (1..8): decode steps of up to n tokens take the skinny-GEMM path
// (skinny_gemm_preferred), instead of the built-in crossover. An A/B switch for tuning that
// crossover; 0 when unset. Decided once per process.
int skinnyMaxRowsOverride();

}  // namespace brook::cuda
