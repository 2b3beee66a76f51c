#include "engine/request_stream.h"

namespace brook {

Result<std::shared_ptr<RequestStream>> RequestStream::submit(Engine& engine, GenerationRequest request)
{
    std::shared_ptr<RequestStream> stream(new RequestStream(engine));
    // The callback keeps the stream alive until the final output, even if the caller drops it.
    auto id = engine.submit(std::move(request), [stream](const RequestOutput& out) { stream->push(out); });
    if (!id) return id.failure();
    stream->m_id = *id;
    return stream;
}

void RequestStream::push(const RequestOutput& output)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(output);
        if (output.finished()) m_done = true;
    }
    m_ready.notify_all();
}

std::optional<RequestOutput> RequestStream::next()
{
    std::unique_lock lock(m_mutex);
    if (m_drained) return std::nullopt;
    m_ready.wait(lock, [&] { return !m_queue.empty(); });
    RequestOutput out = std::move(m_queue.front());
    m_queue.pop_front();
    if (out.finished()) m_drained = true;
    return out;
}

void RequestStream::cancel() { m_engine.cancel(m_id); }

}  // namespace brook
