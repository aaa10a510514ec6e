// The dense-tile SDDMM's host side (f32; see sddmm_dense_kernel.cuh).
#include "cuda/sddmm/sddmm_dense.h"

#include <cstdint>

#include "cuda/common/device_info.h"
#include "cuda/sddmm/sddmm_dense_kernel.cuh"

namespace sparse {

bool SddmmDenseCanRun(const SddmmProblem& p) {
  using T = cuda::SddmmDenseTile;
  if (p.dtype != DType::kF32 || p.k <= 0 || p.k % 4 != 0) return false;
  if (!Aligned(p.lhs, 16) || !Aligned(p.rhs, 16)) return false;
  return (static_cast<int64_t>(p.m) + T::kRows - 1) / T::kRows <= 65535;
}

cudaError_t LaunchSddmmDense(const SddmmTcMask& mask, const SddmmProblem& p, cudaStream_t stream) {
  using T = cuda::SddmmDenseTile;
  if (!SddmmDenseCanRun(p) || mask.empty() || mask.m() != p.m || mask.n() != p.n) return cudaErrorInvalidValue;
  if (p.nnz == 0 || p.m == 0 || p.n == 0) return cudaSuccess;
  const dim3 grid((p.n + T::kCols - 1) / T::kCols, (p.m + T::kRows - 1) / T::kRows);
  cuda::SddmmDenseKernel<<<grid, T::kThreads, 0, stream>>>(
      p.m, p.k, p.n, mask.chunks(), mask.starts(), p.column_indices, static_cast<const float*>(p.lhs),
      static_cast<const float*>(p.rhs), static_cast<float*>(p.out));
  return cudaGetLastError();
}

}  // namespace sparse
