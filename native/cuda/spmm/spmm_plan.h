#ifndef SPARSE_CUDA_SPMM_SPMM_PLAN_H_
#define SPARSE_CUDA_SPMM_SPMM_PLAN_H_
// SpmmPlan: how our SpMM runs one matrix at one dtype and N, decided once. It owns the
// choice (a forced or tuned variant, else SPARSE_SPMM_VARIANT, else the built-in selection
// over the table of kernel families, spmm_family.h), and the prepared operand the chosen
// family reads instead of the CSR (tensor-core, bitmap or 2:4 tiles), built once. Callers
// plan, prepare, then run as often as they like; `sparse verify` (the kernels binding), the
// variant timing, `sparse bench` ("ours") and CudaSpmm all go through it. The matrix-side
// rules a caller applies before planning (the 16-bit index width, the 2:4 check) are here
// too, so that they are written once. Host code.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "common/problems.h"
#include "cuda/spmm/spmm_launch.h"

namespace sparse {

class SpmmOperand;

class SpmmPlan {
 public:
  SpmmPlan() = default;
  SpmmPlan(const SpmmPlan&) = delete;
  SpmmPlan& operator=(const SpmmPlan&) = delete;

  // Plans p (device pointers, or null ones for planning only: alignment is then assumed).
  // `variant`: a variant name (forced: a tune winner, --variant), or null/""/"auto" for
  // SPARSE_SPMM_VARIANT when it names a variant that can run p, else the selection.
  // cudaErrorInvalidValue for a problem CanImplementSpmm refuses, an unknown name, or a
  // variant that cannot run p (an empty problem, m or n 0, plans anything: Run does nothing).
  cudaError_t Init(const SpmmProblem& p, const char* variant);

  // The variant that runs (e.g. "split_v8_t2_w2"; "" before Init).
  const std::string& variant() const { return name_; }
  // "spmm_<dtype>_i<index bits>_<variant>" (for reports).
  std::string KernelName() const;
  // The prepared operand the chosen family reads, in words ("2:4 tiles"), or null for CSR.
  const char* form() const;
  bool prepared() const { return operand_ != nullptr; }
  // Device bytes of the prepared operand (0 when none).
  size_t Bytes() const;

  // Builds the prepared operand from p's CSR (the matrix planned; device pointers;
  // synchronous). Nothing to do for a family that reads the CSR. cudaErrorInvalidValue with
  // *why when the matrix does not fit the form.
  cudaError_t Prepare(const SpmmProblem& p, cudaStream_t stream, std::string* why = nullptr);
  // Reuses `other`'s prepared operand when it is of the same family and matrix and serves this
  // plan's configuration (SpmmOperand::Serves; the variant timing runs many variants of one
  // family on one matrix). Returns whether it did.
  bool ShareOperand(const SpmmPlan& other);
  // The same plan with a device copy of the prepared operand (the benchmark's rotated sets).
  cudaError_t CopyFrom(const SpmmPlan& other, cudaStream_t stream);

  // Launches C = A * B on `stream` (asynchronous) for p: the planned matrix and shape, with
  // this launch's pointers. Without a prepared operand, a family that needs one converts the
  // CSR now, synchronously (correct, for one-off calls). cudaErrorInvalidValue when p fails
  // the problem's checks or the variant cannot run it (alignment of B and C).
  cudaError_t Run(const SpmmProblem& p, cudaStream_t stream) const;

  // The matrix-side rules, applied by a caller before planning:
  // The column-index width: `requested` (16 or 32) when given, else Sputnik's 16-bit indices
  // for f16/bf16 when the columns fit (k <= 32768), else 32.
  static int IndexBits(DType dtype, int k, int requested = 0);
  // What the caller may promise of the matrix (SpmmProblem::structure) from its host CSR:
  // k24 when it is 2:4 in f16/bf16 (the 2:4 kernel may run it), else kUnstructured. Linear in
  // nnz. `values` holds nnz 16-bit words (ignored for f32).
  static int Structure(DType dtype, int m, const int* row_offsets, const int* column_indices, const void* values);

 private:
  SpmmProblem planned_;
  SpmmChoice choice_;
  std::string name_;
  bool empty_ = false;  // m or n 0: nothing to launch
  int sm_count_ = 1;
  std::shared_ptr<SpmmOperand> operand_;
};

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_PLAN_H_
