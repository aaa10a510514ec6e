#ifndef SPARSE_CUDA_SPMM_SPMM_BITMAP_KERNEL_CUH_
#define SPARSE_CUDA_SPMM_SPMM_BITMAP_KERNEL_CUH_
// The bitmap SpMM on tensor cores, f16/bf16 with fp32 accumulation:
// C[M x N] = A[M x K, bitmap tiles of common/bitmap_tiles.h] * B[K x N].
// The idea of SpInfer (EuroSys'25): one bitmap per 8 x 8 block in the order of the mma A
// fragment, values packed in bit order, so each lane builds its own A-fragment registers:
// for each register, its two bits say which of its two elements exist and a population count
// of the bits below them (plus the half-block's start, stored in the tile so that one 32-bit
// count suffices) says where their values are. No dense image in shared memory, no scatter.
// Bytes per element 0.21 + 2 (1 - s): 2.6x fewer than dense at 70% sparsity.
//   - block: kWB warps, strip (16 rows) row_block * kWB + warp each, one K range (split-K
//     over a cluster, reduced in rank order: tc_stream.cuh);
//   - stage: 64 rows of K (four 16 x 16 tiles per warp): B's slice and each warp's four
//     tiles (contiguous in memory: one cp.async run) in shared memory, kP stages deep; a
//     warp's stage area holds the largest four-tile run of the matrix (`stage_units`);
//   - per tile: two shared loads for the bitmaps and starts, per register two 16-bit loads,
//     a popcount and selects, then per column tile of 8 one mma.m16n8k16 (B fragments by
//     ldmatrix.x4.trans, two column tiles at a time).
// Sparse semantics for non-finite B: the mma multiplies B by the decoded zeros too; a warp
// whose sums are not all finite recomputes them from its nonzeros alone.
#include <cstdint>

#include "common/bitmap_tiles.h"
#include "cuda/spmm/tc_stream.cuh"

