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
  int stage_units;          // 16-byte units of a warp's stage area (largest 4-tile run + 1)
  bool vec_b;               // n % 8 == 0 and b 16-byte aligned
};

template <int kWB, int kNT8, int kP>
struct BitmapLayout {
  static constexpr int kBBytes = BSlice<kNT8>::kBytes;
  __host__ __device__ static int StageBytes(int stage_units) { return kBBytes + kWB * (stage_units * 16 + 16); }
  __host__ __device__ static int MetaOffset(int stage_units) { return kP * StageBytes(stage_units); }
  __host__ __device__ static int SmemBytes(int stage_units) {
    const int loop = MetaOffset(stage_units) + kP * kWB * 4;
    return loop > ReduceBytes<kWB, kNT8>() ? loop : ReduceBytes<kWB, kNT8>();
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

// Grid: x = ceil(strips / kWB) * splits (clusters of `splits` along x), y = ceil(n / (8 kNT8)).
// Block: 32 kWB threads. Dynamic shared memory: BitmapLayout::SmemBytes(stage_units).
template <DType kType, int kWB, int kNT8, int kP>
__global__ void __launch_bounds__(32 * kWB) SpmmBitmapKernel(BitmapArgs a) {
  using L = BitmapLayout<kWB, kNT8, kP>;
  using S = BSlice<kNT8>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int split = blockIdx.x % a.splits;
  const int row_block = blockIdx.x / a.splits;
  const int strip = row_block * kWB + warp;
  const bool has_strip = strip < a.strips;
  const int n0 = blockIdx.y * (8 * kNT8);
  // k-tiles [kt0, kt1) of this split, in stages of four.
  const int kt0 = static_cast<int>(static_cast<int64_t>(a.ktiles) * split / a.splits);
  const int kt1 = static_cast<int>(static_cast<int64_t>(a.ktiles) * (split + 1) / a.splits);
  const int stages = (kt1 - kt0 + 3) / 4;
  const int stage_bytes = L::StageBytes(a.stage_units);
  uint32_t* meta = reinterpret_cast<uint32_t*>(smem + L::MetaOffset(a.stage_units));
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);
  const uint32_t* toff = a.offsets + static_cast<int64_t>(has_strip ? strip : 0) * a.ktiles;

  auto load_stage = [&](int s) {
    unsigned char* stage = smem + (s % kP) * stage_bytes;
    StageB<kNT8, 32 * kWB>(stage, b16, a.k, a.n, (kt0 + 4 * s) * 16, n0, a.vec_b);
    if (!has_strip) return;
    // The stage's tiles [t0, t1): offsets of t0..t1 (lane i holds tile t0 + i).
    const int t0 = kt0 + 4 * s;
    const int t1 = min(t0 + 4, kt1);
    const uint32_t off = __ldg(toff + min(t0 + (lane & 7), t1));
    const uint32_t beg = __shfl_sync(0xffffffffu, off, 0);
    const uint32_t end = __shfl_sync(0xffffffffu, off, t1 - t0);
    const uint32_t rel = off - beg;  // lanes 1..3: the starts of tiles 1..3 (< 256 units)
    const uint32_t r1 = __shfl_sync(0xffffffffu, rel, 1), r2 = __shfl_sync(0xffffffffu, rel, 2),
                   r3 = __shfl_sync(0xffffffffu, rel, 3);
    if (lane == 0) meta[(s % kP) * kWB + warp] = r1 | r2 << 8 | r3 << 16;
    unsigned char* abuf = stage + S::kBytes + warp * (a.stage_units * 16 + 16);
    for (uint32_t i = lane; i < end - beg; i += 32) CpAsync16(SmemAddr(abuf + 16 * i), a.data + beg + i, 16);
  };

  float acc[kNT8][4];
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

  // Per lane constants of the decode: its half-block word (lanes 16-31: the high words, 16
  // bytes further), its bits and the mask of the bits below them.
  const int hl = lane & 15;
  const uint32_t bit0 = 1u << (2 * hl);
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
    if (!has_strip) continue;
    const unsigned char* stage = smem + (s % kP) * stage_bytes;
    const uint32_t xs = SmemAddr(stage);
    const unsigned char* abuf = stage + S::kBytes + warp * (a.stage_units * 16 + 16);
    const uint32_t rel = meta[(s % kP) * kWB + warp];
    const int ntiles = min(4, kt1 - (kt0 + 4 * s));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (i >= ntiles) break;
      const unsigned char* tile = abuf + 16 * (i == 0 ? 0u : (rel >> (8 * (i - 1))) & 0xffu);
      const uint4 w = *reinterpret_cast<const uint4*>(tile + half_off);
      const uint32_t st = *reinterpret_cast<const uint32_t*>(tile + 32 + (lane >> 4) * 4);
      const unsigned short* vals = reinterpret_cast<const unsigned short*>(tile + kBitmapHeaderBytes);
      uint32_t af[4];
      af[0] = BitmapRegister(w.x, st & 0xffu, vals, below, bit0);
      af[1] = BitmapRegister(w.y, (st >> 8) & 0xffu, vals, below, bit0);
      af[2] = BitmapRegister(w.z, (st >> 16) & 0xffu, vals, below, bit0);
      af[3] = BitmapRegister(w.w, st >> 24, vals, below, bit0);
      const int xrow = i * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
      if constexpr (kNT8 == 1) {
        uint32_t b0, b1;
        LdMatrixX2T(xs + xrow * S::kChunks * 16, b0, b1);
        Mma16816<kType>(acc[0], af, b0, b1);
      } else {
#pragma unroll
        for (int p = 0; p < kNT8 / 2; ++p) {
          uint32_t bf[4];
          LdMatrixX4T(xs + (xrow * S::kChunks + 2 * p + (lane >> 4)) * 16, bf);
          Mma16816<kType>(acc[2 * p], af, bf[0], bf[1]);
          Mma16816<kType>(acc[2 * p + 1], af, bf[2], bf[3]);
        }
      }
    }
  }
  CpAsyncWait<0>();
  if (has_strip && !WarpAllFinite<kNT8>(acc)) BitmapExactSums<kType, kNT8>(a, strip, kt0, kt1, n0, acc);
  StoreOrReduce<kType, kWB, kNT8>(smem, acc, a.c, a.m, a.n, row_block, n0, split, a.splits);
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_BITMAP_KERNEL_CUH_
