// onednn_matmul_bench: oneDNN's matmul at ERNIE-4.5-0.3B's Linear shapes, to set beside
// cpu_kernel_bench's own kernels (issue 16: choose the library by benchmark). oneDNN 2.x has no
// fp32-activation x bf16-weight matmul, so it is timed at its own best types: bf16 x bf16 -> fp32
// (activations rounded to bf16, as Brook's vdpbf16ps prefill kernel does) and u8 x s8 -> fp32
// with a scale per output (int8 activations, as Brook's int8 kernels). Weights in the layout
// oneDNN prefers (format "any", reordered once, untimed); primitive created once; the best of
// --repeats runs after a warm-up. Threads: oneDNN's own (OMP_NUM_THREADS=1 to compare with
// cpu_kernel_bench, which runs one thread). Brook does not link oneDNN; this is a measurement.
#include <dnnl.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

double bestSeconds(int repeats, const std::function<void()>& body)
{
    body();
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        body();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

struct Shape {
    const char* name;
    int N, K;
};

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Seconds for one out[T, N] = x[T, K] @ w[K, N] of the given types.
double timeMatmul(dnnl::engine& engine, dnnl::stream& stream, int T, int N, int K, dt srcType, dt weiType, bool scaled,
                  int repeats)
{
    const dnnl::memory::desc src({T, K}, srcType, tag::ab), dst({T, N}, dt::f32, tag::ab);
    const dnnl::memory::desc weiAny({K, N}, weiType, tag::any), weiPlain({K, N}, weiType, tag::ab);
    dnnl::primitive_attr attr;
    if (scaled) attr.set_output_scales(2 /* per output column */, std::vector<float>(size_t(N), 0.01f));
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weiAny, dst), attr, engine);
    dnnl::memory srcMem(pd.src_desc(), engine), dstMem(pd.dst_desc(), engine), weiMem(pd.weights_desc(), engine);
    dnnl::memory plain(weiPlain, engine);
    std::fill_n(static_cast<uint8_t*>(plain.get_data_handle()), weiPlain.get_size(), uint8_t(1));
    std::fill_n(static_cast<uint8_t*>(srcMem.get_data_handle()), pd.src_desc().get_size(), uint8_t(1));
    dnnl::reorder(plain, weiMem).execute(stream, plain, weiMem);
    stream.wait();
    const dnnl::matmul mm(pd);
    return bestSeconds(repeats, [&] {
        mm.execute(stream, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, weiMem}, {DNNL_ARG_DST, dstMem}});
        stream.wait();
    });
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app("oneDNN matmul timings at ERNIE-4.5-0.3B's shapes");
    int repeats = 5;
    bool skipHead = false;
    app.add_option("--repeats", repeats, "timed runs; the best is printed");
    app.add_flag("--skip-head", skipHead, "leave out the 103,424 x 1,024 lm head");
    CLI11_PARSE(app, argc, argv);

    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    std::vector<Shape> shapes = {{"qkv", 1280, 1024}, {"o", 1024, 2048}, {"gate_up", 6144, 1024}, {"down", 1024, 3072}};
    if (!skipHead) shapes.push_back({"lm_head", 103424, 1024});
    for (const Shape& s : shapes) {
        for (int T : {1, 8, 128}) {
            const double bf16 = timeMatmul(engine, stream, T, s.N, s.K, dt::bf16, dt::bf16, false, repeats);
            const double int8 = timeMatmul(engine, stream, T, s.N, s.K, dt::u8, dt::s8, true, repeats);
            std::printf(
                "onednn %-8s T=%-4d bf16 %9.3f ms %7.1f GB/s %7.1f GFLOP/s | int8 %9.3f ms %7.1f GB/s %7.1f GOP/s\n",
                s.name, T, bf16 * 1e3, 2.0 * s.N * s.K / bf16 / 1e9, 2.0 * T * s.N * s.K / bf16 / 1e9, int8 * 1e3,
                double(s.N) * s.K / int8 / 1e9, 2.0 * T * s.N * s.K / int8 / 1e9);
        }
    }
    return 0;
}
