#ifndef SPARSE_CUDA_SPMM_SPMM_SPLIT_KERNEL_CUH_
#define SPARSE_CUDA_SPMM_SPMM_SPLIT_KERNEL_CUH_
// The split-row SpMM kernel, C[M x N] = A[M x K, CSR] * B[K x N], for narrow strips of C
// (small N) and long rows: the "tile" kernel (spmm_kernel.cuh) gives a row to kThreadsX
// lanes that walk its nonzeros one after another, so with N = 16 (two 16-byte vectors of
// f16) two lanes do all the work of a 1000-nonzero row serially while the GPU sits idle.
// Here the row's nonzeros are split as well (split-K over the row):
//   - a warp owns one strip of kTX * kVE columns of one row; its 32 lanes form kS = 32 / kTX
//     slices of kTX lanes; slice s takes the nonzeros s, s + kS, s + 2 kS, ... of each step,
//     each lane accumulating its kVE columns for its nonzeros in fp32 registers;
//   - kW warps may share one row (warp w takes steps w, w + kW, ...), for rows so long or
//     matrices so short that one warp per row leaves SMs idle;
//   - the partial sums are reduced deterministically: a shuffle butterfly over the slices,
//     then (kW > 1) through shared memory by warp 0, in a fixed order. No atomics.
// Sputnik's techniques, and which survive here:
//   - row swizzle: warps take rows in row_indices order (longest first), as in the tile kernel;
//   - index pre-scaling: each column index is turned into its B row offset (index * n) once,
//     when it is loaded, not once per use;
//   - values and indices are staged through registers and warp shuffles instead of shared
//     memory: each lane loads one (coalesced, scalar) nonzero per 32 of a step and the
//     slices fetch theirs with __shfl_sync. Reverse offset memory alignment is not needed
//     here because no lane issues a vector load of the sparse row (a warp's 32 scalar loads
//     are one or two 128-byte transactions wherever the row starts);
//   - residue handling: a step that runs past the row end predicates the multiply-add of
//     every missing nonzero away (it is skipped, never multiplied by zero, so an Inf or NaN
//     in a row of B that the row does not reference cannot leak in); columns past n (when the
//     strip overhangs C) compute on column 0 and are never stored.
#include <cstdint>
#include <type_traits>

#include "common/problems.h"
#include "cuda/common/vector.cuh"
#include "cuda/spmm/spmm_launch.h"

