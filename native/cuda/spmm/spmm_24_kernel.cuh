#ifndef SPARSE_CUDA_SPMM_SPMM_24_KERNEL_CUH_
#define SPARSE_CUDA_SPMM_SPMM_24_KERNEL_CUH_
// The 2:4 SpMM on sparse tensor cores, f16/bf16 with fp32 accumulation:
// C[M x N] = A[M x K, 2:4 tiles of common/sparse24.h] * B[K x N].
// Why this shape: at small N (LLM decode) the product is memory-bound; A in 2:4 moves 1.125
// bytes per weight against dense's 2, and the tiles are stored in the order of mma.sp's A
// fragment, so a warp's whole A operand for one k-step of 32 is one 16-byte copy per lane
// plus 64 bytes of metadata: no decode at all, one mma.sp per 8 columns of N.
//   - block: kWB warps, strip (16 rows) row_block * kWB + warp each, one K range (split-K
//     over a cluster, reduced in rank order: tc_stream.cuh);
//   - stage: 64 rows of K (two k-steps): B's slice for the block and each warp's two A tiles
//     (2 x 576 bytes) in shared memory with cp.async, kP stages deep;
//   - per k-step: one 16-byte shared load (A fragment), one 4-byte load (metadata), then per
//     column tile one ldmatrix.x4.trans (B fragment) and one mma.sp.m16n8k32.
// Sparse semantics for non-finite B: the padded zeros of groups with fewer than two
// nonzeros multiply B too (0 x Inf = NaN); a warp whose sums are not all finite recomputes
// them from its nonzeros alone.
#include <cstdint>

#include "common/sparse24.h"
#include "cuda/spmm/stream_launch.h"
#include "cuda/spmm/tc_stream.cuh"

namespace sparse {
namespace cuda {

struct Sp24Args {
  const uint4* values;  // strips * ksteps * 32 uint4 (common/sparse24.h)
  const uint4* meta;    // strips * ksteps * 4 uint4
  const void* b;        // k x n
  void* c;              // m x n
  int m, k, n, strips, ksteps, splits;
  int b_mode;           // BMode (tc_stream.cuh)
  // stage_strips > 0: the tiles are staged for the streaming engine (StageSp24Tiles in
  // common/sparse24.h; values = the staged bytes, meta unused) in row blocks of stage_strips
  // strips and K stages of stage_steps k-steps, kstages of them per row block.
  int stage_strips, stage_steps, kstages;
};

constexpr int kSp24TileBytes = 512 + 64;

template <int kWB, int kMS, int kNT8, int kP>
struct Sp24Layout {
  static constexpr int kWarpABytes = kMS * 2 * kSp24TileBytes;  // two k-steps per stage
  static constexpr int kStageBytes = BSlice<kNT8>::kBytes + kWB * kWarpABytes;
  static constexpr int kLoopBytes = kP * kStageBytes;
  static constexpr int kRedBytes = ReduceBytes<kWB, kMS, kNT8>();
  static constexpr int kSmemBytes = kLoopBytes > kRedBytes ? kLoopBytes : kRedBytes;
  static_assert(kP >= 2 && kP <= 8, "2..8 stages");
  static_assert(kSmemBytes == ::sparse::detail::Sp24SmemBytes(kWB, kMS, kNT8, kP), "the selection's estimate (stream_launch.h) is exact");
};

// The warp's exact sums of `strip` over k-steps [j0, j1) (see above), nonzeros only.
template <DType kType, int kNT8>
__device__ __forceinline__ void Sp24ExactSums(const Sp24Args& a, int strip, int j0, int j1, int n0,
                                              float (&acc)[kNT8][4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  for (int step = j0; step < j1; ++step) {
    const unsigned short* vals;
    const uint32_t* meta;
    if (a.stage_strips > 0) {
      const int rb = strip / a.stage_strips, q = strip % a.stage_strips;
      const int ks = step / a.stage_steps, kt = step % a.stage_steps;
      const unsigned char* p = reinterpret_cast<const unsigned char*>(a.values) +
                               (((static_cast<int64_t>(rb) * a.kstages + ks) * a.stage_strips + q) * a.stage_steps + kt) *
                                   kSp24TileBytes;
      vals = reinterpret_cast<const unsigned short*>(p);
      meta = reinterpret_cast<const uint32_t*>(p + 512);
    } else {
      const int64_t tile = static_cast<int64_t>(strip) * a.ksteps + step;
      vals = reinterpret_cast<const unsigned short*>(a.values) + tile * 256;
      meta = reinterpret_cast<const uint32_t*>(a.meta) + tile * 16;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = g + 8 * h;
      for (int cc = 0; cc < 16; ++cc) {
        const int slot = ((r & 7) * 4 + ((cc & 7) >> 1)) * 8 + ((cc >> 3) * 2 + (r >> 3)) * 2 + (cc & 1);
        const unsigned short bits = vals[slot];
        if ((bits & 0x7fffu) == 0) continue;
        const int grp = cc >> 1;
        const uint32_t nib = meta[(r & 7) * 2 + (grp >> 2)] >> ((r >> 3) * 16 + (grp & 3) * 4);
        const int col = step * 32 + grp * 4 + static_cast<int>(nib >> (2 * (cc & 1)) & 3u);
        AccumulateExact<kType, kNT8>(acc, b16, a.n, n0, t, h, col, Widen<kType>(bits));
      }
    }
  }
}

// Grid: x = ceil(strips / (kWB kMS)) * splits (clusters of `splits` along x), y = ceil(n / (8
// kNT8)). Block: 32 kWB threads; warp w owns strips (row_block kWB + w) kMS + 0..kMS-1 and
// reuses each B fragment for all of them. Dynamic shared memory: Sp24Layout::kSmemBytes.
template <DType kType, int kWB, int kMS, int kNT8, int kP>
__global__ void __launch_bounds__(32 * kWB) Spmm24Kernel(Sp24Args a) {
  using L = Sp24Layout<kWB, kMS, kNT8, kP>;
  using S = BSlice<kNT8>;
  extern __shared__ __align__(128) unsigned char smem[];
  const StreamPosition pos = StreamPositionOf<kWB, kMS, kNT8>(a.splits);
  const int lane = pos.lane, warp = pos.warp, g = pos.g, t = pos.t;
  const int split = pos.split, row_block = pos.row_block, strip0 = pos.strip0, n0 = pos.n0;
  // k-steps [j0, j1) of this split, in stages of two.
  int j0, j1;
  SplitUnits(a.ksteps, split, a.splits, &j0, &j1);
  const int stages = (j1 - j0 + 1) / 2;
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);

  auto load_stage = [&](int s) {
    unsigned char* stage = smem + (s % kP) * L::kStageBytes;
    StageB<kNT8, 32 * kWB>(stage, b16, a.k, a.n, (j0 + 2 * s) * 32, n0, a.b_mode);
    unsigned char* abuf = stage + S::kBytes + warp * L::kWarpABytes;
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) {
      if (strip0 + ms >= a.strips) break;
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int step = j0 + 2 * s + q;
        if (step >= j1) break;
        const int64_t tile = static_cast<int64_t>(strip0 + ms) * a.ksteps + step;
        unsigned char* dst = abuf + (ms * 2 + q) * kSp24TileBytes;
        CpAsync16(SmemAddr(dst + 16 * lane), a.values + tile * 32 + lane, 16);
        if (lane < 4) CpAsync16(SmemAddr(dst + 512 + 16 * lane), a.meta + tile * 4 + lane, 16);
      }
    }
  };

