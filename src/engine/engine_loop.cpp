#include "engine/engine_loop.h"

#include "engine/prompt_builder.h"
#include "engine/prompt_logits.h"
#include "engine/request_output_processor.h"
#include "engine/tokenizer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <random>

namespace brook {

namespace {

double secondsBetween(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

uint64_t randomSeed()
{
    static std::mutex mutex;
    static std::mt19937_64 generator{std::random_device{}()};
    std::lock_guard lock(mutex);
    return generator();
}

}  // namespace

EngineLoop::EngineLoop(EngineConfig config, std::unique_ptr<Backend> backend,
                       std::shared_ptr<const Tokenizer> tokenizer, std::vector<int32_t> eosTokenIds)
    : m_config(std::move(config)), m_backend(std::move(backend)), m_tokenizer(std::move(tokenizer)),
      m_eosTokenIds(std::move(eosTokenIds)), m_metrics(m_config.modelName, m_config.maxModelLen),
      m_blocks(m_backend->numKvBlocks(), m_backend->blockSize(), m_config.enablePrefixCaching),
      m_scheduler(m_config.scheduler, m_blocks), m_lastStatsLog(Clock::now())
{
    m_metrics.setCacheConfig(m_backend->blockSize(), m_backend->numKvBlocks(), 0.0, m_backend->kvCacheDtype());
    m_structured = std::make_unique<structured::StructuredDecoding>(m_tokenizer, m_backend->config().vocabSize);
    publishStats();
    m_thread = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() { shutdown(); }

void EngineLoop::shutdown()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

auto EngineLoop::prepare(GenerationRequest request, OutputCallback callback) -> Result<Pending>
{
    const ModelConfig& model = m_backend->config();
    const PromptBuilder prompts(*m_tokenizer, model.vocabSize,
                                {m_config.maxModelLen, int64_t(m_backend->numKvBlocks()) * m_backend->blockSize(), {}});
    auto ids = prompts.tokens(request.prompt);
    if (!ids) return makeError(ids.failure());
    SamplingParams& params = request.params;
    if (auto valid = validateSamplingParams(params, model.vocabSize); !valid) return makeError(valid.failure());
    const int promptLength = int(ids->size());
    if (auto fits = prompts.checkContext(promptLength, params.maxTokens); !fits) return makeError(fits.failure());
    auto grammar = m_structured->prepare(params);  // compiled here, on the caller's thread
    if (!grammar) return makeError(grammar.failure());

    auto seq = std::make_unique<Sequence>();
    seq->id = m_nextId.fetch_add(1);
    seq->tokens = std::move(ids).value();
    seq->numPromptTokens = promptLength;
    seq->seed = params.seed ? *params.seed : randomSeed();
    seq->priority = request.priority;
    seq->arrivalTime = Clock::now();
    seq->params = params;
    auto processor = std::make_unique<RequestOutputProcessor>(seq->id, *m_tokenizer, params, m_eosTokenIds,
                                                              promptLength, m_config.maxModelLen, std::move(callback));
    return Pending{std::move(seq), std::move(processor), std::move(request.source), std::move(grammar).value()};
}

Result<void> EngineLoop::enqueue(std::vector<Pending> pending)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping) return makeError(ErrorCode::ShuttingDown, {}, "the engine is shutting down");
        for (auto& p : pending) m_inbox.push_back(std::move(p));
    }
    m_wake.notify_one();
    return {};
}

Result<RequestId> EngineLoop::submit(GenerationRequest request, OutputCallback callback)
{
    auto pending = prepare(std::move(request), std::move(callback));
    if (!pending) return makeError(pending.failure());
    const RequestId id = pending->seq->id;
    std::vector<Pending> one;
    one.push_back(std::move(pending).value());
    if (auto queued = enqueue(std::move(one)); !queued) return makeError(queued.failure());
    return id;
}

