#ifndef SPARSE_CUDA_SPMM_STREAM_LAUNCH_H_
#define SPARSE_CUDA_SPMM_STREAM_LAUNCH_H_
// Host side shared by the streaming tensor-core SpMMs (bitmap and 2:4): the configuration
// (warps per block, strips per warp, cluster split-K ways), its name, the instantiated
// configurations and the cluster launch.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/dtype.h"
#include "cuda/common/cluster_launch.h"

namespace sparse {

// One configuration: `warps` warps per block, `strips` strips of 16 rows per warp (each B
// fragment serves them all), `splits` blocks of a cluster along K. (The pipeline depth
// follows from N: StreamStages.)
struct StreamChoice {
  int warps = 4, strips = 1, splits = 1;
};
// "<prefix>_w<warps>_m<strips>_s<splits>".
std::string StreamVariantName(const char* prefix, const StreamChoice& ch);
bool ParseStreamVariant(const char* prefix, const char* name, StreamChoice* ch);
// Whether ch is one of the instantiated configurations (warps 4/8, strips 1/2, splits
// 1/2/4/8) and the GPU can run it (compute capability 8.0+, clusters 9.0+).
bool StreamChoiceValid(const StreamChoice& ch);
// Column tiles of 8 per block for n (1, 2, 4, 8 or 16: n up to 128 in one block).
int StreamNT8(int n);
// The built-in pick for a problem of `strips` strips, `kstages` stages of 64 rows of K and n
// columns, for the bitmap kernel or the 2:4 one (see the NOTE in spmm_stream.cu).
StreamChoice SelectStream(int64_t strips, int64_t kstages, int n, int sm_count, bool bitmap);

// How the kernels stage B for n columns at address b (tc_stream.cuh's BMode).
inline int StreamBMode(int n, const void* b) {
  const bool aligned = reinterpret_cast<uintptr_t>(b) % 16 == 0;
  if (n == 1 && aligned) return 2;
  return n % 8 == 0 && aligned ? 0 : 1;
}

// Launches `kernel` with `args` on a grid of (row_blocks * splits, col_blocks) blocks of
// 32 warps threads, `smem` dynamic bytes, clusters of `splits` along x.
template <typename Kernel, typename Args>
cudaError_t LaunchStream(Kernel kernel, const Args& args, int64_t row_blocks, int col_blocks, const StreamChoice& ch,
                         int smem, cudaStream_t stream) {
  if (row_blocks * ch.splits > 0x7fffffff || col_blocks > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(row_blocks * ch.splits), static_cast<unsigned>(col_blocks), 1);
  return LaunchClustered(kernel, args, grid, 32 * ch.warps, smem, ch.splits, stream);
}

namespace detail {
// NOTE: the pipeline depth goes with the width. Up to 32 columns the kernels are bound by the
// bytes in flight (Nsight Compute, H200: 1.8 TB/s of DRAM with 4 stages and 16 warps per SM,
// issue slots half idle waiting on memory), so they keep 7 stages of 64 rows in flight; wider
// B slices fill shared memory sooner and the math hides more latency: 4 stages.
constexpr int StreamStagesFor(int nt8) { return nt8 <= 4 ? 8 : 4; }
template <int kNT8>
constexpr int StreamStages() {
  return StreamStagesFor(kNT8);
}
// Dynamic shared memory of the 2:4 kernel's block (Sp24Layout in spmm_24_kernel.cuh: stages
// of B's slice of 64 rows plus two 576-byte A tiles per strip, or the split-K reduction's
// partial tile, whichever is larger), for the selection's occupancy estimate.
constexpr int Sp24SmemBytes(int warps, int strips, int nt8, int stages) {
  const int b_slice = 64 * ((nt8 & 1) ? nt8 : nt8 + 1) * 16;
  const int loop = stages * (b_slice + warps * strips * 2 * 576);
  const int reduce = warps * strips * 16 * nt8 * 8 * 4;
  return loop > reduce ? loop : reduce;
}

template <typename Op, DType kType, int kWB, int kMS, typename... A>
cudaError_t ByNT8(int n, A&&... args) {
  switch (StreamNT8(n)) {
    case 1: return Op::template Run<kType, kWB, kMS, 1, StreamStages<1>()>(args...);
    case 2: return Op::template Run<kType, kWB, kMS, 2, StreamStages<2>()>(args...);
    case 4: return Op::template Run<kType, kWB, kMS, 4, StreamStages<4>()>(args...);
    case 8: return Op::template Run<kType, kWB, kMS, 8, StreamStages<8>()>(args...);
    default: return Op::template Run<kType, kWB, kMS, 16, StreamStages<16>()>(args...);
  }
}
template <typename Op, DType kType, typename... A>
cudaError_t ByWarps(const StreamChoice& ch, int n, A&&... args) {
  if (ch.warps == 4) return ch.strips == 1 ? ByNT8<Op, kType, 4, 1>(n, args...) : ByNT8<Op, kType, 4, 2>(n, args...);
  return ch.strips == 1 ? ByNT8<Op, kType, 8, 1>(n, args...) : ByNT8<Op, kType, 8, 2>(n, args...);
}
}  // namespace detail

// Calls Op::Run<dtype, warps, strips, column tiles of 8 for n, stages>(args...): the instantiated
// configurations (StreamChoiceValid) for f16 and bf16.
template <typename Op, typename... A>
cudaError_t DispatchStream(DType type, const StreamChoice& ch, int n, A&&... args) {
  if (type == DType::kF16) return detail::ByWarps<Op, DType::kF16>(ch, n, args...);
  return detail::ByWarps<Op, DType::kBF16>(ch, n, args...);
}

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_LAUNCH_H_