namespace sparse {
namespace cuda {

struct BitmapArgs {
  const uint32_t* offsets;  // strips * ktiles + 1, 16-byte units
  const uint4* data;        // the tiles
  const void* b;            // k x n
  void* c;                  // m x n
  int m, k, n, strips, ktiles, splits;
  int stage_units;          // 16-byte units of a strip's stage area (largest 4-tile run + 1)
  int b_mode;               // BMode (tc_stream.cuh)
};

template <int kWB, int kMS, int kNT8, int kP>
struct BitmapLayout {
  static constexpr int kBBytes = BSlice<kNT8>::kBytes;
  __host__ __device__ static int StripBytes(int stage_units) { return stage_units * 16 + 16; }
  __host__ __device__ static int StageBytes(int stage_units) { return kBBytes + kWB * kMS * StripBytes(stage_units); }
  __host__ __device__ static int MetaOffset(int stage_units) { return kP * StageBytes(stage_units); }
  __host__ __device__ static int SmemBytes(int stage_units) {
    const int loop = MetaOffset(stage_units) + kP * kWB * kMS * 4;
    return loop > ReduceBytes<kWB, kMS, kNT8>() ? loop : ReduceBytes<kWB, kMS, kNT8>();
  }
  static_assert(kP >= 2 && kP <= 8, "2..8 stages");
};

// The warp's exact sums over k-tiles [kt0, kt1) (see above), nonzeros only.
template <DType kType, int kNT8>
__device__ __forceinline__ void BitmapExactSums(const BitmapArgs& a, int strip, int kt0, int kt1, int n0,
                                             float (&acc)[kNT8][4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(a.data);
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  for (int kt = kt0; kt < kt1; ++kt) {
    const uint32_t* w = words + 4 * static_cast<int64_t>(a.offsets[static_cast<int64_t>(strip) * a.ktiles + kt]);
    const unsigned short* v = reinterpret_cast<const unsigned short*>(w + 10);
    const unsigned char* starts = reinterpret_cast<const unsigned char*>(w + 8);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // columns 0-7, 8-15 of the tile
        const int q = half * 2 + h;
        const uint64_t bits = static_cast<uint64_t>(w[q]) | static_cast<uint64_t>(w[4 + q]) << 32;
        for (int c = 0; c < 8; ++c) {
          const int bit = g * 8 + c;
          if (!(bits >> bit & 1)) continue;
          const int at = starts[q] + __popcll(bits & ((1ull << bit) - 1));
          AccumulateExact<kType, kNT8>(acc, b16, a.n, n0, t, h, kt * 16 + half * 8 + c, Widen<kType>(v[at]));
        }
      }
    }
  }
}

// One A-fragment register: the lane's two elements of a block from its half's bitmap word `w`
// (bits 2 i, 2 i + 1 for i = lane % 16), the half's value start `st`, the tile's values.
__device__ __forceinline__ uint32_t BitmapRegister(uint32_t w, uint32_t st, const unsigned short* vals, uint32_t below,
                                                   uint32_t bit0) {
  const uint32_t at = st + __popc(w & below);
  const uint32_t v0 = vals[at], v1 = vals[at + 1];
  const bool has0 = (w & bit0) != 0, has1 = (w & (bit0 << 1)) != 0;
  const uint32_t lo = has0 ? v0 : 0u;
  const uint32_t hi = has1 ? (has0 ? v1 : v0) : 0u;
  return lo | hi << 16;
}

// Grid: x = ceil(strips / (kWB kMS)) * splits (clusters of `splits` along x), y = ceil(n / (8
// kNT8)). Block: 32 kWB threads; warp w owns strips (row_block kWB + w) kMS + 0..kMS-1 and
// reuses each B fragment for all of them. Dynamic shared memory: BitmapLayout::SmemBytes.
template <DType kType, int kWB, int kMS, int kNT8, int kP>
__global__ void __launch_bounds__(32 * kWB) SpmmBitmapKernel(BitmapArgs a) {
  using L = BitmapLayout<kWB, kMS, kNT8, kP>;
  using S = BSlice<kNT8>;
  extern __shared__ __align__(128) unsigned char smem[];
  const StreamPosition pos = StreamPositionOf<kWB, kMS, kNT8>(a.splits);
  const int lane = pos.lane, warp = pos.warp, g = pos.g, t = pos.t;
  const int split = pos.split, row_block = pos.row_block, strip0 = pos.strip0, n0 = pos.n0;
  // k-tiles [kt0, kt1) of this split, in stages of four.
  int kt0, kt1;
  SplitUnits(a.ktiles, split, a.splits, &kt0, &kt1);
  const int stages = (kt1 - kt0 + 3) / 4;
  const int stage_bytes = L::StageBytes(a.stage_units);
  const int strip_bytes = L::StripBytes(a.stage_units);
  uint32_t* meta = reinterpret_cast<uint32_t*>(smem + L::MetaOffset(a.stage_units));
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);

