// gemm_split_bench: cuBLASLt at a short prompt's row counts, its heuristic's plan against the
// same algorithms with the K dimension split (needs a GPU). A cached chat turn computes ~17-256
// new tokens per step, and at those rows ERNIE's GEMMs have few output tiles: o_proj and
// down_proj (N = 1,024) give 8-16 tiles of 64-128 columns on 132 SMs, so most SMs sit idle while
// a few stream the weights. Splitting K puts more CTAs on the same output.
//
// Each shape is timed over 18 distinct weight copies in turn (one per layer, as a forward step
// meets them: 28 MB a layer, beyond what the 50 MB L2 keeps across a step), launches captured in
// a CUDA graph so the launch cost is the replay's, as in the backend's prefill graphs.
#include <CLI/CLI.hpp>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

bool ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }

struct Shape {
    const char* name;
    int N, K;
};

struct Candidate {
    cublasLtMatmulAlgo_t algo;
    int heuristicRank;
    int splitK;  // 1: as the heuristic configured it
};

// Microseconds per GEMM over `layers` weight copies, replayed `repeats` times from a graph.
double timeAlgo(cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                cublasLtMatrixLayout_t c, const cublasLtMatmulAlgo_t& algo, const std::vector<void*>& weights,
                const void* x, void* out, void* workspace, size_t workspaceBytes, cudaStream_t stream, int repeats)
{
    const float alpha = 1.0f, beta = 0.0f;
    cudaGraph_t graph;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
    bool launched = true;
    for (void* w : weights)
        launched = launched && ok(cublasLtMatmul(lt, op, &alpha, w, a, x, b, &beta, out, c, out, c, &algo, workspace,
                                                 workspaceBytes, stream));
    check(cudaStreamEndCapture(stream, &graph), "end capture");
    if (!launched) {
        cudaGraphDestroy(graph);
        return -1.0;
    }
    cudaGraphExec_t exec;
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    for (int i = 0; i < 3; ++i) check(cudaGraphLaunch(exec, stream), "warm-up");
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    cudaEventRecord(start, stream);
    for (int r = 0; r < repeats; ++r) check(cudaGraphLaunch(exec, stream), "launch");
    cudaEventRecord(end, stream);
    check(cudaEventSynchronize(end), "sync");
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, end);
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return 1e3 * double(ms) / double(repeats) / double(weights.size());
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"cuBLASLt's heuristic plan against split-K variants at short-prompt row counts (bf16, H200)"};
    std::vector<int> rows{16, 32, 48, 64, 96, 128, 192, 256};
    int candidates = 8, repeats = 50, layers = 18;
    app.add_option("--rows", rows, "row counts M");
    app.add_option("--candidates", candidates, "heuristic results tried per shape");
    app.add_option("--repeats", repeats, "graph replays timed");
    app.add_option("--layers", layers, "distinct weight copies per shape");
    CLI11_PARSE(app, argc, argv);

    const std::vector<Shape> shapes = {{"qkv", 2560, 1024}, {"o", 1024, 2048}, {"gate_up", 6144, 1024},
                                       {"down", 1024, 3072}, {"head", 103424, 1024}};
    cublasLtHandle_t lt;
    if (!ok(cublasLtCreate(&lt))) return 1;
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "stream");
    const size_t workspaceBytes = size_t(32) << 20;
    void* workspace = nullptr;
    check(cudaMalloc(&workspace, workspaceBytes), "workspace");
    const int maxM = *std::max_element(rows.begin(), rows.end());
    void *x = nullptr, *out = nullptr;
    check(cudaMalloc(&x, size_t(maxM) * 6144 * 2), "x");
    check(cudaMalloc(&out, size_t(maxM) * 103424 * 2), "out");
    check(cudaMemset(x, 0x3c, size_t(maxM) * 6144 * 2), "x fill");

    std::printf("%-8s %5s %12s %12s %10s %s\n", "shape", "M", "heuristic_us", "best_us", "gain", "best plan");
    for (const Shape& s : shapes) {
        const int copies = s.N > 10000 ? 1 : layers;  // the head is one matrix
        std::vector<void*> weights(static_cast<size_t>(copies));
        for (void*& w : weights) {
            check(cudaMalloc(&w, size_t(s.N) * s.K * 2), "weights");
            check(cudaMemset(w, 0x3c, size_t(s.N) * s.K * 2), "weights fill");
        }
        for (int M : rows) {
            // As CublasLtGemm::plan: out^T[N, M] = w[N, K] x^T, bf16 in and out, fp32 compute.
            cublasLtMatmulDesc_t op;
            cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
            const cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
            cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof(transA));
            cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof(transB));
            cublasLtMatrixLayout_t a, b, c;
            cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, s.K, s.N, s.K);
            cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, s.K, M, s.K);
            cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, s.N, M, s.N);
            cublasLtMatmulPreference_t preference;
            cublasLtMatmulPreferenceCreate(&preference);
            cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
                                                 sizeof(workspaceBytes));
            std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(candidates));
            int found = 0;
            cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, c, c, preference, candidates, results.data(), &found);
            cublasLtMatmulPreferenceDestroy(preference);

            std::vector<Candidate> tried;
            for (int i = 0; i < found; ++i) {
                tried.push_back({results[size_t(i)].algo, i, 1});
                int splitSupport = 0;
                cublasLtMatmulAlgoCapGetAttribute(&results[size_t(i)].algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT,
                                                  &splitSupport, sizeof(splitSupport), nullptr);
                if (!splitSupport) continue;
                for (int split : {2, 3, 4, 6, 8, 12, 16}) {
                    cublasLtMatmulAlgo_t algo = results[size_t(i)].algo;
                    const uint32_t splitK = uint32_t(split);
                    if (!ok(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitK,
                                                                 sizeof(splitK))))
                        continue;
                    cublasLtMatmulHeuristicResult_t checked{};
                    if (!ok(cublasLtMatmulAlgoCheck(lt, op, a, b, c, c, &algo, &checked)) ||
                        checked.workspaceSize > workspaceBytes)
                        continue;
                    tried.push_back({algo, i, split});
                }
            }
            double heuristicUs = -1.0, bestUs = 1e30;
            std::string bestPlan = "-";
            for (const Candidate& cand : tried) {
                const double us = timeAlgo(lt, op, a, b, c, cand.algo, weights, x, out, workspace, workspaceBytes,
                                           stream, repeats);
                if (us < 0.0) continue;
                if (cand.heuristicRank == 0 && cand.splitK == 1) heuristicUs = us;
                if (us < bestUs) {
                    bestUs = us;
                    bestPlan = "heuristic #" + std::to_string(cand.heuristicRank) + ", split-K " +
                               (cand.splitK == 1 ? std::string("as configured") : std::to_string(cand.splitK));
                }
            }
            std::printf("%-8s %5d %12.2f %12.2f %9.2fx %s (%zu plans)\n", s.name, M, heuristicUs, bestUs,
                        heuristicUs / bestUs, bestPlan.c_str(), tried.size());
            std::fflush(stdout);
            cublasLtMatrixLayoutDestroy(a);
            cublasLtMatrixLayoutDestroy(b);
            cublasLtMatrixLayoutDestroy(c);
            cublasLtMatmulDescDestroy(op);
        }
        for (void* w : weights) cudaFree(w);
    }
    cudaFree(x);
    cudaFree(out);
    cudaFree(workspace);
    cublasLtDestroy(lt);
    return 0;
}
