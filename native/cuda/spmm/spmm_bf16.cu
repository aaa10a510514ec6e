// SpMM instantiations for bf16 (see spmm_kernel.cuh); one translation unit per dtype.
#include "cuda/spmm/spmm_kernel.cuh"

namespace sparse {

cudaError_t LaunchSpmmBF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream) {
  return cuda::LaunchSpmmType<DType::kBF16>(p, choice, sm_count, stream);
}

}  // namespace sparse
