#ifndef SPARSE_CUDA_SPMM_SPMM_KERNEL_CUH_
#define SPARSE_CUDA_SPMM_SPMM_KERNEL_CUH_
// The SpMM kernel, C[M x N] = A[M x K, CSR] * B[K x N], and its launcher, templated on an
// SpmmConfig. Included by the per-dtype translation units only.
#include <cstdint>
#include <type_traits>

#include "common/problems.h"
#include "cuda/common/vector.cuh"
#include "cuda/spmm/compute.cuh"
#include "cuda/spmm/output_tile.cuh"
#include "cuda/spmm/sparse_tile.cuh"
#include "cuda/spmm/spmm_config.h"
#include "cuda/spmm/spmm_launch.h"
#include "cuda/spmm/spmm_split_kernel.cuh"

namespace sparse {
namespace cuda {

// Arguments, all on the device:
//   values:      nnz elements of T; indices: nnz elements of IndexT (both 16-byte aligned)
//   row_offsets: m + 1 int32, from 0 to nnz
//   row_indices: m int32, the order in which blocks take rows (null = 0..m-1)
//   b:           k * n elements of T, row-major; c: m * n elements of T, row-major
// Grid: x over groups of blockDim.y row slots, y over strips of kBlockItemsX columns.
// Block: (kThreadsX, rows per block); dynamic shared memory: rows * kSmemBytesPerRow.
template <typename Config, typename T, typename IndexT>
__global__ void SpmmKernel(int m, int n, const T* __restrict__ values, const IndexT* __restrict__ indices,
                           const int* __restrict__ row_offsets, const int* __restrict__ row_indices,
                           const T* __restrict__ b, T* __restrict__ c) {
  extern __shared__ float4 smem[];
  const int lane = threadIdx.x;
  const int slot = blockIdx.x * blockDim.y + threadIdx.y;
  // NOTE: a whole subwarp leaves together; only subwarp-wide barriers are used below.
  if (slot >= m) return;
  float* s_values = reinterpret_cast<float*>(smem) + threadIdx.y * Config::kBlockItemsK;
  int* s_offsets = reinterpret_cast<int*>(reinterpret_cast<float*>(smem) + blockDim.y * Config::kBlockItemsK) +
                   threadIdx.y * Config::kBlockItemsK;
  const unsigned mask = SubwarpMask<Config::kThreadsX>();

  // The row swizzle: subwarps take rows in row_indices order (longest first, as Sputnik's
  // reorder makes it) for load balance, and each writes its own row of C.
  const int row = row_indices ? __ldg(row_indices + slot) : slot;
  const int row_start = __ldg(row_offsets + row);
  const int row_end = __ldg(row_offsets + row + 1);

  // One-dimensional tiling of the output: this subwarp owns columns
  // [blockIdx.y * kBlockItemsX, + kBlockItemsX) of the row; the thread its vectors.
  const int col0 = blockIdx.y * Config::kBlockItemsX + lane * Config::kVecElems;
  int cols[Config::kVecsX];
#pragma unroll
  for (int x = 0; x < Config::kVecsX; ++x) {
    const int col = col0 + x * Config::kThreadsX * Config::kVecElems;
    cols[x] = col < n ? col : 0;  // residue in N: past-the-end vectors read column 0, never stored
  }
  float acc[Config::kVecsX][Config::kVecElems];
#pragma unroll
  for (int x = 0; x < Config::kVecsX; ++x) {
#pragma unroll
    for (int e = 0; e < Config::kVecElems; ++e) acc[x][e] = 0.0f;
  }

  // Empty rows skip the loop (and still write their zeros below).
  const int first_tile = row_start < row_end ? AlignedRowStart<Config>(row_start) : row_end;
  for (int tile = first_tile; tile < row_end; tile += Config::kBlockItemsK) {
    StageSparseTile<Config>(values, indices, tile, row_start, row_end, n, lane, s_values, s_offsets);
    __syncwarp(mask);
    const int count = min(Config::kBlockItemsK, row_end - tile);
    // Reverse offset alignment's leading elements (first tile only) are skipped.
    const int begin = tile < row_start ? row_start - tile : 0;
    AccumulateTile<Config>(s_values, s_offsets, begin, count, b, cols, acc);
    __syncwarp(mask);  // the next tile overwrites what this one read
  }
  StoreOutputTile<Config>(c + static_cast<int64_t>(row) * n + col0, col0, n, acc);
}

template <typename Config>
cudaError_t LaunchSpmmConfig(const SpmmProblem& p, int sm_count, cudaStream_t stream) {
  using T = typename ElementOf<Config::kType>::Type;
  using IndexT = std::conditional_t<Config::kIndexBits == 16, int16_t, int>;
  const int blocks_y = (p.n + Config::kBlockItemsX - 1) / Config::kBlockItemsX;
  int rows_per_block = kSpmmTargetThreadsPerBlock / Config::kThreadsX;
  // NOTE: small problems get smaller blocks (down to one warp) so that the grid still
  // spreads over about two blocks per SM instead of leaving most SMs idle.
  const int min_rows = 32 / Config::kThreadsX;
  while (rows_per_block > min_rows &&
         static_cast<int64_t>((p.m + rows_per_block - 1) / rows_per_block) * blocks_y < 2 * sm_count) {
    rows_per_block /= 2;
  }
  const dim3 block(Config::kThreadsX, rows_per_block);
  const dim3 grid((p.m + rows_per_block - 1) / rows_per_block, blocks_y);
  const size_t smem = static_cast<size_t>(rows_per_block) * Config::kSmemBytesPerRow;
  SpmmKernel<Config, T, IndexT><<<grid, block, smem, stream>>>(
      p.m, p.n, static_cast<const T*>(p.values), static_cast<const IndexT*>(p.column_indices), p.row_offsets,
      p.row_indices, static_cast<const T*>(p.b), static_cast<T*>(p.c));
  return cudaGetLastError();
}

// The deep tile variants (f32, full vector width only): kUnroll 16 nonzeros per step, with one
// or two vectors per thread, for 4 to 32 threads per strip.
template <DType kType, int kIndexBits, int kVec, int kThreads>
cudaError_t LaunchSpmmTileDeepT(const SpmmProblem& p, int vecs_x, int sm_count, cudaStream_t stream) {
  return vecs_x == 2 ? LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, kThreads, 2, 16>>(p, sm_count, stream)
                     : LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, kThreads, 1, 16>>(p, sm_count, stream);
}

template <DType kType, int kIndexBits, int kVec>
cudaError_t LaunchSpmmTileDeep(const SpmmProblem& p, const SpmmChoice& ch, int sm_count, cudaStream_t stream) {
  constexpr int kFull = kType == DType::kF32 ? 4 : 8;
  if constexpr (kType == DType::kF32 && kVec == kFull) {
    if (ch.unroll != 16 || (ch.vecs_x != 1 && ch.vecs_x != 2)) return cudaErrorInvalidValue;
    switch (ch.threads_x) {
      case 4: return LaunchSpmmTileDeepT<kType, kIndexBits, kVec, 4>(p, ch.vecs_x, sm_count, stream);
      case 8: return LaunchSpmmTileDeepT<kType, kIndexBits, kVec, 8>(p, ch.vecs_x, sm_count, stream);
      case 16: return LaunchSpmmTileDeepT<kType, kIndexBits, kVec, 16>(p, ch.vecs_x, sm_count, stream);
      case 32: return LaunchSpmmTileDeepT<kType, kIndexBits, kVec, 32>(p, ch.vecs_x, sm_count, stream);
      default: return cudaErrorInvalidValue;
    }
  }
  return cudaErrorInvalidValue;
}

// The instantiated strip shapes for one dtype, index width and vector width.
template <DType kType, int kIndexBits, int kVec>
cudaError_t LaunchSpmmShape(const SpmmProblem& p, const SpmmChoice& ch, int sm_count, cudaStream_t stream) {
  if (ch.kind == SpmmKind::kSplit) return LaunchSpmmSplit<kType, kIndexBits, kVec>(p, ch, sm_count, stream);
  if (ch.unroll != 0) return LaunchSpmmTileDeep<kType, kIndexBits, kVec>(p, ch, sm_count, stream);
  if (ch.vecs_x != 1 && !(ch.threads_x == 32 && ch.vecs_x == 2)) return cudaErrorInvalidValue;
  switch (ch.threads_x) {
    case 2:
      return LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, 2, 1>>(p, sm_count, stream);
    case 4:
      return LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, 4, 1>>(p, sm_count, stream);
    case 8:
      return LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, 8, 1>>(p, sm_count, stream);
    case 16:
      return LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, 16, 1>>(p, sm_count, stream);
    case 32:
      return ch.vecs_x == 2 ? LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, 32, 2>>(p, sm_count, stream)
                            : LaunchSpmmConfig<SpmmConfig<kType, kIndexBits, kVec, 32, 1>>(p, sm_count, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

template <DType kType, int kIndexBits>
cudaError_t LaunchSpmmVec(const SpmmProblem& p, const SpmmChoice& ch, int sm_count, cudaStream_t stream) {
  constexpr int kFull = kType == DType::kF32 ? 4 : 8;  // 16 bytes
  switch (ch.vec_elems) {
    case kFull:
      return LaunchSpmmShape<kType, kIndexBits, kFull>(p, ch, sm_count, stream);
    case 1:
      return LaunchSpmmShape<kType, kIndexBits, 1>(p, ch, sm_count, stream);
    case 2:
      if constexpr (kType != DType::kF32) return LaunchSpmmShape<kType, kIndexBits, 2>(p, ch, sm_count, stream);
      return cudaErrorInvalidValue;
    default:
      return cudaErrorInvalidValue;
  }
}

template <DType kType>
cudaError_t LaunchSpmmType(const SpmmProblem& p, const SpmmChoice& ch, int sm_count, cudaStream_t stream) {
  return p.index_bits == 16 ? LaunchSpmmVec<kType, 16>(p, ch, sm_count, stream)
                            : LaunchSpmmVec<kType, 32>(p, ch, sm_count, stream);
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_KERNEL_CUH_
