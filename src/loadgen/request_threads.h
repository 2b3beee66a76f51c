// RequestThreads: the load generator's threads, one per request in flight. A machine out of
// threads (pthread_create's EAGAIN under a process, user or cgroup limit, as a soak's thousand
// slow sockets beside it caused) fails that one request with the reason instead of aborting the
// run with an uncaught std::system_error; threads are joined as their work ends, so the threads
// alive never outnumber the requests in flight.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace brook {

class RequestThreads {
public:
    // How a thread is made; tests pass one that fails the way pthread_create does.
    using Spawn = std::function<std::thread(std::function<void()>)>;

    explicit RequestThreads(Spawn spawn = {});
    ~RequestThreads();  // joins every thread
    RequestThreads(const RequestThreads&) = delete;
    RequestThreads& operator=(const RequestThreads&) = delete;

    // Runs `work` on a new thread. When none can be made, returns why ("cannot start a thread:
    // Resource temporarily unavailable") and `work` never runs.
    std::optional<std::string> start(std::function<void()> work);
    // Waits for every thread started so far.
    void joinAll();
    // Threads started and not yet joined (finished ones are joined at the next start()).
    size_t unjoined() const { return m_threads.size(); }

private:
    struct Running {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    void joinFinished();

    Spawn m_spawn;
    std::vector<Running> m_threads;
};

}  // namespace brook
