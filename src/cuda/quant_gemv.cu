// Decode GEMV on quantized weights: out[M, N] (+)= f(x)[M, K] @ dequant(w)[N, K]^T, M <= 8.
// A weight stream: a 4-bit row of K = 1024 is only 512 bytes, so a warp walks a run of
// consecutive rows as one flat sequence of 16-byte chunk loads (lane l takes chunks l, l + 32,
// ... of each row), W loads per lane in flight plus the next W prefetched while the current ones
// are multiplied; the first batch is issued before the prologue so its latency overlaps it. The
// grid is sized from the SM count (rows per warp grow with N), so even N = 1024 fills the GPU.
// Dequantization in registers and in exact fp32: code q at nibble/byte position i of a 16-bit half
// word becomes the float 2^23 + q * 2^(bits*i) by or-ing in 0x4B000000 (no int->float convert),
// minus 2^23 + zero * 2^(bits*i) gives (q - zero) * 2^(bits*i) exactly; the per-position partial
// dot products are rescaled by 2^-(bits*i) (exact) and by the group's scale once per chunk. A
// 16-byte chunk (32 or 16 codes) never straddles a group (groupSize % 32 == 0), so one scale/zero.
// f(x) rows sit in shared memory as fp32 (values rounded to the element type first, as the
// skinny GEMM's prologues round: see fillRows there; the logic is copied, not shared, because
// skinny_gemm.cu keeps it private), their 16-byte units xor-swizzled so a quarter-warp's loads
// hit 8 different bank groups. Per-row warp-shuffle reduction: deterministic, no atomics.
#include "cuda/pdl.cuh"
#include "cuda/cuda_check.h"
#include "cuda/quant_matmul.h"

#include <algorithm>
#include <string>

namespace brook::cuda {

namespace {

constexpr int kWarps = 4;    // per block
constexpr int kMaxK = 4096;  // M * K fp32 rows of f(x) in shared memory (128 KiB at M = 8)
constexpr float kTwo23 = 8388608.0f;

struct GemvArgs {
    const uint8_t* packed;  // [N][vectors] 16-byte chunks
    const __half* scales;   // [N][groupsPerRow]
    const uint8_t* zeros;   // [N][groupsPerRow]
    int N, K;
    int groupsPerRow;
    int vectors;          // 16-byte chunks per packed row
    int chunksPerLane;    // ceil(vectors / 32)
    uint32_t groupMagic;  // group of chunk v = __umulhi(v * codesPerChunk, groupMagic)
    int rowsPerWarp;
    bool accumulate;
    float eps;
};

// Shared-memory position of x unit u (4 fp32 values) of a row: lanes l of a quarter-warp read
// units U * l + j (U = units per weight chunk), which all fall in two bank groups unswizzled.
template <int BITS>
__device__ inline int swizzledUnit(int u)
{
    constexpr int U = 32 / BITS;
    return u ^ ((u >> 3) & (U - 1));
}

// Fills xs [M, K] with f(x) as fp32 (each value rounded to T first). Same math as skinny_gemm.cu.
template <typename T, int M, SkinnyPrologue P, int BITS>
__device__ void fillRows(const void* x, const T* normWeight, float eps, float* xs, int K)
{
    if constexpr (P == SkinnyPrologue::None) {
        const int vectors = K / 8;  // 16-byte input vectors per row
        for (int m = 0; m < M; ++m) {
            const uint4* src = static_cast<const uint4*>(x) + int64_t(m) * vectors;
            float4* row = reinterpret_cast<float4*>(xs + m * K);
            for (int i = threadIdx.x; i < vectors; i += blockDim.x) {
                const uint4 raw = __ldcg(src + i);
                const T* e = reinterpret_cast<const T*>(&raw);
                row[swizzledUnit<BITS>(2 * i)] =
                    make_float4(toFloat(e[0]), toFloat(e[1]), toFloat(e[2]), toFloat(e[3]));
                row[swizzledUnit<BITS>(2 * i + 1)] =
                    make_float4(toFloat(e[4]), toFloat(e[5]), toFloat(e[6]), toFloat(e[7]));
            }
        }
    } else if constexpr (P == SkinnyPrologue::SiluMul) {
        // gate | up rows of 2K, 8 elements per 16-byte load; all of a thread's loads independent
        // (at batch 1 this prologue is on the critical path: scalar loads cost ~6 us).
        const int vectors = K / 8;
        for (int i = threadIdx.x; i < M * vectors; i += blockDim.x) {
            const int m = i / vectors, v = i % vectors;
            const uint4* row = static_cast<const uint4*>(x) + int64_t(m) * 2 * vectors;
            const uint4 graw = __ldcg(row + v), uraw = __ldcg(row + vectors + v);
            const T* g = reinterpret_cast<const T*>(&graw);
            const T* u = reinterpret_cast<const T*>(&uraw);
            float f[8];
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const float gj = toFloat(g[j]);
                f[j] = toFloat(fromFloat<T>(gj / (1.0f + __expf(-gj)) * toFloat(u[j])));
            }
            float4* out = reinterpret_cast<float4*>(xs + m * K);
            out[swizzledUnit<BITS>(2 * v)] = make_float4(f[0], f[1], f[2], f[3]);
            out[swizzledUnit<BITS>(2 * v + 1)] = make_float4(f[4], f[5], f[6], f[7]);
        }
    } else {
        // fp32 residual rows, float4 loads from L2 (see pdl.cuh on L1); the second pass re-reads them.
        const float4* residual = static_cast<const float4*>(x);
        const int vectors = K / 4;
        __shared__ float partial[kWarps][M];
        __shared__ float scale[M];
#pragma unroll
        for (int m = 0; m < M; ++m) {
            float sum = 0.0f;
#pragma unroll 4
            for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
                const float4 a = __ldcg(residual + int64_t(m) * vectors + v);
                sum += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
            }
            for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
            if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32][m] = sum;
        }
        __syncthreads();
        if (threadIdx.x < M) {
            float total = 0.0f;
            for (int w = 0; w < kWarps; ++w) total += partial[w][threadIdx.x];
            scale[threadIdx.x] = rsqrtf(total / float(K) + eps);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < M * vectors; i += blockDim.x) {
            const int m = i / vectors, v = i % vectors;
            const float4 a = __ldcg(residual + int64_t(m) * vectors + v);
            const uint2 wraw = reinterpret_cast<const uint2*>(normWeight)[v];  // 4 weights
            const T* w4 = reinterpret_cast<const T*>(&wraw);
            const float sm = scale[m];
            reinterpret_cast<float4*>(xs + m * K)[swizzledUnit<BITS>(v)] = make_float4(
                toFloat(fromFloat<T>(a.x * sm * toFloat(w4[0]))), toFloat(fromFloat<T>(a.y * sm * toFloat(w4[1]))),
                toFloat(fromFloat<T>(a.z * sm * toFloat(w4[2]))), toFloat(fromFloat<T>(a.w * sm * toFloat(w4[3]))));
        }
    }
}

