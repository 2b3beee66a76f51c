#include "cuda/cublaslt_gemm.h"

#include "cuda/cuda_check.h"
#include "cuda/gemm_rows.h"
#include "cuda/skinny_gemm.h"

#include <string>

namespace brook::cuda {

CublasLtGemm::CublasLtGemm(size_t workspaceBytes) : m_workspace(workspaceBytes)
{
    BROOK_CUBLAS_CHECK(cublasLtCreate(&m_handle));
}

CublasLtGemm::~CublasLtGemm()
{
    for (auto& [key, p] : m_plans) {
        cublasLtMatrixLayoutDestroy(p.a);
        cublasLtMatrixLayoutDestroy(p.b);
        cublasLtMatrixLayoutDestroy(p.c);
        cublasLtMatmulDescDestroy(p.op);
    }
    if (m_handle) cublasLtDestroy(m_handle);
}

CublasLtGemm::Plan& CublasLtGemm::plan(int M, int N, int K, ElementType type, bool outFloat)
{
    const Key key{M, N, K, int(type), outFloat};
    auto it = m_plans.find(key);
    if (it != m_plans.end()) return it->second;

    // Row-major out[M, N] = x[M, K] w[N, K]^T is column-major out^T[N, M] = w^T... i.e.
    // cuBLAS sees A = w as a K x N column-major matrix used transposed, B = x as K x M.
    const cudaDataType_t in = type == ElementType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
    const cudaDataType_t outType = outFloat ? CUDA_R_32F : in;
    Plan p;
    BROOK_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
    BROOK_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof(transA)));
    BROOK_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof(transB)));
    BROOK_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, in, K, N, K));
    BROOK_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, in, K, M, K));
    BROOK_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.c, outType, N, M, N));

    cublasLtMatmulPreference_t preference;
    BROOK_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const size_t workspace = m_workspace.bytes();
    BROOK_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &workspace, sizeof(workspace)));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(m_handle, p.op, p.a, p.b, p.c, p.c, preference, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    if (status != CUBLAS_STATUS_SUCCESS || found == 0)
        throw CudaError("cuBLASLt has no algorithm for a " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                        std::to_string(K) + " GEMM");
    p.algo = result.algo;
    return m_plans.emplace(key, p).first->second;
}

int CublasLtGemm::paddedRows(int M) { return gemmPaddedRows(M); }

void CublasLtGemm::matmul(const void* x, const void* w, void* out, int M, int N, int K, ElementType type, bool outFloat,
                          cudaStream_t stream, float beta)
{
    if (M == 0) return;
    if (m_useSkinny && skinny_gemm_preferred(M, K)) {
        launch_skinny_gemm(x, w, out, M, N, K, type, outFloat, beta != 0.0f, stream);
        return;
    }
    Plan& p = plan(m_padRows ? paddedRows(M) : M, N, K, type, outFloat);
    const float alpha = 1.0f;
    BROOK_CUBLAS_CHECK(cublasLtMatmul(m_handle, p.op, &alpha, w, p.a, x, p.b, &beta, out, p.c, out, p.c, &p.algo,
                                      m_workspace.get(), m_workspace.bytes(), stream));
}

}  // namespace brook::cuda