namespace sparse {
namespace cuda {

template <DType kType_, int kIndexBits_, int kVE_, int kTX_, int kW_, int kU_ = 8>
struct SplitConfig {
  static constexpr DType kType = kType_;
  static constexpr int kIndexBits = kIndexBits_;
  static constexpr int kVE = kVE_;  // elements of B/C per vector memory instruction
  static constexpr int kTX = kTX_;  // lanes across the strip
  static constexpr int kW = kW_;    // warps per row
  static constexpr int kS = 32 / kTX;  // slices of the warp over the row's nonzeros
  // Nonzeros per lane per step: kU independent vector loads of B in flight per lane (8, or
  // 16 for the deep "_u16" variants).
  static constexpr int kU = kU_;
  // Nonzeros per warp per step, and the (scalar) value/index loads per lane to stage them.
  static constexpr int kP = kU * kS;
  static constexpr int kL = (kP + 31) / 32;
  static constexpr int kStripCols = kTX * kVE;
  static_assert(kTX >= 1 && kTX <= 32 && 32 % kTX == 0, "a slice is a power-of-two slice of the warp");
  static_assert(kW == 1 || kW == 2 || kW == 4, "one, two or four warps per row");
  static_assert(kP % 32 == 0 || kP < 32, "a step is whole rounds of 32 staged nonzeros, or part of one");
};

// Grid: x over groups of blockDim.z rows, y over strips of kStripCols columns.
// Block: (32, kW, rows per block). Dynamic shared memory (kW > 1 only): rows * (kW - 1) *
// kStripCols floats for the partial sums of warps 1..kW-1.
template <typename Config, typename T, typename IndexT>
__global__ void __launch_bounds__(128) SpmmSplitKernel(int m, int n, const T* __restrict__ values,
                                                       const IndexT* __restrict__ indices,
                                                       const int* __restrict__ row_offsets,
                                                       const int* __restrict__ row_indices, const T* __restrict__ b,
                                                       T* __restrict__ c) {
  constexpr int kVE = Config::kVE, kTX = Config::kTX, kS = Config::kS, kU = Config::kU, kP = Config::kP,
                kL = Config::kL, kW = Config::kW;
  constexpr unsigned kFull = 0xffffffffu;
  extern __shared__ float partials[];
  const int lane = threadIdx.x;
  const int warp = threadIdx.y;
  const int slot = blockIdx.x * blockDim.z + threadIdx.z;
  const int slice = lane / kTX;
  const int col = blockIdx.y * Config::kStripCols + (lane % kTX) * kVE;
  const bool col_in = col < n;
  const int col_safe = col_in ? col : 0;  // residue in N: compute on column 0, never stored

  float acc[kVE];
#pragma unroll
  for (int e = 0; e < kVE; ++e) acc[e] = 0.0f;

  const bool row_in = slot < m;
  int row = 0;
  // NOTE: whole warps (and whole rows of kW warps) take the same branches below, so the
  // full-warp shuffles are safe; a block's spare row slots (slot >= m) still reach the
  // __syncthreads of the reduction.
  if (row_in) {
    // Row swizzle (Sputnik): rows in row_indices order, longest first.
    row = row_indices ? __ldg(row_indices + slot) : slot;
    const int row_start = __ldg(row_offsets + row);
    const int row_end = __ldg(row_offsets + row + 1);
    for (int base = row_start + warp * kP; base < row_end; base += kW * kP) {
      // Stage the step's kP nonzeros in registers: lane l holds nonzeros base + l + 32 i.
      float v[kL];
      int off[kL];
#pragma unroll
      for (int i = 0; i < kL; ++i) {
        const int q = i * 32 + lane;
        const bool in = (kP >= 32 || q < kP) && base + q < row_end;
        v[i] = in ? ToFloat(__ldg(values + base + q)) : 0.0f;
        // Index pre-scaling: the offset of the B row, once per nonzero.
        off[i] = in ? static_cast<int>(__ldg(indices + base + q)) * n : 0;
      }
      // Nonzero u of this lane's slice is step position u * kS + slice, held by lane
      // (u * kS) % 32 + slice in register (u * kS) / 32 (a compile-time index: kS divides 32).
      float vu[kU];
      int ou[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        vu[u] = __shfl_sync(kFull, v[(u * kS) / 32], (u * kS) % 32 + slice);
        ou[u] = __shfl_sync(kFull, off[(u * kS) / 32], (u * kS) % 32 + slice);
      }
      if (base + kP <= row_end) {
        // A full step: kU independent 16-byte loads of B issued before their multiply-adds.
        Vector<T, kVE> bv[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) bv[u] = LoadVector<T, kVE>(b + ou[u] + col_safe);
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          float bf[kVE];
          ToFloats(bv[u], bf);
#pragma unroll
          for (int e = 0; e < kVE; ++e) acc[e] = fmaf(vu[u], bf[e], acc[e]);
        }
      } else {
        // The row's last step: nonzeros past the row end are skipped (predicated), not
        // multiplied by zero.
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          if (base + u * kS + slice < row_end) {
            float bf[kVE];
            ToFloats(LoadVector<T, kVE>(b + ou[u] + col_safe), bf);
#pragma unroll
            for (int e = 0; e < kVE; ++e) acc[e] = fmaf(vu[u], bf[e], acc[e]);
          }
        }
      }
    }
  }
  // Reduce over the slices of the warp (butterfly over lanes kTX, 2 kTX, ... apart):
  // afterwards the lanes of slice 0 hold the warp's sums.
#pragma unroll
  for (int o = kTX; o < 32; o <<= 1) {
#pragma unroll
    for (int e = 0; e < kVE; ++e) acc[e] += __shfl_xor_sync(kFull, acc[e], o);
  }
  if constexpr (kW > 1) {
    // Warps 1..kW-1 of the row hand their sums to warp 0 through shared memory; warp 0
    // adds them in warp order (deterministic).
    float* mine = partials + threadIdx.z * (kW - 1) * Config::kStripCols;
    if (warp > 0 && slice == 0) {
#pragma unroll
      for (int e = 0; e < kVE; ++e) mine[(warp - 1) * Config::kStripCols + lane * kVE + e] = acc[e];
    }
    __syncthreads();
    if (warp == 0 && slice == 0) {
#pragma unroll
      for (int w = 1; w < kW; ++w) {
#pragma unroll
        for (int e = 0; e < kVE; ++e) acc[e] += mine[(w - 1) * Config::kStripCols + lane * kVE + e];
      }
    }
  }
  if (row_in && warp == 0 && slice == 0 && col_in) {
    StoreVector<T, kVE>(c + static_cast<int64_t>(row) * n + col, FromFloats<T, kVE>(acc));
  }
}

