// CancelSignal: a cancel that reaches a network read blocked on a silent server. cancel() sets
// the flag and runs the stop function the transfer in progress registered (cpp-httplib's
// Client::stop(), which shuts the socket of a request in flight from any thread). Without it a
// download from a stalled mirror noticed a cancel only when the next bytes came or the read timed
// out (60 s by default), and the window waiting for the cancel hung that long.
// Thread-safe: cancel() from any thread, whileRunning() on the transferring one.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>

namespace brook {

class CancelSignal {
public:
    // Unregisters the stop function when the transfer ends.
    class Scope {
    public:
        Scope() = default;
        explicit Scope(CancelSignal* signal) : m_signal(signal) {}
        Scope(Scope&& other) noexcept : m_signal(std::exchange(other.m_signal, nullptr)) {}
        Scope& operator=(Scope&&) = delete;
        ~Scope();

    private:
        CancelSignal* m_signal = nullptr;
    };

    void cancel();
    bool cancelled() const;

    // Registers `stop` until the returned scope ends; runs it at once when already cancelled.
    // One transfer at a time.
    [[nodiscard]] Scope whileRunning(std::function<void()> stop);

private:
    mutable std::mutex m_mutex;
    bool m_cancelled = false;
    std::function<void()> m_stop;
};

// A scope for `signal` (which may be null: nothing to register) that stops `client`.
template <typename Client>
CancelSignal::Scope stopOnCancel(const std::shared_ptr<CancelSignal>& signal, Client& client)
{
    if (!signal) return {};
    return signal->whileRunning([&client] { client.stop(); });
}

}  // namespace brook
