#ifndef SPARSE_CUDA_SPMM_OUTPUT_TILE_CUH_
#define SPARSE_CUDA_SPMM_OUTPUT_TILE_CUH_
// SpMM stage 3: convert the fp32 accumulators to the output type and store them with
// vector memory instructions, skipping the columns past n (residue of the last strip).
#include "cuda/common/vector.cuh"

namespace sparse {
namespace cuda {

//   c_thread: device, C at (row, this thread's first column); the thread owns
//             c_thread[x * kThreadsX * kVecElems + 0 .. kVecElems) for x < kVecsX
//   col: the column of c_thread; n: C's width (a multiple of kVecElems, so a vector is
//        either wholly inside the row or wholly outside it)
template <typename Config, typename T>
__device__ __forceinline__ void StoreOutputTile(T* c_thread, int col, int n,
                                                const float (&acc)[Config::kVecsX][Config::kVecElems]) {
  constexpr int kStrideX = Config::kThreadsX * Config::kVecElems;
#pragma unroll
  for (int x = 0; x < Config::kVecsX; ++x) {
    if (col + x * kStrideX < n) {
      StoreVector<T, Config::kVecElems>(c_thread + x * kStrideX, FromFloats<T, Config::kVecElems>(acc[x]));
    }
  }
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_OUTPUT_TILE_CUH_
