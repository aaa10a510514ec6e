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
//     consumers store C;
//   - optionally (Params::sk_tiles > 0) the raster's last tiles are shared out by K instead
//     (stream-K, Cursor): each block gets an equal contiguous run of their K stages, so a tile
//     count that is not a multiple of the grid still keeps every SM busy to the end; a tile's
//     K-stage-0 block adds the other blocks' fp32 partials (an L2 workspace, one flag each)
//     and stores it;
//   - the epilogue stores from registers, or (kTmaStore) writes the tile into shared memory and
//     one thread per consumer warpgroup issues tensor stores that drain while the next tile's
//     wgmma run (kTmaStore pieces of the tile's columns at a time: 2 halves the buffer);
//   - optionally (kCluster = 2) the blocks run in clusters of two on vertically adjacent tiles
//     (row blocks 2u and 2u + 1, same columns): each block loads its own A and half of the
//     B stage, multicast into both blocks' shared memory, so each SM pulls 3/4 (n128) of the
//     bytes per stage from L2; a stage is refilled once the consumers of both blocks let it go.
//     kAlongN (v36, workbench only): the pair is two horizontally adjacent tiles instead (column
//     blocks 2v and 2v + 1, same rows), each block loading its own B and half of A's rows,
//     multicast into both (cuBLAS's 128 x 64 kernel at N = 256 runs clusters of 1 x 2).
//   - 2:4 A (kSpMS > 0, issue 25 step 2): A's stage is one contiguous run of staged 2:4 tiles
//     (common/sparse24.h, StageSp24Tiles with 16 strips, SpStageOffset) fetched by a bulk copy; consumer warps load their
//     strips' fragments and metadata into registers and the warpgroups issue
//     wgmma.mma_async.sp (ConsumeSp), tiles of 128 kSpMS rows; clusters of 2 along M as for
//     dense A (v54, workbench: each block copies its own A and half of B, multicast).
//   - 2:4 A read from shared memory (kSpSs, the `_ss` variants): A's stage is the compressed
//     values, already in the 64-byte swizzle's order, and their metadata, one contiguous run per
//     128 rows (StageSp24Runs, SsRunOffset; v61: a tensor copy of a plain row-major matrix of
//     K / 2 columns before), two bulk copies per run; consumer warps load only the metadata
//     words, and wgmma.mma_async.sp reads A
//     through a descriptor, so no registers hold A and tiles reach 256 x 192 and 384 x 128
//     (fewer bytes per multiply: the 2:4 kernels are limited by what an SM takes in).
//   - unstructured A (kUn, issue 25 step 3): A's stage is one run of the pair stream
//     (common/unstructured_stream.h, UnstLayout::kPairFrag, 8 strips x 64 columns: a record per
//     16 x 16 tile and the stored registers), fetched by one bulk copy of the run's own length
//     into a slot with room for kUn registers a tile on average (128: a dense stage);
//     consumer warps decode their strip's four tiles straight into wgmma A registers
//     (UnstructuredPairs::DecodeTile, the streaming engine's) and the warpgroups issue the dense
//     wgmma.mma_async with A from registers; the 2:4 consumers' loop and epilogue, tiles of 128.
//     Every tile is multiplied, zeros included, so an Inf or NaN in B would reach every row; a
//     warp whose sums are not all finite sums its rows again from their nonzeros (UnResum:
//     CSR's semantics, as the addon's other kernels keep).
// Shapes: any M; N and K multiples of 8 (the tensor maps' 16-byte row strides); edges past
// M, N and K arrive as zeros from the tensor copies and the stores are bounds-checked (the
// tensor stores clip at the tensor's edges).
#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "common/dtype.h"
#include "common/sparse24.h"
#include "common/unstructured_stream.h"
#include "cuda/common/mma.cuh"
#include "cuda/spmm/stream_engine.cuh"
#include "cuda/spmm/stream_unstructured_pairs.cuh"
#include "cuda/spmm/tc_stream.cuh"
#include "cuda/spmm/wgmma.cuh"

