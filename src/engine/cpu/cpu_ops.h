// Plain fp32 CPU implementations of ERNIE-4.5's layer operations. They are the CPU backend's
// kernels and the references every CUDA kernel is tested against, so they favour clarity;
// the heavy lifting (GEMMs) goes through OpenBLAS.
// Shapes: T tokens, H hidden, NH heads, KVH kv heads, HD head dim, I intermediate, V vocab.
#pragma once

#include <cstdint>
#include <span>

namespace brook::cpu {

// out[T, N] = x[T, K] @ w[N, K]^T  (torch Linear layout)
void linear(const float* x, const float* w, float* out, int T, int K, int N);

// out[t] = x[t] * rsqrt(mean(x[t]^2) + eps) * weight; computed in fp32 (in place allowed).
void rmsnorm(const float* x, const float* weight, float* out, int T, int H, float eps);

// GPT-J / interleaved RoPE on one head vector: dims (2i, 2i+1) rotate by pos * theta^(-2i/HD).
void ropeInterleaved(float* headVec, int HD, int position, double theta);
// The same on numHeads contiguous head vectors of one token: each angle's cos / sin computed once
// for all heads (the per-pair pow and trig were ~20% of a CPU prefill at ERNIE's 18 heads).
void ropeInterleavedHeads(float* heads, int numHeads, int HD, int position, double theta);

// out[T, I] = silu(gateUp[T, :I]) * gateUp[T, I:]  (gate first, then up)
void siluMul(const float* gateUp, float* out, int T, int I);

// Paged KV cache geometry, one array for K and one for V per layer. V is [block][slot][KVH][HD].
// K is the same (Rows: the CUDA backend's layout) or, in the CPU backend, transposed within a
// block (Tiles: [block][KVH][HD][blockSize]), so that one vector load holds dimension d of a
// block's keys and a query's scores for a block are HD broadcast FMAs with no horizontal sums.
struct PagedKv {
    enum class KeyLayout { Rows, Tiles };
    const float* k = nullptr;
    const float* v = nullptr;
    int blockSize = 16;
    int numKvHeads = 0;
    int headDim = 0;
    KeyLayout keyLayout = KeyLayout::Rows;
    // A key's first dimension; dimension d is keyDimStride() * d floats further.
    const float* kAt(int32_t block, int slot, int kvHead) const
    {
        if (keyLayout == KeyLayout::Tiles) return kTile(block, kvHead) + slot;
        return k + ((int64_t(block) * blockSize + slot) * numKvHeads + kvHead) * headDim;
    }
    int64_t keyDimStride() const { return keyLayout == KeyLayout::Tiles ? blockSize : 1; }
    // Tiles: one KV head's keys of a block, [HD][blockSize] (and the next KV heads' right after).
    const float* kTile(int32_t block, int kvHead) const
    {
        return k + (int64_t(block) * numKvHeads + kvHead) * int64_t(headDim) * blockSize;
    }
    const float* vAt(int32_t block, int slot, int kvHead) const
    {
        return v + ((int64_t(block) * blockSize + slot) * numKvHeads + kvHead) * headDim;
    }
};

// Causal GQA attention for one sequence's n new queries at positions startPosition..+n-1,
// reading keys/values 0..position from the paged cache (which already holds the new tokens).
// q: [n, NH, HD]; out: [n, NH, HD]. Query head h reads KV head h / (NH / KVH).
void pagedAttention(const float* q, float* out, int n, int numHeads, int startPosition,
                    std::span<const int32_t> blockTable, const PagedKv& kv);

}  // namespace brook::cpu
