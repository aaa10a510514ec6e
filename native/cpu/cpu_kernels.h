#ifndef SPARSE_CPU_CPU_KERNELS_H_
#define SPARSE_CPU_CPU_KERNELS_H_
// Public interface of the multithreaded CPU kernels (the fallback backend and the
// reference). No CUDA headers: usable in a CPU-only build.
#include "common/problems.h"

namespace sparse {

// C[M x N] = A[M x K, CSR] * B[K x N] on the host. All pointers in `p` are host pointers
// (lengths as documented in common/problems.h). f32/f16/bf16, fp32 accumulation; 16- and
// 32-bit column indices. `threads` <= 0 means std::thread::hardware_concurrency(). Rows
// are split among threads by nnz. Every element of C is written. Never throws for a
// problem that CheckSpmmProblem accepts.
void CpuSpmm(const SpmmProblem& p, int threads);

// out[nnz] = (L[M x K] * R[N x K]^T) sampled at the nonzeros of A[M x N] on the host.
// All pointers in `p` are host pointers. f32/f16/bf16, fp32 accumulation.
void CpuSddmm(const SddmmProblem& p, int threads);

// Float64 references (accumulate in double; f16/bf16 inputs decoded from their bits).
// `c` is m * n doubles; `out` is nnz doubles. Multithreaded like the kernels above.
void ReferenceSpmm(const SpmmProblem& p, double* c, int threads);
void ReferenceSddmm(const SddmmProblem& p, double* out, int threads);

// Cheap structural checks of a host problem's inputs (dimensions, input pointers, row
// offsets monotone from 0 to nnz, column indices in range, row indices a permutation).
// The output pointer is not checked. Returns nullptr when fine, else a static message
// naming the field. O(m + nnz).
const char* CheckSpmmProblem(const SpmmProblem& p);
const char* CheckSddmmProblem(const SddmmProblem& p);

}  // namespace sparse
#endif  // SPARSE_CPU_CPU_KERNELS_H_
