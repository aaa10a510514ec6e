#ifndef SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_PAIRS_CUH_
#define SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_PAIRS_CUH_
// Unstructured f16/bf16 weights on the streaming engine (issue 24), fourth candidate decode: a
// bit per A register. The stream is common/unstructured_stream.h's kPairFrag layout: per strip
// and 16 x 16 tile eight 32-bit words, one per lane quad (the quad's 16 register bits and the
// stage's registers before it), then the stored registers, each both halves of an m16n8k16 /
// wgmma m64nNk16 A register (two adjacent columns of a row), stored whole where either half is
// nonzero. Where the bitmap (UnstructuredBitmap) spends three instructions a slot (its bit's
// test, a 16-bit load and the cursor's advance under it) and a permutation and a clear a
// register, this one spends three a register: about half the instructions a tile, for
// 4 (1 - (1 - d)^2) bytes a register pair of weights instead of 2 d per weight (d the
// density): 1.63 / 1.15 / 0.51 bytes a weight at 50 / 70 / 90 % sparsity against the bitmap's
// 1.19 / 0.79 / 0.39, and a budget of 104 / 73 / 32 instructions a tile at the H200's 16 bytes
// and 4 instructions an SM and cycle against the bitmap's 76 / 50 / 25.
// Every tile is multiplied (empty ones as zero A registers), so C is the dense product's: 0 x
// Inf in B gives NaN as cuBLAS's does. Device code only, sm_90a.
#include <cstdint>

#include "common/unstructured_stream.h"
#include "cuda/spmm/stream_engine.cuh"
#include "cuda/spmm/stream_unstructured.cuh"
#include "cuda/spmm/stream_unstructured_bitmap.cuh"