template <typename Config>
cudaError_t LaunchSpmmSplitConfig(const SpmmProblem& p, int sm_count, cudaStream_t stream) {
  using T = typename ElementOf<Config::kType>::Type;
  using IndexT = std::conditional_t<Config::kIndexBits == 16, int16_t, int>;
  const int strips = (p.n + Config::kStripCols - 1) / Config::kStripCols;
  // 128 threads per block: 4 / kW rows of kW warps; fewer rows per block (down to one) when
  // the grid would otherwise give fewer than about two blocks per SM.
  int rows = 4 / Config::kW;
  while (rows > 1 && static_cast<int64_t>((p.m + rows - 1) / rows) * strips < 2 * sm_count) rows /= 2;
  const dim3 block(32, Config::kW, rows);
  const dim3 grid((p.m + rows - 1) / rows, strips);
  const size_t smem = Config::kW > 1 ? sizeof(float) * rows * (Config::kW - 1) * Config::kStripCols : 0;
  SpmmSplitKernel<Config, T, IndexT><<<grid, block, smem, stream>>>(
      p.m, p.n, static_cast<const T*>(p.values), static_cast<const IndexT*>(p.column_indices), p.row_offsets,
      p.row_indices, static_cast<const T*>(p.b), static_cast<T*>(p.c));
  return cudaGetLastError();
}

// The instantiated split shapes: every slice width with kW in {1, 2, 4} for the full
// 16-byte vector; kW = 1 only for the narrower residue widths (odd N, rare).
template <DType kType, int kIndexBits, int kVec, int kW, int kU = 8>
cudaError_t LaunchSpmmSplitTX(const SpmmProblem& p, const SpmmChoice& ch, int sm_count, cudaStream_t stream) {
  switch (ch.threads_x) {
    case 2:
      return LaunchSpmmSplitConfig<SplitConfig<kType, kIndexBits, kVec, 2, kW, kU>>(p, sm_count, stream);
    case 4:
      return LaunchSpmmSplitConfig<SplitConfig<kType, kIndexBits, kVec, 4, kW, kU>>(p, sm_count, stream);
    case 8:
      return LaunchSpmmSplitConfig<SplitConfig<kType, kIndexBits, kVec, 8, kW, kU>>(p, sm_count, stream);
    case 16:
      return LaunchSpmmSplitConfig<SplitConfig<kType, kIndexBits, kVec, 16, kW, kU>>(p, sm_count, stream);
    case 32:
      return LaunchSpmmSplitConfig<SplitConfig<kType, kIndexBits, kVec, 32, kW, kU>>(p, sm_count, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

template <DType kType, int kIndexBits, int kVec>
cudaError_t LaunchSpmmSplit(const SpmmProblem& p, const SpmmChoice& ch, int sm_count, cudaStream_t stream) {
  constexpr int kFull = kType == DType::kF32 ? 4 : 8;
  if constexpr (kVec == kFull) {
    if (ch.unroll == 16) {
      // The deep variants: f32 only, one or two warps per row.
      if constexpr (kType == DType::kF32) {
        if (ch.warps_per_row == 1) return LaunchSpmmSplitTX<kType, kIndexBits, kVec, 1, 16>(p, ch, sm_count, stream);
        if (ch.warps_per_row == 2) return LaunchSpmmSplitTX<kType, kIndexBits, kVec, 2, 16>(p, ch, sm_count, stream);
      }
      return cudaErrorInvalidValue;
    }
    if (ch.unroll != 0) return cudaErrorInvalidValue;
    switch (ch.warps_per_row) {
      case 1:
        return LaunchSpmmSplitTX<kType, kIndexBits, kVec, 1>(p, ch, sm_count, stream);
      case 2:
        return LaunchSpmmSplitTX<kType, kIndexBits, kVec, 2>(p, ch, sm_count, stream);
      case 4:
        return LaunchSpmmSplitTX<kType, kIndexBits, kVec, 4>(p, ch, sm_count, stream);
      default:
        return cudaErrorInvalidValue;
    }
  } else {
    if (ch.warps_per_row != 1 || ch.unroll != 0) return cudaErrorInvalidValue;
    return LaunchSpmmSplitTX<kType, kIndexBits, kVec, 1>(p, ch, sm_count, stream);
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_SPLIT_KERNEL_CUH_