Result<std::vector<RequestId>> EngineLoop::submitAll(std::vector<GenerationRequest> requests,
                                                     const std::function<OutputCallback(size_t)>& callbackFor)
{
    std::vector<Pending> pending;
    std::vector<RequestId> ids;
    pending.reserve(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        auto p = prepare(std::move(requests[i]), callbackFor(i));
        if (!p) {
            Error e = p.failure();
            e.message = "request " + std::to_string(i) + ": " + e.message;
            return makeError(std::move(e));
        }
        ids.push_back(p->seq->id);
        pending.push_back(std::move(p).value());
    }
    if (auto queued = enqueue(std::move(pending)); !queued) return makeError(queued.failure());
    return ids;
}

struct EngineLoop::LogitsJob {
    std::vector<int32_t> tokens;
    std::promise<Result<std::vector<float>>> done;
};

Result<std::vector<float>> EngineLoop::promptLogits(std::vector<int32_t> tokens)
{
    const int vocabSize = m_backend->config().vocabSize;
    for (int32_t id : tokens)
        if (id < 0 || id >= vocabSize)
            return makeError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(vocabSize) + ")");
    if (int(tokens.size()) > m_config.maxModelLen)
        return makeError(std::to_string(tokens.size()) + " tokens exceed max_model_len " +
                         std::to_string(m_config.maxModelLen));
    auto job = std::make_shared<LogitsJob>();
    job->tokens = std::move(tokens);
    std::future<Result<std::vector<float>>> result = job->done.get_future();
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping) return makeError(ErrorCode::ShuttingDown, {}, "the engine is shutting down");
        m_logitsJobs.push_back(std::move(job));
    }
    m_wake.notify_one();
    return result.get();
}

void EngineLoop::cancel(RequestId id)
{
    {
        std::lock_guard lock(m_mutex);
        m_cancelled.push_back(id);
    }
    m_wake.notify_one();
}

EngineStats EngineLoop::stats() const
{
    EngineStats s;
    {
        std::lock_guard lock(m_mutex);
        s = m_stats;
    }
    s.latency = m_latency.summary(Clock::now());  // sorted here, on the caller's thread
    return s;
}

std::vector<RequestSnapshot> EngineLoop::requests() const
{
    std::lock_guard lock(m_mutex);
    return m_requests;
}

void EngineLoop::run()
{
    for (;;) {
        std::vector<Pending> arrived;
        std::vector<RequestId> cancelled;
        std::vector<std::shared_ptr<LogitsJob>> logitsJobs;
        bool stopping = false;
        {
            std::unique_lock lock(m_mutex);
            const auto ready = [&] {
                return m_stopping || !m_inbox.empty() || !m_cancelled.empty() || !m_logitsJobs.empty() ||
                       m_scheduler.hasWork();
            };
            // With stats logging on, wake up now and then to log the idle line too.
            if (m_config.logStats)
                m_wake.wait_for(lock, std::chrono::duration<double>(m_config.statsIntervalSeconds), ready);
            else m_wake.wait(lock, ready);
            arrived.swap(m_inbox);
            cancelled.swap(m_cancelled);
            logitsJobs.swap(m_logitsJobs);
            stopping = m_stopping;
        }
        const Clock::time_point busyStart = Clock::now();
        for (Pending& p : arrived) {
            m_structured->add(p.seq->id, std::move(p.grammar), p.processor->stopTokenIds());
            m_processors.emplace(p.seq->id, std::move(p.processor));
            m_tracker.onArrived(*p.seq, std::move(p.source));
            m_scheduler.add(std::move(p.seq));
        }
        for (RequestId id : cancelled) abortRequest(id);
        for (auto& job : logitsJobs) {
            if (stopping) job->done.set_value(makeError(ErrorCode::ShuttingDown, {}, "the engine is shutting down"));
            else job->done.set_value(computePromptLogits(*m_backend, m_blocks, job->tokens));
        }
        if (stopping) {
            std::vector<RequestId> all;
            for (const auto& [id, processor] : m_processors) all.push_back(id);
            for (RequestId id : all) abortRequest(id);
            publishStats();
            return;
        }
        const Clock::time_point stepStart = Clock::now();
        if (m_scheduler.hasWork()) step();
        const Clock::time_point stepEnd = Clock::now();
        publishStats();
        maybeLogStats();
        m_stepTimes.bookkeepingSeconds += secondsBetween(busyStart, stepStart) + secondsBetween(stepEnd, Clock::now());
    }
}

