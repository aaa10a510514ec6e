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

// Where a streaming kernel's block and warp work. Grid: x = row blocks * splits (clusters of
// `splits` along x), y = column blocks of 8 kNT8; block: kWB warps, warp w of row block r owns
// strips (r kWB + w) kMS + 0..kMS-1. g = lane / 4 and t = lane % 4 index the mma fragments.
struct StreamPosition {
  int lane, warp, g, t, split, row_block, strip0, n0;
};
template <int kWB, int kMS, int kNT8>
__device__ __forceinline__ StreamPosition StreamPositionOf(int splits) {
  StreamPosition p;
  p.lane = threadIdx.x & 31, p.warp = threadIdx.x >> 5;
  p.g = p.lane >> 2, p.t = p.lane & 3;
  p.split = blockIdx.x % splits;
  p.row_block = blockIdx.x / splits;
  p.strip0 = (p.row_block * kWB + p.warp) * kMS;
  p.n0 = blockIdx.y * (8 * kNT8);
  return p;
}
// The units [*u0, *u1) of `units` (k-steps, k-tiles) that split `split` of `splits` reduces.
__device__ __forceinline__ void SplitUnits(int units, int split, int splits, int* u0, int* u1) {
  *u0 = static_cast<int>(static_cast<int64_t>(units) * split / splits);
  *u1 = static_cast<int>(static_cast<int64_t>(units) * (split + 1) / splits);
}

template <int kNT8>
struct BSlice {
  // 8 kNT8 halves per row, padded to an odd number of 16-byte chunks (ldmatrix.trans reads
  // 8 rows of one chunk: odd strides are conflict-free).
  static constexpr int kChunks = (kNT8 & 1) ? kNT8 : kNT8 + 1;
  static constexpr int kBytes = kStreamStageK * kChunks * 16;
};

// How a stage copies B: 16-byte cp.async (n % 8 == 0, B 16-byte aligned), one element at a
// time (any n), or, for n == 1 (decode), the 64 contiguous elements of the slice as a vector
// (B 16-byte aligned): the kernels then build B fragments from it with 32-bit loads.
enum BMode : int { kBVec = 0, kBScalar = 1, kBColumn = 2 };

// Stages B rows [k0, k0 + 64) x columns [n0, n0 + 8 kNT8) into `dst` (zeros past k and n).
// Every thread of the block takes part.
template <int kNT8, int kThreads>
__device__ __forceinline__ void StageB(unsigned char* dst, const unsigned short* b, int k, int n, int k0, int n0,
                                      int mode) {
  using S = BSlice<kNT8>;
  if (mode == kBColumn) {
    // 8 chunks of 8 rows; a chunk past k is zero-filled, a partial one read as elements.
    for (int q = threadIdx.x; q < kStreamStageK / 8; q += kThreads) {
      const int krow = k0 + q * 8;
      unsigned char* d = dst + q * 16;
      if (krow + 8 <= k) {
        CpAsync16(SmemAddr(d), b + krow, 16);
      } else {
        unsigned short v[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = krow + e < k ? b[krow + e] : static_cast<unsigned short>(0);
        *reinterpret_cast<uint4*>(d) = *reinterpret_cast<const uint4*>(v);
      }
    }
    return;
  }
  for (int q = threadIdx.x; q < kStreamStageK * kNT8; q += kThreads) {
    const int r = q / kNT8, ch = q % kNT8;
    const int krow = k0 + r, col = n0 + ch * 8;
    unsigned char* d = dst + (r * S::kChunks + ch) * 16;
    if (mode == kBVec) {
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

// A B-fragment register for n == 1 (kBColumn): rows kk, kk + 1 of the staged column, for the
// lanes of column 0 (g == 0); zero elsewhere.
__device__ __forceinline__ uint32_t ColumnPair(const unsigned char* stage, int kk, int g) {
  return g == 0 ? *reinterpret_cast<const uint32_t*>(stage + 2 * kk) : 0u;
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

// The epilogue: the warp's accumulators for its kMS strips (mma layout: lane (g, t) holds
// rows g, g + 8 and columns 8 j + 2 t, + 1 of column tile j) are C rows (row_block * kWB *
// kMS + warp * kMS + ms) * 16 + ... Without a split, the warp stores them; with `splits` > 1
// (a cluster of that many blocks along K), every block parks its partial tile in shared
// memory (aliasing the stages: the caller has finished them) and block `split` sums rows
// [split R / S, (split + 1) R / S) of all partials in rank order. All threads of the block
// must call it.
template <DType kType, int kWB, int kMS, int kNT8>
__device__ __forceinline__ void StoreOrReduce(unsigned char* smem, const float (&acc)[kMS][kNT8][4], void* c, int m,
                                              int n, int row_block, int n0, int split, int splits) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  constexpr int kRows = kWB * kMS * 16;
  if (splits == 1) {
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
      for (int j = 0; j < kNT8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          StorePair<kType>(c, m, n, row_block * kRows + (warp * kMS + ms) * 16 + g + 8 * h, n0 + j * 8 + 2 * t,
                           acc[ms][j][2 * h], acc[ms][j][2 * h + 1]);
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int kCols = 8 * kNT8;
  cg::cluster_group cluster = cg::this_cluster();
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
    for (int j = 0; j < kNT8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(red + ((warp * kMS + ms) * 16 + g + 8 * h) * kCols + j * 8 + 2 * t) =
            make_float2(acc[ms][j][2 * h], acc[ms][j][2 * h + 1]);
  cluster.sync();
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
template <int kWB, int kMS, int kNT8>
constexpr int ReduceBytes() {
  return kWB * kMS * 16 * kNT8 * 8 * 4;
}

// Whether every accumulator of the warp's strip is finite (all lanes agree).
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
