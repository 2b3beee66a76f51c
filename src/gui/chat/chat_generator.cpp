#include "gui/chat/chat_generator.h"

#include "engine/request.h"

#include <QMetaObject>

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <vector>

namespace brook {

namespace {

struct PendingRequest {
    std::string delta;  // text not yet handed to the GUI
    std::string text;   // everything so far
    int promptTokens = 0;
    int outputTokens = 0;
    int cachedTokens = 0;
    double ttft = 0;
    Clock::time_point firstToken{};
    Clock::time_point lastToken{};
    std::optional<FinishReason> finish;
};

}  // namespace

// Shared between the GUI and the engine callbacks (which may outlive the generator).
struct ChatGenerator::Shared {
    std::mutex mutex;
    ChatGenerator* target = nullptr;  // null once the generator is gone
    std::map<RequestId, PendingRequest> pending;
    bool wakePosted = false;
};

ChatGenerator::ChatGenerator(QObject* parent) : QObject(parent), m_shared(std::make_shared<Shared>())
{
    qRegisterMetaType<brook::RequestId>("brook::RequestId");
    qRegisterMetaType<brook::GenerationOutcome>("brook::GenerationOutcome");
    m_shared->target = this;
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setInterval(kFlushIntervalMs);
    connect(&m_flushTimer, &QTimer::timeout, this, &ChatGenerator::handleFlush);
}

ChatGenerator::~ChatGenerator()
{
    stopAll();
    std::lock_guard lock(m_shared->mutex);
    m_shared->target = nullptr;
}

void ChatGenerator::setEngine(Engine* engine)
{
    if (engine == m_engine) return;
    stopAll();
    m_engine = engine;
}

Result<RequestId> ChatGenerator::start(GenerationRequest request)
{
    if (!m_engine) return makeError("no model is loaded");
    if (m_requestHook) m_requestHook(request);
    std::weak_ptr<Shared> weak = m_shared;
    auto callback = [weak](const RequestOutput& out) {
        // Engine thread: record and, at most once per flush, post a wake-up. Never blocks on the GUI.
        auto shared = weak.lock();
        if (!shared) return;
        const Clock::time_point now = Clock::now();
        std::lock_guard lock(shared->mutex);
        PendingRequest& p = shared->pending[out.id];
        p.delta += out.textDelta;
        p.text += out.textDelta;
        p.promptTokens = out.numPromptTokens;
        if (!out.newTokenIds.empty()) {
            if (p.outputTokens == 0) p.firstToken = now;
            p.lastToken = now;
        }
        p.outputTokens = out.numOutputTokens;
        p.ttft = out.timeToFirstTokenSeconds;
        p.cachedTokens = out.numCachedTokens;
        if (out.finishReason) p.finish = out.finishReason;
        if (!shared->wakePosted && shared->target) {
            shared->wakePosted = true;
            QMetaObject::invokeMethod(shared->target, "handleWake", Qt::QueuedConnection);
        }
    };
    auto id = m_engine->submit(std::move(request), std::move(callback));
    if (!id) return id;
    m_running.insert(*id);
    return id;
}

void ChatGenerator::stop(RequestId id)
{
    if (m_engine && m_running.count(id)) m_engine->cancel(id);
}

void ChatGenerator::stopAll()
{
    for (RequestId id : m_running) stop(id);
}

void ChatGenerator::handleWake()
{
    if (!m_flushTimer.isActive()) m_flushTimer.start();
}

void ChatGenerator::handleFlush()
{
    struct Update {
        RequestId id;
        QString delta;
        int outputTokens;
        std::optional<GenerationOutcome> outcome;
    };
    std::vector<Update> updates;
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->wakePosted = false;
        for (auto it = m_shared->pending.begin(); it != m_shared->pending.end();) {
            PendingRequest& p = it->second;
            Update u{it->first, QString::fromStdString(p.delta), p.outputTokens, std::nullopt};
            p.delta.clear();
            if (p.finish) {
                GenerationOutcome o;
                o.text = QString::fromStdString(p.text);
                o.promptTokens = p.promptTokens;
                o.outputTokens = p.outputTokens;
                o.ttftSeconds = p.ttft;
                o.cachedTokens = p.cachedTokens;
                const double decode = std::chrono::duration<double>(p.lastToken - p.firstToken).count();
                o.tokensPerSecond = p.outputTokens > 1 && decode > 0 ? (p.outputTokens - 1) / decode : 0.0;
                o.finishReason = QString::fromLatin1(finishReasonName(*p.finish));
                u.outcome = o;
                it = m_shared->pending.erase(it);
            } else {
                ++it;
            }
            if (!u.delta.isEmpty() || u.outcome) updates.push_back(std::move(u));
        }
    }
    for (const Update& u : updates) {
        if (!u.delta.isEmpty()) emit textArrived(u.id, u.delta, u.outputTokens);
        if (u.outcome) {
            m_running.erase(u.id);
            ++m_finished;
            emit generationFinished(u.id, *u.outcome);
        }
    }
}

}  // namespace brook
