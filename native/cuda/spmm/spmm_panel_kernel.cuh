#ifndef SPARSE_CUDA_SPMM_SPMM_PANEL_KERNEL_CUH_
#define SPARSE_CUDA_SPMM_SPMM_PANEL_KERNEL_CUH_
// The panel SpMM kernel (f32), C[M x N] = A[M x K, CSR] * B[K x N], for wide N: B reused
// through shared memory by the rows a block owns.
//
// Why: the tile and split kernels read one row segment of B per nonzero from L2, so their
// time is nnz * N * 4 bytes at the L2-to-SM bandwidth. On the H200 that is 9-13 TB/s
// effective, and the DLMC problems where Sputnik beat us (N of 1568-6272, 30-50% dense) sat
// exactly there (BENCHMARKS.md, v6). Here a block owns a panel of kRows rows and a strip of
// kCols columns and walks K in chunks of kChunk rows of B: each chunk's B tile is copied to
// shared memory once (cp.async, two stages) and read by every nonzero of the panel's rows
// that falls in it, so each B element crosses L2 once per panel instead of once per nonzero
// (kRows * density times less), and is then read at the shared-memory bandwidth.
//
// Layout of the work:
//   - grid (panels, strips); block of kWarps warps; warp w owns the panel's row slots
//     w, w + kWarps, ... (kRowsPerWarp of them; rows taken in row_indices order, longest first,
//     so the warps of a block get rows of similar length);
//   - each lane owns kVec consecutive columns of the strip (float2 or float4 accumulators per
//     row);
//   - a row's nonzeros are read 32 at a time into a register window (lane l holds nonzero
//     l of the window), with the next window already in flight; for each chunk the warp takes
//     the window's leading nonzeros whose column falls in the chunk (columns ascend in a CSR
//     row: a ballot finds where the chunk ends), broadcasts each value and column with a
//     shuffle and reads the lane's kVec floats of that B row from shared memory.
// Requires: f32; n % 4 == 0 and B 16-byte aligned (16-byte cp.async); columns ascending in
// each row (every valid CSR; a column out of order is skipped, never read out of bounds).
// Results: each output element is the sum of its row's products in column order, the same
// order as the other kernels' single-lane accumulation (fp32, no atomics, deterministic).
#include <climits>
#include <cstdint>
#include <type_traits>

#include "common/problems.h"
#include "cuda/common/cluster_launch.h"
#include "cuda/common/mma.cuh"

