#ifndef SPARSE_CUDA_SPMM_SPMM_TC_KERNEL_CUH_
#define SPARSE_CUDA_SPMM_SPMM_TC_KERNEL_CUH_
// The tensor-core SpMM for f16/bf16, C[M x N] = A[M x K, sparse] * B[K x N]: "load sparse,
// compute dense" (the idea of Flash-LLM, Xia et al., VLDB 2024), on the tiles of
// common/tc_tiles.h. Why: at small N (LLM decode, N <= 64) the SIMT kernels spend about one
// warp-instruction per nonzero (conversions, shuffles, FMAs); here a warp turns a 16 x 32
// tile of A into a dense image in shared memory (2 vector stores to zero it, one 2-byte
// store per nonzero) and hands it to mma.sync.m16n8k16, so the multiply-adds cost nothing
// and N up to 64 costs little more than N = 8. What it pays instead is a fixed cost per tile
// (about 185 warp-instructions: barrier, offsets, copies, image, fragments; Nsight Compute)
// and few warps per SM, so it wins where tiles are dense -- 50-70% sparsity -- and loses to
// the SIMT kernels at 90%+ (measured on the H200, BENCHMARKS.md v4; the selection in
// spmm.cu follows that). A 16 x 128 tile version amortised the fixed cost but ran with even
// fewer warps and was slower; kept out.
//
// Structure:
//   - a block is kWB warps; warp w owns strip (16 rows) blockRow * kWB + w, the block owns
//     one range of k-tiles (32 columns each) of those strips: split-K over the S blocks of a
//     thread-block cluster (sm_90), which then reduce their partial C tiles through
//     distributed shared memory in a fixed order (deterministic, no atomics, no workspace);
//   - per k-tile ("stage") the block stages B's 32 x (8 kNT8) slice and each warp its tile's
//     entries in shared memory with cp.async, kP stages deep (kP - 1 in flight while one is
//     computed): the bytes in flight hide DRAM latency without registers;
//   - B fragments come from the staged slice with ldmatrix.trans (rows padded to an odd
//     number of 16-byte chunks: conflict-free), A fragments from the dense image with ldmatrix
//     (8 x 8 blocks of 128 contiguous bytes: conflict-free);
//   - a tile with more entries than a stage holds (over 50% dense) takes the rest straight
//     from global memory; an empty tile is skipped; B rows past K are zero-filled by cp.async
//     (so an Inf/NaN past the end cannot meet a zero of the image).
// fp32 accumulation in the mma; one rounding to f16/bf16 at the end.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/dtype.h"
#include "common/tc_tiles.h"
#include "cuda/common/mma.cuh"

