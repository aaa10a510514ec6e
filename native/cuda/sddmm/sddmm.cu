// SDDMM host side: CanImplementSddmm, the kernel selection, and CudaSddmm. The kernel is
// in sddmm_kernel.cuh, instantiated per dtype in sddmm_{f32,f16,bf16}.cu.
#include "cuda/sddmm/sddmm.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda/common/device_info.h"
#include "cuda/sddmm/sddmm_config.h"
#include "cuda/sddmm/sddmm_dense.h"
#include "cuda/sddmm/sddmm_launch.h"
#include "cuda/sddmm/sddmm_tc.h"

namespace sparse {
namespace {

// The kernel selection: one function, a heuristic per branch.
SddmmChoice SelectSddmmKernel(const SddmmProblem& p) {
  SddmmChoice ch;
  const int elem = DTypeBytes(p.dtype);
  // Vector width: the widest (16 bytes first) for which every row of L and R starts on a
  // vector boundary (k a multiple of the width, base addresses aligned); else narrower,
  // down to one element (residue handling for any K).
  const int widths_f32[] = {4, 1};
  const int widths_16[] = {8, 2, 1};
  const int* widths = p.dtype == DType::kF32 ? widths_f32 : widths_16;
  const int count = p.dtype == DType::kF32 ? 2 : 3;
  ch.vec_elems = 1;
  for (int i = 0; i < count; ++i) {
    const int w = widths[i];
    if (p.k % w == 0 && Aligned(p.lhs, w * elem) && Aligned(p.rhs, w * elem)) {
      ch.vec_elems = w;
      break;
    }
  }
  const int vectors = (p.k + ch.vec_elems - 1) / ch.vec_elems;
  if (vectors <= 8) {
    // Short K (k <= 32 in fp32, 64 in 16-bit): 8 lanes, L in registers. Narrower subwarps
    // would need more shuffles per output than they save.
    ch.threads_k = 8;
    ch.lhs_in_registers = true;
  } else if (vectors <= 16) {
    // Attention head dimensions such as 64 (fp32) or 128 (16-bit): one vector per lane.
    ch.threads_k = 16;
    ch.lhs_in_registers = true;
  } else {
    // Long K: a full warp across K; L streamed chunk by chunk unless it fits one chunk.
    ch.threads_k = 32;
    ch.lhs_in_registers = vectors <= 32;
  }
  return ch;
}

// The tensor-core kernel (sddmm_tc_kernel.cuh) computes the dense product of every tile
// and keeps the masked entries: it pays from this density (nnz / (m n)) up, on masks of at
// least kTcMinSide x kTcMinSide. Measured on the H200 (BENCHMARKS.md, v4): on the attention
// suite (2048-8192 square masks) 1.2-3.1x faster than the SIMT kernel at 50-90% sparsity,
// 0.8-0.9x at 95%; on the DLMC masks (up to 2048 x 2048, inner dimension 8-56) it lost to the
// SIMT kernel (0.65-1.6x cuSPARSE where the SIMT kernel averages 2.6x): too few rows and
// columns to fill the GPU with 128 x 256 tiles.
constexpr double kTcMinDensity = 0.08;
constexpr int kTcMinSide = 2048;

// SPARSE_SDDMM_VARIANT=simt|tc forces one kernel family where it can run (A/B runs of
// `sparse bench` without rebuilding); unset or "auto": the rule above.
bool UseTc(const SddmmProblem& p) {
  if (!SddmmTcCanRun(p)) return false;
  if (const char* forced = std::getenv("SPARSE_SDDMM_VARIANT")) {
    if (std::strcmp(forced, "simt") == 0) return false;
    if (std::strcmp(forced, "tc") == 0) return true;
  }
  if (p.m < kTcMinSide || p.n < kTcMinSide) return false;
  const double density = static_cast<double>(p.nnz) / (static_cast<double>(p.m) * p.n);
  return density >= kTcMinDensity;
}

// The dense-tile kernel (sddmm_dense_kernel.cuh, f32) computes every 32 x 128 tile of L * R^T
// that holds a nonzero and keeps the masked entries: m * n * k multiply-adds at register-tiled
// rate instead of nnz * k * 4 bytes of R through L2. With the H200's figures (about 30 TFLOP/s
// for such a tile loop, 10 TB/s of L2 for the SIMT kernel's R reads) the two cross at density
// 2 / 30 / (4 / 10) = 0.17; kDenseMinDensity is that crossing rounded up. It also needs a
// tile per SM (kDenseMinTilesPerSm): its tiles walk the whole K, and a mask of a few tiles
// (64 x 256 at K = 3136) leaves the GPU idle where the SIMT kernel splits the rows' runs.
// Checked on the H200 with both kernels forced on every DLMC mask: fitted on the sparsity
// levels 0.5/0.7/0.9/0.98 (1.81x cuSPARSE against 1.72x for the SIMT kernel alone), held-out
// levels 0.6/0.8/0.95 the same (1.81x); BENCHMARKS.md, v6.
constexpr double kDenseMinDensity = 0.2;
constexpr int kDenseMinTilesPerSm = 1;

bool UseDense(const SddmmProblem& p) {
  if (!SddmmDenseCanRun(p)) return false;
  if (const char* forced = std::getenv("SPARSE_SDDMM_VARIANT")) {
    if (std::strcmp(forced, "dense") == 0) return true;
    if (std::strcmp(forced, "simt") == 0 || std::strcmp(forced, "tc") == 0) return false;
  }
  const double density = p.m > 0 && p.n > 0 ? static_cast<double>(p.nnz) / (static_cast<double>(p.m) * p.n) : 0.0;
  const int64_t tiles = (static_cast<int64_t>(p.m) + kSddmmDenseRows - 1) / kSddmmDenseRows *
                        ((static_cast<int64_t>(p.n) + kSddmmDenseCols - 1) / kSddmmDenseCols);
  return density >= kDenseMinDensity && tiles >= static_cast<int64_t>(kDenseMinTilesPerSm) * SmCount();
}

}  // namespace

cudaError_t CanImplementSddmm(const SddmmProblem& p) {
  if (p.m < 0 || p.k < 0 || p.n < 0 || p.nnz < 0) return cudaErrorInvalidValue;
  if (p.nnz == 0) return cudaSuccess;  // nothing to write
  if (!p.row_offsets || !p.column_indices || !p.out) return cudaErrorInvalidValue;
  if (p.k > 0 && (!p.lhs || !p.rhs)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t CudaSddmm(const SddmmProblem& p, cudaStream_t stream) { return CudaSddmmPrepared(p, nullptr, stream); }

bool SddmmUsesChunkStarts(const SddmmProblem& p) { return UseTc(p) || UseDense(p); }

cudaError_t CudaSddmmPrepared(const SddmmProblem& p, const SddmmTcMask* mask, cudaStream_t stream) {
  const cudaError_t ok = CanImplementSddmm(p);
  if (ok != cudaSuccess) return ok;
  if (p.nnz == 0 || p.m == 0) return cudaSuccess;
  const bool tc = UseTc(p);
  if (tc || UseDense(p)) {
    auto launch = [&](const SddmmTcMask& m) { return tc ? LaunchSddmmTc(m, p, stream) : LaunchSddmmDense(m, p, stream); };
    if (mask && !mask->empty()) return launch(*mask);
    SddmmTcMask tmp;  // one-off call: build the chunk starts now, wait before freeing them
    cudaError_t e = tmp.Build(p, stream);
    if (e == cudaSuccess) e = launch(tmp);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  const SddmmChoice ch = SelectSddmmKernel(p);
  const int sms = SmCount();
  switch (p.dtype) {
    case DType::kF32:
      return LaunchSddmmF32(p, ch, sms, stream);
    case DType::kF16:
      return LaunchSddmmF16(p, ch, sms, stream);
    case DType::kBF16:
      return LaunchSddmmBF16(p, ch, sms, stream);
  }
  return cudaErrorInvalidValue;
}

const char* SddmmKernelName(const SddmmProblem& p) {
  thread_local char name[64];
  if (UseTc(p)) {
    std::snprintf(name, sizeof(name), "sddmm_%s_%s", DTypeName(p.dtype), SddmmTcName(p));
    return name;
  }
  if (UseDense(p)) {
    std::snprintf(name, sizeof(name), "sddmm_%s_dense_32x128", DTypeName(p.dtype));
    return name;
  }
  const SddmmChoice ch = SelectSddmmKernel(p);
  std::snprintf(name, sizeof(name), "sddmm_%s_v%d_t%d_r%d%s", DTypeName(p.dtype), ch.vec_elems, ch.threads_k,
                ch.NnzPerRun(), ch.lhs_in_registers ? "_lreg" : "");
  return name;
}

}  // namespace sparse
