// AutoAWQ "gemm" packing <-> Brook's QuantizedWeight. AWQ packs along N (output features) with
// K-major rows, Brook packs along K with N-major rows, so both directions are a transpose plus
// a repack. The 4-bit nibble order is AutoAWQ's [0,2,4,6,1,3,5,7] (docs/model-ernie-4.5.md section 5).
#include "engine/awq_format.h"

#include <array>
#include <cmath>
#include <cstring>

namespace brook {

namespace {

// Nibble j of a packed int32 holds logical column kAwqOrder[j] of its group of eight.
constexpr std::array<int, 8> kAwqOrder = {0, 2, 4, 6, 1, 3, 5, 7};

// Logical column `i` (0..perWord-1) of a word: the shift of its field.
int fieldShift(int bits, int i)
{
    if (bits == 8) return 8 * i;  // Brook's 8-bit extension: plain byte order
    for (int j = 0; j < 8; ++j)
        if (kAwqOrder[size_t(j)] == i) return 4 * j;
    return 0;
}

std::string dims(std::initializer_list<int64_t> shape) { return shapeToString(std::vector<int64_t>(shape)); }

Result<void> checkTensor(const TensorView& t, DType dtype, const std::vector<int64_t>& shape, const std::string& name)
{
    const std::string where =
        (t.file.empty() ? std::string() : t.file + ": ") + "tensor '" + (t.name.empty() ? name : t.name) + "'";
    if (t.dtype != dtype)
        return makeError(where + " has dtype " + dtypeName(t.dtype) + ", expected " + dtypeName(dtype) +
                         " (AutoAWQ gemm layout)");
    if (t.shape != shape)
        return makeError(where + " has shape " + shapeToString(t.shape) + ", expected " + shapeToString(shape) +
                         " (AutoAWQ gemm layout)");
    if (t.data == nullptr || t.numBytes < size_t(t.numElements()) * dtypeSize(dtype))
        return makeError(where + " holds fewer bytes than its shape needs");
    return {};
}

template <typename T>
std::vector<T> readAll(const TensorView& t)
{
    std::vector<T> out(size_t(t.numElements()));
    std::memcpy(out.data(), t.data, out.size() * sizeof(T));  // mapped data need not be aligned
    return out;
}

}  // namespace

Result<QuantizedWeight> fromAwqGemm(const TensorView& qweight, const TensorView& qzeros, const TensorView& scales,
                                    int rows, int cols, int bits, int groupSize, const std::string& name)
{
    const int N = rows, K = cols;
    if (bits != 4 && bits != 8) return makeError(name + ": AWQ bits must be 4 or 8, got " + std::to_string(bits));
    const int perWord = 32 / bits;
    if (N <= 0 || K <= 0 || N % perWord != 0 || K % 2 != 0)
        return makeError(name + ": weight " + dims({N, K}) + " cannot be AWQ-packed (N must be a multiple of " +
                         std::to_string(perWord) + ", K even)");
    if (groupSize <= 0 || K % groupSize != 0)
        return makeError(name + ": AWQ group size " + std::to_string(groupSize) +
                         " does not divide K = " + std::to_string(K));
    const int words = N / perWord, groups = K / groupSize;
    if (auto ok = checkTensor(qweight, DType::I32, {K, words}, name + ".qweight"); !ok) return ok.failure();
    if (auto ok = checkTensor(qzeros, DType::I32, {groups, words}, name + ".qzeros"); !ok) return ok.failure();
    if (auto ok = checkTensor(scales, DType::F16, {groups, N}, name + ".scales"); !ok) return ok.failure();

    QuantizedWeight w = QuantizedWeight::zeroed(bits, groupSize, N, K);

    std::array<int, 8> shifts{};
    for (int i = 0; i < perWord; ++i) shifts[size_t(i)] = fieldShift(bits, i);
    const uint32_t mask = (1u << bits) - 1u;

    const std::vector<int32_t> qw = readAll<int32_t>(qweight);  // [K, N / perWord]
    for (int k = 0; k < K; ++k) {
        for (int c = 0; c < words; ++c) {
            const uint32_t v = uint32_t(qw[size_t(k) * size_t(words) + size_t(c)]);
            for (int i = 0; i < perWord; ++i) {
                const int n = c * perWord + i;
                const uint8_t q = uint8_t((v >> shifts[size_t(i)]) & mask);
                uint8_t* row = w.packed.data() + size_t(n) * size_t(w.packedRowBytes());
                if (bits == 8) row[k] = q;
                else row[k / 2] |= uint8_t(k % 2 == 0 ? q : q << 4);
            }
        }
    }
    const std::vector<int32_t> qz = readAll<int32_t>(qzeros);    // [K / G, N / perWord]
    const std::vector<uint16_t> sc = readAll<uint16_t>(scales);  // [K / G, N]
    for (int g = 0; g < groups; ++g) {
        for (int c = 0; c < words; ++c) {
            const uint32_t v = uint32_t(qz[size_t(g) * size_t(words) + size_t(c)]);
            for (int i = 0; i < perWord; ++i) {
                const int n = c * perWord + i;
                w.zeros[size_t(n) * size_t(groups) + size_t(g)] = uint8_t((v >> shifts[size_t(i)]) & mask);
            }
        }
        for (int n = 0; n < N; ++n) {
            const float s = fp16ToFloat(sc[size_t(g) * size_t(N) + size_t(n)]);
            if (!std::isfinite(s))
                return makeError(name + ".scales: group " + std::to_string(g) + " of output " + std::to_string(n) +
                                 " is not finite");
            w.scales[size_t(n) * size_t(groups) + size_t(g)] = s;
        }
    }
    return w;
}

Result<QuantizedWeight> fromAwqGemm(const AwqTensors& t, int bits, int groupSize, const std::string& name)
{
    const int perWord = 32 / (bits > 0 ? bits : 32);
    const int64_t words = perWord > 0 ? t.rows / perWord : 0;
    const int64_t groups = groupSize > 0 ? t.cols / groupSize : 0;
    auto view = [&](const char* suffix, DType dtype, std::vector<int64_t> shape, const void* data, size_t bytes) {
        TensorView v;
        v.name = name + suffix;
        v.dtype = dtype;
        v.shape = std::move(shape);
        v.data = static_cast<const std::byte*>(data);
        v.numBytes = bytes;
        return v;
    };
    const TensorView qweight = view(".qweight", DType::I32, {t.cols, words}, t.qweight.data(), t.qweight.size() * 4);
    const TensorView qzeros = view(".qzeros", DType::I32, {groups, words}, t.qzeros.data(), t.qzeros.size() * 4);
    const TensorView scales = view(".scales", DType::F16, {groups, t.rows}, t.scales.data(), t.scales.size() * 2);
    return fromAwqGemm(qweight, qzeros, scales, t.rows, t.cols, bits, groupSize, name);
}

AwqTensors toAwqGemm(const QuantizedWeight& w)
{
    const int N = w.rows, K = w.cols, perWord = 32 / w.bits;
    const int words = N / perWord, groups = w.groupsPerRow();
    std::array<int, 8> shifts{};
    for (int i = 0; i < perWord; ++i) shifts[size_t(i)] = fieldShift(w.bits, i);

    AwqTensors t;
    t.rows = N;
    t.cols = K;
    t.qweight.assign(size_t(K) * size_t(words), 0);
    t.qzeros.assign(size_t(groups) * size_t(words), 0);
    t.scales.resize(size_t(groups) * size_t(N));
    for (int k = 0; k < K; ++k) {
        for (int c = 0; c < words; ++c) {
            uint32_t v = 0;
            for (int i = 0; i < perWord; ++i) v |= uint32_t(w.code(c * perWord + i, k)) << shifts[size_t(i)];
            t.qweight[size_t(k) * size_t(words) + size_t(c)] = int32_t(v);
        }
    }
    for (int g = 0; g < groups; ++g) {
        for (int c = 0; c < words; ++c) {
            uint32_t v = 0;
            for (int i = 0; i < perWord; ++i) {
                const int n = c * perWord + i;
                v |= uint32_t(w.zeros[size_t(n) * size_t(groups) + size_t(g)]) << shifts[size_t(i)];
            }
            t.qzeros[size_t(g) * size_t(words) + size_t(c)] = int32_t(v);
        }
        for (int n = 0; n < N; ++n)
            t.scales[size_t(g) * size_t(N) + size_t(n)] = floatToFp16(w.scales[size_t(n) * size_t(groups) + size_t(g)]);
    }
    return t;
}

}  // namespace brook
