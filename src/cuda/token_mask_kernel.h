// The structured-output mask on the GPU: logits of forbidden tokens set to -inf, for the rows of
// a step that carry a mask. The CPU reference is engine/structured/token_bitmask.h
// (applyTokenBitmask); tests/cuda/test_token_mask.cpp checks the two agree.
// Compiled as C++17 by nvcc: includes nothing of the engine.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace brook::cuda {

// logits [R, V]; masks [K, W] (W = ceil(V / 32) words, bit t % 32 of word t / 32 = token t
// allowed); rows [K]: the logits row each mask applies to. Rows without a mask are untouched.
void launch_apply_token_mask(float* logits, const uint32_t* masks, const int32_t* rows, int K, int V, int W,
                             cudaStream_t stream);

}  // namespace brook::cuda
