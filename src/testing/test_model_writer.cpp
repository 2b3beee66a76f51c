// writeTestModel: a complete ERNIE-4.5 model folder with random weights, for tests and benchmarks.
// Weights are reproducible from the seed alone: each tensor is cut into fixed chunks and every
// chunk draws from its own std::mt19937_64 seeded from (seed, tensor number, chunk number), so
// the result does not depend on the thread count or on whether the weights are sharded.
//
// Scales (H hidden, fan_in a projection's input width), chosen so the logits are informative:
//   norm weights        1 + N(0, 0.1)     near the identity, but not exactly it
//   projections         N(0, 1/sqrt(fan_in))  keeps unit variance through each matmul, so q.k/sqrt(HD)
//                       has std ~1 (attention neither uniform nor one-hot) and each block adds O(1)
//                       to the residual stream
//   embedding, lm_head  N(0, 3/sqrt(H))   logits = rmsnorm(x) . E[j] with rmsnorm(x) of RMS ~1 give a
//                       logit std of ~3 across the vocabulary: a clear favourite, not a certainty.
//                       The embedding row itself (RMS 3/sqrt(H)) is small beside the O(1) block
//                       outputs, so the model does not merely echo its input token.
#include "testing/test_model_writer.h"

#include "engine/safetensors_writer.h"
#include "engine/tokenizer.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

namespace brook::testing {

TestModelShape TestModelShape::tiny() { return TestModelShape{}; }

TestModelShape TestModelShape::ernie03b()
{
    TestModelShape s;
    s.vocabSize = 103424;
    s.hiddenSize = 1024;
    s.intermediateSize = 3072;
    s.numLayers = 18;
    s.numHeads = 16;
    s.numKvHeads = 2;
    s.headDim = 128;
    s.maxPositionEmbeddings = 131072;
    s.ropeTheta = 500000.0;
    return s;
}

namespace {

constexpr size_t kChunkElements = size_t(1) << 16;

uint64_t splitMix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Fills values[0, n) with mean + stddev * N(0, 1). Box-Muller on one 64-bit draw per pair: exact
// normals at about half the cost of std::normal_distribution, which matters for the 0.3B shape.
void fillNormal(float* values, size_t n, float mean, float stddev, std::mt19937_64& engine)
{
    constexpr float kTwoPi = 6.28318530717958647692f;
    constexpr float kInv24 = 1.0f / 16777216.0f;
    for (size_t i = 0; i < n; i += 2) {
        const uint64_t bits = engine();
        const float u1 = (float(bits >> 40) + 0.5f) * kInv24;  // (0, 1): log is finite
        const float u2 = float(bits & 0xffffffu) * kInv24;
        const float radius = stddev * std::sqrt(-2.0f * std::log(u1));
        values[i] = mean + radius * std::cos(kTwoPi * u2);
        if (i + 1 < n) values[i + 1] = mean + radius * std::sin(kTwoPi * u2);
    }
}

// `count` values of mean + stddev * N(0, 1) in `dtype`, from stream `stream` of `seed`.
std::vector<std::byte> randomTensor(size_t count, DType dtype, float mean, float stddev, uint64_t seed, uint64_t stream)
{
    std::vector<std::byte> bytes(count * dtypeSize(dtype));
    const size_t chunks = (count + kChunkElements - 1) / kChunkElements;
    std::atomic<size_t> next{0};
    auto work = [&] {
        std::vector<float> values(kChunkElements);
        for (size_t chunk = next++; chunk < chunks; chunk = next++) {
            std::mt19937_64 engine(splitMix64(splitMix64(seed ^ splitMix64(stream)) + chunk));
            const size_t begin = chunk * kChunkElements;
            const size_t n = std::min(kChunkElements, count - begin);
            fillNormal(values.data(), n, mean, stddev, engine);
            convertFromFloat32(values.data(), n, dtype, bytes.data() + begin * dtypeSize(dtype));
        }
    };
    const size_t threads = std::min<size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& thread : pool) thread.join();
    return bytes;
}

struct PlannedTensor {
    std::string name;
    std::vector<int64_t> shape;
    float mean;
    float stddev;
    int shard;                     // 0 or 1 when sharded
    uint64_t stream = UINT64_MAX;  // random stream; default: the tensor's number in the plan
};

std::vector<PlannedTensor> planTensors(const TestModelShape& s, int vocab, const TestModelOptions& options)
{
    const int64_t V = vocab, H = s.hiddenSize, I = s.intermediateSize;
    const int64_t Q = int64_t(s.numHeads) * s.headDim, KV = int64_t(s.numKvHeads) * s.headDim;
    const float embedStd = 3.0f / std::sqrt(float(H));
    auto proj = [](int64_t fanIn) { return 1.0f / std::sqrt(float(fanIn)); };
    std::vector<PlannedTensor> plan;
    plan.push_back({"model.embed_tokens.weight", {V, H}, 0.0f, embedStd, 0});
    for (int i = 0; i < s.numLayers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        const int shard = i < s.numLayers / 2 ? 0 : 1;
        plan.push_back({p + "input_layernorm.weight", {H}, 1.0f, 0.1f, shard});
        plan.push_back({p + "self_attn.q_proj.weight", {Q, H}, 0.0f, proj(H), shard});
        plan.push_back({p + "self_attn.k_proj.weight", {KV, H}, 0.0f, proj(H), shard});
        plan.push_back({p + "self_attn.v_proj.weight", {KV, H}, 0.0f, proj(H), shard});
        plan.push_back({p + "self_attn.o_proj.weight", {H, Q}, 0.0f, proj(Q), shard});
        plan.push_back({p + "post_attention_layernorm.weight", {H}, 1.0f, 0.1f, shard});
        plan.push_back({p + "mlp.gate_proj.weight", {I, H}, 0.0f, proj(H), shard});
        plan.push_back({p + "mlp.up_proj.weight", {I, H}, 0.0f, proj(H), shard});
        plan.push_back({p + "mlp.down_proj.weight", {H, I}, 0.0f, proj(I), shard});
    }
    plan.push_back({"model.norm.weight", {H}, 1.0f, 0.1f, 1});
    if (options.writeLmHead || !options.tieWordEmbeddings) {
        // Tied: the embedding's own stream, so the written head equals the embedding bit for bit.
        const uint64_t stream = options.tieWordEmbeddings ? 0 : UINT64_MAX;
        plan.push_back({"lm_head.weight", {V, H}, 0.0f, embedStd, 1, stream});
    }
    for (size_t i = 0; i < plan.size(); ++i) {
        if (plan[i].stream == UINT64_MAX) plan[i].stream = i;
    }
    return plan;
}

Result<void> writeJson(const std::filesystem::path& path, const nlohmann::json& json)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << json.dump(2) << "\n";
    out.close();
    if (!out) return makeError(path.string() + ": cannot write file");
    return {};
}

