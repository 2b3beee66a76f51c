// AwqSearch: AutoAWQ's per-Linear scale search and the folding that makes it free at run time.
// Channels of a Linear's input with large mean |x| matter more; scaling those weight columns
// up before round-to-nearest gives them finer steps, and dividing the input by the same s
// keeps the product: X W^T = (X diag(1/s)) (W diag(s))^T.
//   s = mean|x|^alpha, clamped to >= 1e-4, divided by sqrt(max(s) * min(s)) (as AutoAWQ's
//       _compute_best_scale), alpha over {0, 1/20, ..., 19/20};
//   the chosen alpha minimises || X W^T - X diag(1/s) deq(Q(W diag(s)))^T ||_F over a sample X
//       of captured inputs. alpha = 0 is s = 1, plain RTN, so AWQ never does worse on X.
// Differences from AutoAWQ, on purpose: the loss is the Linear outputs (all Linears sharing the
// input, rows concatenated), not the whole attention / MLP block's output; no weight clipping
// search (auto_clip) is done; and AutoAWQ's default "duo scaling" (dividing by the weights'
// mean magnitude too) is not used.
// Folding 1/s into the op before the Linear (foldAwqScales):
//   q|k|v    input_layernorm weight / s
//   gate|up  post_attention_layernorm weight / s
//   down     up_proj's rows / s (silu(gate) * up is linear in up)
//   o        v_proj's rows / s, only when v's output width equals o's input width (no GQA);
//            with GQA (ERNIE 0.3B: 16 q heads, 2 kv heads) one v channel feeds 8 o channels,
//            so o keeps s = 1, as AutoAWQ skips v -> o when the shapes differ.
// All functions are pure and thread-compatible.
#pragma once

#include "engine/cpu/cpu_weights.h"
#include "engine/model_config.h"
#include "engine/result.h"

#include <span>
#include <string>
#include <vector>

namespace brook {

struct AwqSearchOptions {
    int bits = 4;
    int groupSize = 128;
    int gridSize = 20;
};

struct AwqScaleResult {
    std::vector<float> scales;    // [K]: the weight's columns are multiplied by it, the input divided
    float alpha = 0.0f;           // the chosen exponent
    double awqOutputError = 0.0;  // ||X W^T - X diag(1/s) deq(Q(W diag(s)))^T||_F / ||X W^T||_F
    double rtnOutputError = 0.0;  // the same with s = 1
};

class AwqSearch {
public:
    explicit AwqSearch(AwqSearchOptions options) : m_options(options) {}

    // w: [rows, cols] (the Linears that share one input, rows concatenated); x: [n, cols] input
    // rows; xMeanAbs: [cols]. Errors name `name` (shape, group size).
    Result<AwqScaleResult> search(std::span<const float> w, int rows, int cols, std::span<const float> x,
                                  std::span<const float> xMeanAbs, const std::string& name) const;

    // Relative output error of quantizing w with column scales s (empty s: s = 1).
    Result<double> outputError(std::span<const float> w, int rows, int cols, std::span<const float> x,
                               std::span<const float> scales) const;

    // mean|x|^alpha, clamped and normalised as described above.
    static std::vector<float> scalesForAlpha(std::span<const float> xMeanAbs, float alpha);

private:
    AwqSearchOptions m_options;
};

// The scales chosen for one layer; an empty vector means s = 1 (nothing folded).
struct AwqLayerScales {
    std::vector<float> qkv;     // [H]
    std::vector<float> o;       // [NH*HD]; empty unless canFoldIntoV(config)
    std::vector<float> gateUp;  // [H]
    std::vector<float> down;    // [I]
};

// Whether o_proj's scale can be folded into v_proj (v's output width == o's input width).
bool canFoldIntoV(const ModelConfig& config);

// Multiplies the Linears' columns by s and divides the preceding op by s (see the top). The
// fp32 model computes the same function afterwards, up to rounding.
void foldAwqScales(const ModelConfig& config, const AwqLayerScales& scales, cpu::CpuLayerWeights& layer);

}  // namespace brook
