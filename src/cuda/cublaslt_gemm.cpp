#include "cuda/cublaslt_gemm.h"

#include "cuda/cuda_check.h"
#include "cuda/skinny_gemm.h"
#include "cuda/stream_timer.h"

#include <spdlog/spdlog.h>

#include <limits>
#include <string>
#include <vector>

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

CublasLtGemm::Plan& CublasLtGemm::plan(int M, int N, int K, ElementType type, bool outFloat, const Call& call)
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
    cublasLtMatmulHeuristicResult_t results[kAutotuneCandidates]{};
    int found = 0;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    BROOK_CUDA_CHECK(cudaStreamIsCapturing(call.stream, &capturing));
    const bool tune = m_autotune && M <= kAutotuneMaxRows && capturing == cudaStreamCaptureStatusNone;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(m_handle, p.op, p.a, p.b, p.c, p.c, preference,
                                                                 tune ? kAutotuneCandidates : 1, results, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    if (status != CUBLAS_STATUS_SUCCESS || found == 0)
        throw CudaError("cuBLASLt has no algorithm for a " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                        std::to_string(K) + " GEMM");
    p.algo = results[tune && found > 1 ? fastestAlgorithm(p, results, found, M, N, outFloat, call) : 0].algo;
    return m_plans.emplace(key, p).first->second;
}

int CublasLtGemm::fastestAlgorithm(Plan& p, const cublasLtMatmulHeuristicResult_t* candidates, int count, int M, int N,
                                   bool outFloat, const Call& call)
{
    constexpr int kWarmRuns = 2, kTimedRuns = 8;
    // An accumulating call (o_proj and down_proj into the residual, at most 1,024 x hidden) must
    // not see its output written: its runs go to scratch. Others write the output they are
    // about to overwrite anyway (no scratch as large as the LM head's logits).
    DeviceBuffer scratch(call.beta != 0.0f ? size_t(M) * size_t(N) * (outFloat ? 4 : 2) : 0);
    void* out = call.beta != 0.0f ? scratch.get() : call.out;
    const void *x = call.x, *w = call.w;
    cudaStream_t stream = call.stream;
    const float alpha = 1.0f, beta = 0.0f;
    std::vector<double> us(size_t(count), std::numeric_limits<double>::infinity());
    for (int i = 0; i < count; ++i) {
        if (candidates[i].state != CUBLAS_STATUS_SUCCESS) continue;
        auto run = [&] {
            BROOK_CUBLAS_CHECK(cublasLtMatmul(m_handle, p.op, &alpha, w, p.a, x, p.b, &beta, out, p.c, out, p.c,
                                              &candidates[i].algo, m_workspace.get(), m_workspace.bytes(), stream));
        };
        for (int r = 0; r < kWarmRuns; ++r) run();
        us[size_t(i)] = microsecondsPerRun(stream, kTimedRuns, run);
    }
    int best = 0;
    for (int i = 1; i < count; ++i)
        if (us[size_t(i)] < us[size_t(best)]) best = i;
    // Timing noise must not flip the plan between runs for nothing: the heuristic's choice stays
    // unless another is clearly faster.
    if (us[size_t(best)] > (1.0 - kAutotuneMargin) * us[0]) best = 0;
    spdlog::debug("cuBLASLt {}x{} GEMM: heuristic's plan {:.1f} us, kept candidate {} of {} at {:.1f} us", M, N, us[0],
                  best, count, us[size_t(best)]);
    return best;
}

int CublasLtGemm::paddedRows(int M)
{
    const int step = M <= 64 ? 16 : M <= 1024 ? 64 : 256;
    return (M + step - 1) / step * step;
}

void CublasLtGemm::matmul(const void* x, const void* w, void* out, int M, int N, int K, ElementType type, bool outFloat,
                          cudaStream_t stream, float beta)
{
    if (M == 0) return;
    if (m_useSkinny && skinny_gemm_preferred(M, K)) {
        launch_skinny_gemm(x, w, out, M, N, K, type, outFloat, beta != 0.0f, stream);
        return;
    }
    Plan& p = plan(m_padRows ? paddedRows(M) : M, N, K, type, outFloat, {x, w, out, beta, stream});
    const float alpha = 1.0f;
    BROOK_CUBLAS_CHECK(cublasLtMatmul(m_handle, p.op, &alpha, w, p.a, x, p.b, &beta, out, p.c, out, p.c, &p.algo,
                                      m_workspace.get(), m_workspace.bytes(), stream));
}

}  // namespace brook::cuda
