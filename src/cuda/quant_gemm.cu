// Prefill GEMM on quantized weights: out[M, N] (+)= x[M, K] @ dequant(w)[N, K]^T, any M.
// Tensor cores (mma.sync m16n8k16, fp32 accumulators) on 128 x 128 output tiles, 8 warps as
// 2 (M) x 4 (N), each owning 64 x 32. K advances 64 at a time through a 3-stage cp.async
// pipeline that brings in the x tile (element type) and the packed weight tile (raw codes);
// the scales/zeros of the next K tile are fetched into registers one iteration ahead.
// Weights never exist dequantized in memory: each lane turns the packed bytes of its MMA
// B fragments (row n = lane / 4 of an n8 tile, k pairs 2t, 2t+1 and 2t+8, 2t+9) straight into
// bf16/fp16 pairs, (q - zero) * scale computed exactly in fp32 with the 2^23 trick (see
// quant_gemv.cu) and rounded once to the element type. A 64-wide K tile is two 32-wide halves,
// each inside one group (groupSize % 32 == 0), so one scale/zero per row and half.
// Shared-memory rows are padded (x: 144 bytes, packed: 48 | 80 bytes) so ldmatrix and the
// fragment loads are bank-conflict free. Rows of x past M, columns past N and K past the end
// are zero-filled by cp.async and never stored.
#include "cuda/cuda_check.h"
#include "cuda/paged_attention_common.cuh"  // mma16816, ldmatrixX4, pack2, copy16, copyCommit, copyWait
#include "cuda/quant_matmul.h"

#include <string>

namespace brook::cuda {

namespace {

using attn::copy16;
using attn::copyCommit;
using attn::copyWait;
using attn::ldmatrixX4;
using attn::mma16816;
using attn::pack2;

constexpr int kBM = 128, kBN = 128, kBK = 64;
constexpr int kStages = 3;
constexpr int kThreads = 256;
constexpr int kXStride = kBK + 8;  // elements per x tile row
constexpr float kTwo23 = 8388608.0f;

template <int BITS>
constexpr int wStride()
{
    return kBK * BITS / 8 + 16;
}  // bytes per packed tile row
template <typename T, int BITS>
constexpr int xTileBytes()
{
    return kBM * kXStride * int(sizeof(T));
}
template <typename T, int BITS>
constexpr int stageBytes()
{
    return xTileBytes<T, BITS>() + kBN * wStride<BITS>();
}

struct GemmArgs {
    const uint8_t* packed;  // [N][rowBytes]
    const __half* scales;   // [N][groupsPerRow]
    const uint8_t* zeros;   // [N][groupsPerRow]
    int M, N, K;
    int groupSize, groupsPerRow, rowBytes;
    bool accumulate;
};

// Starts the copies of K tile [k0, k0 + 64) of x rows m0.. and weight rows n0.. into a stage.
template <typename T, int BITS>
__device__ inline void loadTile(const T* x, const GemmArgs& a, int m0, int n0, int k0, unsigned char* stage)
{
    T* xs = reinterpret_cast<T*>(stage);
    unsigned char* ws = stage + xTileBytes<T, BITS>();
    constexpr int kXChunks = kBK / 8;  // 16-byte chunks per x tile row
#pragma unroll
    for (int i = 0; i < kBM * kXChunks / kThreads; ++i) {
        const int idx = int(threadIdx.x) + i * kThreads;
        const int r = idx / kXChunks, c = idx % kXChunks;
        const int m = m0 + r, k = k0 + c * 8;
        const bool valid = m < a.M && k < a.K;
        copy16(xs + r * kXStride + c * 8, valid ? x + int64_t(m) * a.K + k : x, valid);
    }
    constexpr int kWChunks = kBK * BITS / 8 / 16;  // 16-byte chunks per packed tile row
#pragma unroll
    for (int i = 0; i < kBN * kWChunks / kThreads; ++i) {
        const int idx = int(threadIdx.x) + i * kThreads;
        const int r = idx / kWChunks, c = idx % kWChunks;
        const int n = n0 + r, byte = k0 * BITS / 8 + c * 16;
        const bool valid = n < a.N && byte < a.rowBytes;
        copy16(ws + r * wStride<BITS>() + c * 16, valid ? a.packed + int64_t(n) * a.rowBytes + byte : a.packed, valid);
    }
}

// Scale and zero of this lane's 4 weight rows (n8 tiles j, row g) for both 32-wide K halves.
struct TileScales {
    float scale[4][2];
    float zero[4][2];
};

__device__ inline void loadScales(const GemmArgs& a, int nFirst, int k0, TileScales& ts)
{
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int n = nFirst + j * 8;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int k = k0 + 32 * h;
            float s = 0.0f, z = 0.0f;
            if (n < a.N && k < a.K) {
                const int64_t g = int64_t(n) * a.groupsPerRow + k / a.groupSize;
                s = __half2float(__ushort_as_half(__ldg(reinterpret_cast<const unsigned short*>(a.scales) + g)));
                z = float(__ldg(a.zeros + g));
            }
            ts.scale[j][h] = s;
            ts.zero[j][h] = z;
        }
    }
}

