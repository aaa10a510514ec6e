#ifndef SPARSE_COMMON_PROBLEMS_H_
#define SPARSE_COMMON_PROBLEMS_H_
// The problem descriptions shared by the CPU and CUDA kernels and the benchmark harness.
// Plain data, no CUDA headers: usable in a CPU-only build.
#include "common/dtype.h"

namespace sparse {

// SpMM: C[M x N] = A[M x K, CSR] * B[K x N].
// Pointers are device pointers for CUDA kernels, host pointers for CPU kernels. Dense operands are row-major.
struct SpmmProblem {
  int m = 0, k = 0, n = 0, nnz = 0;
  DType dtype = DType::kF32;     // values, B and C share this dtype; accumulation is fp32.
  const void* values = nullptr;  // A's values, nnz elements of `dtype`.
  // A's column indices, nnz elements: int32 when index_bits == 32, int16 when 16
  // (16-bit indices require k <= 32768; see CanImplementSpmm).
  const void* column_indices = nullptr;
  int index_bits = 32;
  const int* row_offsets = nullptr;  // m + 1 int32, from 0 to nnz.
  const int* row_indices = nullptr;  // m int32, the row processing order; null = 0..m-1.
  const void* b = nullptr;           // k * n elements of `dtype`.
  void* c = nullptr;                 // m * n elements of `dtype`; every element is written.
  // What the caller knows of A's pattern: kUnstructured, or k24 (at most two nonzeros in
  // every group of four columns 4j..4j+3 of every row: the 2:4 kernel may run it).
  enum Structure : int { kUnstructured = 0, k24 = 1 };
  int structure = kUnstructured;
  // The caller's choice of memory over speed (CUDA): the selection and the variants listed for
  // --tune leave out the families whose prepared operand stores every weight, zeros included
  // (SpmmFamily::stores_dense: und, A stored dense on the GEMM engine). A forced variant runs
  // as asked.
  bool keep_sparse = false;
};

// SDDMM: out[nnz] = (L[M x K] * R[N x K]^T) sampled at the nonzeros of the CSR mask A[M x N].
// Pointers are device pointers for CUDA kernels, host pointers for CPU kernels. L and R are row-major.
struct SddmmProblem {
  int m = 0, k = 0, n = 0, nnz = 0;
  DType dtype = DType::kF32;  // L, R and out share this dtype; accumulation is fp32.
  const int* row_offsets = nullptr;     // m + 1 int32, from 0 to nnz.
  const int* column_indices = nullptr;  // nnz int32, each in [0, n).
  const int* row_indices = nullptr;     // m int32, the row processing order; null = 0..m-1.
  const void* lhs = nullptr;            // m * k elements of `dtype`.
  const void* rhs = nullptr;            // n * k elements of `dtype`.
  void* out = nullptr;                  // nnz elements of `dtype`; every element is written.
};

}  // namespace sparse
#endif  // SPARSE_COMMON_PROBLEMS_H_
