// The structured-output mask on the GPU: logits of forbidden tokens set to -inf, for the rows of
// a step that carry a mask. The CPU reference is engine/structured/token_bitmask.h
// (applyTokenBitmask); tests/cuda/test_token_mask.cpp checks the two agree.
// Compiled as C++17 by nvcc: includes nothing of the engine.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace brook::cuda {

// logits [R, V]; masks [U, W] (W = ceil(V / 32) words, bit t % 32 of word t / 32 = token t
// allowed); rows [K]: the logits row of each of the K masked rows; maskOf [K]: its mask's index
// in `masks` (rows in the same grammar state share one mask, uploaded once). Rows without a mask
// are untouched.
void launch_apply_token_mask(float* logits, const uint32_t* masks, const int32_t* rows, const int32_t* maskOf, int K,
                             int V, int W, cudaStream_t stream);

}  // namespace brook::cuda
