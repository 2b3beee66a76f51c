// Device building blocks shared by the paged-attention prefill and decode kernels: tensor-core
// MMA (m16n8k16, fp32 accumulate), shared-memory tile loads from the paged cache, and one warp's
// online-softmax update over a slice of a key tile.
//
// Convention (PTX m16n8k16 fragments): lane = 4 * g + t. A warp owns 16 query rows; lane (g, t)
// holds rows g and g + 8. A score/output accumulator over an 8-column n-tile holds, per lane,
// (row g, cols 2t, 2t+1) in c[0..1] and (row g+8, same cols) in c[2..3]. Shared-memory tiles are
// row-major [key][HD] with rows padded by 16 bytes so fragment loads and ldmatrix are
// bank-conflict free. sm_80+: native bf16/fp16 MMA and cp.async; sm_75: fp16 as two m16n8k8,
// bf16 emulated with shuffles (compiles and is correct, not fast; T4 runs fp16), synchronous copies.
#pragma once

#include "cuda/cuda_dtype.h"

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

namespace brook::cuda::attn {

constexpr int kThreads = 128;  // 4 warps per CTA
constexpr int kTileKeys = 64;  // keys per shared-memory K/V tile
constexpr float kLog2e = 1.4426950408889634f;

template <int HD>
constexpr int smemStride()
{
    return HD + 8;
}  // elements per padded tile row

template <typename T>
__device__ inline uint32_t pack2(float lo, float hi)
{
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    } else {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    }
}

__device__ inline float2 unpackBf16x2(uint32_t bits)
{
    __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&bits);
    return __bfloat1622float2(v);
}

// c += a * b for one m16n8k16 tile: a = 4 regs (16x16 row-major), b = 2 regs (16x8 col-major).
template <typename T>
__device__ inline void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
#elif defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, __half>) {
        // k = 0..7 uses a[0], a[1], b0; k = 8..15 uses a[2], a[3], b1.
        asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(b0));
        asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[2]), "r"(a[3]), "r"(b1));
    } else {
        // No bf16 MMA before sm_80: gather the operands with shuffles. Row g of A lives in lanes
        // 4g..4g+3 (a0: k 2t',2t'+1; a2: k 2t'+8, 2t'+9; a1/a3 the same for row g+8); column n of
        // B lives in lanes 4n..4n+3 (b0: k 2t',2t'+1; b1: k 2t'+8, 2t'+9).
        const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int tp = 0; tp < 4; ++tp) {
            const float2 a0 = unpackBf16x2(__shfl_sync(0xffffffffu, a[0], 4 * g + tp));
            const float2 a1 = unpackBf16x2(__shfl_sync(0xffffffffu, a[1], 4 * g + tp));
            const float2 a2 = unpackBf16x2(__shfl_sync(0xffffffffu, a[2], 4 * g + tp));
            const float2 a3 = unpackBf16x2(__shfl_sync(0xffffffffu, a[3], 4 * g + tp));
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int src = 4 * (2 * t + e) + tp;
                const float2 x0 = unpackBf16x2(__shfl_sync(0xffffffffu, b0, src));
                const float2 x1 = unpackBf16x2(__shfl_sync(0xffffffffu, b1, src));
                c[e] += a0.x * x0.x + a0.y * x0.y + a2.x * x1.x + a2.y * x1.y;
                c[2 + e] += a1.x * x0.x + a1.y * x0.y + a3.x * x1.x + a3.y * x1.y;
            }
        }
    }
#endif
}

// Four 8x8 b16 matrices from shared memory; lane l addresses row l % 8 of matrix l / 8 and
// receives (row g, cols 2t, 2t+1) of each: the A fragment of a row-major 16x16 tile.
__device__ inline void ldmatrixX4(uint32_t (&r)[4], const void* smem)
{
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

// Transposes an 8x8 b16 matrix held in fragment layout (lane (g, t): row g, cols 2t, 2t+1):
// afterwards lane (g, t) holds row g, cols 2t, 2t+1 of the transpose (sm_75+).
__device__ inline uint32_t movmatrixTrans(uint32_t x)
{
    uint32_t y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
}

// Four transposed 8x8 b16 matrices from shared memory; lane l addresses row l % 8 of matrix l / 8.
__device__ inline void ldmatrixX4Trans(uint32_t (&r)[4], const void* smem)
{
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

// 16-byte global -> shared copy; zero-fills when !valid (src is then not read).
__device__ inline void copy16(void* smemDst, const void* src, bool valid)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smemDst));
    const int srcBytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(srcBytes) : "memory");
