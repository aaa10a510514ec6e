#ifndef SPARSE_CUDA_SDDMM_SDDMM_KERNEL_CUH_
#define SPARSE_CUDA_SDDMM_SDDMM_KERNEL_CUH_
// The SDDMM kernel, out[nnz] = (L[M x K] * R[N x K]^T) at the nonzeros of A[M x N], and
// its launcher, templated on an SddmmConfig. Included by the per-dtype translation units.
#include <cstdint>

#include "common/problems.h"
#include "cuda/common/vector.cuh"
#include "cuda/sddmm/sddmm_config.h"
#include "cuda/sddmm/sddmm_launch.h"

namespace sparse {
namespace cuda {

template <int kN>
__device__ __forceinline__ float Dot(const float (&a)[kN], const float (&b)[kN], float acc) {
#pragma unroll
  for (int e = 0; e < kN; ++e) acc = fmaf(a[e], b[e], acc);
  return acc;
}

// Arguments, all on the device:
//   row_offsets: m + 1 int32; column_indices: nnz int32 in [0, n)
//   row_indices: m int32, the order in which subwarps take rows (null = 0..m-1)
//   lhs: m * k elements of T (row-major); rhs: n * k elements of T (row-major)
//   out: nnz elements of T
// Grid: x over groups of blockDim.y rows; y splits each row's runs (subwarp y of a row
// takes runs y, y + gridDim.y, ...). Block: (kThreadsK, subwarps per block).
template <typename Config, typename T>
__global__ void SddmmKernel(int m, int k, const int* __restrict__ row_offsets, const int* __restrict__ column_indices,
                            const int* __restrict__ row_indices, const T* __restrict__ lhs, const T* __restrict__ rhs,
                            T* __restrict__ out) {
  constexpr int kVE = Config::kVecElems;
  constexpr int kRun = Config::kNnzPerRun;
  const int lane = threadIdx.x;
  const int slot = blockIdx.x * blockDim.y + threadIdx.y;
  if (slot >= m) return;  // a whole subwarp leaves together
  const unsigned mask = SubwarpMask<Config::kThreadsK>();
  // The row swizzle: rows in row_indices order; outputs stay in CSR order.
  const int row = row_indices ? __ldg(row_indices + slot) : slot;
  const int row_start = __ldg(row_offsets + row);
  const int row_end = __ldg(row_offsets + row + 1);
  const int first_run = row_start + blockIdx.y * kRun;
  if (first_run >= row_end) return;
  const T* l_row = lhs + static_cast<int64_t>(row) * k;
  const int lane_k = lane * kVE;

  // The L row held in registers when it fits one chunk: loaded once, used for every run.
  float l_reg[kVE];
  if constexpr (Config::kLhsInRegisters) {
    if (lane_k < k) {
      ToFloats(LoadVector<T, kVE>(l_row + lane_k), l_reg);
    } else {
#pragma unroll
      for (int e = 0; e < kVE; ++e) l_reg[e] = 0.0f;
    }
  }

  for (int run = first_run; run < row_end; run += gridDim.y * kRun) {
    const int count = min(kRun, row_end - run);
    // The run's R rows. Past the row's end, the run's last nonzero stands in (a valid
    // address; its result is not stored).
    const T* r_rows[kRun];
#pragma unroll
    for (int j = 0; j < kRun; ++j) {
      const int col = __ldg(column_indices + run + (j < count ? j : count - 1));
      r_rows[j] = rhs + static_cast<int64_t>(col) * k;
    }
    float acc[kRun];
#pragma unroll
    for (int j = 0; j < kRun; ++j) acc[j] = 0.0f;

    if constexpr (Config::kLhsInRegisters) {
      if (lane_k < k) {
        // Vector loads of the R rows: kRun independent 16-byte loads in flight.
        Vector<T, kVE> rv[kRun];
#pragma unroll
        for (int j = 0; j < kRun; ++j) rv[j] = LoadVector<T, kVE>(r_rows[j] + lane_k);
#pragma unroll
        for (int j = 0; j < kRun; ++j) {
          float rf[kVE];
          ToFloats(rv[j], rf);
          acc[j] = Dot(l_reg, rf, acc[j]);
        }
      }
    } else {
      // Residue in K: the last chunk's lanes past k load nothing (k is a multiple of kVE).
      for (int kk = lane_k; kk < k; kk += Config::kChunkK) {
        float lf[kVE];
        ToFloats(LoadVector<T, kVE>(l_row + kk), lf);
        Vector<T, kVE> rv[kRun];
#pragma unroll
        for (int j = 0; j < kRun; ++j) rv[j] = LoadVector<T, kVE>(r_rows[j] + kk);
#pragma unroll
        for (int j = 0; j < kRun; ++j) {
          float rf[kVE];
          ToFloats(rv[j], rf);
          acc[j] = Dot(lf, rf, acc[j]);
        }
      }
    }

    // Shuffle reduction of the partial dot products across the subwarp; lane j % width
    // writes output j of the run (compile-time register indices, no local memory).
#pragma unroll
    for (int j = 0; j < kRun; ++j) {
      const float sum = SubwarpSum<Config::kThreadsK>(acc[j], mask);
      if (j < count && lane == (j % Config::kThreadsK)) out[run + j] = FromFloat<T>(sum);
    }
  }
}

template <typename Config>
cudaError_t LaunchSddmmConfig(const SddmmProblem& p, int sm_count, cudaStream_t stream) {
  using T = typename ElementOf<Config::kType>::Type;
  const int rows_per_block = kSddmmThreadsPerBlock / Config::kThreadsK;
  const int blocks_x = (p.m + rows_per_block - 1) / rows_per_block;
  // Split rows into interleaved run sets (grid.y) until about a full GPU's worth of
  // subwarps exists, but never beyond one run per subwarp for an average row. Longer rows
  // loop; with rows ordered longest first (the row swizzle) they start first.
  const int64_t avg_runs = (static_cast<int64_t>(p.nnz) / (p.m > 0 ? p.m : 1) + Config::kNnzPerRun - 1) /
                           Config::kNnzPerRun;
  const int64_t want_subwarps = static_cast<int64_t>(sm_count) * (2048 / Config::kThreadsK);
  int64_t split = (want_subwarps + p.m - 1) / (p.m > 0 ? p.m : 1);
  if (split > avg_runs) split = avg_runs;
  if (split < 1) split = 1;
  if (split > 65535) split = 65535;
  const dim3 block(Config::kThreadsK, rows_per_block);
  const dim3 grid(blocks_x, static_cast<unsigned>(split));
  SddmmKernel<Config, T><<<grid, block, 0, stream>>>(p.m, p.k, p.row_offsets, p.column_indices, p.row_indices,
                                                     static_cast<const T*>(p.lhs), static_cast<const T*>(p.rhs),
                                                     static_cast<T*>(p.out));
  return cudaGetLastError();
}

template <DType kType, int kVec>
cudaError_t LaunchSddmmShape(const SddmmProblem& p, const SddmmChoice& ch, int sm_count, cudaStream_t stream) {
  switch (ch.threads_k) {
    case 8:
      return ch.lhs_in_registers ? LaunchSddmmConfig<SddmmConfig<kType, kVec, 8, 8, true>>(p, sm_count, stream)
                                 : LaunchSddmmConfig<SddmmConfig<kType, kVec, 8, 4, false>>(p, sm_count, stream);
    case 16:
      return ch.lhs_in_registers ? LaunchSddmmConfig<SddmmConfig<kType, kVec, 16, 8, true>>(p, sm_count, stream)
                                 : LaunchSddmmConfig<SddmmConfig<kType, kVec, 16, 4, false>>(p, sm_count, stream);
    case 32:
      return ch.lhs_in_registers ? LaunchSddmmConfig<SddmmConfig<kType, kVec, 32, 8, true>>(p, sm_count, stream)
                                 : LaunchSddmmConfig<SddmmConfig<kType, kVec, 32, 4, false>>(p, sm_count, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

template <DType kType>
cudaError_t LaunchSddmmType(const SddmmProblem& p, const SddmmChoice& ch, int sm_count, cudaStream_t stream) {
  constexpr int kFull = kType == DType::kF32 ? 4 : 8;  // 16 bytes
  switch (ch.vec_elems) {
    case kFull:
      return LaunchSddmmShape<kType, kFull>(p, ch, sm_count, stream);
    case 1:
      return LaunchSddmmShape<kType, 1>(p, ch, sm_count, stream);
    case 2:
      if constexpr (kType != DType::kF32) return LaunchSddmmShape<kType, 2>(p, ch, sm_count, stream);
      return cudaErrorInvalidValue;
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_KERNEL_CUH_
