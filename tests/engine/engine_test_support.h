// Shared by engine tests: a tiny random-weight ERNIE model folder (written once per test
// executable) and helpers to run requests to completion.
#pragma once

#include "launch/engine_launcher.h"
#include "engine/checkpoint.h"
#include "engine/model_config.h"
#include "engine/request_stream.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>

#include <map>
#include <memory>
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>

namespace brook::testsupport {

// Writes a random-weight model into `dir` (which outlives the test executable's use of it).
inline std::filesystem::path writeModelInto(const QTemporaryDir& dir, const testing::TestModelOptions& options)
{
    auto r = testing::writeTestModel(dir.path().toStdString(), options);
    if (!r) qFatal("writeTestModel: %s", r.error().c_str());
    return dir.path().toStdString();
}

// A random-weight model in its own temporary folder, opened below the engine (config and
// checkpoint) for tests that build a backend themselves. qFatal if it does not open: nothing
// after would mean anything.
struct OpenedTestModel {
    QTemporaryDir dir;
    ModelConfig config;
    std::unique_ptr<Checkpoint> checkpoint;
};

inline std::unique_ptr<OpenedTestModel> openTestModel(const testing::TestModelOptions& options)
{
    auto model = std::make_unique<OpenedTestModel>();
    const std::filesystem::path path = writeModelInto(model->dir, options);
    auto config = loadModelConfig(path / "config.json");
    if (!config) qFatal("loadModelConfig: %s", config.error().c_str());
    auto checkpoint = Checkpoint::open(path);
    if (!checkpoint) qFatal("Checkpoint::open: %s", checkpoint.error().c_str());
    model->config = *config;
    model->checkpoint = std::move(checkpoint).value();
    return model;
}

// The tiny random-weight model, written once per dtype for the whole test binary.
inline const std::filesystem::path& tinyModelDir(DType dtype = DType::F32)
{
    struct Written {
        QTemporaryDir dir;
        std::filesystem::path path;
    };
    static std::map<DType, std::unique_ptr<Written>> models;
    auto& m = models[dtype];
    if (!m) {
        m = std::make_unique<Written>();
        testing::TestModelOptions options;
        options.shape = testing::TestModelShape::tiny();
        options.dtype = dtype;
        m->path = writeModelInto(m->dir, options);
    }
    return m->path;
}

// The tiny model with room for 65,536 positions: for answers long enough that no machine finishes
// them within a test's few hundred milliseconds (the tiny model decodes 20,000 tokens a second).
inline const std::filesystem::path& longContextTinyModelDir()
{
    static QTemporaryDir dir;
    static const std::filesystem::path path = [] {
        testing::TestModelOptions options;
        options.shape = testing::TestModelShape::tiny();
        options.shape.maxPositionEmbeddings = 65536;
        return writeModelInto(dir, options);
    }();
    return path;
}

inline LaunchOptions cpuOptions()
{
    LaunchOptions o;
    o.modelDir = tinyModelDir();
    o.device = "cpu";
    o.maxModelLen = 512;
    o.maxNumSeqs = 32;
    o.maxNumBatchedTokens = 256;
    return o;
}

inline std::unique_ptr<Engine> launch(const LaunchOptions& options)
{
    auto launched = launchEngine(options);
    if (!launched) qFatal("launchEngine: %s", launched.error().c_str());
    return std::move(launched->engine);
}

struct Completion {
    std::vector<int32_t> tokens;
    std::string text;
    std::optional<FinishReason> finish;
    std::string stopReason;
    std::vector<TokenLogprobs> logprobs;
};

inline Completion drain(RequestStream& stream)
{
    Completion c;
    while (auto out = stream.next()) {
        c.tokens.insert(c.tokens.end(), out->newTokenIds.begin(), out->newTokenIds.end());
        c.text += out->textDelta;
        c.logprobs.insert(c.logprobs.end(), out->logprobs.begin(), out->logprobs.end());
        if (out->finishReason) {
            c.finish = out->finishReason;
            c.stopReason = out->stopReason;
        }
    }
    return c;
}

// max |a - b| / max |b|: how far a result is from its reference, relative to the reference's scale.
inline double relativeError(std::span<const float> a, std::span<const float> b)
{
    double diff = 0, scale = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        diff = std::max(diff, double(std::abs(a[i] - b[i])));
        scale = std::max(scale, double(std::abs(b[i])));
    }
    return diff / scale;
}

