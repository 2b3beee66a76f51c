// The row buckets of the CUDA backend's GEMMs: a call of M rows runs paddedRows(M) rows (16 up
// to 64, 64 up to 1024, then 256), so a few cuBLASLt plans serve every step and the prefill
// graphs have one bucket each. Pure C++: the load plan (load_plan.h) is checked without a GPU.
#pragma once

namespace brook::cuda {

constexpr int gemmPaddedRows(int M)
{
    const int step = M <= 64 ? 16 : M <= 1024 ? 64 : 256;
    return (M + step - 1) / step * step;
}

}  // namespace brook::cuda
