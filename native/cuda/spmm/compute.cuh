#ifndef SPARSE_CUDA_SPMM_COMPUTE_CUH_
#define SPARSE_CUDA_SPMM_COMPUTE_CUH_
// SpMM stage 2: for each staged nonzero, load the thread's vectors of the B row (the dense
// tile) and accumulate value * B into fp32 registers.
#include "cuda/common/vector.cuh"

namespace sparse {
namespace cuda {

// Accumulates the staged nonzeros [begin, count) (count <= kBlockItemsK) into acc.
// `begin` > 0 only in a row's first tile, where reverse offset memory alignment staged
// leading elements of the previous row: they are skipped, not multiplied by zero (a zero
// times an Inf in row 0 of B would be NaN in a row that never references row 0).
//   s_values, s_offsets: shared, the subwarp's staged tile (see StageSparseTile)
//   b: device, B (k x n, row-major); the thread reads b[offset + cols[x] + 0 .. kVecElems)
//   cols: the first column of each of the thread's vectors, clamped to 0 when past n so
//         that the loop needs no predicate (those results are never stored)
// NOTE: the B loads of kUnrollK nonzeros are issued before any of their multiply-adds, so
// each thread keeps kUnrollK * kVecsX independent 16-byte loads in flight; the staged
// values and offsets are read back as float4/int4 broadcasts (one shared-memory access for
// four nonzeros).
template <typename Config, typename T>
__device__ __forceinline__ void AccumulateTile(const float* s_values, const int* s_offsets, int begin, int count,
                                               const T* __restrict__ b, const int (&cols)[Config::kVecsX],
                                               float (&acc)[Config::kVecsX][Config::kVecElems]) {
  constexpr int kU = Config::kUnrollK;
  constexpr int kVE = Config::kVecElems;
  constexpr int kVX = Config::kVecsX;
  int i = begin;
  // Head: single nonzeros up to a multiple of kU, so the unrolled loop's float4/int4
  // shared-memory reads stay aligned.
  for (; i < count && (i % kU) != 0; ++i) {
    const float v = s_values[i];
    const int off = s_offsets[i];
#pragma unroll
    for (int x = 0; x < kVX; ++x) {
      float bf[kVE];
      ToFloats(LoadVector<T, kVE>(b + off + cols[x]), bf);
#pragma unroll
      for (int e = 0; e < kVE; ++e) acc[x][e] = fmaf(v, bf[e], acc[x][e]);
    }
  }
  for (; i + kU <= count; i += kU) {
    float v[kU];
    int off[kU];
#pragma unroll
    for (int u = 0; u < kU; u += 4) {
      const float4 v4 = *reinterpret_cast<const float4*>(s_values + i + u);
      const int4 o4 = *reinterpret_cast<const int4*>(s_offsets + i + u);
      v[u] = v4.x, v[u + 1] = v4.y, v[u + 2] = v4.z, v[u + 3] = v4.w;
      off[u] = o4.x, off[u + 1] = o4.y, off[u + 2] = o4.z, off[u + 3] = o4.w;
    }
    Vector<T, kVE> bv[kU][kVX];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
#pragma unroll
      for (int x = 0; x < kVX; ++x) bv[u][x] = LoadVector<T, kVE>(b + off[u] + cols[x]);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
#pragma unroll
      for (int x = 0; x < kVX; ++x) {
        float bf[kVE];
        ToFloats(bv[u][x], bf);
#pragma unroll
        for (int e = 0; e < kVE; ++e) acc[x][e] = fmaf(v[u], bf[e], acc[x][e]);
      }
    }
  }
  // Residue of the tile: one nonzero at a time.
  for (; i < count; ++i) {
    const float v = s_values[i];
    const int off = s_offsets[i];
#pragma unroll
    for (int x = 0; x < kVX; ++x) {
      float bf[kVE];
      ToFloats(LoadVector<T, kVE>(b + off + cols[x]), bf);
#pragma unroll
      for (int e = 0; e < kVE; ++e) acc[x][e] = fmaf(v, bf[e], acc[x][e]);
    }
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_COMPUTE_CUH_
