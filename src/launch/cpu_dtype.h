// What --dtype means on the CPU backend, in one place (docs/server.md "Determinism"):
//   auto, bfloat16 -> bf16 Linears with their activations rounded to bf16 (llama.cpp's
//                     arithmetic); fp16 / fp32 checkpoints compute in fp32 under auto, and
//                     bfloat16 refuses them (the CPU backend keeps a checkpoint's weights as
//                     stored: it does not round fp32 weights to bf16).
//   float32        -> the exact mode: bf16 weights widened exactly, fp32 everywhere. Refused with
//                     --quantization, whose kernels quantize the activations to int8.
//   float16        -> refused: the CPU backend has no fp16 arithmetic.
#pragma once

#include "engine/cpu/cpu_gemm.h"
#include "engine/result.h"
#include "engine/serving_settings.h"
#include "engine/tensor_view.h"

namespace brook {

// checkpointDtype: the dtype of the model's Linear weights (the embedding's, which every
// checkpoint has). quantized: --quantization is on.
Result<cpu::Bf16Arithmetic> cpuArithmeticFor(DTypeChoice dtype, DType checkpointDtype, bool quantized);

}  // namespace brook