namespace sparse {
namespace cuda {

template <int kVec_, int kRowsPerWarp_>
struct PanelConfig {
  static constexpr int kWarps = 8;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kVec = kVec_;                   // floats of C per lane (2 or 4)
  static constexpr int kCols = 32 * kVec;              // width of the strip
  static constexpr int kRowsPerWarp = kRowsPerWarp_;   // rows per warp
  static constexpr int kRows = kWarps * kRowsPerWarp;  // rows per panel
  static constexpr int kChunk = 64;                    // rows of B per stage
  static constexpr int kStageFloats = kChunk * kCols;
  static constexpr int kSmemBytes = 2 * kStageFloats * 4;  // two stages
  // 16-byte pieces of one stage, and per thread.
  static constexpr int kPieces = kStageFloats / 4;
  static constexpr int kPiecesPerThread = kPieces / kThreads;
  static_assert(kVec == 2 || kVec == 4, "float2 or float4 per lane");
  static_assert(kRowsPerWarp >= 1 && kRowsPerWarp <= 8, "accumulators: kRowsPerWarp * kVec floats per lane");
  static_assert(kPieces % kThreads == 0, "every thread copies the same number of 16-byte pieces");
};

// Copies B rows [k0, k0 + kChunk) x columns [col0, col0 + kCols) into `stage` (row-major,
// kCols floats per row); pieces outside B are zero-filled (never read by a nonzero of A;
// the columns past n are computed and never stored).
template <typename Config>
__device__ __forceinline__ void PanelCopyStage(float* stage, const float* __restrict__ b, int k, int n, int k0,
                                               int col0) {
  constexpr int kPiecesPerRow = Config::kCols / 4;
#pragma unroll
  for (int i = 0; i < Config::kPiecesPerThread; ++i) {
    const int piece = threadIdx.x + i * Config::kThreads;
    const int r = piece / kPiecesPerRow;
    const int c4 = (piece % kPiecesPerRow) * 4;
    const bool ok = k0 + r < k && col0 + c4 < n;
    const float* src = ok ? b + static_cast<int64_t>(k0 + r) * n + col0 + c4 : b;
    CpAsync16(SmemAddr(stage + r * Config::kCols + c4), src, ok ? 16 : 0);
  }
}

template <int kVec>
struct PanelVector;
template <>
struct PanelVector<2> {
  using Type = float2;
};
template <>
struct PanelVector<4> {
  using Type = float4;
};

template <typename Config, typename IndexT>
__global__ void __launch_bounds__(Config::kThreads) SpmmPanelKernel(int m, int k, int n,
                                                                    const float* __restrict__ values,
                                                                    const IndexT* __restrict__ indices,
                                                                    const int* __restrict__ row_offsets,
                                                                    const int* __restrict__ row_indices,
                                                                    const float* __restrict__ b,
                                                                    float* __restrict__ c) {
  constexpr int kR = Config::kRowsPerWarp, kV = Config::kVec, kChunk = Config::kChunk;
  constexpr unsigned kFull = 0xffffffffu;
  constexpr int kNone = INT_MAX;  // the column of a window slot past the row's end
  using Vec = typename PanelVector<kV>::Type;
  extern __shared__ float4 panel_smem[];
  float* stages = reinterpret_cast<float*>(panel_smem);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int col0 = blockIdx.y * Config::kCols;

  // The warp's rows, and a window of 32 nonzeros per row (this lane: nonzero `lane` of the
  // window) with the next window in flight.
  int row[kR], pos[kR], end[kR], used[kR];
  int cur_col[kR], nxt_col[kR];
  float cur_val[kR], nxt_val[kR];
  float acc[kR][kV];
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int slot = blockIdx.x * Config::kRows + r * Config::kWarps + warp;
    row[r] = slot < m ? (row_indices ? __ldg(row_indices + slot) : slot) : -1;
    pos[r] = row[r] >= 0 ? __ldg(row_offsets + row[r]) : 0;
    end[r] = row[r] >= 0 ? __ldg(row_offsets + row[r] + 1) : 0;
    used[r] = 0;
    const int q = pos[r] + lane;
    cur_col[r] = q < end[r] ? static_cast<int>(__ldg(indices + q)) : kNone;
    cur_val[r] = q < end[r] ? __ldg(values + q) : 0.0f;
    nxt_col[r] = q + 32 < end[r] ? static_cast<int>(__ldg(indices + q + 32)) : kNone;
    nxt_val[r] = q + 32 < end[r] ? __ldg(values + q + 32) : 0.0f;
#pragma unroll
    for (int e = 0; e < kV; ++e) acc[r][e] = 0.0f;
  }

