// CublasLtGemm: out[M, N] = x[M, K] @ w[N, K]^T (torch Linear layout) in bf16/fp16 with fp32
// accumulation, through cuBLASLt. Output in the element type or fp32 (logits). Heuristic
// results are cached per shape (per bucket of M with row padding) so steady-state calls do no
// planning; the fixed workspace
// keeps calls legal inside CUDA-graph capture. One per stream; engine thread only.
#pragma once

#include "cuda/cuda_dtype.h"
#include "cuda/device_buffer.h"

#include <cublasLt.h>

#include <map>
#include <tuple>

namespace brook::cuda {

class CublasLtGemm {
public:
    explicit CublasLtGemm(size_t workspaceBytes = 32u << 20);
    ~CublasLtGemm();
    CublasLtGemm(const CublasLtGemm&) = delete;
    CublasLtGemm& operator=(const CublasLtGemm&) = delete;

    // x [M, K], w [N, K], out [M, N]; outFloat: out is fp32 instead of the element type.
    // beta = 1 adds into out (same type as out). Small M goes to the skinny (decode) kernel.
    void matmul(const void* x, const void* w, void* out, int M, int N, int K, ElementType type, bool outFloat,
                cudaStream_t stream, float beta = 0.0f);

    // Tests and benchmarks compare both paths; the backend leaves it on.
    void setUseSkinny(bool use) { m_useSkinny = use; }

    // With row padding on, a cuBLASLt call of M rows runs paddedRows(M) rows instead, so that
    // plans are per bucket of M: a server sees a new prompt length at almost every request, and
    // planning one M (cublasLtMatmulAlgoGetHeuristic for each of a step's ~5 GEMM shapes) cost
    // more than the step's GEMMs. The caller's x and out must then hold paddedRows(M) rows; the
    // extra rows are scratch (computed from whatever x holds there, never read back). Padding
    // costs almost no GEMM time: below ~200 rows a bf16 GEMM on an H200 is bound by reading the
    // weights, and above it cuBLASLt's 64- and 128-row tiles compute the padded rows anyway.
    void setPadRows(bool pad) { m_padRows = pad; }
    // M rounded up: to 16 up to 64 rows, to 64 up to 1,024, then to 256.
    static int paddedRows(int M);

private:
    struct Plan {
        cublasLtMatmulDesc_t op = nullptr;
        cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
        cublasLtMatmulAlgo_t algo{};
    };
    using Key = std::tuple<int, int, int, int, bool>;
    Plan& plan(int M, int N, int K, ElementType type, bool outFloat);

    cublasLtHandle_t m_handle = nullptr;
    DeviceBuffer m_workspace;
    std::map<Key, Plan> m_plans;
    bool m_useSkinny = true;
    bool m_padRows = false;
};

}  // namespace brook::cuda
