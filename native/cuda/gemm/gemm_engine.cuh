#ifndef SPARSE_CUDA_GEMM_GEMM_ENGINE_CUH_
#define SPARSE_CUDA_GEMM_GEMM_ENGINE_CUH_
// Dense GEMM for Hopper (sm_90a only), the dense milestone's kernel (issue 25):
// C[M x N] = A[M x K] * B[K x N], f16 or bf16 in and out, fp32 accumulation; A (weights) is
// row-major (K contiguous), B (activations) row-major K x N (N contiguous), C row-major.
// Design (warp-specialised, persistent):
//   - a block is three warpgroups: warpgroup 0 is the producer (one thread issues tensor
//     copies, the rest idle with few registers), warpgroups 1 and 2 are consumers owning rows
//     0..63 and 64..127 of a 128 x kNTile output tile;
//   - the producer fills a ring of kStages stages, each A's 128 x 64 and B's 64 x kNTile
//     (128-byte swizzle), completion counted in bytes on the stage's "full" mbarrier; the
//     consumers release a stage on its "empty" mbarrier (every consumer thread arrives);
//   - a consumer warpgroup multiplies a stage with four wgmma m64nNk16 (A and B both read from
//     shared memory through matrix descriptors), keeps one stage's group in flight and
//     releases the previous stage once wgmma.wait_group 1 says its reads are done;
//   - the grid is one block per SM; block b takes tiles b, b + grid, ... of a raster that walks
//     groups of Params::group row blocks column by column (TileOf), so the blocks running together
//     share A and B panels in L2; the producer runs ahead into the next tile while the
//     consumers store C.
// Shapes: any M; N and K multiples of 8 (the tensor maps' 16-byte row strides); edges past
// M, N and K arrive as zeros from the tensor copies and the stores are bounds-checked.
#include <cuda.h>

#include <cstdint>

#include "common/dtype.h"
#include "cuda/common/mma.cuh"
#include "cuda/spmm/stream_engine.cuh"
#include "cuda/spmm/wgmma.cuh"