#else
    uint4 v = make_uint4(0, 0, 0, 0);
    if (valid) v = *reinterpret_cast<const uint4*>(src);
    *reinterpret_cast<uint4*>(smemDst) = v;
#endif
}

__device__ inline void copyCommit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N committed copy groups are still in flight (then __syncthreads to share).
template <int N>
__device__ inline void copyWait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Block sizes are powers of two (8, 16, 32: --block-size), so a position's block and offset are a
// shift and a mask; the launchers refuse others (blockShiftOf).
inline int blockShiftOf(int blockSize)
{
    if (blockSize <= 0 || (blockSize & (blockSize - 1)) != 0) return -1;
    int shift = 0;
    while ((1 << shift) < blockSize) ++shift;
    return shift;
}

// Element offset of cache position j's row for this thread's 16-byte chunk: the block table
// lookup and 32-bit slot arithmetic (slots < 2^31) with one widening multiply. This address math
// is most of a decode CTA's instructions, so it is kept this small.
__device__ inline int64_t kvChunkOffset(const int32_t* __restrict__ blockTable, int j, int blockShift, int rowElems,
                                        int headChunkOffset)
{
    const int slot = (blockTable[j >> blockShift] << blockShift) | (j & ((1 << blockShift) - 1));
    return int64_t(slot) * rowElems + headChunkOffset;
}

// Loads cache positions kb .. kb+63 of kv head kvh into a [64][HD + 8] tile; positions >= keyEnd
// are zero-filled (their block-table entries may be garbage and their slots uninitialised).
// Position skipKey (if in range) is left untouched, for loadKvRow to fill once it is written.
// Thread x copies chunk x % (HD / 8) of keys x / (HD / 8) + i * (kThreads * 8 / HD).
// Each copy reads its key's block-table entry right before it (the decode kernel's loads: issued
// before its PDL wait, where their latency hides behind the previous kernel, in a CTA whose
// instructions are mostly this address math). Prefill uses kvTileBlocks + copyKvTile below; those
// made decode steps 1-4% slower (2026-12-04, H200, brook-step-bench --batch 1 8 32).
template <typename T, int HD>
__device__ inline void loadKvTile(T* tile, const T* __restrict__ cache, const int32_t* __restrict__ blockTable, int kb,
                                  int keyEnd, int blockShift, int numKvHeads, int kvh, int skipKey = -1)
{
    constexpr int kChunks = HD / 8;  // 16-byte chunks per key
    constexpr int kKeysPerPass = kThreads / kChunks;
    constexpr int S = smemStride<HD>();
    static_assert(kThreads % kChunks == 0 && kTileKeys % kKeysPerPass == 0, "tile must split evenly over the CTA");
    const int chunk = threadIdx.x % kChunks, firstKey = threadIdx.x / kChunks;
    const int rowElems = numKvHeads * HD, headChunk = kvh * HD + chunk * 8;
    T* dst = tile + firstKey * S + chunk * 8;
#pragma unroll
    for (int i = 0; i < kTileKeys / kKeysPerPass; ++i) {
        const int j = kb + firstKey + i * kKeysPerPass;
        if (j == skipKey) continue;
        const bool valid = j < keyEnd;
        const T* src = valid ? cache + kvChunkOffset(blockTable, j, blockShift, rowElems, headChunk) : cache;
        copy16(dst + i * kKeysPerPass * S, src, valid);
    }
}

// The block-table entries of one 64-key tile starting at kb, fetched once per warp: lane l holds
// the entry of block (kb >> blockShift) + l (0 past keyEnd, whose entries may be garbage or past the
// table), and a copy takes its key's entry with a shuffle. Reading the entry right before each copy
// made every copy wait on its own load, 8 dependent round trips a tile, ~30% of a prefill CTA's
// cycles (ncu's warp samples). Blocks of fewer than 4 keys span more than a warp's lanes: those
// read the table per key (`direct`). Every lane of the warp must call this and copyKvTile.
struct KvTileBlocks {
    const int32_t* table;
    int first;  // block of the tile's first key
    int entry;  // this lane's entry (not direct)
    bool direct;
};