namespace sparse {
namespace cuda {

struct TcArgs {
  const uint32_t* offsets;  // strips * ktiles + 1
  const uint32_t* entries;  // offsets[strips * ktiles], a multiple of 4
  const void* b;            // k x n, row-major, 16-byte aligned, n % 8 == 0
  void* c;                  // m x n
  int m, k, n, strips, ktiles, splits;
};

// Entries a stage holds per warp (256: half of a 16 x 32 tile).
constexpr int kTcStageEntries = 256;
// Bytes of a warp's dense tile image: 512 halves + one 16-byte line for the dummy slot.
constexpr int kTcImageBytes = kTcTileElems * 2 + 16;

template <int kWB, int kNT8, int kP>
struct TcLayout {
  // B slice rows: 8 kNT8 halves, padded to an odd number of 16-byte chunks.
  static constexpr int kXChunks = (kNT8 & 1) ? kNT8 : kNT8 + 1;
  static constexpr int kXBytes = kTcTileCols * kXChunks * 16;
  static constexpr int kEBytes = kWB * kTcStageEntries * 4;
  static constexpr int kStageBytes = kXBytes + kEBytes;
  static constexpr int kImagesOffset = kP * kStageBytes;
  static constexpr int kMetaOffset = kImagesOffset + kWB * kTcImageBytes;
  static constexpr int kLoopBytes = kMetaOffset + kP * kWB * 8;
  // The partial C tile for the cluster reduction (aliases the stages after the loop).
  static constexpr int kRedBytes = kWB * 16 * kNT8 * 8 * 4;
  static constexpr int kSmemBytes = kLoopBytes > kRedBytes ? kLoopBytes : kRedBytes;
  static_assert(kWB == 4 || kWB == 8, "4 or 8 strips per block");
  static_assert(kNT8 == 1 || kNT8 == 2 || kNT8 == 4 || kNT8 == 8, "1, 2, 4 or 8 column tiles of 8");
  static_assert(kP >= 2 && kP <= 8, "2..8 stages");
};

__device__ __forceinline__ void Scatter(unsigned short* image, uint4 e) {
  image[e.x & 0xFFFFu] = static_cast<unsigned short>(e.x >> 16);
  image[e.y & 0xFFFFu] = static_cast<unsigned short>(e.y >> 16);
  image[e.z & 0xFFFFu] = static_cast<unsigned short>(e.z >> 16);
  image[e.w & 0xFFFFu] = static_cast<unsigned short>(e.w >> 16);
}

// The slow exact path (see the epilogue of SpmmTcKernel): the warp's sums over k-tiles
// [kt0, kt1) of `strip`, one nonzero at a time, in the accumulator layout of the mma
// (lane (g, t) holds rows g and g + 8, columns 8 j + 2 t and + 1 of each column tile j).
template <DType kType, int kNT8>
__device__ __forceinline__ void ExactTileSums(const TcArgs& a, int strip, int kt0, int kt1, int n0, int g, int t,
                                           float (&acc)[kNT8][4]) {
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  for (int kt = kt0; kt < kt1; ++kt) {
    const int64_t tile = static_cast<int64_t>(strip) * a.ktiles + kt;
    const uint32_t beg = a.offsets[tile], end = a.offsets[tile + 1];
    for (uint32_t i = beg; i < end; ++i) {
      const uint32_t e = a.entries[i];
      const uint32_t pos = e & 0xFFFFu;
      if (pos >= static_cast<uint32_t>(kTcTileElems)) continue;  // padding
      const uint32_t blk = pos >> 6;
      const int r = static_cast<int>((blk & 1) * 8 + ((pos >> 3) & 7));
      const int c = static_cast<int>((blk >> 2) * 16 + ((blk >> 1) & 1) * 8 + (pos & 7));
      if ((r & 7) != g) continue;
      const float v = Widen<kType>(static_cast<unsigned short>(e >> 16));
      const int64_t brow = static_cast<int64_t>(kt * kTcTileCols + c) * a.n;
#pragma unroll
      for (int j = 0; j < kNT8; ++j) {
        const int col = n0 + j * 8 + 2 * t;
        if (col >= a.n) continue;
        const float x0 = v * Widen<kType>(b16[brow + col]);
        const float x1 = v * Widen<kType>(b16[brow + col + 1]);
        if (r < 8) {
          acc[j][0] += x0;
          acc[j][1] += x1;
        } else {
          acc[j][2] += x0;
          acc[j][3] += x1;
        }
      }
    }
  }
}

// Grid: x = ceil(strips / kWB) * splits (a cluster of `splits` blocks per row block), y =
// ceil(n / (8 kNT8)). Block: 32 kWB threads. Dynamic shared memory: TcLayout::kSmemBytes.
template <DType kType, int kWB, int kNT8, int kP>
__global__ void __launch_bounds__(32 * kWB) SpmmTcKernel(TcArgs a) {
  using L = TcLayout<kWB, kNT8, kP>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int split = blockIdx.x % a.splits;
  const int row_block = blockIdx.x / a.splits;
  const int strip = row_block * kWB + warp;
  const int n0 = blockIdx.y * (8 * kNT8);
  const int kt0 = static_cast<int>(static_cast<int64_t>(a.ktiles) * split / a.splits);
  const int kt1 = static_cast<int>(static_cast<int64_t>(a.ktiles) * (split + 1) / a.splits);
  const int steps = kt1 - kt0;
  const bool has_strip = strip < a.strips;
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);
  const uint4* entries4 = reinterpret_cast<const uint4*>(a.entries);
  int2* meta = reinterpret_cast<int2*>(smem + L::kMetaOffset);
  unsigned char* image = smem + L::kImagesOffset + warp * kTcImageBytes;

