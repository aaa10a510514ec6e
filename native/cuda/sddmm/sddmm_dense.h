#ifndef SPARSE_CUDA_SDDMM_SDDMM_DENSE_H_
#define SPARSE_CUDA_SDDMM_SDDMM_DENSE_H_
// Host interface of the dense-tile SDDMM (f32; sddmm_dense_kernel.cuh). Like the tensor-core
// SDDMM it reads the mask's chunk starts (SddmmTcMask, built once per mask).
#include <cuda_runtime_api.h>

#include "common/problems.h"
#include "cuda/sddmm/sddmm_tc.h"

namespace sparse {

// The tile of the mask (and of L R^T) each block computes.
constexpr int kSddmmDenseRows = 32;
constexpr int kSddmmDenseCols = 128;

// Whether the dense-tile kernel can run p: f32, k > 0, k % 4 == 0, L and R 16-byte aligned,
// at most 65535 x 32 rows.
bool SddmmDenseCanRun(const SddmmProblem& p);
// Launches it (asynchronous); `mask` must have been built from p's mask.
cudaError_t LaunchSddmmDense(const SddmmTcMask& mask, const SddmmProblem& p, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_DENSE_H_
