#ifndef SPARSE_CUDA_SDDMM_SDDMM_TC_H_
#define SPARSE_CUDA_SDDMM_SDDMM_TC_H_
// Host interface of the tensor-core SDDMM (f16/bf16, K <= 128; sddmm_tc_kernel.cuh). The
// kernel reads the mask's chunk starts (common/tc_tiles.h) besides the CSR: build them once
// per mask (attention masks are static) with SddmmTcMask::Build. CudaSddmm (sddmm.h) picks
// this kernel by itself where it pays and builds the starts on every call when it is given
// none (synchronously): correct for one-off calls; pass a mask to CudaSddmmPrepared for
// repeated ones.
#include <cuda_runtime_api.h>

#include "common/problems.h"
#include "cuda/common/device_buffer.h"

namespace sparse {

class SddmmTcMask {
 public:
  SddmmTcMask() = default;
  SddmmTcMask(const SddmmTcMask&) = delete;
  SddmmTcMask& operator=(const SddmmTcMask&) = delete;
  // From a problem whose pointers are device pointers (row_offsets, column_indices):
  // copied to the host, converted, uploaded. Synchronous.
  cudaError_t Build(const SddmmProblem& p, cudaStream_t stream);
  cudaError_t CopyFrom(const SddmmTcMask& other, cudaStream_t stream);
  bool empty() const { return starts_.get() == nullptr; }
  int m() const { return m_; }
  int n() const { return n_; }
  int chunks() const { return chunks_; }
  const int* starts() const { return starts_.as<int>(); }
  size_t Bytes() const { return starts_.bytes(); }

 private:
  DeviceBuffer starts_;
  int m_ = 0, n_ = 0, chunks_ = 0;
};

// Whether the tensor-core kernel can run p on this GPU: f16/bf16, 0 < k <= 128, k % 8 == 0,
// L and R 16-byte aligned, compute capability 8.0+.
bool SddmmTcCanRun(const SddmmProblem& p);
// Launches it (asynchronous); `mask` must have been built from p's mask.
cudaError_t LaunchSddmmTc(const SddmmTcMask& mask, const SddmmProblem& p, cudaStream_t stream);
// The configuration name LaunchSddmmTc uses for p, e.g. "tc_w8_k4_c2".
const char* SddmmTcName(const SddmmProblem& p);

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_TC_H_
