#ifndef SPARSE_CUDA_SPMM_SPMM_H_
#define SPARSE_CUDA_SPMM_SPMM_H_
// Public host interface of the CUDA SpMM: C[M x N] = A[M x K, CSR] * B[K x N].
// No device code here; include from .cc and .cu files alike.
#include <cuda_runtime_api.h>

#include "common/problems.h"

namespace sparse {


// Returns cudaSuccess when the problem can be launched, else cudaErrorInvalidValue
// (bad dimensions, missing pointers, 16-bit indices with k > 32768, ...).
cudaError_t CanImplementSpmm(const SpmmProblem& p);

// Launches the SpMM on `stream` (asynchronous). Returns the launch status.
cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_H_