namespace sparse {
namespace cuda {
namespace gemm {

constexpr int kMTile = 128;   // rows of a tile: two consumer warpgroups of 64
constexpr int kKTile = 64;    // K per stage: one 128-byte swizzle row of 16-bit elements
constexpr int kAtomN = 64;    // B columns per 128-byte swizzle atom (and per tensor copy)
constexpr int kThreads = 384;

// The workbench's trace (scripts/gpu/probe/gemm_probe.cu, mode trace; never in the addon): with
// SPARSE_GEMM_TRACE defined, thread 128 (consumer warpgroup 0) of each block records its last
// segment in g_gemm_trace[block]: clock64 at 0 the block's start, 1 the first stage full, 2 the
// main loop done, 3 the fixup done, 4 the stores issued, 5 the block's end; 6 the cycles spent
// waiting for full stages after the first, 7 the segment's stages; globaltimer (ns) at 8 the
// start and 9 the end. Under the cooperative fixup (CoopTile) also clock64 at 10 the own sums
// saved, 11 every piece's arrival seen, 12 the others' sums added; 13 the piece's index in its
// tile, 14 the globaltimer at its arrival (the pieces' skew).
#if defined(SPARSE_GEMM_TRACE)
constexpr int kTraceBlocks = 1024, kTraceSlots = 15;
__device__ unsigned long long g_gemm_trace[kTraceBlocks][kTraceSlots];
__device__ __forceinline__ unsigned long long TraceClock() { return clock64(); }
__device__ __forceinline__ unsigned long long TraceGlobal() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#define SPARSE_GEMM_TRACE_AT(slot, value)                                                        \
  do {                                                                                          \
    if (threadIdx.x == 128 && blockIdx.x < kTraceBlocks) g_gemm_trace[blockIdx.x][slot] = (value); \
  } while (0)
#else
#define SPARSE_GEMM_TRACE_AT(slot, value) \
  do {                                    \
  } while (0)
#endif

// Programmatic dependent launch's hooks (Params::pdl), compiled in where SPARSE_GEMM_PDL is defined:
// the workbench (scripts/gpu/probe/gemm_build.sh), not the addon, until measured (v35).
#if defined(SPARSE_GEMM_PDL)
constexpr bool kGemmPdl = true;
#else
constexpr bool kGemmPdl = false;
#endif

// (v61) Two workbench switches of v59-v60 are the engine's own now: the 2:4 consumers' main loop
// unrolled by two, so that each fragment buffer has its own loads (ConsumeSp), and the `_ss`
// kernels' A and metadata from one contiguous run per 128 rows and K stage (SsRunOffset), in two
// bulk copies, instead of a tensor copy of 128 rows of 64 bytes lying K bytes apart. On an H100's
// workbench (v61, one call, against three runs of the old build): the 128 x 256 `_ss1` tile 0.938x
// and 0.919x its time with both (unroll2 alone 0.956x, the runs alone 0.979x), 256 x 192 `_ss2`
// 0.967-0.983x, 256 x 128 `sp2` unchanged (docs/gemm-engine.md "v61"). v59's L2 cache policies on
// the tensor copies, v60's B in one 3-D box and A's fragments loaded from global memory were
// measured (v60: no change, no change, 1.15-1.38x slower) and removed (in git at 82b75d1).

// The unstructured consumers (kUn) run the 2:4 loop unrolled by two too (ConsumeSp), so that each
// fragment buffer has its own decode (v62's workbench switch SPARSE_GEMM_UN_UNROLL2, measured on an
// H100 in v63 against two runs of the loop not unrolled: the 128-column tiles 0.90-0.93x their
// time at 70 and 90 %, N = 256 and 1024, the 256-column ones 0.96-0.99x, though ptxas spills more
// in the 4-stage one; taken, the switch removed). v61's SPARSE_GEMM_EARLY_TEST (the next stage's
// barrier tested with mbarrier.test_wait before the wait on the tensor cores) was measured on the
// H200 in v62 (0.983-0.990x, within the base runs' spread) and removed (in git at 68d1a30).

// One launch. The tensor maps are built on the host (gemm_engine_host.h).
struct Params {
  CUtensorMap a_map;  // A as a K x M tensor (K innermost), box 64 x 128, 128-byte swizzle
  CUtensorMap b_map;  // B as an N x K tensor (N innermost), box 64 x 64, 128-byte swizzle
  CUtensorMap c_map;  // C as an N x M tensor, box 64 x 64, 128-byte swizzle (kTmaStore only)
  void* c;            // M x N, row-major, on the device
  const void* b;      // K x N, row-major, on the device (read directly only by UnResum)
  // 2:4 variants (kSpMS > 0) read A from its staged tiles instead of a_map: StageSp24Tiles
  // (common/sparse24.h) with kSpStageStrips (16) strips and 2 k-steps per stage, one form for
  // both tile heights (SpStageOffset: a tile's stage is one contiguous run).
  const void* a_tiles;
  // 2:4 variants with A from shared memory (kSpSs): a_tiles holds the runs instead
  // (StageSp24Runs(t, u) with u a multiple of kSpMS, common/sparse24.h; SsRunOffset), and ss is 1.
  // (v61: ss and reserved take the 16 bytes of the two fields the runs replaced, so that the
  // fields below keep their offsets and the other kernels' code is unchanged.)
  int ss;
  int reserved[3];
  // Unstructured variants (kUn): a_tiles holds the pair stream's runs and a_runs its offset
  // table (m_blocks k_blocks + 1 entries in 16-byte units: run (mb, kb) is entry mb k_blocks + kb);
  // a_run_max the longest run's bytes (a kernel whose slot is shorter refuses the launch).
  const uint32_t* a_runs;
  int a_run_max;
  // Dense A (M x K, row-major, K a multiple of 8: the pointer behind a_map), read directly only by
  // the kDenseResum kernels' DenseResum.
  const void* a_dense;
  // Stream-K workspace, on the device, for grids of up to `slots` blocks: partials holds 2
  // slots per block (one per consumer warpgroup) of 64 x 256 floats; flags 2 ints per block,
  // zero before a launch and zero again after it (each is reset by the block that consumes
  // it). Unused when sk_tiles is 0.
  float* partials;
  int* flags;
  int slots;
  int m, n, k;
  int m_blocks, n_blocks, k_blocks;
  int m_units;        // rows of the raster: m_blocks, or with clusters of 2 pairs of row blocks
  int n_units;        // columns of the raster: n_blocks, or with clusters along N pairs of column blocks
  int group;          // raster rows per raster group (TileOf)
  // The work decomposition (gemm_host::Decompose): the grid (in clusters), the raster's first
  // dp_tiles tiles dealt whole round robin, its last sk_tiles tiles shared out by K stages
  // among the first sk_grid blocks (all of them, or, splitting only the tail, `split` per tile).
  int grid, dp_tiles, sk_tiles, sk_grid;
  // The tail split's pieces per tile when they reduce it together (stream_k 3, CoopTile), else 0.
  int coop;
  // 1: launched with programmatic dependent launch (gemm_host::Launch adds the attribute; the
  // workbench's GEMM_PDL=1 in a build with SPARSE_GEMM_PDL, v35, not the addon): the producer
  // requests the ring's first stages' A (prepared weights: nothing a previous kernel writes)
  // before griddepcontrol.wait and their B after it; the consumers wait before any global access
  // (C, the stream-K workspace, B). 0: each stage's B right after its A (stage 0 not queued
  // behind the ring's other A: the streaming engine's v14 finding).
  int pdl;
};

// Tile t of the raster: groups of `group` rows (row blocks, or pairs of them for clusters;
// the last group may be shorter), each walked column block by column block, rows fastest. A
// bijection of [0, m_blocks n_blocks) onto the tiles; checked by the workbench's selftest.
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
// The tile that block `rank` of a cluster of `cluster` runs for raster unit `unit`: row block
// unit.mb cluster + rank (clusters along M, Params::m_units pairs), or column block unit.nb
// cluster + rank (along N, Params::n_units pairs). Past M or N for the last unit's later blocks
// when the blocks do not divide evenly (they load zeros and store nothing). The selftest checks
// that every tile is some (unit, rank)'s exactly once.
__host__ __device__ __forceinline__ Tile ClusterTile(Tile unit, int rank, int cluster, bool along_n) {
  return along_n ? Tile{unit.mb, unit.nb * cluster + rank} : Tile{unit.mb * cluster + rank, unit.nb};
}

// Stream-K: the sk_tiles k_blocks stages of the stream-K tiles, cut into `sk_grid` contiguous
// runs; block b's run starts at SkStart(b) (SkStart(sk_grid) is the total; blocks from sk_grid
// on have none). Decompose keeps sk_grid <= the total, so no run of those blocks is empty.
__host__ __device__ __forceinline__ int SkStart(const Params& p, int b) {
  const int64_t q = b < p.sk_grid ? b : p.sk_grid;
  return static_cast<int>(q * p.sk_tiles * p.k_blocks / (p.sk_grid > 0 ? p.sk_grid : 1));
}

// One piece of a block's work: K stages [kb0, kb1) of raster tile `tile`.
struct Segment {
  int tile, kb0, kb1;
};

// A block's work in order: its whole tiles b, b + grid, ... below dp_tiles, then its stream-K
// run split at tile boundaries. Only a run's first segment can start past K stage 0 (it is
// then a partial for an earlier block to add), and only its last can end before the tile's
// last stage. A stream-K segment from stage 0 makes its block the tile's owner, which adds
// the partials of the later blocks whose runs start inside the tile (SkContributes). The producer and the consumers walk it independently; the
// workbench's selftest checks that every (tile, stage) is covered once.
struct Cursor {
  int t, it, end;
  __host__ __device__ __forceinline__ Cursor(const Params& p, int b) : t(b), it(SkStart(p, b)), end(SkStart(p, b + 1)) {}
  __host__ __device__ __forceinline__ bool Next(const Params& p, Segment* s) {
    if (t < p.dp_tiles) {
      *s = Segment{t, 0, p.k_blocks};
      t += p.grid;
      return true;
    }
    if (it >= end) return false;
    const int local = it / p.k_blocks, first = local * p.k_blocks;
    s->tile = p.dp_tiles + local;
    s->kb0 = it - first;
    s->kb1 = end - first < p.k_blocks ? end - first : p.k_blocks;
    it = first + s->kb1;
    return true;
  }
};

// Whether block j (> the owner) holds a partial of the stream-K tile whose stages end at run
// position `tile_end` (= (tile - dp_tiles + 1) k_blocks): its run starts inside the tile.
// Owners only wait on later blocks, whose partial is the first thing of their run, so the
// waits form no cycle as long as every block of the grid is resident (grid <= SMs).
__host__ __device__ __forceinline__ bool SkContributes(const Params& p, int j, int tile_end) {
  return j < p.grid && SkStart(p, j) < tile_end;
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
// The compressed 2:4 A of the `_ss` kernels, K-major with the 64-byte swizzle: rows of 64
// bytes (32 compressed values: one K stage), 16-byte chunk c of row r at c ^ ((r >> 1) & 3),
// repeating every 8 rows (512 bytes); the stride byte offset steps between 8-row groups. A
// wgmma.sp k32 reads 16 compressed values (32 bytes) per row: the second k-step starts 32
// bytes further.
constexpr uint64_t kSwizzle64 = 2ull << 62;
constexpr uint64_t kASsDesc = kSwizzle64 | ((512ull >> 4) << 32) | (1ull << 16);

// The staged 2:4 form every 2:4 variant reads: stages of 16 strips (256 rows) x 2 k-steps (64
// columns of K), row block by row block, K stage by K stage (StageSp24Tiles(t, 16, 2)).
constexpr int kSpStageStrips = 16;
constexpr int kSpStageBytes = kSpStageStrips * 2 * kSp24StagedTileBytes;
// Where the A run of tile row block mb, K stage kb starts in that form, for tiles of 128 sp
// rows: a 256-row tile's is a whole stage; a 128-row tile's is the first or second half (its
// 8 strips' tiles are contiguous there, strip-major). Shared by the producer and the
// workbench's selftest.
__host__ __device__ constexpr int64_t SpStageOffset(int sp, int k_blocks, int mb, int kb) {
  return (static_cast<int64_t>(mb / (2 / sp)) * k_blocks + kb) * kSpStageBytes +
         static_cast<int64_t>(mb % (2 / sp)) * (kSpStageBytes / 2);
}

// The `_ss` kernels' runs (StageSp24Runs, common/sparse24.h: its kSp24RunBytes): unit u (rows
// 128 u..) at K stage kb is kSsRunBytes at (u k_blocks + kb) kSsRunBytes: row r's 64 bytes of
// compressed values at 64 r, their 16-byte chunk c at 16 (c ^ ((r >> 1) & 3)) (the 64-byte
// swizzle wgmma's descriptor reads), then the unit's 8 strips' metadata (128 bytes each:
// StageSp24Meta's 2 k-steps of 16 words). A tile of 128 kSpMS rows reads units kSpMS mb.. (so
// there are at least kSpMS m_blocks of them: MakeParams' `ss_units`). (The workbench's own
// reference of the form, which the engine does not read, is in gemm_probe.cu since v62.)
constexpr int kSsRunBytes = kSp24RunBytes;
static_assert(kMTile == kSp24RunRows && kSsRunBytes == kMTile * 64 + kMTile * 8, "one `_ss` run form (common/sparse24.h)");
__host__ __device__ constexpr int64_t SsRunOffset(int k_blocks, int unit, int kb) {
  return (static_cast<int64_t>(unit) * k_blocks + kb) * kSsRunBytes;
}

// The most accumulators a consumer thread holds (the `_ss` tiles of 256 x 192 and 384 x 128):
// what a stream-K partial slot is sized for (gemm_host::PartialFloats).
constexpr int kMaxAccPerThread = 192;

// kSpMS: 0 for dense A; 1 or 2 for 2:4 A (strips of 16 rows per consumer warp and stage:
// tiles of 128 kSpMS rows, each consumer warpgroup owning 64 kSpMS of them); up to 3 with
// kSpSs (A from shared memory, no fragment registers).
// The pair stream's stage as the unstructured kernels read it: 8 strips x 64 columns, the
// records of its 32 tiles, then the stored registers: a slot with room for `cap` of them a tile
// on average over the stage (128: every register, a dense stage) is UnStageBytes(cap).
constexpr int kUnStrips = kMTile / 16;
constexpr int kUnTiles = kUnStrips * (kKTile / 16);
constexpr int kUnRecordBytes = kUnTiles * kUnstPairTileBytes;
__host__ __device__ constexpr int UnStageBytes(int cap) { return kUnRecordBytes + kUnTiles * cap * 4; }

template <int kNTile, int kStages, int kTmaStore, int kSpMS = 0, bool kSpSs = false, int kUn = 0>
struct Layout {
  static_assert(kNTile % kAtomN == 0 && kNTile <= 256, "whole swizzle atoms, wgmma N <= 256");
  static_assert(kSpMS >= 0 && kSpMS <= (kSpSs ? 3 : 2) && kSpMS * kNTile <= (kSpSs ? 384 : 256),
                "accumulators fit the consumers' registers");
  static_assert((kSpMS > 0 ? kSpMS : 1) * kNTile / 2 <= kMaxAccPerThread, "a stream-K slot holds the sums");
  static_assert(!kSpSs || kSpMS > 0, "A from shared memory is a 2:4 form");
  static_assert(!kUn || (kSpMS == 1 && !kSpSs && kUn <= 128), "unstructured tiles are 128 rows, A in registers");
  static constexpr int kRows = kSpMS > 0 ? kMTile * kSpMS : kMTile;  // rows of a tile
  // A's part of a stage: dense 128 x 64 halves, 8 kSpMS strips x 2 k-steps of 2:4 tiles, or
  // (kSpSs) kRows rows of 32 compressed values; then B; then (kSpSs) the metadata.
  static constexpr int kABytes = kUn    ? UnStageBytes(kUn)
                                 : kSpSs ? kRows * 64
                                 : kSpMS > 0 ? kSpStageBytes / 2 * kSpMS
                                             : kMTile * kKTile * 2;
  static constexpr int kBBytes = kKTile * kNTile * 2;
  static constexpr int kMetaBytes = kSpSs ? kRows * 8 : 0;
  static constexpr int kStageBytes = kABytes + kBBytes + kMetaBytes;
  static_assert(kStageBytes % 1024 == 0, "stages keep the swizzle's 1024-byte alignment");
  // The C tile staged for the tensor stores: per consumer warpgroup kNTile / 64 / kTmaStore
  // boxes of 64 rows x 128 bytes, after the ring (so 1024-byte aligned, as the swizzle needs).
  // 2:4 tiles of 256 rows stage one 64-row m-slice per warpgroup at a time, and kTmaStore = 2
  // half its columns at a time (StoreTileTma waits for the previous piece's stores to have read
  // the buffer), so every variant stages 128 rows.
  static_assert(kTmaStore >= 0 && kTmaStore <= 4 && kNTile % ((kTmaStore > 0 ? kTmaStore : 1) * kAtomN) == 0,
                "C staged whole or in pieces of whole boxes");
  static constexpr int kCBytes = kTmaStore > 0 ? kMTile * kNTile * 2 / (kTmaStore > 0 ? kTmaStore : 1) : 0;
  // The ring, the C tile, the full and empty barriers, and room to align the dynamic shared memory.
  // Where that passes the limit (v58: 256 x 192 on 5 stages, C staged in thirds, 80 bytes over),
  // the barriers take the alignment's room instead: before the ring where the room there holds
  // them, else after the C tile, where the rest of it is (at least 512 bytes either way).
  static constexpr int kBarrierBytes = 2 * kStages * 8;
  static constexpr bool kBarriersInPad = kStages * kStageBytes + kCBytes + kBarrierBytes + 1024 > 227 * 1024;
  static_assert(kBarrierBytes <= 512, "the barriers fit the alignment's room on one side of the ring");
  static constexpr int kSmemBytes = kStages * kStageBytes + kCBytes + (kBarriersInPad ? 0 : kBarrierBytes) + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "the ring and the C tile fit in one SM's shared memory");
};

#define SPARSE_GEMM_D_32                                                     \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define SPARSE_GEMM_D_64                                                               \
  SPARSE_GEMM_D_32 ", "                                                                 \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "    \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SPARSE_GEMM_D_96                                                                        \
  SPARSE_GEMM_D_64 ", "                                                                         \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define SPARSE_GEMM_D_128                                                                       \
  SPARSE_GEMM_D_96 ", "                                                                         \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define SPARSE_GEMM_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SPARSE_GEMM_F16(i) SPARSE_GEMM_F4(i), SPARSE_GEMM_F4(i + 4), SPARSE_GEMM_F4(i + 8), SPARSE_GEMM_F4(i + 12)
#define SPARSE_GEMM_F32(i) SPARSE_GEMM_F16(i), SPARSE_GEMM_F16(i + 16)
#define SPARSE_GEMM_F64(i) SPARSE_GEMM_F32(i), SPARSE_GEMM_F32(i + 32)
#define SPARSE_GEMM_F96(i) SPARSE_GEMM_F64(i), SPARSE_GEMM_F32(i + 64)
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

SPARSE_GEMM_WGMMA(64, 32, "%32", "%33", "%34", kF16, "f16", SPARSE_GEMM_F32(0))
SPARSE_GEMM_WGMMA(64, 32, "%32", "%33", "%34", kBF16, "bf16", SPARSE_GEMM_F32(0))
SPARSE_GEMM_WGMMA(128, 64, "%64", "%65", "%66", kF16, "f16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA(128, 64, "%64", "%65", "%66", kBF16, "bf16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA(256, 128, "%128", "%129", "%130", kF16, "f16", SPARSE_GEMM_F128(0))
SPARSE_GEMM_WGMMA(256, 128, "%128", "%129", "%130", kBF16, "bf16", SPARSE_GEMM_F128(0))

#undef SPARSE_GEMM_WGMMA

// wgmma m64nNk32 with 2:4 A, A and B from shared memory (the `_ss` kernels): D's N / 2
// accumulators, A's descriptor (the compressed values), B's, the metadata word, selector 0;
// always accumulates (D += A B); scales 1, A K-major, B N-major.
template <DType kType, int kN>
struct WgmmaSpSs;

// IA: the operand number of A's descriptor; B's, the metadata's and the selector's follow.
#define SPARSE_GEMM_WGMMA_SP_SS(NN, NREG, IA, IB, IE, ISEL, IS, TYPE, PTX, DOPS)                      \
  template <>                                                                                         \
  struct WgmmaSpSs<DType::TYPE, NN> {                                                                 \
    __device__ __forceinline__ static void Run(float* d, uint64_t a, uint64_t b, uint32_t e) {        \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"                                    \
                   "wgmma.mma_async.sp.sync.aligned.m64n" #NN "k32.f32." PTX "." PTX " "             \
                   "{" SPARSE_GEMM_D_##NREG "}, " IA ", " IB ", " IE ", " ISEL ", p, 1, 1, 0, 1;\n}\n"  \
                   : DOPS                                                                             \
                   : "l"(a), "l"(b), "r"(e), "n"(0), "r"(1));                                         \
    }                                                                                                 \
  };

SPARSE_GEMM_WGMMA_SP_SS(128, 64, "%64", "%65", "%66", "%67", "%68", kF16, "f16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA_SP_SS(128, 64, "%64", "%65", "%66", "%67", "%68", kBF16, "bf16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA_SP_SS(192, 96, "%96", "%97", "%98", "%99", "%100", kF16, "f16", SPARSE_GEMM_F96(0))
SPARSE_GEMM_WGMMA_SP_SS(192, 96, "%96", "%97", "%98", "%99", "%100", kBF16, "bf16", SPARSE_GEMM_F96(0))
SPARSE_GEMM_WGMMA_SP_SS(256, 128, "%128", "%129", "%130", "%131", "%132", kF16, "f16", SPARSE_GEMM_F128(0))
SPARSE_GEMM_WGMMA_SP_SS(256, 128, "%128", "%129", "%130", "%131", "%132", kBF16, "bf16", SPARSE_GEMM_F128(0))

#undef SPARSE_GEMM_WGMMA_SP_SS

// wgmma m64nNk16 with A from registers (the unstructured kernels: four registers of the
// m16n8k16 A fragment per warp, warp w's rows at 16 w) and B from shared memory: always
// accumulates (D += A B); scales 1, B N-major.
template <DType kType, int kN>
struct WgmmaRs;

// IA: A's four register operands; B's descriptor and scale-d follow.
#define SPARSE_GEMM_WGMMA_RS(NN, NREG, IA, IB, IS, TYPE, PTX, DOPS)                                   \
  template <>                                                                                         \
  struct WgmmaRs<DType::TYPE, NN> {                                                                   \
    __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b) {        \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32." PTX "." PTX " "                \
                   "{" SPARSE_GEMM_D_##NREG "}, " IA ", " IB ", p, 1, 1, 1;\n}\n"                      \
                   : DOPS                                                                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));                     \
    }                                                                                                 \
  };

SPARSE_GEMM_WGMMA_RS(128, 64, "{%64, %65, %66, %67}", "%68", "%69", kF16, "f16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA_RS(128, 64, "{%64, %65, %66, %67}", "%68", "%69", kBF16, "bf16", SPARSE_GEMM_F64(0))
SPARSE_GEMM_WGMMA_RS(256, 128, "{%128, %129, %130, %131}", "%132", "%133", kF16, "f16", SPARSE_GEMM_F128(0))
SPARSE_GEMM_WGMMA_RS(256, 128, "{%128, %129, %130, %131}", "%132", "%133", kBF16, "bf16", SPARSE_GEMM_F128(0))

#undef SPARSE_GEMM_WGMMA_RS
#undef SPARSE_GEMM_F128
#undef SPARSE_GEMM_F96
#undef SPARSE_GEMM_F64
#undef SPARSE_GEMM_F32
#undef SPARSE_GEMM_F16
#undef SPARSE_GEMM_F4
#undef SPARSE_GEMM_D_128
#undef SPARSE_GEMM_D_96
#undef SPARSE_GEMM_D_64
#undef SPARSE_GEMM_D_32

// Arrives on the mbarrier at shared-memory offset `bar` of cluster block `rank` (this one
// included). The arrival only says "this slot has been read" (by wgmma, from shared memory):
// it publishes no data, so it keeps the default release.cta semantics, as CUTLASS's
// ClusterBarrier does. `.release.cluster` made every arrival a cluster-scope memory barrier:
// ncu showed the consumers stalled on it ("membar", 43 % of their cycles) and the clustered
// variants ran 2-3x slower than the plain ones (v11, call 2).
__device__ __forceinline__ void MbarArriveCluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
// A tensor copy written to the same offset `dst` of every cluster block in `mask`, each
// counting its bytes on its own mbarrier at offset `bar`.
__device__ __forceinline__ void TensorCopy2dMulticast(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar,
                                                      uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}

// A barrier among the 128 threads of one consumer warpgroup (ids 1 and 2; 0 is __syncthreads).
__device__ __forceinline__ void WarpgroupSync(int cw) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
}
// 64 x 64 box of C (128-byte swizzle) from shared memory to columns x.., rows y.. of the
// tensor; elements past the tensor's edges are not written.
__device__ __forceinline__ void TensorStore2d(const CUtensorMap* map, uint32_t src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}
__device__ __forceinline__ void BulkCommit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// The issuing thread's tensor stores have read their shared memory (it can be rewritten).
__device__ __forceinline__ void BulkWaitRead() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// ... and have completed (before the block exits).
__device__ __forceinline__ void BulkWait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Makes this thread's shared-memory writes visible to the tensor stores (the async proxy).
__device__ __forceinline__ void FenceProxyAsync() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ int LoadAcquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void StoreRelease(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void AddRelease(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ int AddAcqRel(int* p, int v) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

// Moves registers between the warpgroups (every warp of a warpgroup executes the same one):
// the producer needs few, the consumers' accumulators many. Only within what the launch holds:
// 168 a thread at 384 threads (65536 / 384, rounded down to a multiple of 8); a setmaxnreg.inc
// beyond the registers the other warpgroups gave back waits for ever (v32: 80 + 2 x 216 = 512 a
// lane against 504 hung every block).
constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8, kProducerRegs = 40, kConsumerRegs = 232;
static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * kLaunchRegs, "setmaxnreg within the launch's registers");
template <int kRegs>
__device__ __forceinline__ void RegsDec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void RegsInc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// The producer thread: for each of this block's segments, each K stage: wait until the slot is
// free, announce its bytes, issue A's copy and B's kNTile / 64 copies (in a cluster: its share
// of them, to every block). Boxes past M, N or K arrive as zeros and still count their full
// bytes (the second block of a cluster past M loads zeros and stores nothing). The full
// barrier counts the whole stage, its own copies and the other block's multicast alike.
// Unstructured A (kUn): the stage's run is as long as its stored registers need, so the full
// barrier expects the run's bytes and B's; the run's offsets are read before the wait for the
// slot, which hides their latency behind it. (v30: neither reading them 4 stages ahead, which
// made ptxas spill in the 128-column kernels, nor issuing B's copies before the load returns
// shortened the first stage's wait: 4.3-4.5 K cycles at 4096², N = 256, either way.)
template <int kNTile, int kStages, int kTmaStore, int kCluster, int kSpMS, bool kSpSs, int kUn, bool kAlongN = false>
__device__ __forceinline__ void Produce(const Params& p, unsigned char* ring, uint32_t full0, uint32_t empty0,
                                        int rank) {
  using L = Layout<kNTile, kStages, kTmaStore, kSpMS, kSpSs, kUn>;
  // Along M a block copies 1 / kCluster of the B stage (multicast); along N all of its own.
  constexpr int kBSplit = kAlongN ? 1 : kCluster;
  constexpr int kAtomsPerBlock = kNTile / kAtomN / kBSplit;
  static_assert(kNTile / kAtomN % kBSplit == 0, "the B stage splits into whole atoms per cluster block");
  static_assert(!kAlongN || (kCluster == 2 && kSpMS == 0 && kUn == 0), "clusters along N: pairs, dense A");
  if constexpr (kSpMS == 0) engine::PrefetchTensorMap(&p.a_map);  // (2:4 tiles: no map of A)
  engine::PrefetchTensorMap(&p.b_map);
  int stage = 0;
  uint32_t phase = 0;
  // B's copies for column block nb, K stage kb into the stage buffer at `st`.
  auto copy_b = [&](uint32_t st, int nb, int kb, uint32_t full) {
#pragma unroll
    for (int i = 0; i < kAtomsPerBlock; ++i) {
      const int j = (kAlongN ? 0 : rank * kAtomsPerBlock) + i;
      const uint32_t dst = st + L::kABytes + j * kKTile * 128;
      if (kCluster == 1 || kAlongN)
        engine::TensorCopy2d(dst, &p.b_map, nb * kNTile + j * kAtomN, kb * kKTile, full);
      else
        TensorCopy2dMulticast(dst, &p.b_map, nb * kNTile + j * kAtomN, kb * kKTile, full, (1u << kCluster) - 1);
    }
  };
  // Under PDL (p.pdl) the first pass through the ring defers its B: `pending` stages (slots 0..)
  // hold only their A until the ring is full or the work ends, then the wait for the previous
  // kernel, then their B. Indexed by unrolled compares, so that they stay in registers.
  int pending = 0, pend_nb[kStages], pend_kb[kStages];
  bool deferring = kGemmPdl && p.pdl != 0;
  auto flush = [&] {
    if constexpr (kGemmPdl) engine::GridDependencyWait();
#pragma unroll
    for (int i = 0; i < kStages; ++i)
      if (i < pending) copy_b(SmemAddr(ring + i * L::kStageBytes), pend_nb[i], pend_kb[i], full0 + 8 * i);
    deferring = false;
  };
  Cursor cursor(p, blockIdx.x / kCluster);
  Segment sg;
  while (cursor.Next(p, &sg)) {
    const Tile own = ClusterTile(TileOf(sg.tile, p.m_units, p.n_units, p.group), rank, kCluster, kAlongN);
    const int mb = own.mb, nb = own.nb;
    // A cluster's second block past the last row block (an odd count) copies the last one's
    // 2:4 A (the bulk copies have no edge to clip at) and stores nothing.
    const int amb = mb < p.m_blocks ? mb : p.m_blocks - 1;
    for (int kb = sg.kb0; kb < sg.kb1; ++kb) {
      uint32_t run0 = 0, run_bytes = 0;
      if constexpr (kUn) {
        const uint32_t* off = p.a_runs + static_cast<int64_t>(mb) * p.k_blocks + kb;
        run0 = __ldg(off);
        run_bytes = (__ldg(off + 1) - run0) * 16;
      }
      // A fresh barrier's "previous phase" (parity 1) counts as complete: the first pass
      // through the ring does not wait.
      engine::MbarWait(empty0 + 8 * stage, phase ^ 1);
      const uint32_t full = full0 + 8 * stage;
      const uint32_t st = SmemAddr(ring + stage * L::kStageBytes);
      engine::MbarArriveExpectTx(full, kUn ? run_bytes + L::kBBytes : L::kStageBytes);
      if constexpr (kUn) {
        engine::BulkCopy(st, static_cast<const unsigned char*>(p.a_tiles) + 16 * static_cast<int64_t>(run0), run_bytes,
                         full);
      } else if constexpr (kSpSs) {
        // Each 128-row unit's run: its values into the stage's A, its metadata after B.
#pragma unroll
        for (int h = 0; h < L::kRows / kMTile; ++h) {
          const unsigned char* run = static_cast<const unsigned char*>(p.a_tiles) +
                                     SsRunOffset(p.k_blocks, amb * (L::kRows / kMTile) + h, kb);
          engine::BulkCopy(st + h * kMTile * 64, run, kMTile * 64, full);
          engine::BulkCopy(st + L::kABytes + L::kBBytes + h * kMTile * 8, run + kMTile * 64, kMTile * 8, full);
        }
      } else if constexpr (kSpMS > 0)
        engine::BulkCopy(st, static_cast<const unsigned char*>(p.a_tiles) + SpStageOffset(kSpMS, p.k_blocks, amb, kb),
                         L::kABytes, full);
      else if constexpr (kAlongN)  // (rows 64 rank.. of the tile: a_map's box is 64 rows here)
        TensorCopy2dMulticast(st + rank * (kMTile / 2) * 128, &p.a_map, kb * kKTile, mb * kMTile + rank * (kMTile / 2),
                              full, (1u << kCluster) - 1);
      else
        engine::TensorCopy2d(st, &p.a_map, kb * kKTile, mb * kMTile, full);
      if (deferring) {
#pragma unroll
        for (int i = 0; i < kStages; ++i)
          if (i == pending) pend_nb[i] = nb, pend_kb[i] = kb;
        if (++pending == kStages) flush();
      } else {
        copy_b(st, nb, kb, full);
      }
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
  if (deferring) flush();  // (less work than a ring)
}

// Stores a consumer warpgroup's 64 x kNTile sums at rows row0.., columns col0.. of C (pairs of
// columns: N is even), skipping what lies past M or N, and the 64-column boxes outside [lo, hi)
// (another piece's under the cooperative fixup).
template <DType kType, int kNTile>
__device__ __forceinline__ void StoreTile(const Params& p, int row0, int col0, const float* d, int lo, int hi) {
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
      if (col < p.n && j / 8 >= lo && j / 8 < hi) *reinterpret_cast<uint32_t*>(crow + col) = PackOut<kType>(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
  }
}

// The same through shared memory: the warpgroup writes its 64 x kNTile sums into its part
// of the C tile `cbuf` (kNTile / 64 boxes of 64 rows x 128 bytes in the 128-byte swizzle,
// chunk c of row r at c ^ (r & 7): the 8 rows one 32-bit store instruction covers land in 8
// different chunks, so the stores are free of bank conflicts), then its thread 0 issues the
// tensor stores and returns at once; they drain while the next tile's wgmma run. Before
// rewriting the buffer, thread 0 waits until the previous tile's stores have read it.
// kPieces = 2: the buffer holds half the columns; the second half waits for the first's stores
// to have read it (a smaller buffer leaves room for another stage of the ring).
template <DType kType, int kNTile, int kPieces = 1>
__device__ __forceinline__ void StoreTileTma(const Params& p, int cw, int row0, int col0, const float* d, uint32_t cbuf,
                                             int lo, int hi) {
  const int tid = threadIdx.x & 127, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  constexpr int kCols = kNTile / kPieces, kBoxes = kCols / 64;
#pragma unroll
  for (int q = 0; q < kPieces; ++q) {
    // (the cooperative fixup stores only the boxes [lo, hi) of the tile)
    if (kBoxes * (q + 1) <= lo || kBoxes * q >= hi) continue;
    if (tid == 0) BulkWaitRead();
    WarpgroupSync(cw);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp * 16 + g + 8 * h;  // row & 7 == g
#pragma unroll
      for (int j = 0; j < kCols / 8; ++j) {
        const int jj = q * (kCols / 8) + j;  // the n8 tile of the accumulators
        if (jj / 8 < lo || jj / 8 >= hi) continue;
        const uint32_t addr = cbuf + (j / 8) * 8192 + row * 128 + (((j & 7) ^ g) << 4) + 4 * t;
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr),
                     "r"(PackOut<kType>(d[4 * jj + 2 * h], d[4 * jj + 2 * h + 1]))
                     : "memory");
      }
    }
    FenceProxyAsync();
    WarpgroupSync(cw);
    if (tid == 0 && row0 < p.m) {
      const int c0 = col0 + q * kCols;
#pragma unroll
      for (int box = 0; box < kBoxes; ++box)
        if (c0 + 64 * box < p.n && kBoxes * q + box >= lo && kBoxes * q + box < hi) TensorStore2d(&p.c_map, cbuf + box * 8192, c0 + 64 * box, row0);
      BulkCommit();
    }
  }
}

// Stream-K partials: warpgroup cw of block b keeps its sums in slot 2 b + cw of the
// workspace, thread-major by float4 (slot float4 i * 128 + tid: coalesced; the owner reads
// them back into the same fragment positions).
template <int kAcc>
__device__ __forceinline__ float4* PartialSlot(const Params& p, int block, int cw) {
  return reinterpret_cast<float4*>(p.partials) + static_cast<int64_t>(2 * block + cw) * (kAcc / 4) * 128 + (threadIdx.x & 127);
}
// A contributor: its sums to the workspace, then its flag. The warpgroup's barrier orders
// every thread's stores before thread 0's release store, and a release is cumulative: the owner
// that acquires the flag sees them all (CUTLASS's stream-K barrier does the same). A fence in
// every thread instead (__threadfence: MEMBAR.SC.GPU) cost 7 % of the stall samples on 4096²,
// N = 256 (v12, call 6).
template <int kAcc>
__device__ __forceinline__ void SavePartial(const Params& p, int cw, const float* d) {
  float4* slot = PartialSlot<kAcc>(p, blockIdx.x, cw);
#pragma unroll
  for (int i = 0; i < kAcc / 4; ++i) slot[i * 128] = make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]);
  WarpgroupSync(cw);
  if ((threadIdx.x & 127) == 0) StoreRelease(p.flags + 2 * blockIdx.x + cw, 1);
}
// The owner of a stream-K tile: adds the partials of the later blocks whose runs start inside
// it, waiting for each flag and resetting it for the next launch. The loads bypass L1 (the
// workspace was written by other SMs).
template <int kAcc>
__device__ __forceinline__ void AddPartials(const Params& p, int cw, int tile_end, float* d) {
  for (int j = blockIdx.x + 1; SkContributes(p, j, tile_end); ++j) {
    if ((threadIdx.x & 127) == 0) {
      int* flag = p.flags + 2 * j + cw;
      while (LoadAcquire(flag) == 0) {
      }
      *flag = 0;
    }
    WarpgroupSync(cw);
    const float4* slot = PartialSlot<kAcc>(p, j, cw);
#pragma unroll
    for (int i = 0; i < kAcc / 4; ++i) {
      const float4 v = __ldcg(slot + i * 128);
      d[4 * i] += v.x, d[4 * i + 1] += v.y, d[4 * i + 2] += v.z, d[4 * i + 3] += v.w;
    }
  }
}

// The cooperative fixup (stream_k 3: the tail split, each tile cut into p.coop pieces run by
// blocks owner .. owner + coop - 1): piece j owns the tile's units [lo, hi) (CoopLo: a unit is an
// m-slice's 64-column box), saves its sums of the other units, arrives on the tile's counter (the
// owner's flag), waits for every piece's arrival, then adds the other pieces' sums of its own
// units. Every piece reads and writes (coop - 1) / coop of a tile, where an owner adding the
// others' whole partials reads coop - 1 tiles alone (4096², N = 256: 384 KB into one SM). Each
// piece then stores its units and counts itself done (CoopDone), the last one zeroing the
// counters. Every piece saves before it waits, so the waits form no cycle while the grid is
// resident. Partial slot float4 i of a slice covers columns 8 (i % (kAcc / 4)) ..: box
// (i % (kAcc / 4)) / 8 of the slice (CoopUnit).
// A cooperative piece's place (CoopTile, CoopDone): its index j among its tile's p.coop pieces,
// the tile's owner (piece 0's block), and consumer warpgroup cw's two counters of the tile: the
// arrivals on the owner's flag and the pieces done on the owner + 1's.
struct CoopPiece {
  int j, owner;
  int* arrive;
  int* done;
};
__device__ __forceinline__ CoopPiece CoopPieceOf(const Params& p, int cw) {
  const int j = static_cast<int>(blockIdx.x) % p.coop, owner = static_cast<int>(blockIdx.x) - j;
  return CoopPiece{j, owner, p.flags + 2 * owner + cw, p.flags + 2 * (owner + 1) + cw};
}

// The units piece j of `split` owns of a tile's `units`: [CoopLo(j), CoopLo(j + 1)). A unit is one
// m-slice's 64-column box (kSlices slices a warpgroup, kAcc / 32 boxes each), so that a 2:4 tile
// of 256 rows (two slices) in four pieces gives each a quarter, where by boxes alone two of the
// four owned nothing and the other two read half the tile three times (v37). The workbench's
// selftest checks that every unit has one owner.
__host__ __device__ constexpr int CoopLo(int j, int split, int units) { return units * j / split; }
// The unit of partial-slot float4 i (a warpgroup's kSlices slices of kAcc sums each).
template <int kAcc>
__host__ __device__ constexpr int CoopUnit(int i) {
  return (i / (kAcc / 4)) * (kAcc / 32) + (i % (kAcc / 4)) / 8;
}

template <int kAcc, int kSlices>
__device__ __forceinline__ bool CoopTile(const Params& p, int cw, float* d, int* lo, int* hi) {
  constexpr int kUnits = kSlices * kAcc / 32, kF4 = kSlices * kAcc / 4;
  const CoopPiece piece = CoopPieceOf(p, cw);
  const int split = p.coop, j = piece.j, owner = piece.owner;
  *lo = CoopLo(j, split, kUnits), *hi = CoopLo(j + 1, split, kUnits);
  float4* mine = PartialSlot<kSlices * kAcc>(p, blockIdx.x, cw);
#pragma unroll
  for (int i = 0; i < kF4; ++i) {
    const int unit = CoopUnit<kAcc>(i);
    if (unit < *lo || unit >= *hi) mine[i * 128] = make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]);
  }
  WarpgroupSync(cw);
  SPARSE_GEMM_TRACE_AT(10, TraceClock());
  SPARSE_GEMM_TRACE_AT(13, j);
  SPARSE_GEMM_TRACE_AT(14, TraceGlobal());
  int* arrive = piece.arrive;
  if ((threadIdx.x & 127) == 0) {
    AddRelease(arrive, 1);
    while (LoadAcquire(arrive) < split) {
    }
  }
  WarpgroupSync(cw);
  SPARSE_GEMM_TRACE_AT(11, TraceClock());
  if (*lo < *hi)
    for (int o = 0; o < split; ++o) {
      if (o == j) continue;
      const float4* slot = PartialSlot<kSlices * kAcc>(p, owner + o, cw);
#pragma unroll
      for (int i = 0; i < kF4; ++i) {
        const int unit = CoopUnit<kAcc>(i);
        if (unit >= *lo && unit < *hi) {
          const float4 v = __ldcg(slot + i * 128);
          d[4 * i] += v.x, d[4 * i + 1] += v.y, d[4 * i + 2] += v.z, d[4 * i + 3] += v.w;
        }
      }
    }
  SPARSE_GEMM_TRACE_AT(12, TraceClock());
  return *lo < *hi;
}
// A cooperative piece's last step, once its boxes' stores are issued (CoopTile has read the
// other pieces' sums): it counts itself done on the owner + 1's flag, and the last piece zeroes
// both counters for the next launch. Done after the stores, not before them (v31: the atomic's
// round trip, about 1.4 K cycles in the trace, had held the stores), and by lane 0 of the
// second warp, while thread 0 waits for its tensor stores at the block's end. The warpgroup's
// barrier before it orders every thread's reads of the partials before the count (the release
// half of the atomic is cumulative).
__device__ __forceinline__ void CoopDone(const Params& p, int cw) {
  WarpgroupSync(cw);
  const CoopPiece piece = CoopPieceOf(p, cw);
  if ((threadIdx.x & 127) == 32 && AddAcqRel(piece.done, 1) == p.coop - 1) *piece.arrive = 0, *piece.done = 0;
}

// A segment's end under stream-K: a piece that does not start at K stage 0 saves its sums for
// the tile's owner (false: nothing to store); the owner adds the later blocks' pieces. True
// when d holds the whole tile (every whole-tile segment too), or under the cooperative fixup
// the units [lo, hi) of it (else the whole tile's: 0 to kSlices kAcc / 32; slice ms's 64-column
// boxes are units ms kAcc / 32 .., which the 2:4 store shifts back to boxes). d: kSlices slices
// of kAcc sums (a 2:4 tile's m-slices), each over the tile's columns.
template <int kAcc, int kSlices = 1>
__device__ __forceinline__ bool CompleteTile(const Params& p, const Segment& sg, int cw, float* d, int* lo, int* hi) {
  *lo = 0, *hi = kSlices * kAcc / 32;
  if (sg.tile < p.dp_tiles) return true;
  if (p.coop > 0) return CoopTile<kAcc, kSlices>(p, cw, d, lo, hi);
  if (sg.kb0 > 0) {
    SavePartial<kSlices * kAcc>(p, cw, d);
    return false;
  }
  AddPartials<kSlices * kAcc>(p, cw, (sg.tile - p.dp_tiles + 1) * p.k_blocks, d);
  return true;
}

// Lets the producers refill ring slot `slot`: every consumer thread arrives on its own block's
// barrier (256 arrivals), and in a cluster lane 0 of each consumer warp also on the slot's barrier
// in every other block of the cluster (8 (kCluster - 1) more), since every block's producer writes
// B into this one. The local arrivals are each thread's own release: the 2:4 consumers' lanes read
// A's fragments and the metadata from the slot with ld.shared, and the own block's producer copies
// A into it next. v56 had lane 0 alone arrive for its warp on every block's barrier, its own
// included, through the cluster address (mapa), after a __syncwarp; racecheck reported the 2:4
// cluster variants' reads against the next copy into the slot with and without the __syncwarp
// (v57, an H100: the same counts), the plain variants, whose threads all arrive, none.
template <int kCluster>
__device__ __forceinline__ void Release(uint32_t empty, int rank) {
  engine::MbarArrive(empty);
  if (kCluster > 1 && (threadIdx.x & 31) == 0) {
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
      if (r != rank) MbarArriveCluster(empty, r);
  }
}
// The empty barriers' count: Release's arrivals a slot.
template <int kCluster>
constexpr uint32_t kEmptyArrivals = 2 * 128 + 8 * (kCluster - 1);

// Dense A that holds a sparse matrix (the addon's family und: the zeros stored) and CSR's
// semantics for Inf and NaN in B (kDenseResum): a zero weight times an Inf of B is NaN in the
// dense product, but the matrix has no such term. A warp whose sums of the whole tile (its 16
// rows from row0 + 16 warp, columns col0..) are not all finite sums its rows again from A's
// nonzeros (+0 and -0 left out), reading A's rows in global memory, as UnResum does from the pair
// stream. d: the warpgroup's accumulators, d[4 j + q] = row g + 8 (q >> 1), column 8 j + 2 t + (q & 1).
template <DType kType, int kNTile>
__device__ __forceinline__ void DenseResum(const Params& p, int row0, int col0, float* d) {
  constexpr int kNT8 = kNTile / 8;
  float(&acc)[kNT8][4] = *reinterpret_cast<float(*)[kNT8][4]>(d);
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, g = lane >> 2, t = lane & 3;
  const int r0 = row0 + 16 * warp;
  if (r0 >= p.m || cuda::WarpAllFinite<kNT8>(acc)) return;
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  const unsigned short* a16 = static_cast<const unsigned short*>(p.a_dense);
  const unsigned short* b16 = static_cast<const unsigned short*>(p.b);
  // Row half h (rows g and g + 8) as a constant: acc's index must be known to stay in registers.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = r0 + g + 8 * h;
    if (r < p.m) {
      const unsigned short* row = a16 + static_cast<int64_t>(r) * p.k;
#pragma unroll 1
      for (int kk = 0; kk < p.k; ++kk) {
        const unsigned short bits = row[kk];
        if ((bits & 0x7fff) != 0)
          cuda::AccumulateExact<kType, kNT8>(acc, b16, p.n, col0, t, h, kk, cuda::Widen<kType>(bits));
      }
    }
  }
}

// A consumer warpgroup (cw: 0 or 1, rows 64 cw.. of each tile); kDenseResum: DenseResum before
// each whole tile's store.
template <DType kType, int kNTile, int kStages, int kTmaStore, int kCluster, bool kDenseResum = false,
          bool kAlongN = false>
__device__ __forceinline__ void Consume(const Params& p, unsigned char* ring, uint32_t full0, uint32_t empty0, int cw,
                                        int rank) {
  using L = Layout<kNTile, kStages, kTmaStore>;
  constexpr int kAcc = kNTile / 2;
  // Under PDL: C, the stream-K workspace and B may still be the previous kernel's.
  if constexpr (kGemmPdl) engine::GridDependencyWait();
  const uint32_t cbuf = SmemAddr(ring + kStages * L::kStageBytes) + cw * (L::kCBytes / 2);
  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.f;
  int stage = 0;
  uint32_t phase = 0;
  Cursor cursor(p, blockIdx.x / kCluster);
  Segment sg;
  while (cursor.Next(p, &sg)) {
    const Tile tile = TileOf(sg.tile, p.m_units, p.n_units, p.group);
    int prev = -1;
    SPARSE_GEMM_TRACE_AT(7, sg.kb1 - sg.kb0);
#if defined(SPARSE_GEMM_TRACE)
    unsigned long long waits = 0;  // (slot 6, written once the segment is done)
#endif
    for (int kb = sg.kb0; kb < sg.kb1; ++kb) {
#if defined(SPARSE_GEMM_TRACE)
      const unsigned long long t_wait = TraceClock();
#endif
      engine::MbarWait(full0 + 8 * stage, phase);
#if defined(SPARSE_GEMM_TRACE)
      if (kb == sg.kb0)
        SPARSE_GEMM_TRACE_AT(1, TraceClock());
      else
        waits += TraceClock() - t_wait;
#endif
      // Lanes leave the wait loop separately; the wgmma instructions below are warp-aligned.
      __syncwarp();
      const uint32_t a0 = SmemAddr(ring + stage * L::kStageBytes) + cw * (kMTile / 2) * 128;
      const uint32_t b0 = SmemAddr(ring + stage * L::kStageBytes + L::kABytes);
      wg::Pin<kAcc>(d);
      wg::Fence();
#pragma unroll
      for (int kk = 0; kk < kKTile / 16; ++kk)
        Wgmma<kType, kNTile>::Run(d, wg::Desc(kADesc, a0 + 32 * kk), wg::Desc(kBDesc, b0 + 2048 * kk),
                                  kb > sg.kb0 || kk > 0);
      wg::Commit();
      // The previous stage's group is complete: its slot can be refilled.
      wg::Wait<1>();
      wg::Pin<kAcc>(d);
      if (prev >= 0) Release<kCluster>(empty0 + 8 * prev, rank);
      prev = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    wg::Wait<0>();
    wg::Pin<kAcc>(d);
    Release<kCluster>(empty0 + 8 * prev, rank);
    SPARSE_GEMM_TRACE_AT(2, TraceClock());
    SPARSE_GEMM_TRACE_AT(6, waits);
    int lo, hi;
    const bool whole = CompleteTile<kAcc>(p, sg, cw, d, &lo, &hi);
    SPARSE_GEMM_TRACE_AT(3, TraceClock());
    SPARSE_GEMM_TRACE_AT(4, TraceClock());
    if (whole) {
      const Tile own = ClusterTile(tile, rank, kCluster, kAlongN);
      const int row0 = own.mb * kMTile + cw * (kMTile / 2), col0 = own.nb * kNTile;
      if constexpr (kDenseResum) DenseResum<kType, kNTile>(p, row0, col0, d);
      if constexpr (kTmaStore > 0)
        StoreTileTma<kType, kNTile, kTmaStore>(p, cw, row0, col0, d, cbuf, lo, hi);
      else
        StoreTile<kType, kNTile>(p, row0, col0, d, lo, hi);
      SPARSE_GEMM_TRACE_AT(4, TraceClock());
    }
    if (p.coop > 0 && sg.tile >= p.dp_tiles) CoopDone(p, cw);
  }
  // Shared memory must outlive the last tensor stores' reads.
#if defined(SPARSE_GEMM_END_READ)
  // (v64 workbench switch) Wait only for the stores' reads of shared memory (what it must outlive).
  if (kTmaStore && (threadIdx.x & 127) == 0) BulkWaitRead();
#else
  if (kTmaStore && (threadIdx.x & 127) == 0) BulkWait();
#endif
  SPARSE_GEMM_TRACE_AT(5, TraceClock());
  SPARSE_GEMM_TRACE_AT(9, TraceGlobal());
}

// 2:4 tiles (kSpMS = sp strips per consumer warp): the strip of a stage's 8 sp whose fragments
// warp w of consumer warpgroup cw loads for m-slice ms, and the first row of m-slice ms within
// the tile (warp w's rows of the slice start 16 w further: wgmma's m64 row order), where the
// epilogue stores it. The workbench's selftest decodes the staged tiles at these places back to
// the matrix.
__host__ __device__ constexpr int SpStrip(int sp, int cw, int ms, int w) { return 4 * sp * cw + 4 * ms + w; }
__host__ __device__ constexpr int SpSliceRow(int sp, int cw, int ms) { return 64 * sp * cw + 64 * ms; }

// A 2:4 consumer warpgroup's fragments of one stage (at shared address st), into buffer kBuf:
// warp w loads, for each m-slice ms and k-step kt, its lane's 16 bytes of the A fragment and
// its metadata word (lanes with lane % 4 in {0, 1} supply it: selector 0) of strip
// 4 kSpMS cw + 4 ms + w of the row block (so m-slice ms covers 64 contiguous rows). Explicit
// ld.shared: generic loads of the same bytes went through the L1TEX path, and the warpgroup's
// wgmma waited on them (ncu: 30 % of the stall samples at WARPGROUP.ARRIVE, long scoreboard;
// v11, call 9).
// kSpSs: only the metadata words, from the stage's metadata (meta: strip q's k-step kt at
// (2 q + kt) 64 bytes); wgmma reads A itself.
// kUn: warp w decodes its strip's four 16 x 16 tiles of the pair stream's stage into its four
// A registers each (no metadata): strip q's record of tile j at (4 q + j) 32 bytes, this lane's
// quad's word 4 (lane / 4) into it, the stored registers from kUnRecordBytes on.
// The A fragment's steps per stage: two k32 steps of 2:4, or four k16 tiles unstructured.
template <int kUn>
constexpr int kFragSteps = kUn ? kKTile / 16 : 2;

// kUnWhole: how a consumer lane reads a pair-stream tile's four A registers (the stream's whole
// tiles: unstructured_stream.h, kPairFrag). 0: UnstructuredPairs::DecodeTile, a predicated 32-bit
// load a stored register. 1: a tile whose 32 lanes all find their quad's 16 bits set and its
// count a multiple of 4 (a whole tile; one vote a tile, so the branch is the warp's) is read with
// one 16-byte load a lane, any other tile as by 0. 2: a lane whose own four bits are set and
// whose first register is a multiple of 4 reads the four with one 16-byte load, any other lane
// as by 0 (no vote and no branch: the other form's loads are predicated off).
// rec: the lane's quad's word of the tile; vals: the stage's stored registers; sh: the lane's
// four bits' place in the word (4 (lane % 4)), before: the quad's bits below them.
template <int kUnWhole>
__device__ __forceinline__ void DecodeUnTile(uint32_t rec, uint32_t vals, uint32_t sh, uint32_t before,
                                             uint32_t (&af)[4]) {
  using Pairs = engine::UnstructuredPairs<128>;
  static_assert(kUnWhole >= 0 && kUnWhole <= 2, "decode forms 0, 1 and 2");
  if constexpr (kUnWhole == 0) {
    Pairs::DecodeTile(rec, vals, sh, before, af);
  } else if constexpr (kUnWhole == 1) {
    const uint32_t word = engine::LdShared32(rec);
    // (the 16 bits set, bits 16-17 clear: the count a multiple of 4)
    if (__all_sync(0xffffffffu, (word & 0x3ffffu) == 0xffffu)) {
      // The lane's four registers: the quad's count + 4 (lane % 4) registers on, 16-byte aligned.
      asm("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
          : "=r"(af[0]), "=r"(af[1]), "=r"(af[2]), "=r"(af[3])
          : "r"(vals + 4 * (word >> 16) + 4 * sh));
    } else {
      Pairs::DecodeWord(word, vals, sh, before, af);
    }
  } else {
    const uint32_t word = engine::LdShared32(rec);
    const uint32_t at = vals + 4 * ((word >> 16) + __popc(word & before));
    // f: the lane's four bits set and its first register 16-byte aligned; then one 16-byte load,
    // and the per-register loads (p: the register's bit, and not f) all predicated off.
#define SPARSE_GEMM_UN_REG(i, m)                              \
  "and.b32 t, b, " #m ";\nsetp.ne.b32 p, t, 0;\n"           \
  "@p ld.shared.b32 %" #i ", [c];\n@p add.u32 c, c, 4;\n"
    asm("{\n.reg .pred f, p;\n.reg .b32 c, t, b;\n"
        "and.b32 t, %5, 15;\nsetp.eq.b32 f, t, 15;\n"
        "and.b32 t, %4, 15;\nsetp.eq.and.b32 f, t, 0, f;\n"
        "mov.b32 c, %4;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\nmov.b32 %2, 0;\nmov.b32 %3, 0;\n"
        "@f ld.shared.v4.b32 {%0, %1, %2, %3}, [c];\n"
        "selp.b32 b, 0, %5, f;\n"
        SPARSE_GEMM_UN_REG(0, 1) SPARSE_GEMM_UN_REG(1, 2) SPARSE_GEMM_UN_REG(2, 4) SPARSE_GEMM_UN_REG(3, 8) "}\n"
        : "=&r"(af[0]), "=&r"(af[1]), "=&r"(af[2]), "=&r"(af[3])
        : "r"(at), "r"(word >> sh));
#undef SPARSE_GEMM_UN_REG
  }
}

template <int kSpMS, bool kSpSs, int kUn, int kBuf, int kUnWhole = 0>
__device__ __forceinline__ void LoadSpFragments(uint32_t st, uint32_t meta, int cw,
                                                uint32_t (&af)[2][kSpMS][kFragSteps<kUn>][4],
                                                uint32_t (&e)[2][kSpMS][2]) {
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3;
  if constexpr (kUn) {
    const uint32_t sh = 4 * (lane & 3);  // this lane's four bits in its quad's word
    const uint32_t rec = st + SpStrip(1, cw, 0, warp) * kFragSteps<kUn> * kUnstPairTileBytes + 4 * (lane >> 2);
#pragma unroll
    for (int j = 0; j < kFragSteps<kUn>; ++j)
      DecodeUnTile<kUnWhole>(rec + j * kUnstPairTileBytes, st + kUnRecordBytes, sh, (1u << sh) - 1, af[kBuf][0][j]);
  } else {
#pragma unroll
    for (int ms = 0; ms < kSpMS; ++ms)
#pragma unroll
      for (int kt = 0; kt < 2; ++kt) {
        if constexpr (kSpSs) {
          asm volatile("ld.shared.u32 %0, [%1];\n"
                       : "=r"(e[kBuf][ms][kt])
                       : "r"(meta + (SpStrip(kSpMS, cw, ms, warp) * 2 + kt) * 64 + 4 * engine::Sp24MetaWord(lane)));
          continue;
        }
        const uint32_t tile = st + (SpStrip(kSpMS, cw, ms, warp) * 2 + kt) * kSp24StagedTileBytes;
        uint32_t(&f)[4] = af[kBuf][ms][kt];
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3])
                     : "r"(tile + 16 * lane));
        asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(e[kBuf][ms][kt]) : "r"(tile + 512 + 4 * engine::Sp24MetaWord(lane)));
      }
  }
}

