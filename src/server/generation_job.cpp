#include "server/generation_job.h"

namespace brook {

std::variant<std::unique_ptr<GenerationJob>, GenerationJob::SubmitError> GenerationJob::start(
    Engine& engine, std::vector<GenerationRequest> requests, std::shared_ptr<std::atomic<int>> activeSequences)
{
    std::unique_ptr<GenerationJob> job(new GenerationJob(engine));
    for (size_t i = 0; i < requests.size(); ++i) {
        std::shared_ptr<Channel> channel = job->m_channel;
        if (activeSequences) ++*activeSequences;
        auto id = engine.submit(std::move(requests[i]),
                                [channel, activeSequences, choice = int(i)](const RequestOutput& out) {
                                    {
                                        std::lock_guard lock(channel->mutex);
                                        channel->queue.push_back({choice, out, std::chrono::steady_clock::now()});
                                        if (out.finished()) ++channel->finalsPushed;
                                    }
                                    if (out.finished() && activeSequences) --*activeSequences;
                                    channel->ready.notify_all();
                                });
        if (!id) {
            if (activeSequences) --*activeSequences;
            job->cancel();  // the destructor would too; cancel now so the error returns promptly
            return SubmitError{i, id.failure()};
        }
        job->m_ids.push_back(*id);
    }
    return job;
}

GenerationJob::~GenerationJob() { cancel(); }

void GenerationJob::cancel()
{
    bool allFinished;
    {
        std::lock_guard lock(m_channel->mutex);
        allFinished = m_channel->finalsPushed == m_ids.size();
    }
    if (allFinished) return;
    // Cancelling a finished id is a no-op in the engine, so no per-id bookkeeping is needed.
    for (RequestId id : m_ids) m_engine.cancel(id);
}

std::optional<JobEvent> GenerationJob::next(std::chrono::milliseconds timeout)
{
    if (done()) return std::nullopt;
    std::unique_lock lock(m_channel->mutex);
    if (!m_channel->ready.wait_for(lock, timeout, [&] { return !m_channel->queue.empty(); })) return std::nullopt;
    JobEvent event = std::move(m_channel->queue.front());
    m_channel->queue.pop_front();
    if (event.output.finished()) ++m_finalsReturned;
    return event;
}

size_t GenerationJob::takeAll(std::chrono::milliseconds timeout, std::vector<JobEvent>& out)
{
    if (done()) return 0;
    std::unique_lock lock(m_channel->mutex);
    if (!m_channel->ready.wait_for(lock, timeout, [&] { return !m_channel->queue.empty(); })) return 0;
    const size_t n = m_channel->queue.size();
    for (JobEvent& event : m_channel->queue) {
        if (event.output.finished()) ++m_finalsReturned;
        out.push_back(std::move(event));
    }
    m_channel->queue.clear();
    return n;
}

bool GenerationJob::done() const { return m_finalsReturned == m_ids.size(); }

}  // namespace brook
