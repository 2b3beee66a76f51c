// ChatGenerator: the GUI's bridge to the Engine. Requests go in with start(); their tokens come
// back on the GUI thread as textArrived / generationFinished signals. The engine callback only
// appends to a mutex-protected buffer and, when the buffer was idle, posts ONE queued wake-up;
// the GUI flushes every kFlushIntervalMs, so a fast stream costs ~25 events a second whatever
// the token rate, and the engine thread never waits on the GUI.
// GUI thread only, except the engine callbacks (which touch only the shared buffer).
#pragma once

#include "engine/engine.h"
#include "gui/chat/generation_outcome.h"

#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>
#include <set>

namespace brook {

class ChatGenerator : public QObject {
    Q_OBJECT
public:
    static constexpr int kFlushIntervalMs = 40;

    explicit ChatGenerator(QObject* parent = nullptr);
    ~ChatGenerator() override;

    // The engine chats run on (null: none loaded). Changing it aborts what runs on the old one.
    void setEngine(Engine* engine);
    Engine* engine() const { return m_engine; }

    // Applied to every request before it is submitted (tests pin ignore_eos or lengths with it).
    void setRequestHook(std::function<void(GenerationRequest&)> hook) { m_requestHook = std::move(hook); }

    // Submits; the error is the engine's validation message.
    Result<RequestId> start(GenerationRequest request);
    void stop(RequestId id);  // the final "abort" outcome still arrives
    void stopAll();
    bool isRunning(RequestId id) const { return m_running.count(id) != 0; }
    qint64 finishedCount() const { return m_finished; }  // requests that have ended, ever

signals:
    void textArrived(brook::RequestId id, const QString& delta, int outputTokens);
    void generationFinished(brook::RequestId id, const brook::GenerationOutcome& outcome);

private slots:
    void handleWake();
    void handleFlush();

private:
    struct Shared;

    Engine* m_engine = nullptr;
    std::shared_ptr<Shared> m_shared;
    std::set<RequestId> m_running;
    QTimer m_flushTimer;
    qint64 m_finished = 0;
    std::function<void(GenerationRequest&)> m_requestHook;
};

}  // namespace brook
