// AwqCalibrator: the activation statistics AWQ needs, from a plain fp32 forward of the dense
// model over calibration tokens. For each layer it records, per input channel, the mean |x| of
// the inputs of the four Linear groups (the groups sharing one input share one AWQ scale):
//   Qkv     input_layernorm(x)            -> q_proj, k_proj, v_proj   [T, H]
//   O       the attention output          -> o_proj                   [T, NH*HD]
//   GateUp  post_attention_layernorm(x)   -> gate_proj, up_proj       [T, H]
//   Down    silu(gate) * up               -> down_proj                [T, I]
// plus a fixed sample of those input rows for the scale search (awq_search.h).
// The forward is self-contained (whole sequences, causal, contiguous K/V, no paging) so it
// shares no state with a backend; tests check its logits against the CPU backend's.
// Not thread-safe: one caller at a time (it is const, but uses OpenBLAS, which may thread).
#pragma once

#include "engine/cpu/cpu_weights.h"
#include "engine/model_config.h"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace brook {

enum class LinearInput { Qkv = 0, O = 1, GateUp = 2, Down = 3 };
inline constexpr int kLinearInputCount = 4;

struct LinearInputStats {
    int cols = 0;                // K: input features
    int64_t count = 0;           // rows (tokens) seen
    std::vector<double> absSum;  // [K] sum over rows of |x|
    std::vector<float> sample;   // [sampleRows(), K] input rows kept for the scale search

    std::vector<float> meanAbs() const;  // [K] absSum / count
    int sampleRows() const { return cols > 0 ? int(sample.size() / size_t(cols)) : 0; }
};

struct LayerCalibration {
    std::array<LinearInputStats, kLinearInputCount> inputs;
    LinearInputStats& operator[](LinearInput which) { return inputs[size_t(which)]; }
    const LinearInputStats& operator[](LinearInput which) const { return inputs[size_t(which)]; }
};

struct CalibrationOptions {
    int sequenceLength = 512;  // calibration tokens are cut into independent sequences this long
    int sampleRows = 512;      // input rows kept per Linear group, spread evenly over all tokens
};

class AwqCalibrator {
public:
    // Dense fp32 weights (CpuWeights::load without quantization); both must outlive this.
    AwqCalibrator(const ModelConfig& config, const cpu::CpuWeights& weights);

    // Logits [T, V] at every position of one sequence starting at position 0.
    std::vector<float> logits(std::span<const int32_t> tokens) const;

    // Statistics for every layer ([numLayers]). progress (optional) gets the fraction done.
    std::vector<LayerCalibration> calibrate(std::span<const int32_t> tokens, const CalibrationOptions& options,
                                            const std::function<void(double)>& progress = {}) const;

private:
    // What one sequence's forward records: the layers' statistics and which of its rows to keep.
    struct Capture {
        std::vector<LayerCalibration>* layers = nullptr;
        std::vector<int> sampledRows;  // row indices within this sequence, ascending
    };
    // x: [T, H] embeddings in, the last layer's output (before the final norm) out.
    void runLayers(std::vector<float>& x, int T, Capture* capture) const;
    // Causal GQA attention over the whole sequence: q [T, NH*HD] roped, kv [T, 2*KVH*HD]
    // (roped k, then v, per row as in the fused qkv output), out [T, NH*HD].
    void attention(const float* q, const float* qkv, int rowWidth, float* out, int T) const;

    const ModelConfig& m_config;
    const cpu::CpuWeights& m_weights;
};

}  // namespace brook
