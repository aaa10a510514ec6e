// SDDMM instantiations for bf16 (see sddmm_kernel.cuh); one translation unit per dtype.
#include "cuda/sddmm/sddmm_kernel.cuh"

namespace sparse {

cudaError_t LaunchSddmmBF16(const SddmmProblem& p, const SddmmChoice& choice, int sm_count, cudaStream_t stream) {
  return cuda::LaunchSddmmType<DType::kBF16>(p, choice, sm_count, stream);
}

}  // namespace sparse
