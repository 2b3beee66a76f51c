#include "launch/cpu_dtype.h"

#include <string>

namespace brook {

Result<cpu::Bf16Arithmetic> cpuArithmeticFor(DTypeChoice dtype, DType checkpointDtype, bool quantized)
{
    switch (dtype) {
    case DTypeChoice::Auto: return cpu::Bf16Arithmetic::RoundedActivations;
    case DTypeChoice::BFloat16:
        if (checkpointDtype != DType::BF16 && !quantized)
            return makeError(ErrorCode::InvalidArgument, "dtype",
                             std::string("the CPU backend computes this ") + dtypeName(checkpointDtype) +
                                 " checkpoint in float32 and does not round its weights to bfloat16; use --dtype auto "
                                 "or float32");
        return cpu::Bf16Arithmetic::RoundedActivations;
    case DTypeChoice::Float32:
        if (quantized)
            return makeError(ErrorCode::InvalidArgument, "dtype",
                             "--dtype float32 computes in fp32, but quantized weights run int8 kernels on the CPU; "
                             "drop --quantization or use --dtype auto");
        return cpu::Bf16Arithmetic::Fp32;
    case DTypeChoice::Float16:
        return makeError(ErrorCode::InvalidArgument, "dtype",
                         "the CPU backend has no float16 arithmetic; use --dtype auto, bfloat16 or float32");
    }
    return cpu::Bf16Arithmetic::RoundedActivations;
}

}  // namespace brook
