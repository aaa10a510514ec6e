#ifndef SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_ROWS_CUH_
#define SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_ROWS_CUH_
// Unstructured f16/bf16 weights on the streaming engine (issue 24), a fifth candidate decode
// (v25, workbench only; measured in v26: correct, 1.01-2.5x the pair kernel's time at 70-95 %,
// N 8-16, and 1.0-1.4x cuBLAS at N = 1 against split's 1.6-2.7x: not taken; about 25
// instructions a nonzero at N = 8, docs/unstructured-stream.md "v26"): the CUDA cores, whose
// work follows the nonzeros. The tensor-core decodes (UnstructuredBitmap, UnstructuredPairs) decode and multiply
// every 16 x 16 tile whatever it holds: about 300 instructions a stage a warp at every sparsity
// (v25's SASS), so 90 % costs 0.85x of 70 %'s time. Here a lane walks its row's nonzeros
// (common/unstructured_stream.h's kRows layout: per row a word start, per nonzero its column in
// the stage << 16 | its value) and adds value x B's row into its accumulators: at 90 % about
// 13 nonzeros a row and stage, at 95 % about 6.
//
// Lanes: lane l of consumer warp w holds row l % 16 of the warp's strip and, of each 8-column
// n-tile j, the columns 8 j + 4 (l / 16) .. + 3: acc[0][j][q] is C[row][8 j + 4 (l / 16) + q]
// while the stages run; Fix turns that into the m16n8 fragment order (rows g, g + 8, columns
// 2 t, 2 t + 1 of lane 4 g + t) that the engine's fixup and StoreC read, with eight shuffles an
// n-tile. B comes as the mma.sync formats' (kBLd, kBTma's swizzled rows, kBScalar for N % 8
// != 0: BOffset), one 8-byte load of four halves per nonzero and n-tile (element loads for
// kBScalar). Per nonzero and n-tile about 11 instructions at N = 8; the warp runs as many
// iterations as its longest row. Only the nonzeros are multiplied: an Inf in B reaches only the
// rows that hold its column, as CSR defines it (no re-sum needed; the tensor-core kinds give the
// dense product's NaN there). Device code only.
#include <cstdint>

#include "common/unstructured_stream.h"
#include "cuda/spmm/stream_engine.cuh"
#include "cuda/spmm/stream_unstructured.cuh"