nlohmann::json configJson(const TestModelShape& s, int vocab, const TestModelOptions& options)
{
    // Key for key what transformers writes for baidu/ERNIE-4.5-0.3B-PT (sorted, as it sorts them).
    nlohmann::json config = {
        {"architectures", {"Ernie4_5ForCausalLM"}},
        {"bos_token_id", 1},
        {"eos_token_id", 2},
        {"head_dim", s.headDim},
        {"hidden_act", "silu"},
        {"hidden_size", s.hiddenSize},
        {"intermediate_size", s.intermediateSize},
        {"max_position_embeddings", s.maxPositionEmbeddings},
        {"model_type", "ernie4_5"},
        {"num_attention_heads", s.numHeads},
        {"num_hidden_layers", s.numLayers},
        {"num_key_value_heads", s.numKvHeads},
        {"pad_token_id", 0},
        {"rms_norm_eps", 1e-05},
        {"rope_scaling", nullptr},
        {"tie_word_embeddings", options.tieWordEmbeddings},
        {"torch_dtype", options.dtype == DType::BF16  ? "bfloat16"
                        : options.dtype == DType::F16 ? "float16"
                                                      : "float32"},
        {"transformers_version", "4.54.0"},
        {"use_bias", false},
        {"use_cache", true},
        {"vocab_size", vocab},
    };
    if (s.ropeTheta == std::floor(s.ropeTheta) && s.ropeTheta < 1e15) config["rope_theta"] = int64_t(s.ropeTheta);
    else config["rope_theta"] = s.ropeTheta;
    return config;
}