// W chunks of one lane: codes and (fp16 scale bits | zero << 16) of each chunk's group.
template <int W>
struct Batch {
    uint4 q[W];
    uint32_t sz[W];
};

// Position in a warp's flat chunk sequence: row, and j-th chunk of this lane in that row.
struct Cursor {
    int row;
    int j;
    __device__ void advance(int chunksPerLane)
    {
        if (++j == chunksPerLane) {
            j = 0;
            ++row;
        }
    }
};

template <int BITS, int W>
__device__ inline void loadBatch(const GemvArgs& a, Cursor& c, int rowEnd, int lane, Batch<W>& b)
{
    constexpr int kCodesPerChunk = 128 / BITS;
#pragma unroll
    for (int u = 0; u < W; ++u) {
        const int v = lane + 32 * c.j;
        if (c.row < rowEnd && v < a.vectors) {
            b.q[u] = __ldg(reinterpret_cast<const uint4*>(a.packed) + int64_t(c.row) * a.vectors + v);
            const int64_t g = int64_t(c.row) * a.groupsPerRow + __umulhi(uint32_t(v * kCodesPerChunk), a.groupMagic);
            b.sz[u] = uint32_t(__ldg(reinterpret_cast<const unsigned short*>(a.scales) + g)) |
                      uint32_t(__ldg(a.zeros + g)) << 16;
        } else {
            b.q[u] = make_uint4(0, 0, 0, 0);
            b.sz[u] = 0;
        }
        if (c.row < rowEnd) c.advance(a.chunksPerLane);
    }
}