// The wgmma of one stage from fragment buffer kBuf: one m64nNk32 per (k-step, m-slice), B's
// k-step kt (32 K rows) 4096 bytes into each atom, through the descriptor; then commit.
// kSpSs: A through its descriptor, m-slice ms at its rows' 64-byte lines (a0: this warpgroup's
// first row), k-step kt 32 bytes into them.
// kUn: one dense m64nNk16 per 16 x 16 tile j, B's 16 K rows 2048 j bytes into each atom.
template <DType kType, int kNTile, int kSpMS, bool kSpSs, int kUn, int kBuf>
__device__ __forceinline__ void IssueSp(uint32_t a0, uint32_t b0, float (&d)[kSpMS][kNTile / 2],
                                        uint32_t (&af)[2][kSpMS][kFragSteps<kUn>][4], uint32_t (&e)[2][kSpMS][2]) {
#pragma unroll
  for (int ms = 0; ms < kSpMS; ++ms) wg::Pin<kNTile / 2>(d[ms]);
  wg::Fence();
  if constexpr (kUn) {
#pragma unroll
    for (int j = 0; j < kFragSteps<kUn>; ++j)
      WgmmaRs<kType, kNTile>::Run(d[0], af[kBuf][0][j], wg::Desc(kBDesc, b0 + 2048 * j));
  } else {
#pragma unroll
    for (int kt = 0; kt < 2; ++kt) {
      const uint64_t desc = wg::Desc(kBDesc, b0 + 4096 * kt);
#pragma unroll
      for (int ms = 0; ms < kSpMS; ++ms) {
        if constexpr (kSpSs)
          WgmmaSpSs<kType, kNTile>::Run(d[ms], wg::Desc(kASsDesc, a0 + ms * 64 * 64 + 32 * kt), desc, e[kBuf][ms][kt]);
        else
          wg::WgmmaSp<kType, kNTile>::Run(d[ms], af[kBuf][ms][kt], desc, e[kBuf][ms][kt]);
      }
    }
  }
  wg::Commit();
}

