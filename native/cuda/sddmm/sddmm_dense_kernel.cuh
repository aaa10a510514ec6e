#ifndef SPARSE_CUDA_SDDMM_SDDMM_DENSE_KERNEL_CUH_
#define SPARSE_CUDA_SDDMM_SDDMM_DENSE_KERNEL_CUH_
// The dense-tile SDDMM kernel (f32): out[nnz] = (L[M x K] * R[N x K]^T) at the nonzeros of
// A[M x N], for dense-enough masks.
//
// Why: the SIMT kernel (sddmm_kernel.cuh) reads a K-long row of R per nonzero, nnz * K * 4
// bytes through L2; on masks of 30-50% density at K = 200-392 (ResNet-50's last blocks) that
// was 0.6x cuSPARSE on the H200 (BENCHMARKS.md, v6), which reuses R across rows. Here a block
// computes the dense 32 x 128 tile of L * R^T with register tiling (each thread 4 x 8 outputs,
// operands staged through shared memory 16 columns of K at a time, the next slice prefetched
// into registers), skips tiles whose rows have no nonzero in the tile's 256-column chunk, and
// writes the masked entries: each R element is read once per 32 rows, each L element once per
// 128 columns.
// Requires: k % 4 == 0 and L, R 16-byte aligned (16-byte loads); the mask's chunk starts
// (common/tc_tiles.h, kTcSddmmChunk = 256 columns), built once per mask (SddmmTcMask).
// Each output is the fp32 dot product in K order, as the SIMT kernel's lane partial sums are
// not: results agree to rounding, and are deterministic.
#include <cstdint>

#include "common/tc_tiles.h"
#include "cuda/sddmm/sddmm_dense.h"

namespace sparse {
namespace cuda {

struct SddmmDenseTile {
  static constexpr int kRows = kSddmmDenseRows, kCols = kSddmmDenseCols, kK = 16, kThreads = 128;
  static_assert(kRows == 32 && kCols == 128, "the thread layout below: 8 x 16 threads of 4 x 8 outputs");
  static constexpr int kLdL = kRows + 4, kLdR = kCols + 4, kLdS = kCols + 4;  // padded strides
  static_assert(kTcSddmmChunk % kCols == 0, "a tile lies inside one chunk of the starts");
};

// Grid: (ceil(n / 128), ceil(m / 32)); block: 128 threads.
__global__ void __launch_bounds__(SddmmDenseTile::kThreads)
    SddmmDenseKernel(int m, int k, int n, int chunks, const int* __restrict__ starts,
                     const int* __restrict__ column_indices, const float* __restrict__ lhs,
                     const float* __restrict__ rhs, float* __restrict__ out) {
  using T = SddmmDenseTile;
  __shared__ __align__(16) float ls[T::kK][T::kLdL];
  __shared__ __align__(16) float rs[T::kK][T::kLdR];
  __shared__ __align__(16) float tile[T::kRows][T::kLdS];
  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * T::kRows, n0 = blockIdx.x * T::kCols;
  const int chunk = n0 / kTcSddmmChunk;

  // A tile whose rows have no nonzero in its chunk writes nothing: skip it.
  bool some = false;
  if (tid < T::kRows && m0 + tid < m) {
    const int* s = starts + static_cast<int64_t>(m0 + tid) * (chunks + 1) + chunk;
    some = s[1] > s[0];
  }
  if (!__syncthreads_or(some)) return;

  // Loads: L tile 32 rows x 16 k (one float4 per thread), R tile 128 rows x 16 k (four).
  const int l_row = tid / 4, kq = (tid % 4) * 4;
  float4 lv, rv[4];
  auto load = [&](int k0) {
    const bool lk = m0 + l_row < m && k0 + kq < k;
    lv = lk ? *reinterpret_cast<const float4*>(lhs + static_cast<int64_t>(m0 + l_row) * k + k0 + kq)
            : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = l_row + 32 * i;
      const bool ok = n0 + r < n && k0 + kq < k;
      rv[i] = ok ? *reinterpret_cast<const float4*>(rhs + static_cast<int64_t>(n0 + r) * k + k0 + kq)
                 : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  auto store = [&]() {
    ls[kq][l_row] = lv.x, ls[kq + 1][l_row] = lv.y, ls[kq + 2][l_row] = lv.z, ls[kq + 3][l_row] = lv.w;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = l_row + 32 * i;
      rs[kq][r] = rv[i].x, rs[kq + 1][r] = rv[i].y, rs[kq + 2][r] = rv[i].z, rs[kq + 3][r] = rv[i].w;
    }
  };

  // Each thread: rows ty*4 .. +4, columns tx*4 .. +4 and 64 + tx*4 .. +4.
  const int ty = tid / 16, tx = tid % 16;
  float acc[4][8];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  load(0);
  for (int k0 = 0; k0 < k; k0 += T::kK) {
    store();
    __syncthreads();
    if (k0 + T::kK < k) load(k0 + T::kK);  // in flight during the multiply-adds
#pragma unroll
    for (int kk = 0; kk < T::kK; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(&ls[kk][ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&rs[kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&rs[kk][64 + tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();  // the next store overwrites the operands
  }

  // The dense tile to shared memory, then each warp writes its rows' masked entries.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    *reinterpret_cast<float4*>(&tile[ty * 4 + i][tx * 4]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(&tile[ty * 4 + i][64 + tx * 4]) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
  __syncthreads();
  const int warp = tid / 32, lane = tid % 32;
  for (int r = warp; r < T::kRows; r += T::kThreads / 32) {
    if (m0 + r >= m) break;
    const int* s = starts + static_cast<int64_t>(m0 + r) * (chunks + 1) + chunk;
    const int end = s[1];
    for (int j = s[0] + lane; j < end; j += 32) {
      const int col = __ldg(column_indices + j);
      if (col >= n0 && col < n0 + T::kCols) out[j] = tile[r][col - n0];
    }
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_DENSE_KERNEL_CUH_
