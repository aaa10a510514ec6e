#ifndef SPARSE_CUDA_SPMM_SPMM_H_
#define SPARSE_CUDA_SPMM_SPMM_H_
// Public host interface of the CUDA SpMM: C[M x N] = A[M x K, CSR] * B[K x N].
// No device code here; include from .cc and .cu files alike.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "common/problems.h"

namespace sparse {


// Returns cudaSuccess when the problem can be launched, else cudaErrorInvalidValue
// (bad dimensions, missing pointers, 16-bit indices with k > 32768, ...).
cudaError_t CanImplementSpmm(const SpmmProblem& p);

// Launches the SpMM on `stream` (asynchronous). Returns the launch status.
// All pointers in `p` are device pointers (lengths in common/problems.h); `values` and
// `column_indices` must be 16-byte aligned (cudaMalloc'd buffers are). The CSR structure
// must have been validated (rowOffsets monotone from 0 to nnz, indices in [0, k)): the
// kernel trusts it. Every element of C is written, also for empty rows and nnz = 0.
cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream);

// The name of the kernel configuration CudaSpmm would launch for `p` (for reports), e.g.
// "spmm_f16_i16_split_v8_t2_w2" ("spmm_<dtype>_i<index bits>_" + the variant name).
// Thread-local storage, valid until the next call.
const char* SpmmKernelName(const SpmmProblem& p);

// Kernel variants (for tuning: `sparse bench --tune` and the kernels binding).
// A variant name is "tile_v<vec>_t<threads>_x<vecs>" (Sputnik's 1-D tiling, spmm_kernel.cuh),
// "split_v<vec>_t<threads>_w<warps>" (the split-row kernel, spmm_split_kernel.cuh) or
// "tc_w<warps>_s<splits>_p<stages>" (the tensor-core kernel, spmm_tc_kernel.cuh; f16/bf16),
// "bm_w<warps>_m<strips>_s<splits>" (the bitmap kernel, spmm_bitmap_kernel.cuh;
// f16/bf16) or "s24_..." (the 2:4 kernel, spmm_24_kernel.cuh; f16/bf16, and only for problems
// whose `structure` is SpmmProblem::k24).
// "auto" (or "" / null) means the built-in selection (SelectSpmmKernel in spmm.cu).
//
// Environment: SPARSE_SPMM_VARIANT=<name> makes CudaSpmm (and SpmmKernelName) use that
// variant for every problem it can run (others keep the selection); for A/B comparisons of
// whole `sparse bench` runs without rebuilding.

// The variant the built-in selection picks for `p` (no environment override).
std::string SpmmSelectedVariant(const SpmmProblem& p);

// Every variant that can run `p` at the widest vector width n and the pointers' alignment
// allow (narrower widths can be forced by name too, but only add instructions): instantiated,
// grid fits. Pointers may be null here (only m, k, n, nnz, dtype and
// index_bits are read; alignment is then assumed). The selection's pick is among them.
std::vector<std::string> SpmmVariants(const SpmmProblem& p);

// Like CudaSpmm with the kernel forced to `variant` ("auto": the selection). Returns
// cudaErrorInvalidValue when the name is unknown or the variant cannot run `p`.
cudaError_t CudaSpmmVariant(const SpmmProblem& p, const char* variant, cudaStream_t stream);

// The variant name CudaSpmmVariant(p, variant) would launch ("" for an unknown name): the
// selection (or SPARSE_SPMM_VARIANT) for null/""/"auto". Names starting "tc_", "bm_" and
// "s24_" are kernels that read a prepared form of the matrix (spmm_prepared.h) instead of
// the CSR arrays.
std::string SpmmEffectiveVariant(const SpmmProblem& p, const char* variant);

// Like CudaSpmmVariant, with the prepared form of the same matrix built beforehand
// (SpmmPrepared::Build for the effective variant; may be null or lack the form: then a
// "tc_*", "bm_*" or "s24_*" choice converts the CSR on every call, synchronously).
class SpmmPrepared;
cudaError_t CudaSpmmPrepared(const SpmmProblem& p, const char* variant, const SpmmPrepared* prepared,
                             cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_H_