void EngineLoop::step()
{
    const Clock::time_point scheduleStart = Clock::now();
    SchedulerOutput plan = m_scheduler.schedule();
    if (!plan.preempted.empty()) {
        m_metrics.onPreemption(int(plan.preempted.size()));
        spdlog::debug("preempted {} sequence(s): KV cache full", plan.preempted.size());
    }
    m_metrics.onPrefixCacheLookups(m_scheduler.prefixCacheQueries() - m_lastPrefixCacheQueries,
                                   m_scheduler.prefixCacheHits() - m_lastPrefixCacheHits);
    m_lastPrefixCacheQueries = m_scheduler.prefixCacheQueries();
    m_lastPrefixCacheHits = m_scheduler.prefixCacheHits();
    if (plan.empty()) return;

    m_batch.clear();
    m_structured->beginStep(plan.scheduled.size());
    for (const ScheduledSequence& s : plan.scheduled) {
        Sequence& seq = *s.seq;
        BatchSequence b;
        b.tokens = std::span<const int32_t>(seq.tokens.data() + seq.numComputedTokens, size_t(s.numNewTokens));
        b.startPosition = seq.numComputedTokens;
        b.blockTable = seq.blockTable;
        b.sample = s.sample;
        if (s.sample) {
            b.sampling.params = &seq.params;
            b.sampling.promptTokens = std::span<const int32_t>(seq.tokens.data(), size_t(seq.numPromptTokens));
            b.sampling.outputTokens =
                std::span<const int32_t>(seq.tokens.data() + seq.numPromptTokens, size_t(seq.numOutputTokens()));
            b.sampling.stopTokenIds = m_processors.at(seq.id)->stopTokenIds();
            b.sampling.seed = seq.seed;
            b.sampling.step = seq.numOutputTokens();
            m_structured->queueMask(seq.id, b.sampling.outputTokens, m_batch.size());
        }
        m_batch.push_back(b);
    }
    // A failed step (out of memory, a device error) fails the requests in it, not the engine.
    auto failStep = [&](const std::exception& e) {
        spdlog::error("engine step failed: {}; aborting {} request(s)", e.what(), plan.scheduled.size());
        std::vector<RequestId> ids;
        for (const auto& s : plan.scheduled) ids.push_back(s.seq->id);
        for (RequestId id : ids) abortRequest(id);
    };
    if (!m_structured->empty()) {
        // Only sampling needs the masks: a GPU runs the forward while the host computes them.
        try {
            m_backend->prepareStep(m_batch);
        } catch (const std::exception& e) {
            failStep(e);
            return;
        }
        try {
            m_structured->fillMasks();  // every row at once, on the structured-decoding threads
        } catch (const std::exception& e) {
            // The backend expects step() after prepareStep: finish the forward (unmasked, its
            // samples dropped) while the batch's sequences still exist, then fail them.
            try {
                m_backend->step(m_batch);
            } catch (const std::exception&) {}
            failStep(e);
            return;
        }
        for (size_t i = 0; i < m_batch.size(); ++i)
            if (m_batch[i].sample) m_batch[i].sampling.allowedTokens = m_structured->maskOf(i);
    }

    std::vector<SampleResult> samples;
    const Clock::time_point backendStart = Clock::now();
    m_stepTimes.scheduleSeconds += secondsBetween(scheduleStart, backendStart);
    try {
        samples = m_backend->step(m_batch);
    } catch (const std::exception& e) {
        failStep(e);
        return;
    }
    const Clock::time_point now = Clock::now();
    const double backendSeconds = secondsBetween(backendStart, now);
    m_stepTimes.backendSeconds += backendSeconds;
    if (plan.numPrefillTokens == 0) {
        ++m_stepTimes.decodeSteps;
        m_stepTimes.decodeBackendSeconds += backendSeconds;
        m_stepTimes.decodeRows += static_cast<long long>(plan.scheduled.size());
    }
    m_scheduler.postStep(plan);
    ++m_steps;

    if (!m_structured->empty()) {
        // The constrained rows' grammars advance together, on the structured-decoding threads;
        // onToken below takes their results.
        m_structuredTokens.clear();
        size_t k = 0;
        for (const ScheduledSequence& s : plan.scheduled)
            if (s.sample) m_structuredTokens.emplace_back(s.seq->id, samples[k++].token);
        m_structured->acceptTokens(m_structuredTokens);
    }
    int generated = 0;
    size_t r = 0;
    std::vector<std::pair<RequestId, FinishReason>> finished;
    for (const ScheduledSequence& s : plan.scheduled) {
        if (!s.sample) continue;
        Sequence& seq = *s.seq;
        const SampleResult& sample = samples[r++];
        seq.tokens.push_back(sample.token);
        ++generated;
        if (seq.numOutputTokens() == 1) {
            seq.firstTokenTime = now;
            m_processors.at(seq.id)->setNumCachedTokens(std::max(seq.numCachedPromptTokens, 0));
            m_processors.at(seq.id)->setQueueSeconds(secondsBetween(seq.arrivalTime, seq.firstScheduledTime));
            m_metrics.onFirstToken(secondsBetween(seq.arrivalTime, now));
            m_latency.record(LatencyKind::Ttft, secondsBetween(seq.arrivalTime, now), now);
        } else {
            m_metrics.onInterTokenLatency(secondsBetween(seq.lastTokenTime, now));
            m_latency.record(LatencyKind::Itl, secondsBetween(seq.lastTokenTime, now), now);
        }
        seq.lastTokenTime = now;
        const bool outputComplete = m_structured->onToken(seq.id, sample.token);
        auto reason = m_processors.at(seq.id)->onToken(
            sample, seq.numOutputTokens(), secondsBetween(seq.arrivalTime, seq.firstTokenTime), outputComplete);
        if (reason) finished.emplace_back(seq.id, *reason);
    }
    const int promptTokens = plan.numPrefillTokens;
    m_promptTokensTotal += promptTokens;
    m_generationTokensTotal += generated;
    // vLLM counts every sampled token as a generation token, the first one (sampled at the end of
    // the prefill) included.
    m_metrics.onStep(promptTokens, generated);
    for (const auto& [id, reason] : finished) finishRequest(id, reason);
    m_stepTimes.outputSeconds += secondsBetween(now, Clock::now());
}

