#ifndef SPARSE_CUDA_COMMON_CLUSTER_LAUNCH_H_
#define SPARSE_CUDA_COMMON_CLUSTER_LAUNCH_H_
// A kernel launch with an optional thread-block cluster along x (the tensor-core SpMMs'
// split-K), shared by their launchers. Host code.
#include <cuda_runtime_api.h>

namespace sparse {

// Launches `kernel(args)` on `grid` blocks of `threads` threads with `smem` dynamic bytes,
// in clusters of `cluster_x` blocks along x when cluster_x > 1 (sm_90). Raises the kernel's
// dynamic shared-memory limit when `smem` needs more than it was last given (once per
// kernel and thread in the common case, not per launch).
template <typename Kernel, typename Args>
cudaError_t LaunchClustered(Kernel kernel, const Args& args, dim3 grid, int threads, int smem, int cluster_x,
                            cudaStream_t stream) {
  static thread_local int smem_set = 0;  // one per instantiation: per kernel type
  static thread_local Kernel smem_kernel = nullptr;
  if (smem_kernel != kernel || smem > smem_set) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    smem_kernel = kernel, smem_set = smem;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (cluster_x > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster_x;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, kernel, args);
}

}  // namespace sparse
#endif  // SPARSE_CUDA_COMMON_CLUSTER_LAUNCH_H_
