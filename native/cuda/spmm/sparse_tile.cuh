#ifndef SPARSE_CUDA_SPMM_SPARSE_TILE_CUH_
#define SPARSE_CUDA_SPMM_SPARSE_TILE_CUH_
// SpMM stage 1: stage one tile of a sparse row (values and column indices) into the
// subwarp's shared memory, with reverse offset memory alignment and index pre-scaling.
#include "cuda/common/vector.cuh"

namespace sparse {
namespace cuda {

// Reverse offset memory alignment (Sputnik): the row's first tile starts at the row start
// rounded DOWN to a multiple of kSparseVec, so that every lane's 16-byte vector load of
// values (and of indices) is aligned, whatever the row's offset; the extra leading
// elements, which belong to the previous row, are masked below. Rows need no padding.
template <typename Config>
__device__ __forceinline__ int AlignedRowStart(int row_start) {
  return row_start & ~(Config::kSparseVec - 1);
}

// Loads this lane's kSparseVec nonzeros of the tile starting at `tile_start` (an aligned
// position from AlignedRowStart) and writes them to shared memory as fp32 values and
// B offsets.
//   values:  device, nnz elements of T (16-byte aligned base; see CanImplementSpmm)
//   indices: device, nnz elements of IndexT (16-byte aligned base)
//   s_values, s_offsets: shared, Config::kBlockItemsK entries each, this subwarp's own
// Elements outside [row_start, row_end) get value 0 and offset 0 (a valid address).
template <typename Config, typename T, typename IndexT>
__device__ __forceinline__ void StageSparseTile(const T* __restrict__ values, const IndexT* __restrict__ indices,
                                                int tile_start, int row_start, int row_end, int n, int lane,
                                                float* s_values, int* s_offsets) {
  constexpr int kV = Config::kSparseVec;
  const int first = tile_start + lane * kV;
  T v[kV];
  IndexT idx[kV];
  if (first + kV <= row_end) {
    // Vector memory instructions: one 16-byte load of values, one or two of indices.
    LoadElements<T, kV>(values + first, v);
    LoadElements<IndexT, kV>(indices + first, idx);
  } else {
    // Residue of the row's last tile: element-wise, never past row_end (and so never past
    // nnz: the arrays need no padding either).
#pragma unroll
    for (int j = 0; j < kV; ++j) {
      const bool in = first + j < row_end;
      v[j] = in ? values[first + j] : FromFloat<T>(0.0f);
      idx[j] = in ? indices[first + j] : IndexT(0);
    }
  }
  float fv[kV];
  int off[kV];
#pragma unroll
  for (int j = 0; j < kV; ++j) {
    // Mask the leading elements brought in by the reverse offset alignment.
    const bool lead = first + j < row_start;
    fv[j] = lead ? 0.0f : ToFloat(v[j]);
    // Index pre-scaling: turn the column index into the offset of its B row once here,
    // instead of once per thread per use in the compute loop.
    off[j] = lead ? 0 : static_cast<int>(idx[j]) * n;
  }
#pragma unroll
  for (int j = 0; j < kV; j += 4) {
    *reinterpret_cast<float4*>(s_values + lane * kV + j) = make_float4(fv[j], fv[j + 1], fv[j + 2], fv[j + 3]);
    *reinterpret_cast<int4*>(s_offsets + lane * kV + j) = make_int4(off[j], off[j + 1], off[j + 2], off[j + 3]);
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPARSE_TILE_CUH_
