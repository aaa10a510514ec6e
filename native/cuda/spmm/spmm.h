#ifndef SPARSE_CUDA_SPMM_SPMM_H_
#define SPARSE_CUDA_SPMM_SPMM_H_
// Public host interface of the CUDA SpMM: C[M x N] = A[M x K, CSR] * B[K x N].
// No device code here; include from .cc and .cu files alike.
#include <cuda_runtime_api.h>

#include "cuda/common/dtype.h"

namespace sparse {

// All pointers are device pointers. Dense operands are row-major.
struct SpmmProblem {
  int m = 0, k = 0, n = 0, nnz = 0;
  DType dtype = DType::kF32;     // values, B and C share this dtype; accumulation is fp32.
  const void* values = nullptr;  // A's values, nnz elements of `dtype`.
  // A's column indices, nnz elements: int32 when index_bits == 32, int16 when 16
  // (16-bit indices require k <= 32768; see CanImplementSpmm).
  const void* column_indices = nullptr;
  int index_bits = 32;
  const int* row_offsets = nullptr;  // m + 1 int32, from 0 to nnz.
  const int* row_indices = nullptr;  // m int32, the row processing order; null = 0..m-1.
  const void* b = nullptr;           // k * n elements of `dtype`.
  void* c = nullptr;                 // m * n elements of `dtype`; every element is written.
};

// Returns cudaSuccess when the problem can be launched, else cudaErrorInvalidValue
// (bad dimensions, missing pointers, 16-bit indices with k > 32768, ...).
cudaError_t CanImplementSpmm(const SpmmProblem& p);

// Launches the SpMM on `stream` (asynchronous). Returns the launch status.
cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_H_
