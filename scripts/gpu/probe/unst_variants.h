// The unstructured formats' engine variants for their workbench (unst_probe.cu): one group per
// decode kind and ring capacity, each compiled in its own object (unst_variants.cu with
// -DKIND=K -DGROUP=G) so that the GPU machine builds them in parallel.
#ifndef SPARSE_SCRIPTS_UNST_VARIANTS_H_
#define SPARSE_SCRIPTS_UNST_VARIANTS_H_
#include <cuda_runtime_api.h>

#include <vector>

#include "common/dtype.h"
#include "common/unstructured_stream.h"
#include "cuda/spmm/stream_unstructured.cuh"
#include "cuda/spmm/stream_unstructured_bitmap.cuh"
#include "cuda/spmm/stream_unstructured_pairs.cuh"
#include "cuda/spmm/stream_unstructured_rows.cuh"
#include "cuda/spmm/stream_unstructured_wg.cuh"
#include "scripts/gpu/probe/probe_util.h"

namespace sparse {
namespace probe {

using UnstKernelFn = void (*)(cuda::engine::Args);

// The decodes (name prefix; stream layout):
//   0 unst    UnstructuredScatter, zero-fill, ldmatrix + mma.sync (kStrip16; the first candidate)
//   1 unstcw  UnstructuredScatter, clear what was written (kStrip16)
//   2 unwg    UnstructuredWg, clear what was written, wgmma from shared memory (kWg64)
//   3 unwgzf  UnstructuredWg, zero-fill after each k-block's wgmma (kWg64)
//   4 unwg256 as unwg with stages of 256 columns (four k-blocks: more of the scatter overlaps
//             the wgmma; capacities 88, 32 and 16 only, the others' two stages do not fit)
//   5 unwgzf2 as unwgzf with a ring of 70 KB instead of 180, so that two blocks share an SM
//             where the registers allow it (N <= 16: at most 102 a thread); the profile of
//             v12 found the decode latency-bound with one block of 10 warps per SM
//             (capacities 144, 88, 32 and 16)
//   6 unbm    UnstructuredBitmap (kBitmapFrag): each tile's bitmap decoded into the registers of
//             wgmma's A (m64nNk16, A from registers): no image, no barrier per k-block; a 70 KB
//             ring, registers bounded for two blocks per SM at every N (__launch_bounds__)
//   7 unbm4   as unbm with 4 consumer warps (one warpgroup, row blocks of 64 rows), a 60 KB
//             ring and registers bounded for three blocks per SM
//   8 unwgzf4 as unwgzf2 with 4 consumer warps, a 60 KB ring and registers bounded for two
//             blocks per SM at every N, N = 32 and 64 included (capacities 144, 88, 32 and 16)
//   9 unbm4p  as unbm4, each A register built from its two slots' pattern at once (kBitmapPairs)
//  10 unbmp   as unbm, each slot's load and the cursor's advance under the bit's predicate
//             (kBitmapPred; v23 call 3: 61 SASS a tile in the consumers' loop against
//             kBitmapMul's 80)
//  11 unbm4x  as unbm4 with kBitmapPred
//  12 unbmpl  as unbmp (a 69 KB ring: its own instantiation) compiled with SPARSE_ENGINE_LEAN: no
//             trace code in the engine's loops and the signaller sleeping between its waits' tries
//  13 unbmp256 as unbmp with stages of 256 columns (16 tiles, decoded and multiplied in two
//             chunks of eight): half the engine's per-stage costs per tile
// Kinds 14-18 run on the lean engine (as unbmpl; ring budgets a KB apart from the non-lean
// kinds' so that no kernel has two instantiations):
//  14 unbm4xl as unbm4x (a 59 KB ring): the 4-warp baseline on the lean engine
//  15 unbmh   as unbmpl, the stage in two chunks of four tiles, ping-pong: the second chunk
//             decoded while the first one's wgmma run (kPingPong)
//  16 unbm4h  as unbm4xl with unbmh's chunks
//  17 unbm4q  as unbm4h with chunks of two tiles (16 A registers): registers bounded for four
//             blocks per SM (three at N = 32, two at N = 64: three spill there), a 52 KB ring
//  18 unbmh8  as unbmh with the eight predicates set before the loads (kBitmapPred8)
//  19 unbmq   as unbmh with chunks of two tiles (bounded for two blocks per SM at N = 64 its
//             registers spill 32 bytes: one there, as unbmh)
//  20 unpr    UnstructuredPairs (kPairFrag): a bit per A register, both its halves stored where
//             either is nonzero, one predicated 32-bit load a register; 8 warps, a 108 KB ring,
//             two blocks per SM (one at N = 64); capacities in registers per tile 128 / 100 /
//             72 / 32 for the groups of 256 / 144 / 88 / 32 values
//  21 unpr4   as unpr with 4 warps, a 72 KB ring, three blocks per SM (two at N = 64)
//  22 unpr256 as unpr with stages of 256 columns (two chunks of eight tiles) and a 200 KB ring,
//             one block per SM: longer copies, half the per-stage costs, more bytes in flight
//  23 unpr1   as unpr with a 200 KB ring, one block per SM
//  24 unpr4w  as unpr4 with stages of 256 columns, a 100 KB ring, two blocks per SM
//  25 unprt   as unpr with the engine's trace hooks (not lean): for `stages`, where its time goes
//  26 unprd   as unpr with the trimmed decode (v25, UnstructuredPairs' kTrim: each bit tested
//             against a per-lane mask, B's descriptor stepped in its low half)
//  27 unprdc  as unprd with chunks of four tiles (16 A registers)
//  28 unprd2c as unprdc with two blocks per SM at N = 64 too (registers bounded at 96: they
//             spill 32 bytes there, 56 with chunks of eight tiles; v25 did not build it)
//  29 unprdt  as unprd with the engine's trace hooks (not lean): for `stages`
//  30 unpr2q  as unpr (not trimmed) with chunks of two tiles (8 A registers) and two blocks per
//             SM at N = 64 too (registers bounded at 96)
//  31 unpr2h  as unpr2q with chunks of four tiles
//  32 unrow   UnstructuredRows (kRows): the CUDA cores walk each row's nonzeros (v25; v26:
//             1.04-2.5x unpr's time, not taken); 8 warps, a 108 KB ring, two blocks per SM (one
//             at N = 64); B as the mma.sync formats take it (N = 1 unpadded); capacities in
//             nonzeros per tile as the groups'
//  33 unrowp  as unrow with the row's two lanes taking its nonzeros in turn (kParity) at N <= 16
//  34 unrowpt as unrowp with the engine's trace hooks (not lean): for `stages` (v26: where the
//             engine's time goes when the stages hold almost nothing)
// All with 8 consumer warps of one strip (row blocks of 128 rows) and stages of 128 columns
// unless named. Kinds 6-11 and 13 keep the engine's trace hooks and spinning signaller
// (kLeanEngine false: as measured in v23); the others run its lean kernel.
constexpr int kUnstKinds = 35;
constexpr const char* kUnstKindNames[kUnstKinds] = {"unst",   "unstcw",  "unwg",   "unwgzf", "unwg256",
                                                    "unwgzf2", "unbm",   "unbm4",  "unwgzf4", "unbm4p",
                                                    "unbmp",  "unbm4x",  "unbmpl", "unbmp256",
                                                    "unbm4xl", "unbmh",   "unbm4h", "unbm4q",  "unbmh8",
                                                    "unbmq",   "unpr",    "unpr4",   "unpr256", "unpr1",
                                                    "unpr4w",  "unprt",   "unprd",   "unprdc",  "unprd2c",
                                                    "unprdt",  "unpr2q",  "unpr2h",  "unrow",   "unrowp",
                                                    "unrowpt"};

struct UnstVariant {
  const char* name;
  int kind;            // the decode (above)
  UnstLayout layout;   // the stream's layout
  bool wg;             // warpgroup MMA: N % 8 == 0, B staged for wgmma (SetupB's wg)
  DType type;
  int cap;             // nonzeros per 16 x 16 tile the ring's stages hold, on average
  int strips, kks;     // the stream's layout: strips per row block, columns per stage
  int capacity_words;  // a stage's room (BuildUnstStream's max_stage_words)
  int nt8, threads, smem, per_sm;
  UnstKernelFn fn;
};

// The ring capacities, one group each (per tile: any, 50 % + margin, 70 %, 90 %, 95 %).
constexpr int kUnstCaps[] = {256, 144, 88, 32, 16};
constexpr int kUnstGroups = 5;

#define SPARSE_UNST_GROUPS(X) \
  X(0, 0) X(0, 1) X(0, 2) X(0, 3) X(0, 4) X(1, 0) X(1, 1) X(1, 2) X(1, 3) X(1, 4) \
  X(2, 0) X(2, 1) X(2, 2) X(2, 3) X(2, 4) X(3, 0) X(3, 1) X(3, 2) X(3, 3) X(3, 4) \
  X(4, 2) X(4, 3) X(4, 4) X(5, 1) X(5, 2) X(5, 3) X(5, 4) X(6, 0) X(6, 1) X(6, 2) X(6, 3) X(6, 4) \
  X(7, 0) X(7, 1) X(7, 2) X(7, 3) X(7, 4) X(8, 1) X(8, 2) X(8, 3) X(8, 4) X(9, 0) X(9, 1) X(9, 2) X(9, 3) X(9, 4) \
  X(10, 0) X(10, 1) X(10, 2) X(10, 3) X(10, 4) X(11, 0) X(11, 1) X(11, 2) X(11, 3) X(11, 4) \
  X(12, 1) X(12, 2) X(12, 3) X(13, 1) X(13, 2) X(13, 3) X(14, 1) X(14, 2) X(14, 3) X(15, 1) X(15, 2) X(15, 3) \
  X(16, 1) X(16, 2) X(16, 3) X(17, 1) X(17, 2) X(17, 3) X(18, 1) X(18, 2) X(18, 3) \
  X(19, 1) X(19, 2) X(19, 3) X(20, 0) X(20, 1) X(20, 2) X(20, 3) X(21, 0) X(21, 1) X(21, 2) X(21, 3) \
  X(22, 1) X(22, 2) X(22, 3) X(23, 1) X(23, 2) X(23, 3) X(24, 1) X(24, 2) X(24, 3) \
  X(25, 1) X(25, 2) X(25, 3) X(26, 1) X(26, 2) X(26, 3) X(27, 1) X(27, 2) X(27, 3) X(28, 1) X(28, 2) X(28, 3) \
  X(29, 1) X(29, 2) X(29, 3) X(30, 1) X(30, 2) X(30, 3) X(31, 1) X(31, 2) X(31, 3) \
  X(32, 1) X(32, 2) X(32, 3) X(32, 4) X(33, 1) X(33, 2) X(33, 3) X(33, 4) \
  X(34, 1) X(34, 2) X(34, 3) X(34, 4)
#define SPARSE_UNST_DECLARE(k, g) std::vector<UnstVariant> UnstGroup_##k##_##g();
SPARSE_UNST_GROUPS(SPARSE_UNST_DECLARE)
#undef SPARSE_UNST_DECLARE

inline const std::vector<UnstVariant>& AllUnstVariants() {
  static std::vector<UnstVariant> all = [] {
    std::vector<UnstVariant> v;
#define SPARSE_UNST_APPEND(k, g)                   \
  {                                                \
    std::vector<UnstVariant> x = UnstGroup_##k##_##g(); \
    v.insert(v.end(), x.begin(), x.end());         \
  }
    SPARSE_UNST_GROUPS(SPARSE_UNST_APPEND)
#undef SPARSE_UNST_APPEND
    return v;
  }();
  return all;
}

}  // namespace probe
}  // namespace sparse
#endif
