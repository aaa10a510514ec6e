#ifndef SPARSE_CUDA_COMMON_CLUSTER_LAUNCH_H_
#define SPARSE_CUDA_COMMON_CLUSTER_LAUNCH_H_
// A kernel launch with an optional thread-block cluster along x (the tensor-core SpMMs'
// split-K), shared by their launchers. Host code.
#include <cuda_runtime_api.h>

#include <mutex>
#include <set>
#include <utility>

namespace sparse {

// Lets `func` use all the dynamic shared memory a block may opt into on the current device,
// once per kernel and device for the process. NOTE: the attribute is a cap, not a request
// (a launch's own size decides occupancy), so it is raised to the device's maximum once and
// never lowered: setting it to each launch's size let a launch on one thread lower it under
// another thread's larger launch of the same kernel (cudaErrorInvalidValue on the H200).
inline cudaError_t AllowMaxDynamicSmem(const void* func) {
  static std::mutex mu;
  static std::set<std::pair<int, const void*>> done;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({device, func})) return cudaSuccess;
  int optin = 0;
  e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e == cudaSuccess) e = cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  if (e == cudaSuccess) done.insert({device, func});
  return e;
}

// Launches `kernel(args)` on `grid` blocks of `threads` threads with `smem` dynamic bytes,
// in clusters of `cluster_x` blocks along x when cluster_x > 1 (sm_90).
template <typename Kernel, typename Args>
cudaError_t LaunchClustered(Kernel kernel, const Args& args, dim3 grid, int threads, int smem, int cluster_x,
                            cudaStream_t stream) {
  const cudaError_t e = AllowMaxDynamicSmem(reinterpret_cast<const void*>(kernel));
  if (e != cudaSuccess) return e;
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
