// DeviceBuffer: one cudaMalloc'd allocation owned RAII-style. Move-only.
#pragma once

#include "cuda/cuda_check.h"

#include <cstddef>
#include <utility>

namespace brook::cuda {

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes) : m_bytes(bytes)
    {
        if (bytes) BROOK_CUDA_CHECK(cudaMalloc(&m_ptr, bytes));
    }
    ~DeviceBuffer()
    {
        if (m_ptr) cudaFree(m_ptr);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(std::exchange(o.m_bytes, 0))
    {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
    {
        if (this != &o) {
            if (m_ptr) cudaFree(m_ptr);
            m_ptr = std::exchange(o.m_ptr, nullptr);
            m_bytes = std::exchange(o.m_bytes, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* get() const { return m_ptr; }
    template <typename T>
    T* as() const
    {
        return static_cast<T*>(m_ptr);
    }
    size_t bytes() const { return m_bytes; }

private:
    void* m_ptr = nullptr;
    size_t m_bytes = 0;
};

}  // namespace brook::cuda
