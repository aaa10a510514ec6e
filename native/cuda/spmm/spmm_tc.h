#ifndef SPARSE_CUDA_SPMM_SPMM_TC_H_
#define SPARSE_CUDA_SPMM_SPMM_TC_H_
// Host interface of the tensor-core SpMM (f16/bf16; spmm_tc_kernel.cuh). The kernel reads
// the tiled format of common/tc_tiles.h, not CSR: build it once per matrix (weights are
// static; the conversion is O(nnz) on the host) with TcMatrix::Build, then launch as often as
// needed. Its table entry (spmm_family.h) is in spmm_tc.cu: an SpmmPlan builds the TcMatrix
// once; a plan run without one converts on every call (synchronously).
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "common/problems.h"
#include "common/tc_tiles.h"
#include "cuda/common/device_buffer.h"
#include "cuda/spmm/spmm_family.h"

namespace sparse {

// A TcTiles in device memory (owns it): the tensor-core family's prepared operand.
class TcMatrix : public SpmmOperand {
 public:
  TcMatrix() = default;
  TcMatrix(const TcMatrix&) = delete;
  TcMatrix& operator=(const TcMatrix&) = delete;
  // From host tiles (synchronous upload on `stream`).
  cudaError_t Upload(const TcTiles& tiles, DType dtype, cudaStream_t stream);
  // From a CSR problem whose pointers are device pointers (p.values, p.column_indices with
  // p.index_bits, p.row_offsets; f16/bf16): copied to the host, converted, uploaded.
  // Synchronous. Returns cudaErrorInvalidValue for f32 or a malformed CSR.
  cudaError_t Build(const SpmmProblem& p, cudaStream_t stream);
  // Device copy of another TcMatrix (for the benchmark's rotated operand copies).
  cudaError_t CopyFrom(const TcMatrix& other, cudaStream_t stream);
  bool empty() const { return offsets_.get() == nullptr; }
  int m() const { return m_; }
  int k() const { return k_; }
  DType dtype() const { return dtype_; }
  size_t Bytes() const override { return offsets_.bytes() + entries_.bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  const uint32_t* offsets() const { return offsets_.as<uint32_t>(); }
  const uint32_t* entries() const { return entries_.as<uint32_t>(); }
  int strips() const { return strips_; }
  int ktiles() const { return ktiles_; }

 private:
  DeviceBuffer offsets_, entries_;
  int m_ = 0, k_ = 0, strips_ = 0, ktiles_ = 0;
  DType dtype_ = DType::kF16;
};

// One configuration of the kernel: warps (strips of 16 rows) per block, cluster split-K
// ways, pipeline stages. Name: "tc_w<warps>_s<splits>_p<stages>".
struct TcChoice {
  int warps = 8, splits = 1, stages = 4;
};
std::string TcVariantName(const TcChoice& ch);
bool ParseTcVariant(const char* name, TcChoice* ch);
// Whether this GPU and problem can run `ch` (f16/bf16, n % 8 == 0, B and C 16-byte aligned,
// compute capability 8.0+, clusters (splits > 1) 9.0+, splits <= k-tiles).
bool TcCanRun(const SpmmProblem& p, const TcChoice& ch);
// The built-in pick of warps/splits/stages for p (when the tensor-core kernel runs).
TcChoice SelectTc(const SpmmProblem& p, int sm_count);
// Every configuration worth timing for p (for --tune and the variant sweep).
std::vector<std::string> TcVariants(const SpmmProblem& p);
// Launches C = A * B with A given as `a` (same m, k, dtype as p; p's CSR pointers are not
// read, only p.b, p.c, p.n). Asynchronous.
cudaError_t LaunchSpmmTc(const TcMatrix& a, const SpmmProblem& p, const TcChoice& ch, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_TC_H_