  // The warp's tile offsets, 32 at a time in registers (lane j holds tile base + j): `cur`
  // covers steps [base, base + 32), `nxt` the next 32 (loaded 32 steps before it is needed).
  const uint32_t* toff = a.offsets + (has_strip ? static_cast<int64_t>(strip) * a.ktiles + kt0 : 0);
  int base = 0;
  uint32_t cur = 0, nxt = 0;
  if (has_strip) {
    if (lane <= steps) cur = __ldg(toff + lane);
    if (32 + lane <= steps) nxt = __ldg(toff + 32 + lane);
  }

  auto load_stage = [&](int s) {
    unsigned char* stage = smem + (s % kP) * L::kStageBytes;
    // B's slice: rows kt * 32 .. + 31, columns n0 .. n0 + 8 kNT8 (zero-filled past k and n).
    const int kt = kt0 + s;
    for (int q = threadIdx.x; q < kTcTileCols * kNT8; q += 32 * kWB) {
      const int r = q / kNT8, ch = q % kNT8;
      const int krow = kt * kTcTileCols + r, col = n0 + ch * 8;
      const bool ok = krow < a.k && col < a.n;
      const void* src = ok ? static_cast<const void*>(b16 + static_cast<int64_t>(krow) * a.n + col) : a.b;
      CpAsync16(SmemAddr(stage + (r * L::kXChunks + ch) * 16), src, ok ? 16 : 0);
    }
    // This warp's tile entries (up to kTcStageEntries; the rest is read in compute).
    int cnt4 = 0, beg = 0;
    if (has_strip) {
      if (s - base >= 32) {
        base += 32;
        cur = nxt;
        nxt = (base + 32 + lane <= steps) ? __ldg(toff + base + 32 + lane) : 0u;
      }
      const int j = s - base;
      const uint32_t b0 = __shfl_sync(0xffffffffu, cur, j);
      const uint32_t e1 = __shfl_sync(0xffffffffu, cur, (j + 1) & 31);
      const uint32_t e2 = __shfl_sync(0xffffffffu, nxt, 0);
      const uint32_t e = j + 1 < 32 ? e1 : e2;
      beg = static_cast<int>(b0);
      cnt4 = static_cast<int>((e - b0) >> 2);
      const int staged = cnt4 < kTcStageEntries / 4 ? cnt4 : kTcStageEntries / 4;
      unsigned char* ebuf = stage + L::kXBytes + warp * kTcStageEntries * 4;
      for (int i = lane; i < staged; i += 32) CpAsync16(SmemAddr(ebuf + i * 16), entries4 + (b0 >> 2) + i, 16);
    }
    if (lane == 0) meta[(s % kP) * kWB + warp] = make_int2(cnt4, beg);
  };

  float acc[kNT8][4];
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

#pragma unroll
  for (int s = 0; s < kP - 1; ++s) {
    if (s < steps) load_stage(s);
    CpAsyncCommit();
  }

  for (int s = 0; s < steps; ++s) {
    CpAsyncWait<kP - 2>();
    __syncthreads();
    if (s + kP - 1 < steps) load_stage(s + kP - 1);
    CpAsyncCommit();

    const unsigned char* stage = smem + (s % kP) * L::kStageBytes;
    const int2 mt = meta[(s % kP) * kWB + warp];
    const int cnt4 = mt.x;
    if (cnt4 == 0) continue;  // empty tile (or no strip): nothing to multiply
    // The dense image: zero, then scatter.
    reinterpret_cast<uint4*>(image)[lane] = make_uint4(0, 0, 0, 0);
    reinterpret_cast<uint4*>(image)[lane + 32] = make_uint4(0, 0, 0, 0);
    __syncwarp();
    unsigned short* img16 = reinterpret_cast<unsigned short*>(image);
    const uint4* ebuf = reinterpret_cast<const uint4*>(stage + L::kXBytes + warp * kTcStageEntries * 4);
    const int staged = cnt4 < kTcStageEntries / 4 ? cnt4 : kTcStageEntries / 4;
    for (int i = lane; i < staged; i += 32) Scatter(img16, ebuf[i]);
    for (int i = staged + lane; i < cnt4; i += 32) Scatter(img16, __ldg(entries4 + (mt.y >> 2) + i));
    __syncwarp();
    const uint32_t img = SmemAddr(image);
    const uint32_t xs = SmemAddr(stage);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint32_t af[4];
      LdMatrixX4(img + (h * 4 + (lane >> 3)) * 128 + (lane & 7) * 16, af);
      const int xrow = h * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
      if constexpr (kNT8 == 1) {
        uint32_t b0, b1;
        LdMatrixX2T(xs + xrow * L::kXChunks * 16, b0, b1);
        Mma16816<kType>(acc[0], af, b0, b1);
      } else {
#pragma unroll
        for (int p = 0; p < kNT8 / 2; ++p) {
          uint32_t bf[4];
          LdMatrixX4T(xs + (xrow * L::kXChunks + 2 * p + (lane >> 4)) * 16, bf);
          Mma16816<kType>(acc[2 * p], af, bf[0], bf[1]);
          Mma16816<kType>(acc[2 * p + 1], af, bf[2], bf[3]);
        }
      }
    }
    __syncwarp();
  }
  CpAsyncWait<0>();

