#ifndef SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
#define SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
// Internal host interface between the SpMM kernel selection (spmm.cu) and the per-dtype
// translation units that instantiate the kernels (spmm_f32.cu, spmm_f16.cu, spmm_bf16.cu;
// split so that a parallel build compiles them at once). No device code.
#include <cuda_runtime_api.h>

#include "common/problems.h"
#include "cuda/spmm/spmm_tc.h"
#include "cuda/spmm/stream_launch.h"

namespace sparse {

// The two SpMM kernels: the tile kernel (spmm_kernel.cuh: Sputnik's 1-D tiling, a subwarp
// per row strip walks the row's nonzeros through shared memory) and the split-row kernel
// (spmm_split_kernel.cuh: the row's nonzeros split over the slices of a warp and over
// several warps, for small N and long rows).
// kTc: the tensor-core kernel (spmm_tc_kernel.cuh, f16/bf16) on the tiled format.
enum class SpmmKind { kTile, kSplit, kTc, kBitmap, k24 };

// One point of the SpMM configuration space (see SpmmConfig in spmm_config.h and
// SplitConfig in spmm_split_kernel.cuh). Names: "tile_v<vec>_t<threads>_x<vecs>" and
// "split_v<vec>_t<threads>_w<warps>", with "_u16" for the deep variants (see VariantName in
// spmm.cu).
struct SpmmChoice {
  SpmmKind kind = SpmmKind::kTile;
  int vec_elems = 1;   // elements of B/C per vector memory instruction
  int threads_x = 32;  // lanes across the strip (tile: subwarp width; split: slice width)
  int vecs_x = 1;      // vectors per thread across the strip (tile only)
  int warps_per_row = 1;  // warps sharing one row's nonzeros (split only)
  int unroll = 0;         // tile/split, f32 full width: 16 = the deep variant ("_u16"); 0 = default
  TcChoice tc;            // the tensor-core kernel's configuration (kTc only)
  StreamChoice stream;    // the bitmap and 2:4 kernels' configuration (kBitmap, k24)
  int BlockItemsX() const { return threads_x * vecs_x * vec_elems; }
};

// Launches the instantiation of `choice` for p.dtype (one of these per dtype). Returns
// cudaErrorInvalidValue for a choice with no instantiation, else the launch status.
cudaError_t LaunchSpmmF32(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSpmmF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);
cudaError_t LaunchSpmmBF16(const SpmmProblem& p, const SpmmChoice& choice, int sm_count, cudaStream_t stream);


}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_LAUNCH_H_
