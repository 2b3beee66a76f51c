#include "engine/cpu/cpu_features.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace brook::cpu {

const char* cpuIsaName(CpuIsa isa)
{
    switch (isa) {
    case CpuIsa::Scalar: return "scalar";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx512Vnni: return "avx512vnni";
    case CpuIsa::Avx512Bf16: return "avx512bf16";
    }
    return "unknown";
}

CpuIsa detectCpuIsa()
{
    // GCC's builtins read cpuid (and the OS's XSAVE state), on Linux and on mingw-w64 alike.
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl");
    const bool vnni = avx512 && __builtin_cpu_supports("avx512vnni");
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
    const bool bf16 = vnni && __builtin_cpu_supports("avx512bf16");
#else
    const bool bf16 = false;
#endif
    if (bf16) return CpuIsa::Avx512Bf16;
    if (vnni) return CpuIsa::Avx512Vnni;
    if (avx512) return CpuIsa::Avx512;
    if (avx2) return CpuIsa::Avx2;
    return CpuIsa::Scalar;
}

std::vector<CpuIsa> supportedCpuIsas()
{
    std::vector<CpuIsa> out;
    for (int i = 0; i <= int(detectCpuIsa()); ++i) out.push_back(CpuIsa(i));
    return out;
}

CpuIsa resolveCpuIsa(const char* forced, CpuIsa best)
{
    if (!forced || !*forced) return best;
    const std::string want(forced);
    for (int i = 0; i <= int(CpuIsa::Avx512Bf16); ++i) {
        if (want != cpuIsaName(CpuIsa(i))) continue;
        if (i > int(best)) {
            spdlog::warn("BROOK_CPU_ISA={}: this CPU supports up to {}; using {}", want, cpuIsaName(best),
                         cpuIsaName(best));
            return best;
        }
        return CpuIsa(i);
    }
    spdlog::warn("BROOK_CPU_ISA={} is not one of scalar, avx2, avx512, avx512vnni, avx512bf16; using {}", want,
                 cpuIsaName(best));
    return best;
}

CpuIsa activeCpuIsa()
{
    static const CpuIsa isa = resolveCpuIsa(std::getenv("BROOK_CPU_ISA"), detectCpuIsa());
    return isa;
}

}  // namespace brook::cpu