  const int chunks = (k + kChunk - 1) / kChunk;
  PanelCopyStage<Config>(stages, b, k, n, 0, col0);
  CpAsyncCommit();
  for (int ch = 0; ch < chunks; ++ch) {
    if (ch + 1 < chunks) PanelCopyStage<Config>(stages + ((ch + 1) & 1) * Config::kStageFloats, b, k, n, (ch + 1) * kChunk, col0);
    CpAsyncCommit();
    CpAsyncWait<1>();
    __syncthreads();
    const float* tile = stages + (ch & 1) * Config::kStageFloats + lane * kV;
    const int k0 = ch * kChunk, k1 = k0 + kChunk;
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      while (true) {
        // The window's slots from `used` on whose column is in this chunk: a prefix, as
        // columns ascend. A column below k0 (out of order) also ends it, and stays unread.
        const bool inside = cur_col[r] >= k0 && cur_col[r] < k1;
        const unsigned stop = __ballot_sync(kFull, !inside) & (kFull << used[r]);
        const int last = stop ? __ffs(stop) - 1 : 32;
        int j = used[r];
        for (; j + 4 <= last; j += 4) {
          float v[4];
          int o[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            v[u] = __shfl_sync(kFull, cur_val[r], j + u);
            o[u] = (__shfl_sync(kFull, cur_col[r], j + u) - k0) * Config::kCols;
          }
          Vec bv[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) bv[u] = *reinterpret_cast<const Vec*>(tile + o[u]);
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            const float* f = reinterpret_cast<const float*>(&bv[u]);
#pragma unroll
            for (int e = 0; e < kV; ++e) acc[r][e] = fmaf(v[u], f[e], acc[r][e]);
          }
        }
        for (; j < last; ++j) {
          const float v = __shfl_sync(kFull, cur_val[r], j);
          const int o = (__shfl_sync(kFull, cur_col[r], j) - k0) * Config::kCols;
          const Vec bv = *reinterpret_cast<const Vec*>(tile + o);
          const float* f = reinterpret_cast<const float*>(&bv);
#pragma unroll
          for (int e = 0; e < kV; ++e) acc[r][e] = fmaf(v, f[e], acc[r][e]);
        }
        if (last < 32) {
          used[r] = last;
          break;
        }
        // Window used up: the next one (already loaded) moves in, and the one after it is
        // requested.
        pos[r] += 32;
        used[r] = 0;
        cur_col[r] = nxt_col[r];
        cur_val[r] = nxt_val[r];
        const int q = pos[r] + 32 + lane;
        nxt_col[r] = q < end[r] ? static_cast<int>(__ldg(indices + q)) : kNone;
        nxt_val[r] = q < end[r] ? __ldg(values + q) : 0.0f;
        if (pos[r] >= end[r]) break;
      }
    }
    __syncthreads();  // the next iteration's copy overwrites this stage
  }
  CpAsyncWait<0>();

  const int col = col0 + lane * kV;
  if (col < n) {
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      if (row[r] < 0) continue;
      Vec out;
      float* f = reinterpret_cast<float*>(&out);
#pragma unroll
      for (int e = 0; e < kV; ++e) f[e] = acc[r][e];
      *reinterpret_cast<Vec*>(c + static_cast<int64_t>(row[r]) * n + col) = out;
    }
  }
}

template <typename Config, typename IndexT>
cudaError_t LaunchSpmmPanelConfig(const SpmmProblem& p, cudaStream_t stream) {
  auto kernel = SpmmPanelKernel<Config, IndexT>;
  const cudaError_t e = AllowMaxDynamicSmem(reinterpret_cast<const void*>(kernel));
  if (e != cudaSuccess) return e;
  const dim3 grid((p.m + Config::kRows - 1) / Config::kRows, (p.n + Config::kCols - 1) / Config::kCols);
  kernel<<<grid, Config::kThreads, Config::kSmemBytes, stream>>>(
      p.m, p.k, p.n, static_cast<const float*>(p.values), static_cast<const IndexT*>(p.column_indices),
      p.row_offsets, p.row_indices, static_cast<const float*>(p.b), static_cast<float*>(p.c));
  return cudaGetLastError();
}

template <int kVec, typename IndexT>
cudaError_t LaunchSpmmPanelRows(const SpmmProblem& p, int rows_per_warp, cudaStream_t stream) {
  switch (rows_per_warp) {
    case 1:
      return LaunchSpmmPanelConfig<PanelConfig<kVec, 1>, IndexT>(p, stream);
    case 2:
      return LaunchSpmmPanelConfig<PanelConfig<kVec, 2>, IndexT>(p, stream);
    case 4:
      return LaunchSpmmPanelConfig<PanelConfig<kVec, 4>, IndexT>(p, stream);
    case 8:
      return LaunchSpmmPanelConfig<PanelConfig<kVec, 8>, IndexT>(p, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_PANEL_KERNEL_CUH_
