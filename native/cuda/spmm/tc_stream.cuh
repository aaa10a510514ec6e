#ifndef SPARSE_CUDA_SPMM_TC_STREAM_CUH_
#define SPARSE_CUDA_SPMM_TC_STREAM_CUH_
// The block-level stages shared by the streaming tensor-core SpMM kernels (bitmap and 2:4):
// a block is kWB warps, one 16-row strip each, over one range of K (split-K over the blocks
// of a thread-block cluster); per stage of 64 rows of K the block stages B's slice (64 x 8
// kNT8 columns) in shared memory and every warp its own part of A; the partial C tiles are
// reduced across the cluster through distributed shared memory in rank order
// (deterministic). Device code only.
#include <cooperative_groups.h>

#include <cstdint>

#include "common/dtype.h"
#include "cuda/common/mma.cuh"

namespace sparse {
namespace cuda {

// Rows of K per pipeline stage.
constexpr int kStreamStageK = 64;

template <int kNT8>
struct BSlice {
  // 8 kNT8 halves per row, padded to an odd number of 16-byte chunks (ldmatrix.trans reads
  // 8 rows of one chunk: odd strides are conflict-free).
  static constexpr int kChunks = (kNT8 & 1) ? kNT8 : kNT8 + 1;
  static constexpr int kBytes = kStreamStageK * kChunks * 16;
};

// Stages B rows [k0, k0 + 64) x columns [n0, n0 + 8 kNT8) into `dst` (zeros past k and n).
// `vec`: n % 8 == 0 and B 16-byte aligned (cp.async); otherwise element loads. Every thread of
// the block takes part.
template <int kNT8, int kThreads>
__device__ __forceinline__ void StageB(unsigned char* dst, const unsigned short* b, int k, int n, int k0, int n0,
                                      bool vec) {
  using S = BSlice<kNT8>;
  for (int q = threadIdx.x; q < kStreamStageK * kNT8; q += kThreads) {
    const int r = q / kNT8, ch = q % kNT8;
    const int krow = k0 + r, col = n0 + ch * 8;
    unsigned char* d = dst + (r * S::kChunks + ch) * 16;
    if (vec) {
      const bool ok = krow < k && col < n;
      CpAsync16(SmemAddr(d), ok ? static_cast<const void*>(b + static_cast<int64_t>(krow) * n + col) : b, ok ? 16 : 0);
    } else {
      unsigned short v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e)
        v[e] = (krow < k && col + e < n) ? b[static_cast<int64_t>(krow) * n + col + e] : static_cast<unsigned short>(0);
      *reinterpret_cast<uint4*>(d) = *reinterpret_cast<const uint4*>(v);
    }
  }
}

// Writes C[row][col], C[row][col + 1] (those inside m x n).
template <DType kType>
__device__ __forceinline__ void StorePair(void* c, int m, int n, int row, int col, float x, float y) {
  if (row >= m || col >= n) return;
  unsigned short* c16 = static_cast<unsigned short*>(c) + static_cast<int64_t>(row) * n + col;
  if (col + 1 < n && (reinterpret_cast<uintptr_t>(c16) & 3) == 0) {
    *reinterpret_cast<uint32_t*>(c16) = PackOut<kType>(x, y);
  } else {
    c16[0] = NarrowBits<kType>(x);
    if (col + 1 < n) c16[1] = NarrowBits<kType>(y);
  }
}

// The epilogue: the warp's accumulators (mma layout: lane (g, t) holds rows g, g + 8 and
// columns 8 j + 2 t, + 1 of column tile j) are C rows strip * 16 + ... Without a split, the
// warp stores them; with `splits` > 1 (a cluster of that many blocks along K), every block
// parks its partial tile in shared memory (aliasing the stages: the caller has finished
// them) and block `split` sums rows [split R / S, (split + 1) R / S) of all partials in rank
// order. All threads of the block must call it.
template <DType kType, int kWB, int kNT8>
__device__ __forceinline__ void StoreOrReduce(unsigned char* smem, const float (&acc)[kNT8][4], void* c, int m, int n,
                                              int row_block, int n0, int split, int splits) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  if (splits == 1) {
    const int strip_row = (row_block * kWB + warp) * 16;
#pragma unroll
    for (int j = 0; j < kNT8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        StorePair<kType>(c, m, n, strip_row + g + 8 * h, n0 + j * 8 + 2 * t, acc[j][2 * h], acc[j][2 * h + 1]);
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int kCols = 8 * kNT8;
  cg::cluster_group cluster = cg::this_cluster();
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int j = 0; j < kNT8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      *reinterpret_cast<float2*>(red + (warp * 16 + g + 8 * h) * kCols + j * 8 + 2 * t) =
          make_float2(acc[j][2 * h], acc[j][2 * h + 1]);
  cluster.sync();
  constexpr int kRows = kWB * 16;
  const int r0 = kRows * split / splits, r1 = kRows * (split + 1) / splits;
  const int pairs = (r1 - r0) * (kCols / 2);
  for (int q = threadIdx.x; q < pairs; q += 32 * kWB) {
    const int r = r0 + q / (kCols / 2);
    const int cc = (q % (kCols / 2)) * 2;
    float2 sum = make_float2(0.f, 0.f);
    for (int rank = 0; rank < splits; ++rank) {
      const float2 v = *reinterpret_cast<const float2*>(cluster.map_shared_rank(red + r * kCols + cc, rank));
      sum.x += v.x;
      sum.y += v.y;
    }
    StorePair<kType>(c, m, n, row_block * kRows + r, n0 + cc, sum.x, sum.y);
  }
  cluster.sync();  // no block leaves while another still reads its shared memory
#else
  __trap();  // splits > 1 needs clusters (sm_90); the host never launches it elsewhere
#endif
}

// Bytes of the cluster reduction's partial tile.
template <int kWB, int kNT8>
constexpr int ReduceBytes() {
  return kWB * 16 * kNT8 * 8 * 4;
}

// Whether every accumulator of the warp is finite (all lanes agree).
template <int kNT8>
__device__ __forceinline__ bool WarpAllFinite(const float (&acc)[kNT8][4]) {
  bool finite = true;
#pragma unroll
  for (int j = 0; j < kNT8; ++j)
#pragma unroll
    for (int q = 0; q < 4; ++q) finite = finite && isfinite(acc[j][q]);
  return __all_sync(0xffffffffu, finite);
}

// Adds v * B[kcol][cols of this lane] to the accumulators of row half h (exact paths).
template <DType kType, int kNT8>
__device__ __forceinline__ void AccumulateExact(float (&acc)[kNT8][4], const unsigned short* b, int n, int n0, int t,
                                                int h, int kcol, float v) {
  const int64_t brow = static_cast<int64_t>(kcol) * n;
#pragma unroll
  for (int j = 0; j < kNT8; ++j) {
    const int col = n0 + j * 8 + 2 * t;
    if (col < n) acc[j][2 * h] += v * Widen<kType>(b[brow + col]);
    if (col + 1 < n) acc[j][2 * h + 1] += v * Widen<kType>(b[brow + col + 1]);
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_TC_STREAM_CUH_