// Two codes (the low one at k, the high one at k + 1) already in place in `bits` of a word:
// lo at bit 0, hi at bit BITS. Returns the element-type pair (q - zero) * scale.
template <typename T, int BITS>
__device__ inline uint32_t dequantPair(uint32_t word, float zeroLo, float zeroHi, float scale, float scaleHi)
{
    constexpr uint32_t kMask = (1u << BITS) - 1;
    const float lo = (__uint_as_float((word & kMask) | 0x4B000000u) - zeroLo) * scale;
    const float hi = (__uint_as_float((word & (kMask << BITS)) | 0x4B000000u) - zeroHi) * scaleHi;
    return pack2<T>(lo, hi);
}

template <typename T, int BITS>
__device__ inline void computeTile(const unsigned char* stage, const TileScales& ts, float (&acc)[4][4][4], int warpM,
                                   int warpN, int lane)
{
    const T* xs = reinterpret_cast<const T*>(stage);
    const unsigned char* ws = stage + xTileBytes<T, BITS>();
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // 32-wide K halves: one group each
        uint32_t b[4][2][2];       // [n8 tile][k16 step][register]
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float s = ts.scale[j][h], z = ts.zero[j][h];
            const float zLo = kTwo23 + z, zHi = kTwo23 + z * float(1 << BITS);
            const float sHi = s * (1.0f / float(1 << BITS));
            const unsigned char* row = ws + (warpN * 32 + j * 8 + g) * wStride<BITS>();
            if constexpr (BITS == 4) {
                // 16 bytes = k 0..31 of the half; byte 4w + t of it holds k = 8w + 2t, 8w + 2t + 1.
                const uint4 raw = *reinterpret_cast<const uint4*>(row + h * 16);
                const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
                for (int w = 0; w < 4; ++w)
                    b[j][w >> 1][w & 1] = dequantPair<T, 4>(words[w] >> (8 * t), zLo, zHi, s, sHi);
            } else {
                // Byte k of the half is code k: k = 8i + 2t, 8i + 2t + 1 sit in half (t & 1) of word 2i + t / 2.
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const uint32_t word = *reinterpret_cast<const uint32_t*>(row + h * 32 + 8 * i + 4 * (t >> 1));
                    b[j][i >> 1][i & 1] = dequantPair<T, 8>(word >> (16 * (t & 1)), zLo, zHi, s, sHi);
                }
            }
        }
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            uint32_t af[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                ldmatrixX4(af[i],
                           xs + (warpM * 64 + i * 16 + (lane & 15)) * kXStride + h * 32 + kk * 16 + (lane >> 4) * 8);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) mma16816<T>(acc[i][j], af[i], b[j][kk][0], b[j][kk][1]);
        }
    }
}

