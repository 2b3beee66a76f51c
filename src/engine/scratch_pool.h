// ScratchPool<T>: scratch objects lent for one call and kept for the next, at most `maxKept` of
// them and each only while `worthKeeping` says it is small enough.
//
// Why not thread_local: code that runs on the HTTP server's worker threads (tokenizing a prompt)
// runs on hundreds of threads that each live as long as the server. A thread_local scratch is
// kept by every one of them, sized by the longest input that thread ever met, so the heap kept
// growing for as long as new threads met longer texts (docs/benchmarks.md, "Reliability"). A pool
// keeps as many as run at once, up to a bound, whatever the number of threads.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace brook {

template <class T>
class ScratchPool {
public:
    ScratchPool(size_t maxKept, std::function<bool(const T&)> worthKeeping)
        : m_maxKept(maxKept), m_worthKeeping(std::move(worthKeeping))
    {
    }

    // One scratch object for as long as the lease lives; returned to the pool (or freed) after.
    class Lease {
    public:
        Lease(ScratchPool& pool, std::unique_ptr<T> item) : m_pool(pool), m_item(std::move(item)) {}
        ~Lease()
        {
            if (m_item) m_pool.giveBack(std::move(m_item));
        }
        Lease(Lease&& other) noexcept : m_pool(other.m_pool), m_item(std::move(other.m_item)) {}
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        T& operator*() const { return *m_item; }
        T* operator->() const { return m_item.get(); }

    private:
        ScratchPool& m_pool;
        std::unique_ptr<T> m_item;
    };

    Lease borrow()
    {
        std::unique_ptr<T> item;
        {
            std::lock_guard lock(m_mutex);
            if (!m_free.empty()) {
                item = std::move(m_free.back());
                m_free.pop_back();
            }
        }
        if (!item) item = std::make_unique<T>();
        return Lease(*this, std::move(item));
    }

    // The objects kept between calls, passed to `visit` under the pool's lock (tests, metrics).
    template <class Visit>
    void forEachKept(Visit&& visit) const
    {
        std::lock_guard lock(m_mutex);
        for (const auto& item : m_free) visit(*item);
    }

private:
    void giveBack(std::unique_ptr<T> item)
    {
        if (!m_worthKeeping(*item)) return;  // freed here, outside the lock
        std::lock_guard lock(m_mutex);
        if (m_free.size() < m_maxKept) m_free.push_back(std::move(item));
        // else: freed as `item` leaves scope (still under the lock; a free is cheap)
    }

    const size_t m_maxKept;
    const std::function<bool(const T&)> m_worthKeeping;
    mutable std::mutex m_mutex;
    std::vector<std::unique_ptr<T>> m_free;
};

}  // namespace brook