// Unstructured A: the addon's semantics for non-finite B. Every tile is multiplied, zeros
// included, so an Inf or NaN in B's row k reaches every row of the tile (0 x Inf = NaN), where
// CSR's definition (the float64 reference, the other kernels) keeps it to the rows that hold
// column k. A warp whose sums of the whole tile (row block mb, columns col0..) are not all
// finite sums its 16 rows again from their nonzeros alone, walking every K stage of the pair
// stream in global memory (the streaming engine's pair-stream re-sum, UnstructuredPairs::WalkQuad).
// d: the warpgroup's accumulators, d[4 j + q] = row g + 8 (q >> 1), column 8 j + 2 t + (q & 1).
template <DType kType, int kNTile>
__device__ __forceinline__ void UnResum(const Params& p, int mb, int col0, int cw, float* d) {
  constexpr int kNT8 = kNTile / 8;
  float(&acc)[kNT8][4] = *reinterpret_cast<float(*)[kNT8][4]>(d);
  const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & 3, g = lane >> 2, t = lane & 3;
  const int strip = SpStrip(1, cw, 0, warp);
  if ((mb * kUnStrips + strip) * 16 >= p.m || cuda::WarpAllFinite<kNT8>(acc)) return;
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  const unsigned short* b16 = static_cast<const unsigned short*>(p.b);
  auto add = [&](int h, int col, unsigned short bits) {
    cuda::AccumulateExact<kType, kNT8>(acc, b16, p.n, col0, t, h, col, cuda::Widen<kType>(bits));
  };
  const uint32_t* offsets = p.a_runs + static_cast<int64_t>(mb) * p.k_blocks;
  for (int kb = 0; kb < p.k_blocks; ++kb) {
    const unsigned char* run = static_cast<const unsigned char*>(p.a_tiles) + 16 * static_cast<int64_t>(offsets[kb]);
    for (int j = 0; j < kKTile / 16; ++j)
      engine::UnstructuredPairs<128>::WalkQuad(run + (strip * (kKTile / 16) + j) * kUnstPairTileBytes,
                                               run + kUnRecordBytes, g, kb * kKTile + 16 * j, add);
  }
}

