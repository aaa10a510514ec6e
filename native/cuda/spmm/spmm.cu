// SpMM host side: CanImplementSpmm, the kernel selection, and CudaSpmm.
// The kernel itself is in spmm_kernel.cuh (stages: sparse_tile.cuh, compute.cuh,
// output_tile.cuh), instantiated per dtype in spmm_{f32,f16,bf16}.cu.
#include "cuda/spmm/spmm.h"

#include <climits>
#include <cstdint>
#include <cstdio>

#include "cuda/spmm/spmm_config.h"
#include "cuda/spmm/spmm_launch.h"

namespace sparse {
namespace {

bool Aligned(const void* p, int bytes) { return (reinterpret_cast<uintptr_t>(p) % bytes) == 0; }

int NextPow2(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// The kernel selection: one function, a heuristic per branch. (Issue 5 adds a table of
// tuned shapes measured by `sparse bench --tune` in front of it.)
SpmmChoice SelectSpmmKernel(const SpmmProblem& p) {
  SpmmChoice ch;
  const int elem = DTypeBytes(p.dtype);
  // Vector width: the widest (16 bytes first) for which every row of B and C starts on a
  // vector boundary (n a multiple of the width, base addresses aligned). Otherwise a
  // narrower width: half2 for 16-bit types, then one element (residue handling for any N).
  const int widths_f32[] = {4, 1};
  const int widths_16[] = {8, 2, 1};
  const int* widths = p.dtype == DType::kF32 ? widths_f32 : widths_16;
  const int count = p.dtype == DType::kF32 ? 2 : 3;
  ch.vec_elems = 1;
  for (int i = 0; i < count; ++i) {
    const int w = widths[i];
    if (p.n % w == 0 && Aligned(p.b, w * elem) && Aligned(p.c, w * elem)) {
      ch.vec_elems = w;
      break;
    }
  }
  const int vectors = (p.n + ch.vec_elems - 1) / ch.vec_elems;
  if (vectors > 32) {
    // Wide rows: a full warp per strip and two vectors per thread, so each staged sparse
    // tile feeds 64 vectors of B per nonzero (amortising the staging) and every thread
    // keeps 2 x kUnrollK 16-byte loads in flight.
    ch.threads_x = 32;
    ch.vecs_x = 2;
  } else {
    // Narrow rows (small N): subwarp tiling. The subwarp is as wide as the row needs (at
    // least 2 lanes), so one subwarp covers the whole row, the sparse row is read once,
    // and 32 / threads_x rows share a warp instead of idling lanes.
    ch.threads_x = NextPow2(vectors < 2 ? 2 : vectors);
    ch.vecs_x = 1;
  }
  return ch;
}

int SmCount() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 1;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) return 1;
  return sms;
}

}  // namespace

cudaError_t CanImplementSpmm(const SpmmProblem& p) {
  if (p.m < 0 || p.k < 0 || p.n < 0 || p.nnz < 0) return cudaErrorInvalidValue;
  if (p.index_bits != 16 && p.index_bits != 32) return cudaErrorInvalidValue;
  // 16-bit indices hold columns 0..32767.
  if (p.index_bits == 16 && p.k > 32768) return cudaErrorInvalidValue;
  if (p.m == 0 || p.n == 0) return cudaSuccess;  // nothing to write
  if (!p.row_offsets || !p.c) return cudaErrorInvalidValue;
  if (p.nnz > 0 && (!p.values || !p.column_indices || !p.b)) return cudaErrorInvalidValue;
  // Reverse offset memory alignment assumes 16-byte aligned value and index arrays
  // (cudaMalloc gives 256 bytes).
  if (!Aligned(p.values, 16) || !Aligned(p.column_indices, 16)) return cudaErrorInvalidValue;
  // Pre-scaled offsets (column * n) are int32.
  if (static_cast<int64_t>(p.k) * p.n > INT_MAX) return cudaErrorInvalidValue;
  const SpmmChoice ch = SelectSpmmKernel(p);
  if ((p.n + ch.BlockItemsX() - 1) / ch.BlockItemsX() > 65535) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream) {
  const cudaError_t ok = CanImplementSpmm(p);
  if (ok != cudaSuccess) return ok;
  if (p.m == 0 || p.n == 0) return cudaSuccess;
  const SpmmChoice ch = SelectSpmmKernel(p);
  const int sms = SmCount();
  switch (p.dtype) {
    case DType::kF32:
      return LaunchSpmmF32(p, ch, sms, stream);
    case DType::kF16:
      return LaunchSpmmF16(p, ch, sms, stream);
    case DType::kBF16:
      return LaunchSpmmBF16(p, ch, sms, stream);
  }
  return cudaErrorInvalidValue;
}

const char* SpmmKernelName(const SpmmProblem& p) {
  thread_local char name[64];
  const SpmmChoice ch = SelectSpmmKernel(p);
  std::snprintf(name, sizeof(name), "spmm_%s_i%d_v%d_t%d_x%d", DTypeName(p.dtype), p.index_bits, ch.vec_elems,
                ch.threads_x, ch.vecs_x);
  return name;
}

}  // namespace sparse
