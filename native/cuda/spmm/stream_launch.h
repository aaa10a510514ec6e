#ifndef SPARSE_CUDA_SPMM_STREAM_LAUNCH_H_
#define SPARSE_CUDA_SPMM_STREAM_LAUNCH_H_
// Host side shared by the streaming tensor-core SpMMs (bitmap and 2:4): the configuration
// (warps per block, cluster split-K ways, pipeline stages), its name, and the cluster launch.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/dtype.h"

namespace sparse {

// One configuration: kWB warps (strips of 16 rows) per block, `splits` blocks of a cluster
// along K, `stages` pipeline stages of 64 rows of K.
struct StreamChoice {
  int warps = 4, splits = 1, stages = 4;
};
// "<prefix>_w<warps>_s<splits>_p<stages>".
std::string StreamVariantName(const char* prefix, const StreamChoice& ch);
bool ParseStreamVariant(const char* prefix, const char* name, StreamChoice* ch);
// Whether ch is one of the instantiated configurations (warps 4/8, splits 1/2/4/8, stages
// 3/4/6) and the GPU can run it (compute capability 8.0+, clusters 9.0+).
bool StreamChoiceValid(const StreamChoice& ch);
// Column tiles of 8 per block for n (1, 2, 4, 8 or 16: n up to 128 in one block).
int StreamNT8(int n);
// The built-in pick for an M x K (k-units of 64 rows) x N problem: 4 warps; the fewest
// cluster splits (up to 8) that give two blocks per SM while each split keeps 4 stages;
// 4 stages.
StreamChoice SelectStream(int64_t strips, int64_t kstages, int n, int sm_count);

// Launches `kernel` with `args` on a grid of (row_blocks * splits, col_blocks) blocks of
// 32 warps threads, `smem` dynamic bytes, clusters of `splits` along x.
template <typename Kernel, typename Args>
cudaError_t LaunchStream(Kernel kernel, const Args& args, int64_t row_blocks, int col_blocks, const StreamChoice& ch,
                         int smem, cudaStream_t stream) {
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  if (row_blocks * ch.splits > 0x7fffffff || col_blocks > 65535) return cudaErrorInvalidValue;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(row_blocks * ch.splits), static_cast<unsigned>(col_blocks), 1);
  cfg.blockDim = dim3(32 * ch.warps, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (ch.splits > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = ch.splits;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, kernel, args);
}

namespace detail {
template <typename Op, DType kType, int kWB, int kNT8, typename... A>
cudaError_t ByStages(const StreamChoice& ch, A&&... args) {
  return ch.stages == 4 ? Op::template Run<kType, kWB, kNT8, 4>(args...) : Op::template Run<kType, kWB, kNT8, 6>(args...);
}
template <typename Op, DType kType, int kWB, typename... A>
cudaError_t ByNT8(const StreamChoice& ch, int n, A&&... args) {
  switch (StreamNT8(n)) {
    case 1: return ByStages<Op, kType, kWB, 1>(ch, args...);
    case 2: return ByStages<Op, kType, kWB, 2>(ch, args...);
    case 4: return ByStages<Op, kType, kWB, 4>(ch, args...);
    case 8: return ByStages<Op, kType, kWB, 8>(ch, args...);
    default: return ByStages<Op, kType, kWB, 16>(ch, args...);
  }
}
template <typename Op, DType kType, typename... A>
cudaError_t ByWarps(const StreamChoice& ch, int n, A&&... args) {
  return ch.warps == 4 ? ByNT8<Op, kType, 4>(ch, n, args...) : ByNT8<Op, kType, 8>(ch, n, args...);
}
}  // namespace detail

// Calls Op::Run<dtype, warps, column tiles of 8 for n, stages>(args...): the instantiated
// configurations (StreamChoiceValid) for f16 and bf16.
template <typename Op, typename... A>
cudaError_t DispatchStream(DType type, const StreamChoice& ch, int n, A&&... args) {
  if (type == DType::kF16) return detail::ByWarps<Op, DType::kF16>(ch, n, args...);
  return detail::ByWarps<Op, DType::kBF16>(ch, n, args...);
}

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_LAUNCH_H_
