#ifndef SPARSE_CUDA_SDDMM_SDDMM_H_
#define SPARSE_CUDA_SDDMM_SDDMM_H_
// Public host interface of the CUDA SDDMM: out[nnz] = (L[M x K] * R[N x K]^T) sampled at
// the nonzeros of the CSR mask A[M x N]. No device code here.
#include <cuda_runtime_api.h>

#include "cuda/common/dtype.h"

namespace sparse {

// All pointers are device pointers. L and R are row-major.
struct SddmmProblem {
  int m = 0, k = 0, n = 0, nnz = 0;
  DType dtype = DType::kF32;  // L, R and out share this dtype; accumulation is fp32.
  const int* row_offsets = nullptr;     // m + 1 int32, from 0 to nnz.
  const int* column_indices = nullptr;  // nnz int32, each in [0, n).
  const int* row_indices = nullptr;     // m int32, the row processing order; null = 0..m-1.
  const void* lhs = nullptr;            // m * k elements of `dtype`.
  const void* rhs = nullptr;            // n * k elements of `dtype`.
  void* out = nullptr;                  // nnz elements of `dtype`; every element is written.
};

cudaError_t CanImplementSddmm(const SddmmProblem& p);
cudaError_t CudaSddmm(const SddmmProblem& p, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_H_