namespace sparse {
namespace cuda {
namespace engine {

// Two 16-bit values of a 32-bit word as floats (low half first; Widen, cuda/common/mma.cuh).
template <DType kType>
__device__ __forceinline__ void WidenPair(uint32_t w, float& lo, float& hi) {
  lo = Widen<kType>(static_cast<unsigned short>(w & 0xffff)), hi = Widen<kType>(static_cast<unsigned short>(w >> 16));
}

// kCapPerTile: the ring's room for a stage, in nonzeros per 16 x 16 tile on average over the
// stage (StageBytes and Issue, the offset table's runs, are UnstructuredScatter's). kParity (at
// N <= 16; wider N as without it): the two lanes of a row take its nonzeros in turn (lane l the
// words of parity l / 16) and every column of each n-tile (one 16-byte load of B a nonzero and
// n-tile, eight sums held for the stage), and fold their sums into the column halves above with
// four shuffles an n-tile at the stage's end: half the iterations for twice the work each, less
// the per-nonzero word, convert and loop (at N = 1 a lane's iteration is one element of B).
template <int kCapPerTile, bool kParity = false>
struct UnstructuredRows : UnstructuredScatter<kCapPerTile> {
  static constexpr bool kLean = true;
  template <int kStrips>
  static constexpr int RowHeaderBytes() {
    return (2 * (kStrips * 16 + 1) + 15) / 16 * 16;
  }
  // UnstructuredScatter's capacity in words, behind this layout's larger header.
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    using Base = UnstructuredScatter<kCapPerTile>;
    static_assert(kKS <= 2048 && Base::template CapacityWords<kStrips, kKS>() <= 65535,
                  "columns and word starts are 16 bits");
    return (RowHeaderBytes<kStrips>() + 4 * Base::template CapacityWords<kStrips, kKS>() + 127) / 128 * 128;
  }
  template <int kCW, int kMS, int kKS>
  static constexpr int ImageBytes() {
    return 0;
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int, int, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    static_assert(kMS == 1 && kNG == 1, "one strip per warp, no n-split");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int row = warp * 16 + (lane & 15), h = lane >> 4;
    const uint16_t* starts = reinterpret_cast<const uint16_t*>(st);
    const uint32_t* words = reinterpret_cast<const uint32_t*>(st + RowHeaderBytes<kCW>());
    const int w0 = starts[row], w1 = starts[row + 1];
    // The lane's words from `first`, every `step`-th: add(column in the stage, value).
    auto walk = [&](int first, int step, auto&& add) {
      for (int w = first; w < w1; w += step) {
        const uint32_t word = words[w];
        add(static_cast<int>(word >> 16), Widen<kType>(static_cast<unsigned short>(word & 0xffff)));
      }
    };
    const unsigned short* bh = reinterpret_cast<const unsigned short*>(bs);  // kBScalar: rows of N halves
    if constexpr (kParity && kNT8 <= 2) {
      float sum[kNT8][8] = {};
      if (a.b_read == kBScalar) {
        walk(w0 + h, 2, [&](int c, float v) {
#pragma unroll
          for (int n = 0; n < 8 * kNT8; ++n)
            if (n < a.n) sum[n / 8][n % 8] += v * Widen<kType>(bh[c * a.n + n]);
        });
      } else {
        walk(w0 + h, 2, [&](int c, float v) {
#pragma unroll
          for (int j = 0; j < kNT8; ++j) {
            const uint4 b = *reinterpret_cast<const uint4*>(bs + BOffset(a, c, j));
            float f[8];
            WidenPair<kType>(b.x, f[0], f[1]);
            WidenPair<kType>(b.y, f[2], f[3]);
            WidenPair<kType>(b.z, f[4], f[5]);
            WidenPair<kType>(b.w, f[6], f[7]);
#pragma unroll
            for (int q = 0; q < 8; ++q) sum[j][q] += v * f[q];
          }
        });
      }
      // Lane l keeps columns 4 h .. 4 h + 3 of each n-tile and takes its partner's (l ^ 16).
#pragma unroll
      for (int j = 0; j < kNT8; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float give = h ? sum[j][q] : sum[j][4 + q];
          const float mine = h ? sum[j][4 + q] : sum[j][q];
          acc[0][j][q] += mine + __shfl_xor_sync(0xffffffffu, give, 16);
        }
    } else if (a.b_read == kBScalar) {
      // N % 8 != 0: element by element (columns past N read nothing).
      walk(w0, 1, [&](int c, float v) {
#pragma unroll
        for (int j = 0; j < kNT8; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int n = 8 * j + 4 * h + q;
            if (n < a.n) acc[0][j][q] += v * Widen<kType>(bh[c * a.n + n]);
          }
      });
    } else {
      walk(w0, 1, [&](int c, float v) {
#pragma unroll
        for (int j = 0; j < kNT8; ++j) {
          // Halves 4 h .. 4 h + 3 of n-tile j's 16-byte chunk of B's row c.
          const uint2 b = *reinterpret_cast<const uint2*>(bs + BOffset(a, c, j) + 8 * h);
          float b0, b1, b2, b3;
          WidenPair<kType>(b.x, b0, b1);
          WidenPair<kType>(b.y, b2, b3);
          acc[0][j][0] += v * b0, acc[0][j][1] += v * b1, acc[0][j][2] += v * b2, acc[0][j][3] += v * b3;
        }
      });
    }
  }
  // The rows' order into the m16n8 fragments' (above), before the engine's fixup or StoreC read
  // them: lane 4 g + t takes C[g][8 j + 2 t (+1)] and C[g + 8][...] from lanes g + 16 (t / 2)
  // and g + 8 + 16 (t / 2), registers 2 (t % 2) (+1).
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const Args&, int, int, int, float (&acc)[kMS][kNT8][4]) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int lo = g + 16 * (t >> 1), hi = lo + 8;
    const bool odd = t & 1;
#pragma unroll
    for (int j = 0; j < kNT8; ++j) {
      const float x0 = acc[0][j][0], x1 = acc[0][j][1], x2 = acc[0][j][2], x3 = acc[0][j][3];
      const float a0 = __shfl_sync(0xffffffffu, x0, lo), b0 = __shfl_sync(0xffffffffu, x2, lo);
      const float a1 = __shfl_sync(0xffffffffu, x1, lo), b1 = __shfl_sync(0xffffffffu, x3, lo);
      const float a2 = __shfl_sync(0xffffffffu, x0, hi), b2 = __shfl_sync(0xffffffffu, x2, hi);
      const float a3 = __shfl_sync(0xffffffffu, x1, hi), b3 = __shfl_sync(0xffffffffu, x3, hi);
      acc[0][j][0] = odd ? b0 : a0, acc[0][j][1] = odd ? b1 : a1;
      acc[0][j][2] = odd ? b2 : a2, acc[0][j][3] = odd ? b3 : a3;
    }
  }
};

}  // namespace engine
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_ROWS_CUH_
