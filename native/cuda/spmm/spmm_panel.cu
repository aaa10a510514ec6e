// The panel SpMM kernel's instantiations (f32; see spmm_panel_kernel.cuh): its own
// translation unit, so that a parallel build compiles it beside the others.
#include "cuda/spmm/spmm_launch.h"
#include "cuda/spmm/spmm_panel_kernel.cuh"

namespace sparse {

cudaError_t LaunchSpmmPanel(const SpmmProblem& p, int vec, int rows_per_warp, cudaStream_t stream) {
  if (p.dtype != DType::kF32) return cudaErrorInvalidValue;
  if (p.index_bits == 16) {
    return vec == 4   ? cuda::LaunchSpmmPanelRows<4, int16_t>(p, rows_per_warp, stream)
           : vec == 2 ? cuda::LaunchSpmmPanelRows<2, int16_t>(p, rows_per_warp, stream)
                      : cudaErrorInvalidValue;
  }
  return vec == 4   ? cuda::LaunchSpmmPanelRows<4, int>(p, rows_per_warp, stream)
         : vec == 2 ? cuda::LaunchSpmmPanelRows<2, int>(p, rows_per_warp, stream)
                    : cudaErrorInvalidValue;
}

}  // namespace sparse
