#ifndef SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
#define SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
// Internal host interface between the SpMM kernel selection (spmm.cu) and the per-dtype
// translation units that instantiate the kernels (spmm_f32.cu, spmm_f16.cu, spmm_bf16.cu;
// split so that a parallel build compiles them at once). No device code.
#include <cuda_runtime_api.h>

#include "common/problems.h"

namespace sparse {

// One point of the SpMM configuration space (see SpmmConfig in spmm_config.h).
struct SpmmChoice {
  int vec_elems = 1;  // elements of B/C per vector memory instruction
  int threads_x = 32;  // subwarp width
  int vecs_x = 1;      // vectors per thread across the strip
  int BlockItemsX() const { return threads_x * vecs_x * vec_elems; }
};

// Launches the instantiation of `choice` for p.dtype (one of these per dtype). Returns
// cudaErrorInvalidValue for a choice with no instantiation, else the launch status.
cudaError_t LaunchSpmmF32(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSpmmF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSpmmBF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