  auto load_stage = [&](int s) {
    unsigned char* stage = smem + (s % kP) * stage_bytes;
    StageB<kNT8, 32 * kWB>(stage, b16, a.k, a.n, (kt0 + 4 * s) * 16, n0, a.b_mode);
    const int t0 = kt0 + 4 * s;
    const int t1 = min(t0 + 4, kt1);
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) {
      const int strip = strip0 + ms;
      if (strip >= a.strips) break;
      // The stage's tiles [t0, t1) of the strip: offsets of t0..t1 (lane i holds t0 + i).
      const uint32_t* toff = a.offsets + static_cast<int64_t>(strip) * a.ktiles;
      const uint32_t off = __ldg(toff + min(t0 + (lane & 7), t1));
      const uint32_t beg = __shfl_sync(0xffffffffu, off, 0);
      const uint32_t end = __shfl_sync(0xffffffffu, off, t1 - t0);
      const uint32_t rel = off - beg;  // lanes 1..3: the starts of tiles 1..3 (< 256 units)
      const uint32_t r1 = __shfl_sync(0xffffffffu, rel, 1), r2 = __shfl_sync(0xffffffffu, rel, 2),
                     r3 = __shfl_sync(0xffffffffu, rel, 3);
      if (lane == 0) meta[((s % kP) * kWB + warp) * kMS + ms] = r1 | r2 << 8 | r3 << 16;
      unsigned char* abuf = stage + S::kBytes + (warp * kMS + ms) * strip_bytes;
      for (uint32_t i = lane; i < end - beg; i += 32) CpAsync16(SmemAddr(abuf + 16 * i), a.data + beg + i, 16);
    }
  };

  float acc[kMS][kNT8][4];
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
    for (int j = 0; j < kNT8; ++j) acc[ms][j][0] = acc[ms][j][1] = acc[ms][j][2] = acc[ms][j][3] = 0.f;

  // Per lane constants of the decode: its half-block word (lanes 16-31: the high words, 16
  // bytes further), its bits and the mask of the bits below them.
  const uint32_t bit0 = 1u << (2 * (lane & 15));
  const uint32_t below = bit0 - 1u;
  const int half_off = (lane >> 4) * 16;

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
    const unsigned char* stage = smem + (s % kP) * stage_bytes;
    const uint32_t xs = SmemAddr(stage);
    const int ntiles = min(4, kt1 - (kt0 + 4 * s));
    uint32_t rel[kMS];
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) rel[ms] = meta[((s % kP) * kWB + warp) * kMS + ms];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (i >= ntiles) break;
      uint32_t af[kMS][4];
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) {
        if (strip0 + ms >= a.strips) {  // past the last strip: nothing was staged
          af[ms][0] = af[ms][1] = af[ms][2] = af[ms][3] = 0u;
          continue;
        }
        const unsigned char* abuf = stage + S::kBytes + (warp * kMS + ms) * strip_bytes;
        const unsigned char* tile = abuf + 16 * (i == 0 ? 0u : (rel[ms] >> (8 * (i - 1))) & 0xffu);
        const uint4 w = *reinterpret_cast<const uint4*>(tile + half_off);
        const uint32_t st = *reinterpret_cast<const uint32_t*>(tile + 32 + (lane >> 4) * 4);
        const unsigned short* vals = reinterpret_cast<const unsigned short*>(tile + kBitmapHeaderBytes);
        af[ms][0] = BitmapRegister(w.x, st & 0xffu, vals, below, bit0);
        af[ms][1] = BitmapRegister(w.y, (st >> 8) & 0xffu, vals, below, bit0);
        af[ms][2] = BitmapRegister(w.z, (st >> 16) & 0xffu, vals, below, bit0);
        af[ms][3] = BitmapRegister(w.w, st >> 24, vals, below, bit0);
      }
      const int xrow = i * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
      if (a.b_mode == kBColumn) {
        const uint32_t b0 = ColumnPair(stage, i * 16 + 2 * t, g), b1 = ColumnPair(stage, i * 16 + 2 * t + 8, g);
#pragma unroll
        for (int ms = 0; ms < kMS; ++ms) Mma16816<kType>(acc[ms][0], af[ms], b0, b1);
      } else if constexpr (kNT8 == 1) {
        uint32_t b0, b1;
        LdMatrixX2T(xs + xrow * S::kChunks * 16, b0, b1);
#pragma unroll
        for (int ms = 0; ms < kMS; ++ms) Mma16816<kType>(acc[ms][0], af[ms], b0, b1);
      } else {
#pragma unroll
        for (int p = 0; p < kNT8 / 2; ++p) {
          uint32_t bf[4];
          LdMatrixX4T(xs + (xrow * S::kChunks + 2 * p + (lane >> 4)) * 16, bf);
#pragma unroll
          for (int ms = 0; ms < kMS; ++ms) {
            Mma16816<kType>(acc[ms][2 * p], af[ms], bf[0], bf[1]);
            Mma16816<kType>(acc[ms][2 * p + 1], af[ms], bf[2], bf[3]);
          }
        }
      }
    }
  }
  CpAsyncWait<0>();
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
    if (strip0 + ms < a.strips && !WarpAllFinite<kNT8>(acc[ms]))
      BitmapExactSums<kType, kNT8>(a, strip0 + ms, kt0, kt1, n0, acc[ms]);
  StoreOrReduce<kType, kWB, kMS, kNT8>(smem, acc, a.c, a.m, a.n, row_block, n0, split, a.splits);
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_BITMAP_KERNEL_CUH_
