// SpMM instantiations for f32 (see spmm_kernel.cuh); one translation unit per dtype.
#include "cuda/spmm/spmm_kernel.cuh"

namespace sparse {

cudaError_t LaunchSpmmF32(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream) {
  return cuda::LaunchSpmmType<DType::kF32>(p, choice, sm_count, stream);
}

}  // namespace sparse
