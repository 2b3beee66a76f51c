// GuiLogSink: an spdlog sink that feeds the app's log view. Any thread may log; lines are kept in
// a bounded buffer and the receiver gets ONE queued call when the buffer goes from drained to
// non-empty, then takes everything at once, so a burst of log lines costs one GUI event.
// Thread-safe (spdlog's base_sink mutex guards everything).
#pragma once

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include <spdlog/sinks/base_sink.h>

#include <deque>
#include <mutex>

namespace brook {

struct LogLine {
    int level = 0;  // spdlog::level::level_enum
    QString text;   // formatted, without the newline
};

class GuiLogSink : public spdlog::sinks::base_sink<std::mutex> {
public:
    explicit GuiLogSink(int capacity = 5000);

    // `method` is a slot/invokable of `receiver` taking no arguments; it calls takeNew().
    // Call from the receiver's thread; null detaches. Returns the history up to this moment, so
    // the receiver shows every line exactly once.
    QList<LogLine> setReceiver(QObject* receiver, const char* method);
    QList<LogLine> takeNew();  // lines since the last take
    QList<LogLine> history();  // the last `capacity` lines

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override;
    void flush_() override {}

private:
    int m_capacity;
    std::deque<LogLine> m_history;
    QList<LogLine> m_new;
    QObject* m_receiver = nullptr;
    QByteArray m_method;
    bool m_notified = false;
};

}  // namespace brook