// A 2:4 consumer warpgroup (cw: 0 or 1, rows 64 kSpMS cw.. of each 128 kSpMS-row tile): the
// dense one's ring protocol, stream-K partials and epilogue, with A's fragments in registers
// and wgmma.mma_async.sp (which always accumulates: the sums are zeroed before each segment).
// Software-pipelined: stage i's wgmma run from one fragment buffer while the next stage's
// fragments load into the other (once wgmma.wait_group 1 says stage i - 1's group, the last
// reader of that buffer, is done), so the shared-memory loads overlap the tensor cores.
// kUn: the same loop for unstructured A, its tiles decoded from the pair stream (kSpMS 1).
// kCluster 2: the pair of row blocks of a cluster (ClusterTile), each stage released in both
// blocks (Release), as the dense consumers do; no stream-K.
template <DType kType, int kNTile, int kStages, int kTmaStore, int kSpMS, bool kSpSs, int kUn, int kUnWhole,
          int kCluster = 1>
__device__ __forceinline__ void ConsumeSp(const Params& p, unsigned char* ring, uint32_t full0, uint32_t empty0, int cw,
                                          int rank = 0) {
  using L = Layout<kNTile, kStages, kTmaStore, kSpMS, kSpSs, kUn>;
  // Under PDL: C, the stream-K workspace and B may still be the previous kernel's.
  if constexpr (kGemmPdl) engine::GridDependencyWait();
  // (kSpSs) where this warpgroup's first row of A and the metadata lie within a stage.
  constexpr uint32_t kMeta = L::kABytes + L::kBBytes;
  const uint32_t a_cw = cw * 64 * kSpMS * 64;
  constexpr int kAcc = kNTile / 2;
  const uint32_t ring0 = SmemAddr(ring);
  const uint32_t cbuf = ring0 + kStages * L::kStageBytes + cw * (L::kCBytes / 2);
  float d[kSpMS][kAcc];
  uint32_t af[2][kSpMS][kFragSteps<kUn>][4], e[2][kSpMS][2];
  int stage = 0;
  uint32_t phase = 0;
  Cursor cursor(p, blockIdx.x / kCluster);
  Segment sg;
  while (cursor.Next(p, &sg)) {
    const Tile tile = ClusterTile(TileOf(sg.tile, p.m_units, p.n_units, p.group), rank, kCluster, false);
#pragma unroll
    for (int ms = 0; ms < kSpMS; ++ms)
#pragma unroll
      for (int i = 0; i < kAcc; ++i) d[ms][i] = 0.f;
    const int len = sg.kb1 - sg.kb0;
    engine::MbarWait(full0 + 8 * stage, phase);
    SPARSE_GEMM_TRACE_AT(1, TraceClock());
    SPARSE_GEMM_TRACE_AT(7, len);
#if defined(SPARSE_GEMM_TRACE)
    unsigned long long waits = 0;  // (slot 6, written once the segment is done)
#endif
    __syncwarp();
    LoadSpFragments<kSpMS, kSpSs, kUn, 0, kUnWhole>(ring0 + stage * L::kStageBytes, ring0 + stage * L::kStageBytes + kMeta,
                                                    cw, af, e);
    int prev = -1;
    // After stage i's issue: stage i - 1's group is complete, so its slot and its fragment buffer
    // are free; then the wait for stage i + 1, if any (true: it is in, at ring0 + stage's bytes).
    auto advance = [&](int i) {
      wg::Wait<1>();
#pragma unroll
      for (int ms = 0; ms < kSpMS; ++ms) wg::Pin<kAcc>(d[ms]);
      if (prev >= 0) Release<kCluster>(empty0 + 8 * prev, rank);
      prev = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
      if (i + 1 >= len) return false;
#if defined(SPARSE_GEMM_TRACE)
      const unsigned long long t_wait = TraceClock();
#endif
      engine::MbarWait(full0 + 8 * stage, phase);
#if defined(SPARSE_GEMM_TRACE)
      waits += TraceClock() - t_wait;
#endif
      __syncwarp();
      return true;
    };
    // Stage i from fragment buffer kB (i's parity), then the next stage's fragments into the
    // other; the loop unrolled by two, so each buffer has its own loads (v59's SASS of the loop
    // not unrolled: one load, then predicated moves into the buffer the parity picks; v61 for
    // 2:4, v63 for unstructured A).
    auto step = [&](auto buf, int i) {
      constexpr int kB = decltype(buf)::value;
      const uint32_t st = ring0 + stage * L::kStageBytes;
      IssueSp<kType, kNTile, kSpMS, kSpSs, kUn, kB>(st + a_cw, st + L::kABytes, d, af, e);
      if (advance(i)) {
        const uint32_t next = ring0 + stage * L::kStageBytes;
        LoadSpFragments<kSpMS, kSpSs, kUn, 1 - kB, kUnWhole>(next, next + kMeta, cw, af, e);
      }
    };
    for (int i = 0; i < len; i += 2) {
      step(std::integral_constant<int, 0>{}, i);
      if (i + 1 < len) step(std::integral_constant<int, 1>{}, i + 1);
    }
    wg::Wait<0>();
#pragma unroll
    for (int ms = 0; ms < kSpMS; ++ms) wg::Pin<kAcc>(d[ms]);
    Release<kCluster>(empty0 + 8 * prev, rank);
    SPARSE_GEMM_TRACE_AT(2, TraceClock());
    SPARSE_GEMM_TRACE_AT(6, waits);
    int lo, hi;
    const bool whole = CompleteTile<kAcc, kSpMS>(p, sg, cw, &d[0][0], &lo, &hi);
    SPARSE_GEMM_TRACE_AT(3, TraceClock());
    SPARSE_GEMM_TRACE_AT(4, TraceClock());
    if (whole) {
      if constexpr (kUn > 0) UnResum<kType, kNTile>(p, tile.mb, tile.nb * kNTile, cw, d[0]);
#pragma unroll
      for (int ms = 0; ms < kSpMS; ++ms) {
        const int row0 = tile.mb * L::kRows + SpSliceRow(kSpMS, cw, ms), col0 = tile.nb * kNTile;
        // This slice's boxes: the units [lo, hi) less the earlier slices' (both stores skip the
        // boxes outside the range, so one below 0 or past the slice's boxes needs no clamp).
        const int shift = ms * (kAcc / 32);
        if constexpr (kTmaStore > 0)
          StoreTileTma<kType, kNTile, kTmaStore>(p, cw, row0, col0, d[ms], cbuf, lo - shift, hi - shift);
        else
          StoreTile<kType, kNTile>(p, row0, col0, d[ms], lo - shift, hi - shift);
      }
      SPARSE_GEMM_TRACE_AT(4, TraceClock());
    }
    if (p.coop > 0 && sg.tile >= p.dp_tiles) CoopDone(p, cw);
  }
#if defined(SPARSE_GEMM_END_READ)
  // (v64 workbench switch) Wait only for the stores' reads of shared memory (what it must outlive).
  if (kTmaStore && (threadIdx.x & 127) == 0) BulkWaitRead();
#else
  if (kTmaStore && (threadIdx.x & 127) == 0) BulkWait();
#endif
  SPARSE_GEMM_TRACE_AT(5, TraceClock());
  SPARSE_GEMM_TRACE_AT(9, TraceGlobal());
}

