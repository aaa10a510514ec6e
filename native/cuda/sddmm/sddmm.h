#ifndef SPARSE_CUDA_SDDMM_SDDMM_H_
#define SPARSE_CUDA_SDDMM_SDDMM_H_
// Public host interface of the CUDA SDDMM: out[nnz] = (L[M x K] * R[N x K]^T) sampled at
// the nonzeros of the CSR mask A[M x N]. No device code here.
#include <cuda_runtime_api.h>

#include "common/problems.h"

namespace sparse {


// Returns cudaSuccess when the problem can be launched, else cudaErrorInvalidValue
// (negative dimensions, missing pointers).
cudaError_t CanImplementSddmm(const SddmmProblem& p);

// Launches the SDDMM on `stream` (asynchronous). Returns the launch status. All pointers in
// `p` are device pointers (lengths in common/problems.h); any alignment works (narrower
// vectors are chosen when needed). The CSR structure must have been validated (rowOffsets
// monotone from 0 to nnz, indices in [0, n)): the kernel trusts it. Every output is written.
cudaError_t CudaSddmm(const SddmmProblem& p, cudaStream_t stream);

// The name of the kernel configuration CudaSddmm would launch for `p` (for reports), e.g.
// "sddmm_f32_v4_t16_r8_lreg". Thread-local storage, valid until the next call.
const char* SddmmKernelName(const SddmmProblem& p);

// Whether CudaSddmm runs a kernel that reads a mask's chunk starts built beforehand for p:
// the tensor-core kernel (sddmm_tc.h) or the dense-tile kernel (sddmm_dense.h).
bool SddmmUsesChunkStarts(const SddmmProblem& p);

// Like CudaSddmm, with the chunk starts of the same mask built beforehand (may be null:
// then the tensor-core and dense-tile kernels build them on every call, synchronously).
class SddmmTcMask;
cudaError_t CudaSddmmPrepared(const SddmmProblem& p, const SddmmTcMask* mask, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_H_
