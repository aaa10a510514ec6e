#ifndef SPARSE_CUDA_SDDMM_SDDMM_H_
#define SPARSE_CUDA_SDDMM_SDDMM_H_
// Public host interface of the CUDA SDDMM: out[nnz] = (L[M x K] * R[N x K]^T) sampled at
// the nonzeros of the CSR mask A[M x N]. No device code here.
#include <cuda_runtime_api.h>

#include "common/problems.h"

namespace sparse {


cudaError_t CanImplementSddmm(const SddmmProblem& p);
cudaError_t CudaSddmm(const SddmmProblem& p, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_H_