  const int g = lane >> 2, t = lane & 3;
  // Sparse semantics for non-finite B: the dense image multiplies B's rows by its zeros too,
  // so an Inf/NaN in a row of B that no nonzero of a row references would still reach it
  // (0 * Inf = NaN). Where a warp's sums are not all finite (rare: only with non-finite or
  // overflowing inputs), it recomputes them exactly from the entries, nonzero by nonzero.
  bool finite = true;
#pragma unroll
  for (int j = 0; j < kNT8; ++j)
#pragma unroll
    for (int q = 0; q < 4; ++q) finite = finite && isfinite(acc[j][q]);
  if (has_strip && !__all_sync(0xffffffffu, finite)) ExactTileSums<kType, kNT8>(a, strip, kt0, kt1, n0, g, t, acc);

  if (a.splits == 1) {
    if (!has_strip) return;
#pragma unroll
    for (int j = 0; j < kNT8; ++j) {
      const int col = n0 + j * 8 + 2 * t;
      if (col >= a.n) continue;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = strip * 16 + g + 8 * half;
        if (row < a.m) {
          uint32_t* dst = reinterpret_cast<uint32_t*>(static_cast<unsigned short*>(a.c) + static_cast<int64_t>(row) * a.n + col);
          *dst = PackOut<kType>(acc[j][2 * half], acc[j][2 * half + 1]);
        }
      }
    }
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Cluster split-K: every block parks its partial tile in its own shared memory, then block
  // `split` sums rows [split * R / S, (split + 1) * R / S) of all S partial tiles, in the
  // order of the cluster ranks.
  namespace cg = cooperative_groups;
  constexpr int kCols = 8 * kNT8;
  cg::cluster_group cluster = cg::this_cluster();
  __syncthreads();  // every warp is done with the stages (the partial tile aliases them)
  float* red = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int j = 0; j < kNT8; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = warp * 16 + g + 8 * half;
      *reinterpret_cast<float2*>(red + r * kCols + j * 8 + 2 * t) = make_float2(acc[j][2 * half], acc[j][2 * half + 1]);
    }
  }
  cluster.sync();
  constexpr int kRows = kWB * 16;
  const int rows_per = kRows / a.splits;
  const int pairs = rows_per * (kCols / 2);
  for (int q = threadIdx.x; q < pairs; q += 32 * kWB) {
    const int r = split * rows_per + q / (kCols / 2);
    const int cc = (q % (kCols / 2)) * 2;
    float2 sum = make_float2(0.f, 0.f);
    for (int rank = 0; rank < a.splits; ++rank) {
      const float2 v = *reinterpret_cast<const float2*>(cluster.map_shared_rank(red + r * kCols + cc, rank));
      sum.x += v.x;
      sum.y += v.y;
    }
    const int row = row_block * kRows + r, col = n0 + cc;
    if (row < a.m && col < a.n) {
      uint32_t* dst = reinterpret_cast<uint32_t*>(static_cast<unsigned short*>(a.c) + static_cast<int64_t>(row) * a.n + col);
      *dst = PackOut<kType>(sum.x, sum.y);
    }
  }
  cluster.sync();  // no block leaves while another still reads its shared memory
#else
  __trap();  // splits > 1 needs clusters (sm_90); the host never launches it elsewhere
#endif
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_TC_KERNEL_CUH_