__device__ inline KvTileBlocks kvTileBlocks(const int32_t* __restrict__ blockTable, int kb, int keyEnd, int blockShift)
{
    KvTileBlocks b{blockTable, kb >> blockShift, 0, blockShift < 2};
    const int lane = int(threadIdx.x & 31);
    if (!b.direct && ((b.first + lane) << blockShift) < keyEnd) b.entry = blockTable[b.first + lane];
    return b;
}

// Copies this thread's chunks of cache positions kb .. kb+63 of kv head kvh into a [64][HD + 8]
// tile (thread x: chunk x % (HD / 8) of keys x / (HD / 8) + i * (kThreads * 8 / HD)); positions
// >= keyEnd are zero-filled (their slots may be uninitialised).
template <typename T, int HD>
__device__ inline void copyKvTile(T* tile, const T* __restrict__ cache, const KvTileBlocks& blocks, int kb, int keyEnd,
                                  int blockShift, int numKvHeads, int kvh)
{
    constexpr int kChunks = HD / 8;  // 16-byte chunks per key
    constexpr int kKeysPerPass = kThreads / kChunks;
    constexpr int S = smemStride<HD>();
    static_assert(kThreads % kChunks == 0 && kTileKeys % kKeysPerPass == 0, "tile must split evenly over the CTA");
    const int chunk = threadIdx.x % kChunks, firstKey = threadIdx.x / kChunks;
    const int rowElems = numKvHeads * HD, headChunk = kvh * HD + chunk * 8;
    const int offsetMask = (1 << blockShift) - 1;
    T* dst = tile + firstKey * S + chunk * 8;
#pragma unroll
    for (int i = 0; i < kTileKeys / kKeysPerPass; ++i) {
        const int j = kb + firstKey + i * kKeysPerPass;
        const bool valid = j < keyEnd;
        int block = __shfl_sync(0xffffffffu, blocks.entry, ((j >> blockShift) - blocks.first) & 31);
        if (blocks.direct) block = valid ? blocks.table[j >> blockShift] : 0;
        const int slot = (block << blockShift) | (j & offsetMask);  // slots < 2^31
        const T* src = valid ? cache + (int64_t(slot) * rowElems + headChunk) : cache;
        copy16(dst + i * kKeysPerPass * S, src, valid);
    }
}

// The K and the V tile of the same keys, one commit group each, the block table read once.
template <typename T, int HD>
__device__ inline void loadKvTilePair(T* kTile, T* vTile, const T* __restrict__ kCache, const T* __restrict__ vCache,
                                      const int32_t* __restrict__ blockTable, int kb, int keyEnd, int blockShift,
                                      int numKvHeads, int kvh)
{
    const KvTileBlocks blocks = kvTileBlocks(blockTable, kb, keyEnd, blockShift);
    copyKvTile<T, HD>(kTile, kCache, blocks, kb, keyEnd, blockShift, numKvHeads, kvh);
    copyCommit();
    copyKvTile<T, HD>(vTile, vCache, blocks, kb, keyEnd, blockShift, numKvHeads, kvh);
    copyCommit();
}

// Loads cache position j of kv head kvh into row j - kb of a tile (threads 0 .. HD/8 - 1).
template <typename T, int HD>
__device__ inline void loadKvRow(T* tile, const T* __restrict__ cache, const int32_t* __restrict__ blockTable, int kb,
                                 int j, int blockShift, int numKvHeads, int kvh)
{
    constexpr int S = smemStride<HD>();
    const int chunk = threadIdx.x;
    if (chunk >= HD / 8) return;
    copy16(tile + (j - kb) * S + chunk * 8,
           cache + kvChunkOffset(blockTable, j, blockShift, numKvHeads * HD, kvh * HD + chunk * 8), true);
}

