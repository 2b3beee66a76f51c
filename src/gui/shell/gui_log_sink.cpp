#include "gui/shell/gui_log_sink.h"

#include <QMetaObject>

namespace brook {

GuiLogSink::GuiLogSink(int capacity) : m_capacity(capacity) { set_pattern("%H:%M:%S.%e %^%-5l%$ %v"); }

QList<LogLine> GuiLogSink::setReceiver(QObject* receiver, const char* method)
{
    std::lock_guard lock(mutex_);
    m_receiver = receiver;
    m_method = method ? QByteArray(method) : QByteArray();
    m_notified = false;
    m_new.clear();
    return QList<LogLine>(m_history.begin(), m_history.end());
}

QList<LogLine> GuiLogSink::takeNew()
{
    std::lock_guard lock(mutex_);
    m_notified = false;
    return std::exchange(m_new, {});
}

QList<LogLine> GuiLogSink::history()
{
    std::lock_guard lock(mutex_);
    return QList<LogLine>(m_history.begin(), m_history.end());
}

void GuiLogSink::sink_it_(const spdlog::details::log_msg& msg)
{
    // Called with mutex_ held, on whichever thread logged.
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    QString text = QString::fromUtf8(formatted.data(), qsizetype(formatted.size()));
    while (text.endsWith(QLatin1Char('\n')) || text.endsWith(QLatin1Char('\r'))) text.chop(1);
    LogLine line{int(msg.level), text};
    m_history.push_back(line);
    while (int(m_history.size()) > m_capacity) m_history.pop_front();
    if (!m_receiver) return;
    m_new.append(line);
    if (m_new.size() > m_capacity) m_new.remove(0, m_new.size() - m_capacity);
    if (!m_notified) {
        m_notified = true;
        QMetaObject::invokeMethod(m_receiver, m_method.constData(), Qt::QueuedConnection);
    }
}

}  // namespace brook
