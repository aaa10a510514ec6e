#ifndef SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_BITMAP_CUH_
#define SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_BITMAP_CUH_
// Unstructured f16/bf16 weights on the streaming engine (issue 24), third candidate decode: a
// bitmap decoded straight into registers. The stream is common/unstructured_stream.h's
// kBitmapFrag layout: per strip and 16 x 16 tile a 32-byte bitmap whose byte l holds lane l's
// eight slots of the m16n8k16 A fragment (which is also warp w's part of wgmma's m64nNk16 A in
// registers), eight counts (the stage's values before each lane quad), and the values lane by
// lane. A lane finds its first value from its quad's count and the popcount of the quad's bits
// before it, then loads one value per slot, keeping it where its bit is set: no image in shared
// memory, no zero-fill, no proxy fence and no barrier between the decode and the multiply (the
// scatter decodes' fixed cost per k-block, v12). Each warp decodes all kKS / 16 tiles of its
// strip, then the warpgroup issues one wgmma.m64nNk16 per tile with B through the stage's
// descriptor (B staged as TwoFourWg stages it). Every tile is multiplied, empty or not (tiles
// past K and strips past M are empty: zero A, and B's rows past K arrive as zeros), so C is the
// dense product's: 0 x Inf in B gives NaN as cuBLAS's does. Device code only, sm_90a.
#include <cstdint>

#include "common/unstructured_stream.h"
#include "cuda/spmm/stream_engine.cuh"
#include "cuda/spmm/stream_unstructured.cuh"