// The largest |log_softmax(a)[t] - log_softmax(b)[t]| over the k most likely tokens t of b: the
// error a user sees in top-k logprobs (the measure against transformers).
inline double topLogprobError(std::span<const float> a, std::span<const float> b, int k)
{
    const auto logSumExp = [](std::span<const float> row) {
        const double m = *std::max_element(row.begin(), row.end());
        double sum = 0;
        for (float v : row) sum += std::exp(double(v) - m);
        return m + std::log(sum);
    };
    const double la = logSumExp(a), lb = logSumExp(b);
    std::vector<size_t> order(b.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](size_t x, size_t y) { return b[x] > b[y]; });
    double worst = 0;
    for (int i = 0; i < k; ++i) {
        const size_t t = order[size_t(i)];
        worst = std::max(worst, std::abs((double(a[t]) - la) - (double(b[t]) - lb)));
    }
    return worst;
}

inline Completion complete(Engine& engine, GenerationRequest request)
{
    auto stream = RequestStream::submit(engine, std::move(request));
    if (!stream) qFatal("submit: %s", stream.error().c_str());
    return drain(**stream);
}

inline GenerationRequest greedyRequest(std::vector<int32_t> prompt, int maxTokens)
{
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.params.temperature = 0.0f;
    r.params.maxTokens = maxTokens;
    r.params.ignoreEos = true;
    return r;
}

inline std::vector<int32_t> randomPrompt(std::mt19937& rng, int length, int vocab)
{
    std::uniform_int_distribution<int32_t> token(3, vocab - 1);
    std::vector<int32_t> ids(static_cast<size_t>(length));
    for (auto& id : ids) id = token(rng);
    return ids;
}

// Waits until the engine has published a snapshot with nothing running or waiting (30 s at most,
// for a starved machine; then it warns and returns the busy snapshot, which the caller's checks
// reject). The snapshot is published after a step: it can still say idle right after a submit,
// so wait for a request's end first.
inline EngineStats waitIdle(Engine& engine)
{
    QDeadlineTimer deadline(30000);
    for (;;) {
        EngineStats s = engine.stats();
        if (s.numRunning == 0 && s.numWaiting == 0) return s;
        if (deadline.hasExpired()) {
            qWarning("waitIdle: the engine is still busy after 30 s (%d running, %d waiting)", s.numRunning,
                     s.numWaiting);
            return s;
        }
        QTest::qWait(10);
    }
}

// A request that cancels itself from its callback, on the engine thread, when its first token
// arrives: the cancel is queued before the next step, so the request ends "abort" however late
// the test thread runs (a cancel the test thread sends after seeing the first output can come
// after the request has already ended with "length" on a starved machine).
class CancelledAtFirstToken {
public:
    CancelledAtFirstToken(Engine& engine, GenerationRequest request) : m_state(std::make_shared<State>())
    {
        auto id = engine.submit(std::move(request), [&engine, state = m_state](const RequestOutput& out) {
            if (!out.finished()) engine.cancel(out.id);  // only queues the id: safe on the engine thread
            std::lock_guard lock(state->mutex);
            Completion& c = state->completion;
            c.tokens.insert(c.tokens.end(), out.newTokenIds.begin(), out.newTokenIds.end());
            c.text += out.textDelta;
            state->cachedTokens = out.numCachedTokens;
            if (out.finishReason) {
                c.finish = out.finishReason;
                c.stopReason = out.stopReason;
                state->ended.notify_all();
            }
        });
        if (!id) qFatal("submit: %s", id.error().c_str());
    }

    // What the request produced, once its final output arrived (60 s at most: finish is unset if
    // it had not ended by then).
    Completion wait() const
    {
        std::unique_lock lock(m_state->mutex);
        m_state->ended.wait_for(lock, std::chrono::seconds(60), [&] { return m_state->completion.finish.has_value(); });
        return m_state->completion;
    }
    // The prompt tokens its outputs reported as found in the prefix cache.
    int cachedTokens() const
    {
        std::lock_guard lock(m_state->mutex);
        return m_state->cachedTokens;
    }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable ended;
        Completion completion;
        int cachedTokens = -1;
    };
    std::shared_ptr<State> m_state;
};

}  // namespace brook::testsupport