// Launch: p.grid clusters of kCluster blocks (<= the SM count: persistent, and stream-K's
// waits need every block resident; stream-K only without clusters), kThreads threads,
// Layout::kSmemBytes of dynamic shared memory; K >= 8 (k_blocks >= 1).
// kDenseResum: dense A holding a sparse matrix, with CSR's semantics for Inf and NaN in B
// (DenseResum; no clusters).
template <DType kType, int kNTile, int kStages, int kTmaStore, int kCluster, int kSpMS = 0, bool kSpSs = false,
          int kUn = 0, int kUnWhole = 0, bool kDenseResum = false, bool kAlongN = false>
__global__ void __launch_bounds__(kThreads, 1) GemmKernel(const __grid_constant__ Params p) {
  static_assert(kSpMS == 0 || kCluster == 1 || (kUn == 0 && !kAlongN), "unstructured tiles run without clusters");
  static_assert(kUnWhole == 0 || kUn > 0, "the whole-tile decodes read the pair stream");
  static_assert(!kDenseResum || (kSpMS == 0 && kUn == 0 && kCluster == 1), "the dense re-sum reads dense A, no clusters");
  extern __shared__ unsigned char smem_raw[];
  SPARSE_GEMM_TRACE_AT(0, TraceClock());
  SPARSE_GEMM_TRACE_AT(8, TraceGlobal());
  using L = Layout<kNTile, kStages, kTmaStore, kSpMS, kSpSs, kUn>;
#if defined(SPARSE_GEMM_EARLY_PREFETCH)
  // (v64 workbench switch) The tensor maps' descriptors asked for at the block's entry, C's
  // included (without it C's is fetched by the first tensor store, at the tile's end).
  if (threadIdx.x == 32) {
    if constexpr (kSpMS == 0) engine::PrefetchTensorMap(&p.a_map);
    engine::PrefetchTensorMap(&p.b_map);
    if constexpr (kTmaStore > 0) engine::PrefetchTensorMap(&p.c_map);
  }
#endif
  // The swizzle repeats every 1024 bytes from a 1024-byte aligned address.
  unsigned char* ring = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint32_t full0 = SmemAddr(ring + kStages * L::kStageBytes + L::kCBytes);
  if constexpr (L::kBarriersInPad)
    if (ring - smem_raw >= L::kBarrierBytes) full0 = SmemAddr(smem_raw);  // (the same offset in every block)
  const uint32_t empty0 = full0 + 8 * kStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      engine::MbarInit(full0 + 8 * s, 1);
      engine::MbarInit(empty0 + 8 * s, kEmptyArrivals<kCluster>);
    }
    engine::FenceBarrierInit();
  }
  __syncthreads();
  // Under PDL the next kernel may start its blocks as this grid's blocks finish: its producers
  // then fetch their weights during this tail (a no-op without the launch attribute).
  if constexpr (kGemmPdl) engine::GridDependencyLaunch();
  // The other block's copies and arrivals must find this block's barriers initialised.
  if (kCluster > 1) engine::ClusterSync();
  const int rank = kCluster > 1 ? static_cast<int>(engine::ClusterRank()) : 0;
  const int wgi = threadIdx.x / 128;
  if (wgi == 0) {
    RegsDec<kProducerRegs>();
    if (threadIdx.x == 0)
      Produce<kNTile, kStages, kTmaStore, kCluster, kSpMS, kSpSs, kUn, kAlongN>(p, ring, full0, empty0, rank);
  } else {
    RegsInc<kConsumerRegs>();
    if constexpr (kSpMS > 0)
      ConsumeSp<kType, kNTile, kStages, kTmaStore, kSpMS, kSpSs, kUn, kUnWhole, kCluster>(p, ring, full0, empty0, wgi - 1,
                                                                                      rank);
    else
      Consume<kType, kNTile, kStages, kTmaStore, kCluster, kDenseResum, kAlongN>(p, ring, full0, empty0, wgi - 1, rank);
  }
  // ... and stay alive until the other block's last copies into it and arrivals on it are done.
  if (kCluster > 1) engine::ClusterSync();
}

}  // namespace gemm
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_GEMM_GEMM_ENGINE_CUH_
