#include "cuda/cuda_check.h"

namespace brook::cuda {

void throwCudaError(cudaError_t error, const char* call, const char* file, int line)
{
    throw CudaError(std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ") in " + call + " at " +
                        file + ":" + std::to_string(line),
                    error == cudaErrorMemoryAllocation);
}

void throwCublasError(cublasStatus_t status, const char* call, const char* file, int line)
{
    throw CudaError(std::string("cuBLAS status ") + std::to_string(int(status)) + " in " + call + " at " + file + ":" +
                        std::to_string(line),
                    status == CUBLAS_STATUS_ALLOC_FAILED);
}

}  // namespace brook::cuda