  float acc[kMS][kNT8][4];
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
    for (int j = 0; j < kNT8; ++j) acc[ms][j][0] = acc[ms][j][1] = acc[ms][j][2] = acc[ms][j][3] = 0.f;

#pragma unroll
  for (int s = 0; s < kP - 1; ++s) {
    if (s < stages) load_stage(s);
    CpAsyncCommit();
  }
  for (int s = 0; s < stages; ++s) {
    CpAsyncWait<kP - 2>();
    __syncthreads();
    if (s + kP - 1 < stages) load_stage(s + kP - 1);
    CpAsyncCommit();
    if (strip0 >= a.strips) continue;
    const unsigned char* stage = smem + (s % kP) * L::kStageBytes;
    const uint32_t xs = SmemAddr(stage);
    const unsigned char* abuf = stage + S::kBytes + warp * L::kWarpABytes;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      if (j0 + 2 * s + q >= j1) break;
      uint32_t af[kMS][4], e[kMS];
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) {
        // Past the last strip nothing was staged: stale values, never stored (rows >= m).
        const unsigned char* tile = abuf + (ms * 2 + q) * kSp24TileBytes;
        const uint4 av = *reinterpret_cast<const uint4*>(tile + 16 * lane);
        af[ms][0] = av.x, af[ms][1] = av.y, af[ms][2] = av.z, af[ms][3] = av.w;
        e[ms] = *reinterpret_cast<const uint32_t*>(tile + 512 + 4 * (g * 2 + (t & 1)));
      }
#pragma unroll
      for (int j = 0; j < kNT8; ++j) {
        uint32_t bf[4];
        if (a.b_mode == kBColumn) {
#pragma unroll
          for (int i = 0; i < 4; ++i) bf[i] = ColumnPair(stage, q * 32 + 8 * i + 2 * t, g);
        } else {
          LdMatrixX4T(xs + ((q * 32 + lane) * S::kChunks + j) * 16, bf);
        }
#pragma unroll
        for (int ms = 0; ms < kMS; ++ms) MmaSp16832<kType>(acc[ms][j], af[ms], bf, e[ms]);
      }
    }
  }
  CpAsyncWait<0>();
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
    if (strip0 + ms < a.strips && !WarpAllFinite<kNT8>(acc[ms]))
      Sp24ExactSums<kType, kNT8>(a, strip0 + ms, j0, j1, n0, acc[ms]);
  StoreOrReduce<kType, kWB, kMS, kNT8>(smem, acc, a.c, a.m, a.n, row_block, n0, split, a.splits);
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_24_KERNEL_CUH_
