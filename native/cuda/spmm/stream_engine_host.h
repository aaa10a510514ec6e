#ifndef SPARSE_CUDA_SPMM_STREAM_ENGINE_HOST_H_
#define SPARSE_CUDA_SPMM_STREAM_ENGINE_HOST_H_
// Host side of the streaming engine (stream_engine.cuh): how a launch stages B (the tensor
// map and the wgmma descriptor), the launch's plan (grid and clusters, from what the device
// holds at once) and how many slots the fixup needs. Shared by the
// addon's family (spmm_24_engine_sm90a.cu) and the workbench (scripts/gpu/probe).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "cuda/common/device_info.h"
#include "cuda/spmm/stream_engine.cuh"

namespace sparse {
namespace engine_host {

// The driver's tensor-map encoder, through the runtime (no libcuda at link time); null when
// the driver does not have it.
inline PFN_cuTensorMapEncodeTiled_v12000 EncodeTiled() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// Fills how the kernel stages B (K x N row-major, 16-byte aligned) in stages of kks rows:
//   wgmma formats (`wg`): N = 1 .. 64; B's box is N rounded up to 8 / 16 / 32 / 64 (columns
//   past N are zeros), through a swizzled tensor copy (N = 16, 24, ... 64), copied whole
//   (N = 8), or, N % 8 != 0 (rows of N halves are not whole 16-byte units), copied as they
//   are and laid out like the tensor copy's by the consumers (kBWgRows); b_desc is B's wgmma
//   descriptor ("MN-major": N contiguous) without its start address;
//   else: N = 16 / 32 / 64 by tensor copy, other multiples of 8 whole, others element-wise.
// wgmma formats: `wide` (8 / 16 / 32 / 64, at least N's own box) names a wider box than N's own, for a
// kernel of that width run at a smaller N (the workbench's ENGINE_WIDE); 0: N's own.
// k_major_n1: N = 1 on the wgmma formats as kBWgK1 (B's K halves as they are, read through a
// K-major descriptor: no layout by the consumers), for the formats that declare kBK1
// (TwoFourWgK1); else kBWgRows.
// rows_partial_sectors (the 2:4 engine's): N a multiple of 8 above 16 whose rows are not whole
// 32-byte sectors (N = 24, 40, 56) also as kBWgRows: the tensor copy of a box wider than N, whose
// rows of 48, 80 or 112 bytes end inside a sector, took up to 1.25x the time of the same kernel
// with B moved as one bulk copy (v41, H100, workbench: 11008 x 4096 at N = 40 31.0 us against
// 24.7); the consumers' layout costs less than that (27.1 us). N = 48 (rows of three whole
// sectors) stays on the tensor copy: its layout by the consumers was slower on 3 of 4 shapes.
// cudaErrorInvalidValue when the tensor map cannot be made.
// SetupB also sets lanes_arrive: every lane of the producer and of each consumer warp arrives on
// the ring's barriers, so that each lane's own shared-memory accesses are ordered by its own
// arrival. compute-sanitizer's racecheck does not follow the ordering through __syncwarp and
// one lane's arrival: v14 found 100 hazards on the producer's plain stores of B, v20 2 (27,776
// instances) on A's bulk copies into a reused ring slot against the last stage's fragment reads.
// Every lane arriving cost nothing measurable (v16: six shapes, N = 1-64).
inline cudaError_t SetupBRead(cuda::engine::Args* a, const void* b, int n, int k, int kks, bool wg, int wide,
                              bool k_major_n1, bool rows_partial_sectors) {
  namespace en = cuda::engine;
  if (wg && n == 1 && k_major_n1 && wide == 0) {
    // kBWgK1: B's K halves as they are; K-major, no swizzle, core matrices 16 bytes apart
    // along K (leading byte offset), one along N (the stride byte offset, 128, is not used).
    a->b_read = en::kBWgK1;
    a->b_stride = 2, a->b_swizzle = 0, a->b_cols = 1;
    a->b_desc = ((128ull >> 4) << 32) | ((16ull >> 4) << 16);
    return cudaSuccess;
  }
  const int own = StreamBoxColumns(n);
  if (wg && wide != 0 && (wide < own || wide > 64 || (wide & (wide - 1)) != 0)) return cudaErrorInvalidValue;
  const int box_n = wg ? (wide != 0 ? wide : own) : n;
  a->b_stride = 2 * n, a->b_swizzle = 0, a->b_cols = n, a->b_desc = 0;
  if (wg) {
    if (n < 1 || n > 64) return cudaErrorInvalidValue;
    // Swizzled: 8 K-rows of 2 box_n bytes form one swizzle atom, the next 8 rows at the
    // stride byte offset; box_n is one atom wide. N = 8: core matrices of 8 K-rows x 16
    // bytes, the next 8 K-rows at the leading byte offset.
    const uint64_t lbo = box_n == 8 ? 128 : 16, sbo = box_n == 8 ? 256 : 16 * box_n;
    const uint64_t layout = box_n == 8 ? 0 : box_n == 16 ? 3 : box_n == 32 ? 2 : 1;
    a->b_desc = (layout << 62) | ((sbo >> 4) << 32) | ((lbo >> 4) << 16);
    if (n % 8 != 0 || (rows_partial_sectors && wide == 0 && n > 16 && n % 16 != 0)) {
      a->b_read = en::kBWgRows;
      a->b_cols = box_n, a->b_stride = 2 * box_n, a->b_swizzle = box_n / 8 - 1;
      return cudaSuccess;
    }
  }
  if (n % 8 != 0) {
    a->b_read = en::kBScalar;
    return cudaSuccess;
  }
  if (box_n != 16 && box_n != 32 && box_n != 64) {
    a->b_read = en::kBLd;
    return cudaSuccess;
  }
  a->b_read = en::kBTma;
  a->b_swizzle = box_n / 8 - 1;
  a->b_cols = box_n, a->b_stride = 2 * box_n;
  PFN_cuTensorMapEncodeTiled_v12000 encode = EncodeTiled();
  if (!encode) return cudaErrorInvalidValue;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(k)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(n) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_n), static_cast<cuuint32_t>(kks)};
  const cuuint32_t estr[2] = {1, 1};
  const CUtensorMapSwizzle sw = box_n == 16   ? CU_TENSOR_MAP_SWIZZLE_32B
                                : box_n == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                              : CU_TENSOR_MAP_SWIZZLE_128B;
  const CUresult r = encode(&a->b_map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(b), dims, strides, box,
                            estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
// SetupBRead, and every lane arriving (above).
inline cudaError_t SetupB(cuda::engine::Args* a, const void* b, int n, int k, int kks, bool wg, int wide = 0,
                          bool k_major_n1 = false, bool rows_partial_sectors = false) {
  const cudaError_t e = SetupBRead(a, b, n, k, kks, wg, wide, k_major_n1, rows_partial_sectors);
  a->lanes_arrive = 1;
  return e;
}

// How many clusters of `c` blocks of kernel `fn` run at once (c = 1: blocks), 0 when none
// can (or the query fails). The kernel's dynamic shared-memory limit must already be raised.
inline int ResidentClusters(void (*fn)(cuda::engine::Args), int threads, int smem, int c) {
  if (c == 1) {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, smem) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return per_sm * SmCount();
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(c), cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute at;
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = c, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
  cfg.attrs = &at, cfg.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(fn), &cfg) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return clusters;
}

// The launch of kernel `fn` over row_blocks x kstages (PlanStream, common/stream_plan.h),
// from what the current device can hold at once.
inline StreamPlan Plan(void (*fn)(cuda::engine::Args), int threads, int smem, int row_blocks, int kstages) {
  int resident[kMaxStreamCluster];
  for (int c = 1; c <= kMaxStreamCluster; ++c) resident[c - 1] = ResidentClusters(fn, threads, smem, c);
  return PlanStream(row_blocks, kstages, resident);
}

// Programmatic dependent launch for the addon's streaming launches, from SPARSE_PDL:
//   graph (the default, or any value but the two below): with it where `stream` is capturing a
//     CUDA graph, so that in a graph (what a serving stack replays) each launch's producers fetch
//     their first stages' weights while the kernel before it finishes, and without it elsewhere;
//   on: every launch (events then time the weights-first order: v38's workbench, 1.05x the time);
//   off: never.
// v38 (workbench, H100, 26 variants x 4 cells, N = 8 and 64): graph time a launch 0.908x with it
// (0.81-1.03x). v40 (the addon, H100, bench --suite llm --pattern 2:4, N = 1-64, 15 cases): graph
// time 0.969x geomean against off, events the same (1.001x); verify passes with 'on' on every
// streaming variant. The kernels wait for the previous kernel (griddepcontrol.wait) before
// touching B, C, the workspace or the counters; only A (the prepared weights, written by no
// kernel: uploaded by copies at prepare) is read before. So a kernel that writes a prepared
// operand's device arrays must not be captured right before its launch with PDL on.
enum class PdlMode { kGraph, kOn, kOff };
inline PdlMode PdlModeOf(const char* v) {
  if (v != nullptr && std::strcmp(v, "on") == 0) return PdlMode::kOn;
  if (v != nullptr && std::strcmp(v, "off") == 0) return PdlMode::kOff;
  return PdlMode::kGraph;
}
inline bool LaunchWithPdl(cudaStream_t stream) {
  static const PdlMode mode = PdlModeOf(std::getenv("SPARSE_PDL"));
  if (mode != PdlMode::kGraph) return mode == PdlMode::kOn;
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return st == cudaStreamCaptureStatusActive;
}

// Appends programmatic dependent launch (the kernel may start before the one before it ends; it
// waits for it with griddepcontrol.wait) to the launch attributes at[0, n); returns the new count.
inline unsigned AppendPdlAttribute(cudaLaunchAttribute* at, unsigned n) {
  at[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[n].val.programmaticStreamSerializationAllowed = 1;
  return n + 1;
}

// Launches kernel `fn` as planned (a cluster launch for split-K clusters), with programmatic
// dependent launch where LaunchWithPdl says (then the first stages' A before any of their B:
// Args::a_first).
inline cudaError_t LaunchPlanned(void (*fn)(cuda::engine::Args), const StreamPlan& plan, int threads, int smem,
                                 cudaStream_t stream, const cuda::engine::Args& args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(plan.grid), cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = smem, cfg.stream = stream;
  cudaLaunchAttribute at[2];
  unsigned n = 0;
  if (plan.cluster > 1) {
    at[n].id = cudaLaunchAttributeClusterDimension;
    at[n].val.clusterDim.x = plan.cluster, at[n].val.clusterDim.y = 1, at[n].val.clusterDim.z = 1;
    ++n;
  }
  cuda::engine::Args a = args;
  cuda::engine::SetDivisors(a, plan.grid);
  if (LaunchWithPdl(stream)) {
    n = AppendPdlAttribute(at, n);
    a.a_first = 1;
  }
  cfg.attrs = n > 0 ? at : nullptr, cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, fn, a);
}

// The most blocks of a grid of `grid` that share one row block (the fixup's slots per row
// block), with the work cut as StreamKernel cuts it.
inline int MaxSlots(int row_blocks, int kstages, int grid) {
  const long long total = static_cast<long long>(row_blocks) * kstages;
  int slots = 1;
  for (int rb = 0; rb < row_blocks; ++rb) {
    const long long i0 = static_cast<long long>(rb) * kstages;
    slots = std::max(slots, cuda::engine::BlockOf(i0 + kstages - 1, total, grid) -
                                cuda::engine::BlockOf(i0, total, grid) + 1);
  }
  return slots;
}

}  // namespace engine_host
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_ENGINE_HOST_H_
