// CpuIsa: which vector path the CPU kernels run, chosen once per process. One binary carries
// every path (each kernel file compiles its functions with GCC target attributes), so an
// installer can ship a single build to unknown CPUs. BROOK_CPU_ISA=scalar|avx2|avx512|avx512vnni|avx512bf16
// forces a lower path (a higher one than the CPU has is clamped down, with a warning), which is
// how tests and benchmarks compare each path with the scalar reference. Thread-safe.
#pragma once

#include <vector>

namespace brook::cpu {

// Ordered: each level needs everything of the levels below it.
enum class CpuIsa {
    Scalar = 0,      // plain C++, the reference
    Avx2 = 1,        // AVX2 + FMA: the floor of the vector paths
    Avx512 = 2,      // AVX-512F (+BW/VL)
    Avx512Vnni = 3,  // + AVX-512 VNNI (vpdpbusd), the int8 dot products (Cascade Lake, Ice Lake and later)
    Avx512Bf16 = 4,  // + AVX-512 BF16 (vdpbf16ps), used for prefill GEMMs (every such CPU has VNNI too)
};

const char* cpuIsaName(CpuIsa isa);
// The best path this CPU supports (cpuid, no environment).
CpuIsa detectCpuIsa();
// Every path this CPU supports, lowest first (always starts with Scalar).
std::vector<CpuIsa> supportedCpuIsas();
// `forced` (a BROOK_CPU_ISA value; null or empty: none) applied to `best`: the named path when
// it is not above `best`, else `best` (logged). Pure; exposed for tests.
CpuIsa resolveCpuIsa(const char* forced, CpuIsa best);
// The path the backend uses: detectCpuIsa(), lowered by BROOK_CPU_ISA when set. Read once.
CpuIsa activeCpuIsa();

}  // namespace brook::cpu
