// Checking macros for CUDA runtime and cuBLAS calls. A failure becomes a CudaError exception
// carrying the call, file and line; the backend catches it at its edge (Backend::step's
// caller turns it into aborted requests, create() into an error message).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace brook::cuda {

class CudaError : public std::runtime_error {
public:
    explicit CudaError(const std::string& what, bool outOfMemory = false)
        : std::runtime_error(what), m_outOfMemory(outOfMemory)
    {}
    bool outOfMemory() const { return m_outOfMemory; }

private:
    bool m_outOfMemory;
};

[[noreturn]] void throwCudaError(cudaError_t error, const char* call, const char* file, int line);
[[noreturn]] void throwCublasError(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace brook::cuda

#define BROOK_CUDA_CHECK(call)                                                                                         \
    do {                                                                                                               \
        cudaError_t brook_cuda_status_ = (call);                                                                       \
        if (brook_cuda_status_ != cudaSuccess)                                                                         \
            ::brook::cuda::throwCudaError(brook_cuda_status_, #call, __FILE__, __LINE__);                              \
    } while (0)

#define BROOK_CUBLAS_CHECK(call)                                                                                       \
    do {                                                                                                               \
        cublasStatus_t brook_cublas_status_ = (call);                                                                  \
        if (brook_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                             \
            ::brook::cuda::throwCublasError(brook_cublas_status_, #call, __FILE__, __LINE__);                          \
    } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define BROOK_CUDA_CHECK_LAUNCH() BROOK_CUDA_CHECK(cudaGetLastError())