namespace sparse {
namespace cuda {
namespace engine {

// kCapWords: the ring's room for a stage, in stored registers per 16 x 16 tile on average over
// the stage (at most 128; StageBytes and Issue, the offset table's runs, are
// UnstructuredScatter's). kLeanEngine: the engine's lean kernel (stream_engine.cuh, HasLean;
// false keeps its trace hooks, for the workbench's `stages` mode). kTrim (v25): each register's
// bit tested against a per-lane mask (no shift of the quad's word a tile) and B's descriptor
// stepped in its low half (MultiplyRegisterA's kLoHi). kChunkTiles: the tiles decoded before
// their wgmma are issued (8: 32 A registers; 4 leaves room for two blocks per SM at N = 64).
template <int kCapWords, bool kLeanEngine = true, bool kTrim = false, int kChunkTiles = 8>
struct UnstructuredPairs : UnstructuredScatter<(kCapWords < 128 ? kCapWords : 128)> {
  static_assert(kCapWords > 0 && kCapWords <= 128, "a 16 x 16 tile holds at most 128 registers");
  static constexpr bool kWgB = true;  // B through a descriptor (N % 8 == 0)
  static constexpr bool kLean = kLeanEngine;
  template <int kStrips, int kKS>
  static constexpr int FixedBytes() {
    return kStrips * (kKS / 16) * kUnstPairTileBytes;
  }
  template <int kStrips, int kKS>
  static constexpr int CapacityWords() {
    return kCapWords * kStrips * (kKS / 16);
  }
  // The tiles' records and the registers at capacity (a lane loads only its own registers).
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    static_assert(kStrips * kKS <= 4096, "counts are 16 bits");
    return (FixedBytes<kStrips, kKS>() + 4 * CapacityWords<kStrips, kKS>() + 127) / 128 * 128;
  }
  template <int kCW, int kMS, int kKS>
  static constexpr int ImageBytes() {
    return 0;
  }
  // One tile's four A registers for this lane: r its quad's word, vals the stage's registers,
  // sh its place in the quad (4 bits a lane) and before the quad's bits before it.
  __device__ static __forceinline__ void DecodeTile(uint32_t r, uint32_t vals, uint32_t sh, uint32_t before,
                                                    uint32_t (&af)[4]) {
    DecodeWord(LdShared32(r), vals, sh, before, af);
  }
  // DecodeTile from the quad's word as loaded.
  __device__ static __forceinline__ void DecodeWord(uint32_t word, uint32_t vals, uint32_t sh, uint32_t before,
                                                    uint32_t (&af)[4]) {
    const uint32_t first = (word >> 16) + __popc(word & before);
    const uint32_t bits = word >> sh;  // (the decode reads bits 0-3 only)
    const uint32_t at = vals + 4 * first;
    // One asm block a tile: per register the bit's test sets p, the load and the cursor's
    // advance run under it (a clear register keeps its zero). No memory clobber: the loads
    // depend on the cursor, itself on the record's load after the stage's wait.
#define SPARSE_PR_REG(i, m)                                 \
  "and.b32 t, %5, " #m ";\nsetp.ne.b32 p, t, 0;\n"          \
  "@p ld.shared.b32 %" #i ", [c];\n@p add.u32 c, c, 4;\n"
    asm("{\n.reg .pred p;\n.reg .b32 c, t;\n"
        "mov.b32 c, %4;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\nmov.b32 %2, 0;\nmov.b32 %3, 0;\n"
        SPARSE_PR_REG(0, 1) SPARSE_PR_REG(1, 2) SPARSE_PR_REG(2, 4) SPARSE_PR_REG(3, 8) "}\n"
        : "=&r"(af[0]), "=&r"(af[1]), "=&r"(af[2]), "=&r"(af[3])
        : "r"(at), "r"(bits));
#undef SPARSE_PR_REG
  }
  // DecodeTile with the lane's four bits tested in the quad's word as loaded (m: 1 << (sh + i)).
  __device__ static __forceinline__ void DecodeTileMasked(uint32_t r, uint32_t vals, const uint32_t (&m)[4],
                                                          uint32_t before, uint32_t (&af)[4]) {
    const uint32_t word = LdShared32(r);
    const uint32_t at = vals + 4 * ((word >> 16) + __popc(word & before));
#define SPARSE_PR_REG(i, m)                                 \
  "and.b32 t, %5, %" #m ";\nsetp.ne.b32 p, t, 0;\n"         \
  "@p ld.shared.b32 %" #i ", [c];\n@p add.u32 c, c, 4;\n"
    asm("{\n.reg .pred p;\n.reg .b32 c, t;\n"
        "mov.b32 c, %4;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\nmov.b32 %2, 0;\nmov.b32 %3, 0;\n"
        SPARSE_PR_REG(0, 6) SPARSE_PR_REG(1, 7) SPARSE_PR_REG(2, 8) SPARSE_PR_REG(3, 9) "}\n"
        : "=&r"(af[0]), "=&r"(af[1]), "=&r"(af[2]), "=&r"(af[3])
        : "r"(at), "r"(word), "r"(m[0]), "r"(m[1]), "r"(m[2]), "r"(m[3]));
#undef SPARSE_PR_REG
  }
  // Lane quad g's nonzeros in one tile, from the tile's record `rec` and the stage's stored
  // registers `vals` (in global memory: the exact re-sum of rows that met an Inf or NaN in B; the
  // family files' Fix, the GEMM engine's unstructured epilogue): add(h, col, bits) for each, row
  // g + 8 h of the strip, column col0 + its column in the tile, the row half h first (h a
  // constant of an unrolled loop, so that the caller's accumulators stay in registers). A zero
  // half, stored as +0 beside a nonzero, is no nonzero: 0 x Inf in B must not reach the row.
  template <class Add>
  __device__ static __forceinline__ void WalkQuad(const unsigned char* rec, const unsigned char* vals, int g, int col0,
                                                  Add& add) {
    // Lane quad g's word: bit 4 q + i for lane q's register i, the stage's stored registers
    // before the quad in bits 16-31; a stored register's two halves, low then high.
    const uint32_t word = *reinterpret_cast<const uint32_t*>(rec + 4 * g);
    const uint32_t* v32 = reinterpret_cast<const uint32_t*>(vals) + (word >> 16);
#pragma unroll
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 4; ++q)
        for (int hi = 0; hi < 2; ++hi) {
          // Register i = h + 2 hi of lane q: row g + 8 h, columns 8 hi + 2 q and the next.
          const int bit = 4 * q + h + 2 * hi;
          if (!((word >> bit) & 1u)) continue;
          const uint32_t pair = v32[__popc(word & 0xffffu & ((1u << bit) - 1u))];
          const int col = col0 + 8 * hi + 2 * q;
          if (pair & 0x7fffu) add(h, col, static_cast<unsigned short>(pair & 0xffffu));
          if (pair & 0x7fff0000u) add(h, col + 1, static_cast<unsigned short>(pair >> 16));
        }
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int, int, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    static_assert(kNG == 1 && kMS == 1 && kCW % 4 == 0, "whole warpgroups of one strip per warp, no n-split");
    constexpr int kTiles = kKS / 16;
    // At most eight tiles' A registers (32) at once: wider stages decode and multiply in chunks.
    constexpr int kChunk = kTiles < kChunkTiles ? kTiles : kChunkTiles;
    static_assert(kTiles % kChunk == 0, "whole chunks");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t base = SmemAddr(st);
    const uint32_t rec = base + warp * kTiles * kUnstPairTileBytes + 4 * (lane >> 2);
    const uint32_t vals = base + FixedBytes<kCW, kKS>();
    const uint32_t sh = 4 * (lane & 3), before = (1u << sh) - 1;  // the quad's bits before this lane
    const uint32_t m[4] = {1u << sh, 2u << sh, 4u << sh, 8u << sh};
    const uint64_t db = wg::Desc(a.b_desc, SmemAddr(bs));
#pragma unroll 1
    for (int c = 0; c < kTiles; c += kChunk) {
      uint32_t af[kChunk][4];
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        if constexpr (kTrim) {
          DecodeTileMasked(rec + (c + j) * kUnstPairTileBytes, vals, m, before, af[j]);
        } else {
          DecodeTile(rec + (c + j) * kUnstPairTileBytes, vals, sh, before, af[j]);
        }
      }
      MultiplyRegisterA<kType, kNT8, kChunk, kTrim>(acc, af, db, c);
      // The stage's B is read by the group: complete before the engine releases the stage.
      wg::Wait<0>();
      wg::Pin<kNT8 * 4>(&acc[0][0][0]);
    }
  }
};

}  // namespace engine
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_PAIRS_CUH_