void EngineLoop::finishRequest(RequestId id, FinishReason reason)
{
    std::unique_ptr<Sequence> seq = m_scheduler.finish(id);
    m_processors.erase(id);
    m_structured->remove(id);
    m_tracker.onFinished(id);
    if (!seq) return;
    const Clock::time_point now = Clock::now();
    FinishedRequestTimings t;
    t.e2eSeconds = secondsBetween(seq->arrivalTime, now);
    if (seq->wasScheduled()) {
        t.queueSeconds = secondsBetween(seq->arrivalTime, seq->firstScheduledTime);
        t.inferenceSeconds = secondsBetween(seq->firstScheduledTime, now);
        if (seq->numOutputTokens() > 0) {
            t.prefillSeconds = secondsBetween(seq->firstScheduledTime, seq->firstTokenTime);
            t.decodeSeconds = secondsBetween(seq->firstTokenTime, now);
        }
    } else {
        t.queueSeconds = t.e2eSeconds;
    }
    t.promptTokens = seq->numPromptTokens;
    t.generationTokens = seq->numOutputTokens();
    t.maxTokensParam = seq->params.maxTokens;
    m_metrics.onRequestFinished(reason, t);
    if (reason != FinishReason::Abort) m_latency.record(LatencyKind::E2e, t.e2eSeconds, now);
    if (reason == FinishReason::Abort) ++m_requestsAborted;
    else ++m_requestsFinished;
}