namespace sparse {
namespace cuda {
namespace engine {

// A chunk's wgmma from A registers (kChunk 16-column tiles from tile t0 of the stage, B through
// the stage's descriptor db), committed as one group: the register decodes' multiply.
// kLoHi: the descriptor stepped in its low half alone (WgmmaRs::RunLoHi).
template <DType kType, int kNT8, int kChunk, bool kLoHi = false>
__device__ __forceinline__ void MultiplyRegisterA(float (&acc)[1][kNT8][4], uint32_t (&af)[kChunk][4], uint64_t db,
                                                  int t0) {
  wg::Pin<kNT8 * 4>(&acc[0][0][0]);
  wg::Fence();
  const uint32_t lo = static_cast<uint32_t>(db), hi = static_cast<uint32_t>(db >> 32);
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    if constexpr (kLoHi) {
      wg::WgmmaRs<kType, 8 * kNT8>::RunLoHi(&acc[0][0][0], af[j], lo + (((t0 + j) * 16 * 16 * kNT8) >> 4), hi);
    } else {
      wg::WgmmaRs<kType, 8 * kNT8>::Run(&acc[0][0][0], af[j], db + (((t0 + j) * 16 * 16 * kNT8) >> 4));
    }
  }
  wg::Commit();
}

// kCapPerTile: the ring's room for a stage, in values per 16 x 16 tile on average over the
// stage (as UnstructuredScatter's; StageBytes and Issue, the offset table's runs, are its).
// kDecode (BitmapDecode): how a lane turns its byte of bits into its eight halves.
enum BitmapDecode : int {
  kBitmapMul = 0,    // slot by slot: a load at the cursor, kept by a multiply with the bit, the
                     // cursor advanced by twice the bit (v23 call 1: about 80 SASS a tile)
  kBitmapPairs = 1,  // a register at a time: two loads, one byte permutation whose selector the
                     // slot pair's pattern picks, the cursor advanced by the pattern's popcount
  kBitmapPred = 2,   // slot by slot under a predicate: the bit's test sets it, the load and the
                     // cursor's advance run under it (three instructions a slot), halves packed
                     // by one permutation a register
  kBitmapPred8 = 3,  // as kBitmapPred with eight predicates, all set before the first load (so
                     // that ptxas may set several with one instruction, R2P, and the loads issue
                     // back to back)
};
// kChunkTiles: the tiles decoded before their wgmma are issued (at most 8: 32 A registers);
// kPingPong: two chunks' registers, the next chunk decoded while the previous one's wgmma run
// (each chunk's group waited for only before its registers are written again, and all at the
// stage's end: the stage's B is read by them); kLeanEngine: the engine's kernel lean (kLean:
// no per-stage trace hooks, the signaller sleeping; 0.96x the time, v23 call 4).
template <int kCapPerTile, int kDecode = kBitmapMul, int kChunkTiles = 8, bool kPingPong = false,
          bool kLeanEngine = true>
struct UnstructuredBitmap : UnstructuredScatter<kCapPerTile> {
  static constexpr bool kWgB = true;  // B through a descriptor (N % 8 == 0)
  static constexpr bool kLean = kLeanEngine;
  template <int kStrips, int kKS>
  static constexpr int FixedBytes() {
    return kStrips * (kKS / 16) * kUnstBitmapTileBytes;
  }
  template <int kStrips, int kKS>
  static constexpr int CapacityWords() {
    return kCapPerTile * kStrips * (kKS / 16);
  }
  // The tiles' records, the values at capacity and 16 bytes more: a lane's loads past its own
  // values (slots whose bits are clear, their value dropped; kBitmapPairs: up to two halves)
  // stay in the slot.
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    static_assert(kStrips * kKS <= 4096, "counts are 16 bits");
    return (FixedBytes<kStrips, kKS>() + 2 * CapacityWords<kStrips, kKS>() + 16 + 127) / 128 * 128;
  }
  template <int kCW, int kMS, int kKS>
  static constexpr int ImageBytes() {
    return 0;
  }
  // One tile's four A registers for this lane: r its quad's record (bitmap word at r, counts at
  // r + 32), vals the stage's values, sh and before its place in the quad.
  __device__ static __forceinline__ void DecodeTile(uint32_t r, uint32_t vals, uint32_t sh, uint32_t before,
                                                    int lane, uint32_t (&af)[4]) {
    const uint32_t word = LdShared32(r);
    const uint32_t first = LdShared16(r + 32 - 2 * (lane >> 2)) + __popc(word & before);
    const uint32_t bits = word >> sh;  // (the decodes read bits 0-7 only)
    uint32_t at = vals + 2 * first;
    if constexpr (kDecode == kBitmapPred) {
      // One asm block a tile, so that the compiler adds no moves around the cursor: per slot
      // the bit's test sets p, the load and the cursor's advance run under it (a clear slot
      // keeps its zero); then one permutation a register. 32-bit halves (a .u16 load into a
      // .b32 register zero-extends). No memory clobber: the loads depend on the cursor, itself
      // on the record's loads after the stage's wait.
#define SPARSE_BM_SLOT(i, m)                               \
  "and.b32 t, %5, " #m ";\nsetp.ne.b32 p, t, 0;\n"          \
  "@p ld.shared.u16 h" #i ", [c];\n@p add.u32 c, c, 2;\n"
      asm("{\n.reg .pred p;\n.reg .b32 c, t, h0, h1, h2, h3, h4, h5, h6, h7;\n"
          "mov.b32 c, %4;\nmov.b32 h0, 0;\nmov.b32 h1, 0;\nmov.b32 h2, 0;\nmov.b32 h3, 0;\n"
          "mov.b32 h4, 0;\nmov.b32 h5, 0;\nmov.b32 h6, 0;\nmov.b32 h7, 0;\n"
          SPARSE_BM_SLOT(0, 1) SPARSE_BM_SLOT(1, 2) SPARSE_BM_SLOT(2, 4) SPARSE_BM_SLOT(3, 8)
          SPARSE_BM_SLOT(4, 16) SPARSE_BM_SLOT(5, 32) SPARSE_BM_SLOT(6, 64) SPARSE_BM_SLOT(7, 128)
          "prmt.b32 %0, h0, h1, 0x5410;\nprmt.b32 %1, h2, h3, 0x5410;\n"
          "prmt.b32 %2, h4, h5, 0x5410;\nprmt.b32 %3, h6, h7, 0x5410;\n}\n"
          : "=r"(af[0]), "=r"(af[1]), "=r"(af[2]), "=r"(af[3])
          : "r"(at), "r"(bits));
#undef SPARSE_BM_SLOT
    } else if constexpr (kDecode == kBitmapPred8) {
#define SPARSE_BM_TEST(i, m) "and.b32 t" #i ", %5, " #m ";\nsetp.ne.b32 p" #i ", t" #i ", 0;\n"
#define SPARSE_BM_LOAD(i) "@p" #i " ld.shared.u16 h" #i ", [c];\n@p" #i " add.u32 c, c, 2;\n"
      asm("{\n.reg .pred p0, p1, p2, p3, p4, p5, p6, p7;\n"
          ".reg .b32 c, t0, t1, t2, t3, t4, t5, t6, t7, h0, h1, h2, h3, h4, h5, h6, h7;\n"
          SPARSE_BM_TEST(0, 1) SPARSE_BM_TEST(1, 2) SPARSE_BM_TEST(2, 4) SPARSE_BM_TEST(3, 8)
          SPARSE_BM_TEST(4, 16) SPARSE_BM_TEST(5, 32) SPARSE_BM_TEST(6, 64) SPARSE_BM_TEST(7, 128)
          "mov.b32 c, %4;\nmov.b32 h0, 0;\nmov.b32 h1, 0;\nmov.b32 h2, 0;\nmov.b32 h3, 0;\n"
          "mov.b32 h4, 0;\nmov.b32 h5, 0;\nmov.b32 h6, 0;\nmov.b32 h7, 0;\n"
          SPARSE_BM_LOAD(0) SPARSE_BM_LOAD(1) SPARSE_BM_LOAD(2) SPARSE_BM_LOAD(3)
          SPARSE_BM_LOAD(4) SPARSE_BM_LOAD(5) SPARSE_BM_LOAD(6) SPARSE_BM_LOAD(7)
          "prmt.b32 %0, h0, h1, 0x5410;\nprmt.b32 %1, h2, h3, 0x5410;\n"
          "prmt.b32 %2, h4, h5, 0x5410;\nprmt.b32 %3, h6, h7, 0x5410;\n}\n"
          : "=r"(af[0]), "=r"(af[1]), "=r"(af[2]), "=r"(af[3])
          : "r"(at), "r"(bits));
#undef SPARSE_BM_TEST
#undef SPARSE_BM_LOAD
    } else if constexpr (kDecode == kBitmapPairs) {
      // Pattern p of slots 2 q, 2 q + 1: the register's bytes from v0 (the value at the cursor,
      // zero-extended: its bytes 2 and 3 are zero) and v1 (the next one, bytes 4 and 5):
      // p = 0: 0 | 0, 1: v0 | 0, 2: 0 | v0, 3: v0 | v1 (selectors 0x2222, 0x2210, 0x1022, 0x5410).
      constexpr unsigned long long kSel = 0x5410102222102222ull;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const uint32_t p = (bits >> (2 * q)) & 3;
        const uint32_t v0 = LdShared16(at), v1 = LdShared16(at + 2);
        af[q] = __byte_perm(v0, v1, static_cast<uint32_t>(kSel >> (16 * p)));
        at += 2 * ((p & 1) + (p >> 1));
      }
    } else {
      uint32_t h[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const uint32_t set = (bits >> i) & 1;
        h[i] = LdShared16(at) * set;  // a clear slot's load reads the next value: dropped
        at += 2 * set;
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) af[q] = h[2 * q] | (h[2 * q + 1] << 16);
    }
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int, int, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    static_assert(kNG == 1 && kMS == 1 && kCW % 4 == 0, "whole warpgroups of one strip per warp, no n-split");
    constexpr int kTiles = kKS / 16;
    // At most kChunkTiles tiles' A registers at once: wider stages decode and multiply in chunks.
    constexpr int kChunk = kTiles < kChunkTiles ? kTiles : kChunkTiles;
    constexpr int kChunks = kTiles / kChunk;
    static_assert(kChunkTiles <= 8 && kTiles % kChunk == 0, "whole chunks of at most 8 tiles");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t base = SmemAddr(st);
    // This lane's quad: its 32-bit bitmap word and count in each tile's record.
    const uint32_t rec = base + warp * kTiles * kUnstBitmapTileBytes + 4 * (lane >> 2);
    const uint32_t vals = base + FixedBytes<kCW, kKS>();
    const uint32_t sh = 8 * (lane & 3), before = (1u << sh) - 1;  // the quad's bits before this lane
    const uint64_t db = wg::Desc(a.b_desc, SmemAddr(bs));
    if constexpr (kPingPong && kChunks > 1) {
      uint32_t af[2][kChunk][4];
#pragma unroll
      for (int ci = 0; ci < kChunks; ++ci) {
        // The group that last read these registers (chunk ci - 2) complete; ci - 1's may run on.
        if (ci >= 2) wg::Wait<1>();
#pragma unroll
        for (int j = 0; j < kChunk; ++j)
          DecodeTile(rec + (ci * kChunk + j) * kUnstBitmapTileBytes, vals, sh, before, lane, af[ci & 1][j]);
        MultiplyRegisterA<kType, kNT8, kChunk>(acc, af[ci & 1], db, ci * kChunk);
      }
      // The stage's B is read by the groups: complete before the engine releases the stage.
      wg::Wait<0>();
      wg::Pin<kNT8 * 4>(&acc[0][0][0]);
    } else {
#pragma unroll 1
      for (int c = 0; c < kTiles; c += kChunk) {
        uint32_t af[kChunk][4];
#pragma unroll
        for (int j = 0; j < kChunk; ++j)
          DecodeTile(rec + (c + j) * kUnstBitmapTileBytes, vals, sh, before, lane, af[j]);
        MultiplyRegisterA<kType, kNT8, kChunk>(acc, af, db, c);
        // The stage's B is read by the group: complete before the engine releases the stage (and
        // the chunk's registers before the next chunk's decode writes them).
        wg::Wait<0>();
        wg::Pin<kNT8 * 4>(&acc[0][0][0]);
      }
    }
  }
};

}  // namespace engine
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_BITMAP_CUH_
