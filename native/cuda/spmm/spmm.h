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
// A variant name is "<family prefix>_<configuration>", one family per kernel (the table of
// spmm_family.h; each family's entry says its grammar): "tile_v<vec>_t<threads>_x<vecs>"
// (Sputnik's 1-D tiling), "split_v<vec>_t<threads>_w<warps>" (the split-row kernel), "tc_..."
// (tensor cores), "bm_..." (bitmap) or "s24_..." (2:4; only for problems whose `structure` is
// SpmmProblem::k24).
// "auto" (or "" / null) means the built-in selection (the families' rules, by rank).
//
// Environment: SPARSE_SPMM_VARIANT=<name> makes CudaSpmm (and SpmmKernelName) use that
// variant for every problem it can run (others keep the selection); for A/B comparisons of
// whole `sparse bench` runs without rebuilding.

// The variant the built-in selection picks for `p` (no environment override).
std::string SpmmSelectedVariant(const SpmmProblem& p);

// Every variant that can run `p` (family by family, in rank order), the CSR kernels at the
// widest vector width n and the pointers' alignment allow (narrower widths can be forced by
// name too, but only add instructions): instantiated, grid fits. Pointers may be null here
// (only m, k, n, nnz, dtype, index_bits and structure are read; alignment is then assumed).
// The selection's pick is among them.
std::vector<std::string> SpmmVariants(const SpmmProblem& p);

// Like CudaSpmm with the kernel forced to `variant` ("auto": the selection). Returns
// cudaErrorInvalidValue when the name is unknown or the variant cannot run `p`.
cudaError_t CudaSpmmVariant(const SpmmProblem& p, const char* variant, cudaStream_t stream);

// The variant-name grammar: one regular expression per kernel family (spmm_family.h), for
// the TypeScript side's checks of --variant flags and tune-cache entries.
std::vector<std::string> SpmmVariantGrammar();

// The name of the configuration a family parses from `name`, written back by that family
// ("" when no family parses it): equal to `name` for every well-formed name. No GPU needed.
std::string SpmmParsedVariant(const char* name);

// A caller that runs one matrix many times (or needs a prepared operand built once) plans
// it with SpmmPlan (spmm_plan.h); every function above is one plan.

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_H_