template <typename T, typename Out, int BITS>
__global__ void __launch_bounds__(kThreads)
    quant_gemm_kernel(const T* __restrict__ x, GemmArgs a, Out* __restrict__ out)
{
    extern __shared__ __align__(16) unsigned char smem[];
    constexpr int S = stageBytes<T, BITS>();
    const int n0 = int(blockIdx.x) * kBN, m0 = int(blockIdx.y) * kBM;
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31;
    const int warpM = warp >> 2, warpN = warp & 3;
    const int g = lane >> 2, t = lane & 3;
    const int numTiles = (a.K + kBK - 1) / kBK;
    const int nFirst = n0 + warpN * 32 + g;  // this lane's B-fragment row in n8 tile 0

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < numTiles) loadTile<T, BITS>(x, a, m0, n0, s * kBK, smem + s * S);
        copyCommit();
    }
    TileScales current;
    loadScales(a, nFirst, 0, current);
    for (int i = 0; i < numTiles; ++i) {
        TileScales next;
        loadScales(a, nFirst, (i + 1) * kBK, next);  // past K: zeros, nothing read
        copyWait<kStages - 2>();                     // tile i landed
        __syncthreads();                             // ... for everyone; stage (i - 1) % kStages is free
        const int ahead = i + kStages - 1;
        if (ahead < numTiles) loadTile<T, BITS>(x, a, m0, n0, ahead * kBK, smem + (ahead % kStages) * S);
        copyCommit();
        computeTile<T, BITS>(smem + (i % kStages) * S, current, acc, warpM, warpN, lane);
        current = next;
    }
    copyWait<0>();

    // Lane (g, t) holds rows g, g + 8 and columns 2t, 2t + 1 of each 16 x 8 accumulator tile.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int m = m0 + warpM * 64 + i * 16 + g + 8 * half;
            if (m >= a.M) continue;
            Out* row = out + int64_t(m) * a.N;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int n = n0 + warpN * 32 + j * 8 + 2 * t;
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    if (n + e >= a.N) continue;
                    const float v = acc[i][j][2 * half + e];
                    row[n + e] = fromFloat<Out>(v + (a.accumulate ? toFloat(row[n + e]) : 0.0f));
                }
            }
        }
    }
}

template <typename T, typename Out, int BITS>
void launchGemm(const void* x, const GemmArgs& a, void* out, cudaStream_t stream)
{
    constexpr int sharedBytes = kStages * stageBytes<T, BITS>();
    auto kernel = quant_gemm_kernel<T, Out, BITS>;
    BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
    const dim3 grid(unsigned((a.N + kBN - 1) / kBN), unsigned((a.M + kBM - 1) / kBM));
    kernel<<<grid, kThreads, sharedBytes, stream>>>(static_cast<const T*>(x), a, static_cast<Out*>(out));
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_quant_gemm(const void* x, const QuantDeviceWeight& w, void* out, int M, ElementType type, bool outFloat,
                       bool accumulate, cudaStream_t stream)
{
    if (!quant_matmul_supported(w) || M < 0 || int64_t(M) > int64_t(65535) * kBM)
        throw CudaError("launch_quant_gemm: unsupported shape (M " + std::to_string(M) + ", N " +
                        std::to_string(w.rows) + ", K " + std::to_string(w.cols) + ", bits " + std::to_string(w.bits) +
                        ", group " + std::to_string(w.groupSize) + ")");
    if (M == 0) return;
    GemmArgs a{};
    a.packed = w.packed;
    a.scales = w.scales;
    a.zeros = w.zeros;
    a.M = M;
    a.N = w.rows;
    a.K = w.cols;
    a.groupSize = w.groupSize;
    a.groupsPerRow = w.cols / w.groupSize;
    a.rowBytes = w.cols * w.bits / 8;
    a.accumulate = accumulate;
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (w.bits == 4) {
            if (outFloat) launchGemm<E, float, 4>(x, a, out, stream);
            else launchGemm<E, E, 4>(x, a, out, stream);
        } else {
            if (outFloat) launchGemm<E, float, 8>(x, a, out, stream);
            else launchGemm<E, E, 8>(x, a, out, stream);
        }
    });
}

}  // namespace brook::cuda
