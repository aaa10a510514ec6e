#ifndef SPARSE_CUDA_SPMM_GEMM_WORKSPACE_H_
#define SPARSE_CUDA_SPMM_GEMM_WORKSPACE_H_
// The stream-K workspace a prepared operand of the Hopper GEMM engine's families holds
// (spmm_24_gemm_sm90a.cu, spmm_unst_gemm_sm90a.cu, spmm_und_gemm_sm90a.cu): partial sums and flags for `slots` blocks
// (the device's SMs when prepared), the flags zero between launches. Launches on one operand run
// one at a time (stream order), on a device with at most as many SMs.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "common/env.h"
#include "cuda/common/device_buffer.h"
#include "cuda/common/device_info.h"
#if defined(SPARSE_SM90A)
#include "cuda/gemm/gemm_engine_host.h"
#endif

namespace sparse {

// The decomposition the end of a GEMM-engine variant's name gives (the families' parsers): 0
// for "", k for "_sk<k>" with k from 1 to `max`, -1 for anything else.
inline int StreamKSuffix(const char* rest, int max) {
  if (*rest == '\0') return 0;
  if (std::strncmp(rest, "_sk", 3) != 0 || rest[3] < '1' || rest[3] > '0' + max || rest[4] != '\0') return -1;
  return rest[3] - '0';
}

class GemmWorkspace {
 public:
  // Sized for this device's SMs; the flags zeroed on `stream`. (A build without sm_90a code,
  // which never launches, allocates nothing.)
  cudaError_t Allocate(cudaStream_t stream) {
    slots_ = std::max(1, SmCount());
#if defined(SPARSE_SM90A)
    cudaError_t e = partials_.Allocate(gemm_host::PartialFloats(slots_) * sizeof(float));
    if (e == cudaSuccess) e = flags_.Allocate(gemm_host::FlagInts(slots_) * sizeof(int));
    if (e == cudaSuccess) e = cudaMemsetAsync(flags_.get(), 0, flags_.bytes(), stream);
    return e;
#else
    (void)stream;
    return cudaSuccess;
#endif
  }
  size_t Bytes() const { return partials_.bytes() + flags_.bytes(); }
  float* partials() const { return partials_.as<float>(); }
  int* flags() const { return flags_.as<int>(); }
  int slots() const { return slots_; }
#if defined(SPARSE_SM90A)
  // Launches `kernel` (its params made with this workspace's partials, flags and slots) on up to
  // `sm_count` SMs (0: this device's), no more than the slots, with decomposition `stream_k`.
  cudaError_t Launch(const gemm_host::KernelRef& kernel, const cuda::gemm::Params& params, int sm_count, int stream_k,
                     cudaStream_t stream) const {
    const int sms = std::min(sm_count > 0 ? sm_count : SmCount(), slots_);
    return kernel.launch(params, sms, 0, stream_k, stream);
  }
#endif

 private:
  DeviceBuffer partials_, flags_;
  int slots_ = 1;
};

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_GEMM_WORKSPACE_H_
