// CudaFeatures: the kernel features the CUDA backend may use, as typed options
// (CudaBackendOptions::features). The defaults are what Brook ships; the other settings are for
// A/B experiments in bench/ (brook-step-bench and attention_bench take them as flags).
//
// The kernels' launch helpers read the active set (pdl.cuh, paged_attention_decode.cu,
// skinny_gemm.cu), so it is process-wide: CudaBackend::create installs its options' set, and
// one process drives one backend.
#pragma once

namespace brook::cuda {

struct CudaFeatures {
    // Programmatic dependent launch (sm_90+): a kernel starts while its predecessor drains.
    bool programmaticDependentLaunch = true;
    // Thread-block clusters (sm_90+): decode attention and split prefill attention merge their
    // key ranges in cluster shared memory instead of a global workspace (and the sampler may share
    // a row between CTAs, samplerClusterSize).
    bool threadBlockClusters = true;
    // Kernels launched as programmatic dependents wait for the previous kernel before the work
    // they may do ahead of the wait: bit 0 decode attention, bit 1 the skinny GEMV (all of it),
    // bit 2 the skinny GEMV's RoPE inputs only. 0 in use; for measuring what the early work buys
    // and for hunting ordering bugs.
    int pdlEarlyWaitMask = 0;
    // The unfused layer kernels (RoPE + cache write, SiLU*up) and split prefill attention launch as
    // programmatic dependents too; prefill attention then issues its first K/V tiles of the cached
    // history (keys no kernel of this step writes) before the wait. Off: ordinary launches.
    bool pdlPrefillKernels = true;
    // Decode steps of up to this many tokens (1..8) take the skinny-GEMM path; 0: the built-in
    // crossover (skinny_gemm_preferred).
    int skinnyMaxRows = 0;
    // cuBLASLt calls run a bucket of rows (CublasLtGemm::setPadRows): a new prompt length plans
    // no new GEMMs. Off: each distinct row count is planned on first use.
    bool padGemmRows = true;
    // Prefill attention splits the keys of too few query tiles over more CTAs (PrefillSplit in
    // paged_attention.h): a prefix-cache hit's short chunk over a long history. Off: one CTA per tile.
    bool splitKvPrefill = true;
    // Single-sequence prefill steps of 2..256 tokens replay a CUDA graph (ForwardGraphs), as decode
    // steps do; off: they launch their kernels one by one. Needs graphs (not --enforce-eager).
    bool prefillGraphs = true;
    // CTAs that sample one row together (gpu_sampler_kernel.cu, sm_90 thread-block clusters of up
    // to 8): 0 picks by batch (the GPU's SMs over the rows), 1 is one CTA a row, 2..8 force that
    // many. Needs threadBlockClusters.
    int samplerClusterSize = 0;
    // Dense Linears of steps of 5..32 tokens (past the skinny kernel) run the fused GEMM
    // (fused_gemm.h: RoPE / SiLU*up / residual add in its epilogue, split K in clusters, PDL);
    // off: cuBLASLt with the standalone RoPE and SiLU*up kernels.
    bool fusedGemm = true;
};

// Installs `features` for the kernels launched from now on.
void setCudaFeatures(const CudaFeatures& features);
// The active set (the defaults until setCudaFeatures is called).
CudaFeatures cudaFeatures();

}  // namespace brook::cuda