namespace sparse {
namespace cuda {
namespace gemm {

constexpr int kMTile = 128;   // rows of a tile: two consumer warpgroups of 64
constexpr int kKTile = 64;    // K per stage: one 128-byte swizzle row of 16-bit elements
constexpr int kAtomN = 64;    // B columns per 128-byte swizzle atom (and per tensor copy)
constexpr int kThreads = 384;

// One launch. The tensor maps are built on the host (gemm_engine_host.h).
struct Params {
  CUtensorMap a_map;  // A as a K x M tensor (K innermost), box 64 x 128, 128-byte swizzle
  CUtensorMap b_map;  // B as an N x K tensor (N innermost), box 64 x 64, 128-byte swizzle
  void* c;            // M x N, row-major, on the device
  int m, n, k;
  int m_blocks, n_blocks, k_blocks;
  int group;          // row blocks per raster group (TileOf)
};

// Tile t of the raster: groups of `group` row blocks (the last group may be shorter), each
// walked column block by column block, row blocks fastest. A bijection of
// [0, m_blocks n_blocks) onto the tiles; checked by the workbench's selftest.
struct Tile {
  int mb, nb;
};
__host__ __device__ __forceinline__ Tile TileOf(int t, int m_blocks, int n_blocks, int group) {
  const int per_group = group * n_blocks;
  const int g = t / per_group, first = g * group;
  const int rows = m_blocks - first < group ? m_blocks - first : group;
  const int local = t - g * per_group;
  return Tile{first + local % rows, local / rows};
}

// wgmma descriptors without their start address (bits 0-13; layout of the other fields in
// wgmma.cuh). Both operands use the 128-byte swizzle the tensor copies write: rows of 128
// bytes, 16-byte chunk c of row r at chunk c ^ (r & 7), repeating every 8 rows (1024 bytes,
// 1024-byte aligned stage buffers).
//   A, K-major: a 64 x 16 operand is 8 groups of 8 rows; the stride byte offset steps between
//   row groups (1024); the leading byte offset is unused with a swizzle (the PTX ISA: "assumed
//   to be 1"; we write 1). The next k16 slice starts 32 bytes further into the row.
//   B, MN-major (N contiguous, tnspB = 1): a 64 (K) x 64 (N) atom is K row r at 128 r; the
//   stride byte offset steps 8 K rows (1024), the leading byte offset steps to the next 64
//   columns of N (the next atom, 8192 bytes: one tensor copy's box). The next k16 slice
//   starts 16 rows (2048 bytes) further.
constexpr uint64_t kSwizzle128 = 1ull << 62;
constexpr uint64_t kADesc = kSwizzle128 | ((1024ull >> 4) << 32) | (1ull << 16);
constexpr uint64_t kBDesc = kSwizzle128 | ((1024ull >> 4) << 32) | ((8192ull >> 4) << 16);

template <int kNTile, int kStages>
struct Layout {
  static_assert(kNTile % kAtomN == 0 && kNTile <= 256, "whole swizzle atoms, wgmma N <= 256");
  static constexpr int kABytes = kMTile * kKTile * 2;
  static constexpr int kBBytes = kKTile * kNTile * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static_assert(kStageBytes % 1024 == 0, "stages keep the swizzle's 1024-byte alignment");
  // The ring, its full and empty barriers, and room to align the dynamic shared memory.
  static constexpr int kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "the ring fits in one SM's shared memory");
};

#define SPARSE_GEMM_D_64                                                               \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "    \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "    \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SPARSE_GEMM_D_128                                                                       \
  SPARSE_GEMM_D_64 ", "                                                                         \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define SPARSE_GEMM_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SPARSE_GEMM_F16(i) SPARSE_GEMM_F4(i), SPARSE_GEMM_F4(i + 4), SPARSE_GEMM_F4(i + 8), SPARSE_GEMM_F4(i + 12)
#define SPARSE_GEMM_F64(i) SPARSE_GEMM_F16(i), SPARSE_GEMM_F16(i + 16), SPARSE_GEMM_F16(i + 32), SPARSE_GEMM_F16(i + 48)
#define SPARSE_GEMM_F128(i) SPARSE_GEMM_F64(i), SPARSE_GEMM_F64(i + 64)

// wgmma m64nNk16, A and B from shared memory: D's N / 2 accumulators (d[4 j + q]: the m16n8
// C fragment q of n-tile j, rows of warp w at 16 w), A's and B's descriptors, scale-d (0:
// D = A B, 1: D += A B), scales 1, A K-major (tnspA 0), B N-major (tnspB 1).
template <DType kType, int kN>
struct Wgmma;

// IA, IB, IS: the operand numbers of A's and B's descriptors and of scale-d (after D's).
#define SPARSE_GEMM_WGMMA(NN, NREG, IA, IB, IS, TYPE, PTX, DOPS)                                      \
  template <>                                                                                         \
  struct Wgmma<DType::TYPE, NN> {                                                                     \
    __device__ __forceinline__ static void Run(float* d, uint64_t a, uint64_t b, int scale_d) {       \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32." PTX "." PTX " "                \
                   "{" SPARSE_GEMM_D_##NREG "}, " IA ", " IB ", p, 1, 1, 0, 1;\n}\n"                   \
                   : DOPS                                                                             \
                   : "l"(a), "l"(b), "r"(scale_d));                                                   \
    }                                                                                                 \
  };

SPARSE_GEMM_WGMMA(128, 64, "%64", "%65", "%66", kF16, "f16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA(128, 64, "%64", "%65", "%66", kBF16, "bf16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA(256, 128, "%128", "%129", "%130", kF16, "f16", SPARSE_GEMM_F128(0))
SPARSE_GEMM_WGMMA(256, 128, "%128", "%129", "%130", kBF16, "bf16", SPARSE_GEMM_F128(0))

#undef SPARSE_GEMM_WGMMA
#undef SPARSE_GEMM_F128
#undef SPARSE_GEMM_F64
#undef SPARSE_GEMM_F16
#undef SPARSE_GEMM_F4
#undef SPARSE_GEMM_D_128
#undef SPARSE_GEMM_D_64

__device__ __forceinline__ void PrefetchTensorMap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// Moves registers between the warpgroups (every warp of a warpgroup executes the same one):
// the producer needs few, the consumers' accumulators many.
template <int kRegs>
__device__ __forceinline__ void RegsDec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void RegsInc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// The producer thread: for each of this block's tiles, each K stage: wait until the slot is
// free, announce its bytes, issue A's copy and B's kNTile / 64 copies. Boxes past M, N or K
// arrive as zeros and still count their full bytes.
template <int kNTile, int kStages>
__device__ __forceinline__ void Produce(const Params& p, unsigned char* ring, uint32_t full0, uint32_t empty0) {
  using L = Layout<kNTile, kStages>;
  PrefetchTensorMap(&p.a_map);
  PrefetchTensorMap(&p.b_map);
  const int tiles = p.m_blocks * p.n_blocks;
  int stage = 0;
  uint32_t phase = 0;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Tile tile = TileOf(t, p.m_blocks, p.n_blocks, p.group);
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      // A fresh barrier's "previous phase" (parity 1) counts as complete: the first pass
      // through the ring does not wait.
      engine::MbarWait(empty0 + 8 * stage, phase ^ 1);
      const uint32_t full = full0 + 8 * stage;
      const uint32_t st = SmemAddr(ring + stage * L::kStageBytes);
      engine::MbarArriveExpectTx(full, L::kStageBytes);
      engine::TensorCopy2d(st, &p.a_map, kb * kKTile, tile.mb * kMTile, full);
#pragma unroll
      for (int j = 0; j < kNTile / kAtomN; ++j)
        engine::TensorCopy2d(st + L::kABytes + j * kKTile * 128, &p.b_map, tile.nb * kNTile + j * kAtomN, kb * kKTile,
                             full);
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
}

// Stores a consumer warpgroup's 64 x kNTile sums at rows row0.., columns col0.. of C (pairs of
// columns: N is even), skipping what lies past M or N.
template <DType kType, int kNTile>
__device__ __forceinline__ void StoreTile(const Params& p, int row0, int col0, const float* d) {
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, g = lane >> 2, t = lane & 3;
  unsigned short* c = static_cast<unsigned short*>(p.c);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + warp * 16 + g + 8 * h;
    if (row >= p.m) continue;
    unsigned short* crow = c + static_cast<int64_t>(row) * p.n;
#pragma unroll
    for (int j = 0; j < kNTile / 8; ++j) {
      const int col = col0 + 8 * j + 2 * t;
      if (col < p.n) *reinterpret_cast<uint32_t*>(crow + col) = PackOut<kType>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
  }
}

// A consumer warpgroup (cw: 0 or 1, rows 64 cw.. of each tile).
template <DType kType, int kNTile, int kStages>
__device__ __forceinline__ void Consume(const Params& p, unsigned char* ring, uint32_t full0, uint32_t empty0, int cw) {
  using L = Layout<kNTile, kStages>;
  constexpr int kAcc = kNTile / 2;
  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.f;
  const int tiles = p.m_blocks * p.n_blocks;
  int stage = 0;
  uint32_t phase = 0;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Tile tile = TileOf(t, p.m_blocks, p.n_blocks, p.group);
    int prev = -1;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      engine::MbarWait(full0 + 8 * stage, phase);
      // Lanes leave the wait loop separately; the wgmma instructions below are warp-aligned.
      __syncwarp();
      const uint32_t a0 = SmemAddr(ring + stage * L::kStageBytes) + cw * (kMTile / 2) * 128;
      const uint32_t b0 = SmemAddr(ring + stage * L::kStageBytes + L::kABytes);
      wg::Pin<kAcc>(d);
      wg::Fence();
#pragma unroll
      for (int kk = 0; kk < kKTile / 16; ++kk)
        Wgmma<kType, kNTile>::Run(d, wg::Desc(kADesc, a0 + 32 * kk), wg::Desc(kBDesc, b0 + 2048 * kk),
                                  kb > 0 || kk > 0);
      wg::Commit();
      // The previous stage's group is complete: its slot can be refilled.
      wg::Wait<1>();
      wg::Pin<kAcc>(d);
      if (prev >= 0) engine::MbarArrive(empty0 + 8 * prev);
      prev = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    wg::Wait<0>();
    wg::Pin<kAcc>(d);
    engine::MbarArrive(empty0 + 8 * prev);
    StoreTile<kType, kNTile>(p, tile.mb * kMTile + cw * (kMTile / 2), tile.nb * kNTile, d);
  }
}

// Launch: grid <= the SM count (persistent), kThreads threads, Layout::kSmemBytes of dynamic
// shared memory; K >= 8 (k_blocks >= 1).
template <DType kType, int kNTile, int kStages>
__global__ void __launch_bounds__(kThreads, 1) GemmKernel(const __grid_constant__ Params p) {
  extern __shared__ unsigned char smem_raw[];
  using L = Layout<kNTile, kStages>;
  // The swizzle repeats every 1024 bytes from a 1024-byte aligned address.
  unsigned char* ring = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const uint32_t full0 = SmemAddr(ring + kStages * L::kStageBytes), empty0 = full0 + 8 * kStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      engine::MbarInit(full0 + 8 * s, 1);
      engine::MbarInit(empty0 + 8 * s, 2 * 128);
    }
    engine::FenceBarrierInit();
  }
  __syncthreads();
  const int wgi = threadIdx.x / 128;
  if (wgi == 0) {
    RegsDec<40>();
    if (threadIdx.x == 0) Produce<kNTile, kStages>(p, ring, full0, empty0);
  } else {
    RegsInc<232>();
    Consume<kType, kNTile, kStages>(p, ring, full0, empty0, wgi - 1);
  }
}

}  // namespace gemm
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_GEMM_GEMM_ENGINE_CUH_