// acc[m] += f(x)[m, chunk v's 32|16 k] . dequant(chunk).
template <int M, int BITS>
__device__ inline void accumulateChunk(const uint4& q, uint32_t sz, const float* xs, int K, int v, float (&acc)[M])
{
    constexpr int U = 32 / BITS;    // float4 units of x per chunk
    constexpr int NP = 16 / BITS;   // code positions per 16-bit half word
    constexpr int VPW = 32 / BITS;  // codes per 32-bit word
    constexpr uint32_t kMask = (1u << BITS) - 1;
    const float scale = __half2float(__ushort_as_half(static_cast<unsigned short>(sz & 0xffffu)));
    const int zero = int(sz >> 16);
    float zf[NP];
#pragma unroll
    for (int i = 0; i < NP; ++i) zf[i] = kTwo23 + float(zero << (BITS * i));
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    float d[4 * U];  // d[c] = (q_c - zero) * 2^(BITS * (c % NP)), c = k offset in the chunk
#pragma unroll
    for (int c = 0; c < 4 * U; ++c) {
        const int word = c / VPW, pw = c % VPW, pos = pw % NP;
        const uint32_t h = pw / NP ? words[word] >> 16 : words[word];
        d[c] = __uint_as_float((h & (kMask << (BITS * pos))) | 0x4B000000u) - zf[pos];
    }
    const int key = BITS == 4 ? (v & 7) : ((v >> 1) & 3);  // swizzledUnit(U * v + j) == U * v + (j ^ key)
    const float4* chunkX = reinterpret_cast<const float4*>(xs) + U * v;
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const float4* rowX = chunkX + m * (K / 4);
        float p[NP];
#pragma unroll
        for (int i = 0; i < NP; ++i) p[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const float4 xv = rowX[j ^ key];
            p[(4 * j + 0) % NP] = fmaf(xv.x, d[4 * j + 0], p[(4 * j + 0) % NP]);
            p[(4 * j + 1) % NP] = fmaf(xv.y, d[4 * j + 1], p[(4 * j + 1) % NP]);
            p[(4 * j + 2) % NP] = fmaf(xv.z, d[4 * j + 2], p[(4 * j + 2) % NP]);
            p[(4 * j + 3) % NP] = fmaf(xv.w, d[4 * j + 3], p[(4 * j + 3) % NP]);
        }
        float sum = p[NP - 1];
#pragma unroll
        for (int i = NP - 2; i >= 0; --i) sum = fmaf(sum, 1.0f / float(1 << BITS), p[i]);
        acc[m] = fmaf(scale, sum, acc[m]);
    }
}

template <int M, typename Out>
__device__ inline void finishRow(float (&acc)[M], Out* out, const GemvArgs& a, int row, int lane)
{
#pragma unroll
    for (int m = 0; m < M; ++m) {
        float v = acc[m];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
        if (lane == m) {
            Out* dst = out + int64_t(m) * a.N + row;
            *dst = fromFloat<Out>(v + (a.accumulate ? toFloat(__ldcg(dst)) : 0.0f));
        }
        acc[m] = 0.0f;
    }
}

template <typename T, int M, typename Out, SkinnyPrologue P, int BITS>
__global__ void __launch_bounds__(kWarps * 32)
    quant_gemv_kernel(const void* __restrict__ x, GemvArgs a, Out* __restrict__ out, const T* __restrict__ normWeight)
{
    // Chunk loads per lane per batch (twice that in flight). Small on purpose: the batch loop is
    // unrolled, and in a kernel this short the code size shows (W = 8 was 0.2-0.3 us slower per
    // launch than W = 4 at M = 1 on an H200).
    constexpr int W = M <= 2 ? 4 : 2;
    extern __shared__ __align__(16) unsigned char shared[];
    float* xs = reinterpret_cast<float*>(shared);  // [M, K], swizzled units
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int rowBegin = min((int(blockIdx.x) * kWarps + warp) * a.rowsPerWarp, a.N);
    const int rowEnd = min(rowBegin + a.rowsPerWarp, a.N);

    pdlAllowNext();
    Cursor loadAt{rowBegin, 0};
    Batch<W> current, next;
    loadBatch<BITS, W>(a, loadAt, rowEnd, lane, current);  // in flight during the wait and the prologue
    pdlWaitForPrevious();  // x comes from the kernel before (pdl.cuh); the weights do not
    fillRows<T, M, P, BITS>(x, normWeight, a.eps, xs, a.K);
    __syncthreads();

    float acc[M];
#pragma unroll
    for (int m = 0; m < M; ++m) acc[m] = 0.0f;
    Cursor at{rowBegin, 0};
    while (at.row < rowEnd) {  // warp-uniform
        loadBatch<BITS, W>(a, loadAt, rowEnd, lane, next);
#pragma unroll
        for (int u = 0; u < W; ++u) {
            if (at.row < rowEnd) {
                const int v = lane + 32 * at.j;
                if (v < a.vectors) accumulateChunk<M, BITS>(current.q[u], current.sz[u], xs, a.K, v, acc);
                if (at.j + 1 == a.chunksPerLane) finishRow<M, Out>(acc, out, a, at.row, lane);
                at.advance(a.chunksPerLane);
            }
        }
        current = next;
    }
}

struct Launch {
    GemvArgs a;
    const void* x;
    void* out;
    const void* normWeight;
    int blocks;
    cudaStream_t stream;
};