void EngineLoop::abortRequest(RequestId id)
{
    auto it = m_processors.find(id);
    if (it == m_processors.end()) return;  // already finished, or never ours
    const Sequence* seq = m_scheduler.find(id);
    it->second->abort(seq ? seq->numOutputTokens() : 0);
    finishRequest(id, FinishReason::Abort);
}

void EngineLoop::publishStats()
{
    EngineStats s;
    s.numRunning = m_scheduler.numRunning();
    s.numWaiting = m_scheduler.numWaiting();
    s.numKvBlocksTotal = m_blocks.numTotalBlocks();
    s.numKvBlocksFree = m_blocks.numFreeBlocks();
    s.blockSize = m_blocks.blockSize();
    s.kvCacheUsage = m_blocks.usage();
    s.numPreemptions = m_scheduler.numPreemptions();
    s.promptTokensTotal = m_promptTokensTotal;
    s.prefixCachingEnabled = m_blocks.prefixCachingEnabled();
    s.prefixCacheQueries = m_scheduler.prefixCacheQueries();
    s.prefixCacheHits = m_scheduler.prefixCacheHits();
    s.generationTokensTotal = m_generationTokensTotal;
    s.requestsFinished = m_requestsFinished;
    s.requestsAborted = m_requestsAborted;
    s.steps = m_steps;
    s.stepTimes = m_stepTimes;
    // Asking the device for its free memory costs a driver call: not on every decode step.
    const Clock::time_point now = Clock::now();
    if (now - m_lastMemoryQuery > std::chrono::milliseconds(250)) {
        m_memory = m_backend->memory();
        m_lastMemoryQuery = now;
    }
    s.memory = m_memory;
    m_metrics.setSchedulerState(s.numRunning, s.numWaiting, s.kvCacheUsage);
    // The inspector's table: phases are credited every step, the copy is made at most every
    // 100 ms (and when the engine goes idle, so an idle table is empty).
    m_tracker.update(m_scheduler, now);
    const bool publishRequests =
        !m_scheduler.hasWork() || now - m_lastRequestsPublish >= std::chrono::milliseconds(100);
    std::vector<RequestSnapshot> requests;
    if (publishRequests) {
        requests = m_tracker.snapshot(now);
        m_lastRequestsPublish = now;
    }
    std::lock_guard lock(m_mutex);
    m_stats = s;
    if (publishRequests) m_requests.swap(requests);
}

void EngineLoop::maybeLogStats()
{
    if (!m_config.logStats) return;
    const Clock::time_point now = Clock::now();
    const double elapsed = secondsBetween(m_lastStatsLog, now);
    if (elapsed < m_config.statsIntervalSeconds) return;
    EngineStats s;
    {
        std::lock_guard lock(m_mutex);  // not stats(): the engine thread needs no latency percentiles
        s = m_stats;
    }
    // The same line vLLM prints, so people can compare logs side by side.
    spdlog::info("Avg prompt throughput: {:.1f} tokens/s, Avg generation throughput: {:.1f} tokens/s, "
                 "Running: {} reqs, Waiting: {} reqs, Preemptions: {}, KV cache usage: {:.1f}%",
                 double(m_promptTokensTotal - m_lastLoggedPrompt) / elapsed,
                 double(m_generationTokensTotal - m_lastLoggedGeneration) / elapsed, s.numRunning, s.numWaiting,
                 s.numPreemptions, s.kvCacheUsage * 100.0);
    m_lastStatsLog = now;
    m_lastLoggedPrompt = m_promptTokensTotal;
    m_lastLoggedGeneration = m_generationTokensTotal;
}

}  // namespace brook
