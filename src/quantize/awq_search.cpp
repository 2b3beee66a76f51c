// AwqSearch: see awq_search.h. The search evaluates each alpha with the very quantizer that
// writes the checkpoint (quantizeRtn + dequantize), so the error it minimises is the error the
// written model has on the sample.
#include "quantize/awq_search.h"

#include "engine/cpu/cpu_ops.h"
#include "engine/quantized_weight.h"

#include <algorithm>
#include <cmath>

namespace brook {

namespace {

double squaredDistance(const std::vector<float>& a, const std::vector<float>& b)
{
    double sum = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double d = double(a[i]) - double(b[i]);
        sum += d * d;
    }
    return sum;
}

double squaredNorm(const std::vector<float>& a)
{
    double sum = 0.0;
    for (float v : a) sum += double(v) * double(v);
    return sum;
}

// deq(Q(W diag(s))) diag(1/s): the weight the quantized model effectively multiplies by.
// Groups run along rows, so blocks of rows quantize independently, in parallel.
Result<std::vector<float>> effectiveWeight(std::span<const float> w, int rows, int cols, std::span<const float> s,
                                           const AwqSearchOptions& options)
{
    constexpr int kRowsPerBlock = 64;
    const int blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    std::vector<float> out(size_t(rows) * size_t(cols));  // [rows, cols]
    std::vector<std::string> errors(static_cast<size_t>(blocks));
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < blocks; ++b) {
        const int first = b * kRowsPerBlock, n = std::min(kRowsPerBlock, rows - first);
        const std::span<float> block(out.data() + size_t(first) * size_t(cols), size_t(n) * size_t(cols));
        std::copy_n(w.data() + size_t(first) * size_t(cols), block.size(), block.data());
        if (!s.empty())
            for (size_t i = 0; i < block.size(); ++i) block[i] *= s[i % size_t(cols)];
        auto q = quantizeRtn(block, n, cols, options.bits, options.groupSize);
        if (!q) {
            errors[size_t(b)] = q.error();
            continue;
        }
        dequantize(*q, block);
        if (!s.empty())
            for (size_t i = 0; i < block.size(); ++i) block[i] /= s[i % size_t(cols)];
    }
    for (const std::string& e : errors)
        if (!e.empty()) return makeError(e);
    return out;
}

}  // namespace

std::vector<float> AwqSearch::scalesForAlpha(std::span<const float> xMeanAbs, float alpha)
{
    std::vector<float> s(xMeanAbs.size());
    for (size_t k = 0; k < s.size(); ++k) s[k] = std::max(std::pow(std::max(xMeanAbs[k], 0.0f), alpha), 1e-4f);
    if (s.empty()) return s;
    const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
    const float norm = std::sqrt(*hi * *lo);
    for (float& v : s) {
        v /= norm;
        if (!std::isfinite(v)) v = 1.0f;
    }
    return s;
}

Result<double> AwqSearch::outputError(std::span<const float> w, int rows, int cols, std::span<const float> x,
                                      std::span<const float> scales) const
{
    const int n = cols > 0 ? int(x.size() / size_t(cols)) : 0;
    if (n == 0) return 0.0;
    std::vector<float> reference(size_t(n) * rows);  // [n, rows]
    cpu::linear(x.data(), w.data(), reference.data(), n, cols, rows);
    auto effective = effectiveWeight(w, rows, cols, scales, m_options);
    if (!effective) return effective.failure();
    std::vector<float> out(reference.size());
    cpu::linear(x.data(), effective->data(), out.data(), n, cols, rows);
    const double norm = squaredNorm(reference);
    return norm > 0.0 ? std::sqrt(squaredDistance(out, reference) / norm) : 0.0;
}