nlohmann::json generationConfigJson()
{
    // ERNIE-4.5-0.3B's generation_config.json (see docs/model-ernie-4.5.md section 6).
    return {{"do_sample", true},      {"top_p", 0.8},      {"temperature", 0.8},        {"bos_token_id", 1},
            {"eos_token_id", 2},      {"pad_token_id", 0}, {"repetition_penalty", 1.0}, {"frequency_penalty", 0.0},
            {"presence_penalty", 0.0}};
}

Result<void> checkOptions(const TestModelOptions& o)
{
    const TestModelShape& s = o.shape;
    if (s.vocabSize < 0 || s.hiddenSize <= 0 || s.intermediateSize <= 0 || s.numLayers <= 0 || s.numHeads <= 0 ||
        s.numKvHeads <= 0 || s.headDim <= 0 || s.maxPositionEmbeddings <= 0 || !(s.ropeTheta > 0))
        return makeError("test model: every dimension must be positive");
    if (s.numHeads % s.numKvHeads != 0) return makeError("test model: heads must be a multiple of kv heads");
    if (s.headDim % 2 != 0) return makeError("test model: head_dim must be even");
    if (!isFloatDType(o.dtype)) return makeError("test model: dtype must be F32, F16 or BF16");
    return {};
}

}  // namespace

Result<void> writeTestModel(const std::filesystem::path& dir, const TestModelOptions& options)
{
    if (auto ok = checkOptions(options); !ok) return ok;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return makeError(dir.string() + ": cannot create folder: " + ec.message());

    if (auto ok = writeTestTokenizer(dir, options.tokenizerVocabSize); !ok) return ok;
    auto tokenizer = Tokenizer::load(dir);
    if (!tokenizer) return tokenizer.failure();
    const int tokens = tokenizer.value()->vocabSize();
    const int vocab = options.shape.vocabSize > 0 ? options.shape.vocabSize : (tokens + 63) / 64 * 64;
    if (vocab < tokens)
        return makeError("test model: vocab " + std::to_string(vocab) + " is smaller than the tokenizer's " +
                         std::to_string(tokens) + " tokens");

    if (auto ok = writeJson(dir / "config.json", configJson(options.shape, vocab, options)); !ok) return ok;
    if (auto ok = writeJson(dir / "generation_config.json", generationConfigJson()); !ok) return ok;

    const std::vector<PlannedTensor> plan = planTensors(options.shape, vocab, options);
    const int shardCount = options.shardWeights ? 2 : 1;
    nlohmann::json weightMap = nlohmann::json::object();
    size_t totalBytes = 0;
    for (int shard = 0; shard < shardCount; ++shard) {
        SafetensorsWriter writer;
        writer.setMetadata("format", "pt");
        for (const PlannedTensor& t : plan) {
            if (shardCount > 1 && t.shard != shard) continue;
            int64_t count = 1;
            for (int64_t d : t.shape) count *= d;
            writer.add(t.name, options.dtype, t.shape,
                       randomTensor(size_t(count), options.dtype, t.mean, t.stddev, options.seed, t.stream));
        }
        const std::string fileName = shardCount == 1
                                         ? std::string("model.safetensors")
                                         : "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
        if (auto ok = writer.write(dir / fileName); !ok) return ok;
        totalBytes += writer.totalBytes();
        for (const PlannedTensor& t : plan) {
            if (shardCount > 1 && t.shard == shard) weightMap[t.name] = fileName;
        }
    }
    if (shardCount > 1) {
        const nlohmann::json index = {{"metadata", {{"total_size", totalBytes}}}, {"weight_map", weightMap}};
        if (auto ok = writeJson(dir / "model.safetensors.index.json", index); !ok) return ok;
    }
    spdlog::debug("test model {}: vocab {}, {} layers, {} tensors, {} bytes of {}", dir.string(), vocab,
                  options.shape.numLayers, plan.size(), totalBytes, dtypeName(options.dtype));
    return {};
}

}  // namespace brook::testing
