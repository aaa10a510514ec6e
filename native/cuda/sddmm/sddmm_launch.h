#ifndef SPARSE_CUDA_SDDMM_SDDMM_LAUNCH_H_
#define SPARSE_CUDA_SDDMM_SDDMM_LAUNCH_H_
// Internal host interface between the SDDMM selection (sddmm.cu) and the per-dtype
// translation units (sddmm_{f32,f16,bf16}.cu). No device code.
#include <cuda_runtime_api.h>

#include "common/problems.h"

namespace sparse {

// One point of the SDDMM configuration space (see SddmmConfig in sddmm_config.h).
struct SddmmChoice {
  int vec_elems = 1;           // elements of L/R per vector memory instruction
  int threads_k = 32;          // subwarp width
  bool lhs_in_registers = false;  // k fits one chunk: L row held in registers
  int NnzPerRun() const { return lhs_in_registers ? 8 : 4; }
};

cudaError_t LaunchSddmmF32(const SddmmProblem& p, const SddmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSddmmF16(const SddmmProblem& p, const SddmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSddmmBF16(const SddmmProblem& p, const SddmmChoice& choice, int sm_count, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_LAUNCH_H_
