#include "loadgen/request_threads.h"

#include <algorithm>
#include <system_error>

namespace brook {

RequestThreads::RequestThreads(Spawn spawn) : m_spawn(std::move(spawn))
{
    if (!m_spawn)
        m_spawn = [](std::function<void()> work) { return std::thread(std::move(work)); };
}

RequestThreads::~RequestThreads() { joinAll(); }

std::optional<std::string> RequestThreads::start(std::function<void()> work)
{
    joinFinished();
    auto done = std::make_shared<std::atomic<bool>>(false);
    try {
        std::thread thread = m_spawn([work = std::move(work), done] {
            work();
            done->store(true, std::memory_order_release);
        });
        m_threads.push_back({std::move(thread), std::move(done)});
    } catch (const std::system_error& e) {
        return std::string("cannot start a thread: ") + e.what();
    } catch (const std::bad_alloc&) {
        return std::string("cannot start a thread: out of memory");
    }
    return std::nullopt;
}

void RequestThreads::joinFinished()
{
    auto finished = std::stable_partition(m_threads.begin(), m_threads.end(), [](const Running& r) {
        return !r.done->load(std::memory_order_acquire);
    });
    for (auto it = finished; it != m_threads.end(); ++it) it->thread.join();
    m_threads.erase(finished, m_threads.end());
}

void RequestThreads::joinAll()
{
    for (auto& r : m_threads) r.thread.join();
    m_threads.clear();
}

}  // namespace brook