// Loads this lane's Q A-fragments straight from global memory: row0 / row1 are the q rows of the
// warp's rows g and g + 8 (nullptr: a padding row, zeros). Each row is read once per CTA, so
// this skips a shared-memory round trip and overlaps with the first K/V tile copies.
template <int HD>
__device__ inline void loadQFragments(uint32_t (&qf)[HD / 16][4], const void* row0, const void* row1)
{
    const int t = threadIdx.x & 3;
    const uint32_t* r0 = static_cast<const uint32_t*>(row0);
    const uint32_t* r1 = static_cast<const uint32_t*>(row1);
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {  // 32-bit words: dims kk*16 + 2t -> word kk*8 + t
        qf[kk][0] = r0 ? __ldcg(r0 + kk * 8 + t) : 0u;
        qf[kk][1] = r1 ? __ldcg(r1 + kk * 8 + t) : 0u;
        qf[kk][2] = r0 ? __ldcg(r0 + kk * 8 + t + 4) : 0u;
        qf[kk][3] = r1 ? __ldcg(r1 + kk * 8 + t + 4) : 0u;
    }
}

// One warp's running softmax state for its 16 rows. m: running max of scaled scores (log2
// domain, -inf until a key is seen); l: this lane's partial row sum (quad-reduce at the end).
template <int HD>
struct WarpState {
    float o[HD / 8][4];
    float m[2];
    float l[2];
    __device__ void init()
    {
#pragma unroll
        for (int n = 0; n < HD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
        m[0] = m[1] = -INFINITY;
        l[0] = l[1] = 0.0f;
    }
};

// Scores of the warp's rows against 8 * NT keys of a K tile slice, then the online-softmax update:
// masks keys > pos (per row), rescales o/l, leaves P = exp2(s - m) in s for accumulatePv.
template <typename T, int HD, int NT>
__device__ inline void scoreTile(WarpState<HD>& st, float (&s)[NT][4], const uint32_t (&qf)[HD / 16][4], const T* ks,
                                 int keyBase, int pos0, int pos1, float scaleLog2)
{
    constexpr int S = smemStride<HD>();
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const uint16_t* kbase = reinterpret_cast<const uint16_t*>(ks);
#pragma unroll
    for (int j = 0; j < NT; ++j) {
        s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) {
            const uint16_t* p = kbase + (j * 8 + g) * S + kk * 16 + 2 * t;
            mma16816<T>(s[j], qf[kk], *reinterpret_cast<const uint32_t*>(p), *reinterpret_cast<const uint32_t*>(p + 8));
        }
    }
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < NT; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int key = keyBase + j * 8 + 2 * t + e;
            s[j][e] = key <= pos0 ? s[j][e] * scaleLog2 : -INFINITY;
            s[j][2 + e] = key <= pos1 ? s[j][2 + e] * scaleLog2 : -INFINITY;
            mx0 = fmaxf(mx0, s[j][e]);
            mx1 = fmaxf(mx1, s[j][2 + e]);
        }
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    const float m0 = fmaxf(st.m[0], mx0), m1 = fmaxf(st.m[1], mx1);
    // A row with every key so far masked keeps m = -inf; subtracting 0 then keeps exp2 at 0, not NaN.
    const float base0 = m0 == -INFINITY ? 0.0f : m0, base1 = m1 == -INFINITY ? 0.0f : m1;
    const float corr0 = exp2f(st.m[0] - base0), corr1 = exp2f(st.m[1] - base1);
    st.m[0] = m0;
    st.m[1] = m1;
    float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
    for (int j = 0; j < NT; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            s[j][e] = exp2f(s[j][e] - base0);
            s[j][2 + e] = exp2f(s[j][2 + e] - base1);
            sum0 += s[j][e];
            sum1 += s[j][2 + e];
        }
    }
    st.l[0] = st.l[0] * corr0 + sum0;
    st.l[1] = st.l[1] * corr1 + sum1;
#pragma unroll
    for (int n = 0; n < HD / 8; ++n) {
        st.o[n][0] *= corr0;
        st.o[n][1] *= corr0;
        st.o[n][2] *= corr1;
        st.o[n][3] *= corr1;
    }
}

