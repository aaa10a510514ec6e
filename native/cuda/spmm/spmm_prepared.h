#ifndef SPARSE_CUDA_SPMM_SPMM_PREPARED_H_
#define SPARSE_CUDA_SPMM_SPMM_PREPARED_H_
// The prepared forms of a sparse matrix that some SpMM kernels read instead of CSR: the
// tensor-core tiles (spmm_tc.h), the bitmap tiles and the 2:4 tiles (spmm_stream.h). Weights
// are static: a caller that launches the same matrix many times builds the form its variant
// needs once (Build) and passes it to CudaSpmmPrepared. Host code.
#include <cuda_runtime_api.h>

#include <string>

#include "common/problems.h"
#include "cuda/spmm/spmm_stream.h"
#include "cuda/spmm/spmm_tc.h"

namespace sparse {

class SpmmPrepared {
 public:
  // Builds the form variant `effective` (a name from SpmmEffectiveVariant: "tc_*", "bm_*",
  // "s24_*") reads, from p's CSR (device pointers; copied to the host, converted, uploaded:
  // synchronous). Other variants need nothing (returns cudaSuccess, stays empty). Returns
  // cudaErrorInvalidValue for f32 or a CSR the form cannot hold (2:4: not 2:4), with the
  // builder's message in *why when given.
  cudaError_t Build(const SpmmProblem& p, const std::string& effective, cudaStream_t stream, std::string* why = nullptr);
  // Device copy of another (the benchmark's rotated operand sets).
  cudaError_t CopyFrom(const SpmmPrepared& other, cudaStream_t stream);
  bool empty() const { return tc.empty() && bitmap.empty() && s24.empty(); }
  size_t Bytes() const { return tc.Bytes() + bitmap.Bytes() + s24.Bytes(); }

  TcMatrix tc;
  BitmapMatrix bitmap;
  Sp24Matrix s24;
};

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_PREPARED_H_