template <typename T, typename Out, int M, SkinnyPrologue P, int BITS>
void launchRows(const Launch& l)
{
    const size_t sharedBytes = size_t(M) * l.a.K * sizeof(float);
    auto kernel = quant_gemv_kernel<T, M, Out, P, BITS>;
    if (sharedBytes + 1024 > 48 * 1024)  // the RmsNorm prologue adds static shared memory
        BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    launchDependent(kernel, dim3(l.blocks), dim3(kWarps * 32), sharedBytes, l.stream, l.x, l.a,
                    static_cast<Out*>(l.out), static_cast<const T*>(l.normWeight));
}

template <typename T, typename Out, SkinnyPrologue P, int BITS>
void dispatchRows(int M, const Launch& l)
{
    switch (M) {
    case 1: launchRows<T, Out, 1, P, BITS>(l); break;
    case 2: launchRows<T, Out, 2, P, BITS>(l); break;
    case 3: launchRows<T, Out, 3, P, BITS>(l); break;
    case 4: launchRows<T, Out, 4, P, BITS>(l); break;
    case 5: launchRows<T, Out, 5, P, BITS>(l); break;
    case 6: launchRows<T, Out, 6, P, BITS>(l); break;
    case 7: launchRows<T, Out, 7, P, BITS>(l); break;
    default: launchRows<T, Out, 8, P, BITS>(l); break;
    }
}

template <typename T, typename Out, int BITS>
void dispatchPrologue(int M, SkinnyPrologue prologue, const Launch& l)
{
    switch (prologue) {
    case SkinnyPrologue::None: dispatchRows<T, Out, SkinnyPrologue::None, BITS>(M, l); break;
    case SkinnyPrologue::RmsNorm: dispatchRows<T, Out, SkinnyPrologue::RmsNorm, BITS>(M, l); break;
    case SkinnyPrologue::SiluMul: dispatchRows<T, Out, SkinnyPrologue::SiluMul, BITS>(M, l); break;
    }
}

}  // namespace

void launch_quant_gemv(const void* x, const QuantDeviceWeight& w, void* out, int M, ElementType type, bool outFloat,
                       bool accumulate, cudaStream_t stream, SkinnyPrologue prologue, const void* normWeight, float eps)
{
    if (!quant_matmul_supported(w) || w.cols > kMaxK || M < 1 || M > kQuantGemvMaxRows)
        throw CudaError("launch_quant_gemv: unsupported shape (M " + std::to_string(M) + ", N " +
                        std::to_string(w.rows) + ", K " + std::to_string(w.cols) + ", bits " + std::to_string(w.bits) +
                        ", group " + std::to_string(w.groupSize) + ")");
    if (prologue == SkinnyPrologue::RmsNorm && !normWeight)
        throw CudaError("launch_quant_gemv: RmsNorm needs a weight");
    Launch l{};
    GemvArgs& a = l.a;
    a.packed = w.packed;
    a.scales = w.scales;
    a.zeros = w.zeros;
    a.N = w.rows;
    a.K = w.cols;
    a.groupsPerRow = w.cols / w.groupSize;
    a.vectors = w.cols * w.bits / 128;
    a.chunksPerLane = (a.vectors + 31) / 32;
    // floor(2^32 / g) + 1 divides exactly every n < 2^32 / g (here n < K <= 4096).
    a.groupMagic = uint32_t((uint64_t(1) << 32) / uint64_t(w.groupSize) + 1);
    a.accumulate = accumulate;
    a.eps = eps;
    // Enough warps to keep every SM streaming (more for small M, whose blocks are cheap), each
    // taking a run of rows so the per-block prologue is amortised when N is large. Measured on an
    // H200 at M = 1 (quant_matmul_bench): 8 blocks' worth of warps per SM beat 2, 4 and 16
    // (gate|up int4: 5.9, 4.6, 4.45, 5.3 us for 2, 4, 8, 16); the others are flat from 8 up.
    const int64_t targetWarps = int64_t(multiprocessorCount()) * kWarps * (M <= 2 ? 8 : 4);
    a.rowsPerWarp = int(std::max<int64_t>(1, (w.rows + targetWarps - 1) / targetWarps));
    const int warps = (w.rows + a.rowsPerWarp - 1) / a.rowsPerWarp;
    l.blocks = (warps + kWarps - 1) / kWarps;
    l.x = x;
    l.out = out;
    l.normWeight = normWeight;
    l.stream = stream;
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (w.bits == 4) {
            if (outFloat) dispatchPrologue<E, float, 4>(M, prologue, l);
            else dispatchPrologue<E, E, 4>(M, prologue, l);
        } else {
            if (outFloat) dispatchPrologue<E, float, 8>(M, prologue, l);
            else dispatchPrologue<E, E, 8>(M, prologue, l);
        }
    });
}

}  // namespace brook::cuda