// o += P . V over the same 8 * NT keys (NT even). P's accumulator layout is exactly the A
// fragment of the next MMA (n-tiles 2kk, 2kk+1 = k 0..7, 8..15); V comes through ldmatrix.trans.
template <typename T, int HD, int NT>
__device__ inline void accumulatePv(WarpState<HD>& st, const float (&s)[NT][4], const T* vs)
{
    static_assert(NT % 2 == 0, "P.V consumes keys 16 at a time");
    constexpr int S = smemStride<HD>();
    const int lane = threadIdx.x & 31, mi = lane >> 3, r = lane & 7;
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
        const uint32_t pa[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                                pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
        // Matrices: 0 = keys 0-7 / dims d..d+7, 1 = keys 8-15 / same dims, 2, 3 = the same for d+8.
        const T* row = vs + (kk * 16 + (mi & 1) * 8 + r) * S + (mi >> 1) * 8;
#pragma unroll
        for (int np = 0; np < HD / 16; ++np) {
            uint32_t vb[4];
            ldmatrixX4Trans(vb, row + np * 16);
            mma16816<T>(st.o[2 * np], pa, vb[0], vb[1]);
            mma16816<T>(st.o[2 * np + 1], pa, vb[2], vb[3]);
        }
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// One (row, dim pair) of a merge inside a thread-block cluster (decode and split prefill attention):
// CTA j of the cluster holds the row's output normalised over its own keys at `o` (a float2) and its
// log-sum-exp M + log2 L at `lse` (-inf: it saw no key), in its own shared memory at the same
// offsets. Returns sum_j 2^(lse_j - max) o_j / sum_j 2^(lse_j - max); zeros when no CTA saw a key.
template <int kMaxCtas>
__device__ inline float2 mergeClusterPeers(const cooperative_groups::cluster_group& cluster, const float* lse,
                                           const float* o, int clusterSize)
{
    // All peers' values first (independent remote loads in flight together), then the sums.
    float peerLse[kMaxCtas];
    float2 peerO[kMaxCtas];
#pragma unroll
    for (int j = 0; j < kMaxCtas; ++j) {
        peerLse[j] = j < clusterSize ? *cluster.map_shared_rank(lse, j) : -INFINITY;
        peerO[j] =
            j < clusterSize ? *reinterpret_cast<const float2*>(cluster.map_shared_rank(o, j)) : make_float2(0.0f, 0.0f);
    }
    float M = -INFINITY;
#pragma unroll
    for (int j = 0; j < kMaxCtas; ++j) M = fmaxf(M, peerLse[j]);
    float L = 0.0f, o0 = 0.0f, o1 = 0.0f;
#pragma unroll
    for (int j = 0; j < kMaxCtas; ++j) {
        if (peerLse[j] == -INFINITY) continue;  // a peer without keys: its output was never written
        const float w = exp2f(peerLse[j] - M);
        L += w;
        o0 += w * peerO[j].x;
        o1 += w * peerO[j].y;
    }
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;
    return make_float2(o0 * inv, o1 * inv);
}
#endif

// Partition of a decode sequence's context over the CTAs of the grid (decode kernel). The grid
// has `splits` CTAs per sequence (fixed at capture); a sequence uses only as many as it needs:
// `fillSplits` (enough to fill the GPU when every sequence splits alike, from numSeqs) but not
// partitions under kMinSplitKeys (each extra partition costs the merge a read), and at least
// enough that no CTA streams more than kMaxPartition keys, so one long sequence in a large batch
// does not leave its SMs finishing alone. Partitions are whole 64-key tiles, so tiles never
// straddle a partition boundary. Every CTA of a sequence computes the same numbers.
constexpr int kMinSplitKeys = 256;
constexpr int kMaxPartition = 512;
// Cap of the kMaxPartition rule on the grid: a graph captured for a long maximum (ERNIE's 131072)
// launches that many CTAs per sequence even when contexts are short, and the ones that only exit
// cost ~1.2 ns each at batch 256 (attention_bench: 16 us with 8 splits, 50 us with 64, context
// 128). Past 16 x 512 keys, partitions grow instead; a batch that large fills the GPU anyway.
constexpr int kMaxLongSplits = 16;

__host__ __device__ inline int decodePartitionSize(int contextLen, int splits, int fillSplits)
{
    const int fine = min(fillSplits, (contextLen + kMinSplitKeys - 1) / kMinSplitKeys);
    const int wanted = max(max(fine, 1), (contextLen + kMaxPartition - 1) / kMaxPartition);
    const int effective = min(splits, wanted);
    const int perSplit = (contextLen + effective - 1) / effective;
    return (perSplit + kTileKeys - 1) / kTileKeys * kTileKeys;
}

}  // namespace brook::cuda::attn
