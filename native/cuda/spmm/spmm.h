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
// All pointers in `p` are device pointers (lengths in common/problems.h); `values` and
// `column_indices` must be 16-byte aligned (cudaMalloc'd buffers are). The CSR structure
// must have been validated (rowOffsets monotone from 0 to nnz, indices in [0, k)): the
// kernel trusts it. Every element of C is written, also for empty rows and nnz = 0.
cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream);

// The name of the kernel configuration CudaSpmm would launch for `p` (for reports), e.g.
// "spmm_f16_i16_v8_t32_x2". Thread-local storage, valid until the next call.
const char* SpmmKernelName(const SpmmProblem& p);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_H_