Result<AwqScaleResult> AwqSearch::search(std::span<const float> w, int rows, int cols, std::span<const float> x,
                                         std::span<const float> xMeanAbs, const std::string& name) const
{
    if (cols <= 0 || cols % m_options.groupSize != 0)
        return makeError(name + ": group size " + std::to_string(m_options.groupSize) + " does not divide its " +
                         std::to_string(cols) + " input features");
    if (w.size() != size_t(rows) * size_t(cols) || xMeanAbs.size() != size_t(cols) || x.size() % size_t(cols) != 0)
        return makeError(name + ": weight, inputs and statistics disagree on the input width " + std::to_string(cols));
    const int n = int(x.size() / size_t(cols));
    AwqScaleResult best;
    best.scales.assign(size_t(cols), 1.0f);
    if (n == 0) return best;  // no inputs seen: nothing to weigh the error by, plain RTN

    std::vector<float> reference(size_t(n) * rows);  // [n, rows] X W^T
    cpu::linear(x.data(), w.data(), reference.data(), n, cols, rows);
    const double referenceNorm = squaredNorm(reference);
    std::vector<float> out(reference.size());
    double bestError = INFINITY;
    for (int i = 0; i < m_options.gridSize; ++i) {
        const float alpha = float(i) / float(m_options.gridSize);
        std::vector<float> s = scalesForAlpha(xMeanAbs, alpha);
        auto effective = effectiveWeight(w, rows, cols, s, m_options);
        if (!effective) return makeError(name + ": " + effective.error());
        cpu::linear(x.data(), effective->data(), out.data(), n, cols, rows);
        const double error = squaredDistance(out, reference);
        const double relative = referenceNorm > 0.0 ? std::sqrt(error / referenceNorm) : 0.0;
        if (i == 0) best.rtnOutputError = relative;
        if (error < bestError) {
            bestError = error;
            best.scales = std::move(s);
            best.alpha = alpha;
            best.awqOutputError = relative;
        }
    }
    return best;
}

bool canFoldIntoV(const ModelConfig& config) { return config.kvDim() == config.qDim(); }

namespace {

// w [rows, cols] row-major: column k *= s[k].
void scaleColumns(float* w, int rows, int cols, const std::vector<float>& s)
{
    for (int n = 0; n < rows; ++n)
        for (int k = 0; k < cols; ++k) w[size_t(n) * cols + k] *= s[size_t(k)];
}

// Rows first .. first + s.size() of w [*, cols] /= s.
void divideRows(float* w, int first, int cols, const std::vector<float>& s)
{
    for (size_t r = 0; r < s.size(); ++r) {
        float* row = w + (size_t(first) + r) * size_t(cols);
        for (int k = 0; k < cols; ++k) row[k] /= s[r];
    }
}

void divide(std::vector<float>& v, const std::vector<float>& s)
{
    for (size_t i = 0; i < v.size(); ++i) v[i] /= s[i];
}

}  // namespace

void foldAwqScales(const ModelConfig& c, const AwqLayerScales& scales, cpu::CpuLayerWeights& layer)
{
    const int H = c.hiddenSize, I = c.intermediateSize, qDim = c.qDim(), kvDim = c.kvDim();
    const int qkvRows = qDim + 2 * kvDim;
    if (!scales.qkv.empty()) {
        scaleColumns(layer.qkv.data(), qkvRows, H, scales.qkv);
        divide(layer.inputNorm, scales.qkv);
    }
    if (!scales.o.empty() && canFoldIntoV(c)) {
        scaleColumns(layer.o.data(), H, qDim, scales.o);
        divideRows(layer.qkv.data(), qDim + kvDim, H, scales.o);  // v rows follow q and k
    }
    if (!scales.gateUp.empty()) {
        scaleColumns(layer.gateUp.data(), 2 * I, H, scales.gateUp);
        divide(layer.postNorm, scales.gateUp);
    }
    if (!scales.down.empty()) {
        scaleColumns(layer.down.data(), H, I, scales.down);
        divideRows(layer.gateUp.data(), I, H, scales.down);  // up rows follow gate
    }
}

}  // namespace brook
