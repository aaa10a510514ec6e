#ifndef SPARSE_COMMON_STREAM_PLAN_H_
#define SPARSE_COMMON_STREAM_PLAN_H_
// How the streaming engine (cuda/spmm/stream_engine.cuh) spreads its work, a list of row
// blocks x K stages, over the GPU. Pure C++: the addon, the workbench and a CPU test share it.
//
// Three shapes of launch, by what the end of a row block costs:
//   - one block per row block (each block all of its row block's K stages): no partial sums;
//   - split-K in clusters of C blocks, one cluster per row block: the C partial sums meet in
//     distributed shared memory (a cluster barrier and one remote read per block);
//   - stream-K over the blocks that fit at once: equal ranges of the list, and row blocks cut
//     between blocks summed through global memory (a fence, a count and the slots' round
//     trips: 2-5 us at the kernel's tail on the H200, measured 2026-12-01).
// The first two apply when every row block gets its block or cluster in one wave; of those
// the one with the fewest K stages per block wins (the time of a wave is its longest block's),
// the smaller C on a tie. Stream-K when neither fits in one wave.
//
// Measured on the H200 (workbench, 2:4 with warpgroup MMA, N 8-64, six LLM shapes):
// against stream-K alone this rule was faster or within 3 % on 22 of 24 cases, up to 1.14x
// (4096 x 4096 at N = 64: 16.2 -> 14.3 us); docs/stream-engine.md has the table.

#include <cstring>

namespace sparse {

// The portable cluster size: the largest C the plan considers.
constexpr int kMaxStreamCluster = 8;

struct StreamPlan {
  int grid;     // blocks launched
  int cluster;  // > 1: split-K in clusters of this many blocks (grid = row blocks x cluster);
                // 0: stream-K over `grid` blocks (grid == row blocks: one block per row block)
};

// Stream-K over `blocks` resident blocks (at least 1), or one block an item where the items
// (row_blocks x kstages) are fewer.
inline StreamPlan PlanStreamK(int row_blocks, int kstages, int blocks) {
  const long long total = static_cast<long long>(row_blocks) * kstages;
  if (blocks < 1) blocks = 1;
  return StreamPlan{static_cast<int>(total < blocks ? total : blocks), 0};
}

// resident[c - 1]: how many clusters of c blocks run at once (resident[0]: blocks), c = 1..8;
// 0 where a size cannot run. row_blocks, kstages >= 1.
inline StreamPlan PlanStream(int row_blocks, int kstages, const int (&resident)[kMaxStreamCluster]) {
  int best = 0, best_cost = 0;
  for (int c = 1; c <= kMaxStreamCluster; ++c) {
    const int cost = (kstages + c - 1) / c;
    if (row_blocks <= resident[c - 1] && (best == 0 || cost < best_cost)) best = c, best_cost = cost;
  }
  if (best == 1) return StreamPlan{row_blocks, 0};
  if (best > 1) return StreamPlan{row_blocks * best, best};
  return PlanStreamK(row_blocks, kstages, resident[0]);
}

// The instruction N of the streaming engine's wgmma kernels for a problem's N (1 to 64): N
// rounded up to 8, 16, 32 or 64, the width of B's box in a stage (columns past N zero).
inline int StreamBoxColumns(int n) { return n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64; }

// The 2:4 engine's work list for an m x k matrix: row blocks of 16 x warps rows (warps 4 or
// 8) by K stages of kStream24KStage columns. Its prepared operand, its selection and the
// stream24Rows binding count them here.
constexpr int kStream24KStage = 256;
inline int Stream24RowBlocks(long long m, int warps) {
  return static_cast<int>((m + 16LL * warps - 1) / (16LL * warps));
}
inline int Stream24KStages(long long k) { return static_cast<int>((k + kStream24KStage - 1) / kStream24KStage); }

// Which of the two 2:4 kernels runs an f16/bf16 problem that both can (the streaming
// engine's s24e, N <= 64 on compute capability 9.0, against the mma.sp kernel s24): both
// stream 1.125 bytes per weight. The engine's launch costs more (200 KB of shared memory,
// clusters, a whole ring requested before the first stage arrives), and it splits K where the
// row blocks are too few to fill the GPU; the mma.sp kernel cannot split K and its time grows
// with N past 8 and with M past 4096 (one block per 64 rows). So the engine for N > 8, and at
// N <= 8 wherever M > 4096 or K > 2560 (ten K stages of 256): only on small and short matrices
// does the mma.sp kernel's lighter start win, by 3-9 %.
// Measured on the H200 (both kernels forced, N = 1 and 8, events; docs/stream-engine.md, "v18"):
// the mma.sp kernel faster or within 1 % on all 8 shapes inside the box (256 x 1024 to 4096 x
// 2048 and 2560 x 2560), the engine faster on all 14 outside it, by up to 1.51x (1024 x 8192
// at N = 1: 11.1 against 16.7 us; 8192 x 1024 1.29x; 6144 x 2048 1.41x). It replaces v10's 24 MB
// threshold, which chose the slower kernel in 7 of 10 held-out cases (8192 x 2048: 15.5
// against 11.6 us).
constexpr long long kStream24SmallRows = 4096;  // N <= 8: the mma.sp kernel up to this M ...
constexpr long long kStream24SmallK = 2560;     // ... and this K
inline bool Stream24Wins(long long m, long long k, int n) {
  return n > 8 || m > kStream24SmallRows || k > kStream24SmallK;
}

// Which row-block height the 2:4 engine runs: 64 rows (w4: one consumer warpgroup a block,
// 200 KB ring) against 128 (w8: two warpgroups), from w4's plan (`w4` over `w4_row_blocks` row
// blocks of 64 and `kstages` K stages). A w4 block streams half a w8 block's rows; its plans
// put more blocks on the GPU or split K less finely, and its split-K end is cheaper (one
// warpgroup's sums). It pays where its plan splits K (clusters of 2 or more), or runs one block
// per row block of at most 8 K stages. Not where its blocks run 16 or more stages alone (5120
// and 6144 x 4096: 3-21 % slower than w8), nor stream-K (11008 x 4096: 1.20x slower at N = 64);
// not at N 9-15, and at N = 16 only where its blocks stream at most 8 stages each (below).
// N = 1 as N <= 8 since v19, when w4 got its own kernel that reads B as it is.
// Measured on the H200 (v18; both forced, events, N 8 / 32 / 64, w4 ÷ w8): 4096^2 0.92 / 0.98 /
// 0.89; 4096 x 11008 0.96 / 1.02 / 0.96; 8192 x 2048 (one block per row block, 8 stages)
// 0.92 / 0.98 / 0.89; 16 shapes in all (docs/stream-engine.md, "v18"). N = 1 (v19, workbench):
// 4096^2 0.95, 2048 x 4096 0.96, 4096 x 11008 0.98; 6144 x 4096 (16 stages alone) 1.05.
// N = 16 (v22, both forced, rotated K walk, events): w4 where each of its blocks streams at
// most 8 K stages (its plan's clusters split K into shares of <= 8, or one block per row block
// of <= 8): faster on 7 of 8 such shapes (4096^2 12.3 against 12.5 us, 4096 x 2048 6.9 / 7.5,
// 2560^2 6.7 / 7.2, 1024 x 8192 8.0 / 8.5; 3072 x 4096 8.8 / 8.7), and w8 on the long shares
// (4096 x 11008, 21.5 stages a block: 20.6 / 19.4; 4096 x 14336 22.4 / 20.6); likely, not
// measured: B's tensor copy of 32-byte rows, as many bytes a stage for 64 rows as for 128, is
// paid every stage.
// N 9-15 (B's rows laid out by the consumers) stays on w8: faster on 7 of 8 shapes at N = 12.
// So does N 33-63 where N % 8 != 0 (the consumers lay B's rows out element by element, and a w4
// block's one warpgroup lays out all of a stage's 256 rows, twice a w8 thread's share). Measured
// on the H100 only (v41, both forced, events, N = 63, where the plans of w4 split K): w8 faster
// on all 4 shapes, by 2.5 % (4096^2), 19 % (3072 x 4096), 21 % (4096 x 11008), 20 % (4096 x
// 14336). N = 40 and 56 (rows of whole 16-byte units, laid out by the consumers since v41) are
// left to the rule: w8 faster on 3 of those shapes by 1-12 %, w4 on 4096^2 by 8 %.
inline bool Stream24Rows64(const StreamPlan& w4, int w4_row_blocks, int kstages, int n) {
  if (n > 8 && n < 16) return false;
  if (n > 32 && n % 8 != 0) return false;
  if (w4.cluster >= 2) return n != 16 || (kstages + w4.cluster - 1) / w4.cluster <= 8;
  return w4.grid == w4_row_blocks && kstages <= 8;
}

// The stages past the ring whose A the 2:4 engine's producer keeps in flight into L2 (the kernel's
// Args::l2_ahead, v46, v47): one, except on stream-K plans (more row blocks than blocks: every SM
// streams, w8 past M = 16896) whose shares are longer than 25 stages a block, at N > 16. The ring's
// first fill is every block's first stages requested at once; they arrive together, and until the
// consumers free a slot and its refill comes back the HBM has nothing asked of it. One stage more,
// asked for into L2 right after the first fill and kept one ahead of the ring after, fills that gap
// and lets a refill find its bytes in L2. Measured on an H100 (the addon, SPARSE_S24E_L2_AHEAD
// forced, events ÷ none, same run):
// - v46: one stage 0.906x the time (graph 0.914x) over the suite and 14336 x 4096, 6144 x 4096 at N
//   1-64 (25 cells; 14336 x 4096 0.80-0.83x, 4096^2 0.94-1.00x), 0.898x in a second run, 0.915x in
//   a third (v47); two stages 0.929x, four 0.985x, eight 1.036x, the whole share 1.021x (more in
//   flight than the HBM needs, and L2 held by lines not yet read). Held out (2048 x 8192, 3072 x
//   4096, 8192 x 2048 and 28672 x 4096 at N 1, 8, 32, 64): 0.976x.
// - Stream-K (v46, v47; K = 4096, w8, 132 blocks, four runs): 20480 x 4096 (19.4 stages a block)
//   0.82-0.85x at N 16-32, 0.98-1.02x at N = 48, 0.91-0.92x at N = 64; 24576 x 4096 (23.3) 0.85-
//   0.91x at N 16-32, 1.005-1.014x at N = 48, 0.98-1.015x at N = 64; 28672 x 4096 (27.2) 0.92-0.94x
//   at N 1-8, 0.98x at N = 16, 1.00-1.02x at N = 32, 1.02-1.06x at N 48-64. The gain falls as the
//   shares grow, at every N; 25 stages is the boundary of those three shapes. Held out (v49, H100):
//   32768 x 4096 (31.0 stages) 1.03 / 1.06 / 1.08x at N 16 / 32 / 64 and 20480 x 8192 (38.8) 1.05 /
//   1.07 / 1.10x: both lose, as the rule has it past N = 16; at N = 16 they lose too (the rule keeps
//   the stage there; 28672 x 4096 gained 0.98x at N = 16).
// - None on a GPU whose DRAM streams at kStream24L2MaxDramGBps or more (`dram_gbps`: its memory clock
//   x bus width, both edges; 0 when unknown: the H100's rule). v49 on the H200 (HBM3e, 4917 GB/s by
//   its attributes; the H100's 3352), same run, one stage ÷ none over the suite and 14336 x 4096,
//   6144 x 4096, N 1-64 (25 cells): 1.019x the time in events, 1.027x in a CUDA graph (N = 16
//   1.063x; 4096 x 11008 and 11008 x 4096 1.04-1.15x on every N; 14336 x 4096 0.93x at N 1-8), and
//   the issue-23 figures with the stage (1.345x cuBLAS f16 over the suite at N 8-64, 1.405x held
//   out) against none (1.405x, 1.443x), in two runs minutes apart. The H200's first fill is the same
//   bytes as the H100's (the same plans) and its DRAM 1.47x faster: the gap after the first fill that
//   the stage fills is shorter there, and what the stage costs (one more copy a stage on the
//   producer's path, one more stage in flight) is not. Two GPUs fit this boundary; it is set between
//   them.
constexpr int kStream24L2MaxDramGBps = 4000;
inline int Stream24L2Ahead(const StreamPlan& plan, int row_blocks, int kstages, int n, int dram_gbps) {
  if (dram_gbps >= kStream24L2MaxDramGBps) return 0;
  const bool stream_k = plan.cluster == 0 && plan.grid < row_blocks;
  const bool long_share = static_cast<long long>(row_blocks) * kstages > 25LL * plan.grid;
  return stream_k && long_share && n > 16 ? 0 : 1;
}

// B padded to its instruction N (v43, docs/stream-engine.md step 13): a launch at N copies B (K x N
// halves) into the prepared operand's K x box buffer (box: N rounded up to 16, 32 or 64; columns
// past N zero) by a small kernel, and the engine streams that by box's tensor copy, as at N = box;
// C's columns past N are not stored. Else the consumers lay B's rows out every stage (kBWgRows),
// which at N 33-63 not a multiple of 8 cost up to 2x N = 64's time (v43, H200, workbench, w8:
// 11008 x 4096 at N = 63 41.1 us against 20.5; word loads of the rows, ENGINE_ROWS_WORDS, within
// 4 % of that). SPARSE_S24E_PAD: auto (the default: unset, or any value but all and off) pads
//   - N 33-63 not a multiple of 8, on both kernels: padded / unpadded 0.68-0.92 on every one of
//     40 cells (five shapes, 13 N; v44, H100, events; geomean by N 0.76-0.82, graph the same), and
//   - N 17-31 not a multiple of 8 on the 64-row kernel (w4) only: 0.70-0.95 on 4096^2 and 4096 x
//     11008, while the 128-row kernel (w8) there took 0.95-1.08 (6144 x 4096 and 14336 x 4096
//     1.05-1.08: w8 lays out B's rows for 128 rows a stage, twice w4's share per warp);
// and never N 9-15 (N = 13: 1.00-1.11, graph 1.10-1.25: the copy kernel costs more than it saves)
// or N = 24, 40, 48, 56 (whole 16-byte rows, laid out by the consumers since v41: 0.85-1.16). all:
// every N 9-63 narrower than its box (for A/B runs); off: never. N <= 8 (box 8: B copied whole, or
// N = 1's own kernel) and N = 16, 32, 64 never.
enum class Stream24Pad { kAuto, kAll, kOff };
inline Stream24Pad Stream24PadOf(const char* v) {
  if (v != nullptr && std::strcmp(v, "off") == 0) return Stream24Pad::kOff;
  if (v != nullptr && std::strcmp(v, "all") == 0) return Stream24Pad::kAll;
  return Stream24Pad::kAuto;
}
// The box B is padded to at N on the kernel of `rows_per_block` (64: w4, 128: w8) under `mode`, or
// 0 when the launch reads B as it is.
inline int Stream24PadColumns(int n, Stream24Pad mode, int rows_per_block) {
  if (mode == Stream24Pad::kOff || n <= 8 || n >= 64) return 0;
  const int box = StreamBoxColumns(n);
  if (n == box) return 0;
  if (mode == Stream24Pad::kAll) return box;
  if (n % 8 == 0) return 0;
  return n > 32 || (n > 16 && rows_per_block == 64) ? box : 0;
}
// Whether an operand of the kernel of `rows_per_block` rows prepared for N up to `box_n` pads B at
// some N under `mode` (its buffer is allocated then).
inline bool Stream24PadsUpTo(int box_n, Stream24Pad mode, int rows_per_block) {
  for (int n = 9; n <= box_n && n < 64; ++n)
    if (Stream24PadColumns(n, mode, rows_per_block) != 0) return true;
  return false;
}
// Stream24Rows64 for a launch at N under `mode`: a padded launch is N = box's. (The 64-row
// kernel's own padding at N 17-31 leaves the rule's answer as it is: box 32 and N 17-31 are alike
// to it; so the 128-row kernel's padding is what is asked.)
inline bool Stream24Rows64At(const StreamPlan& w4, int w4_row_blocks, int kstages, int n, Stream24Pad mode) {
  const int padded = Stream24PadColumns(n, mode, 128);
  return Stream24Rows64(w4, w4_row_blocks, kstages, padded != 0 ? padded : n);
}

// --- The unstructured bitmap stream (issue 24; the family ube, spmm_unst_engine_sm90a.cu): the
// stream of common/unstructured_stream.h's kBitmapFrag layout, decoded into wgmma's A registers
// (cuda/spmm/stream_unstructured_bitmap.cuh). Stages of 128 columns; row blocks of 16 x warps
// rows: 8 consumer warps (128 rows) for instruction N 8 / 16 / 32, 4 (64 rows) for N 64, the
// workbench's kinds unbmp and unbm4x (scripts/gpu/probe/unst_variants.h), its best measured pair.
constexpr int kUnstStreamKStage = 128;
constexpr int kUnstStreamMaxN = 64;
inline int UnstStreamWarps(int n) { return n <= 32 ? 8 : 4; }
inline int UnstStreamRowBlocks(long long m, int warps) { return Stream24RowBlocks(m, warps); }
inline int UnstStreamKStages(long long k) {
  return static_cast<int>((k + kUnstStreamKStage - 1) / kUnstStreamKStage);
}
// The ring capacities instantiated, smallest first: values per 16 x 16 tile a ring slot holds on
// average over a stage (the workbench's groups: 95 %, 90 %, 70 %, 50 % + margin, any matrix).
constexpr int kUnstStreamCaps[] = {16, 32, 88, 144, 256};
constexpr int kUnstStreamCapCount = 5;
// Values a stage of `warps` strips may hold at capacity `cap` (UnstructuredBitmap::CapacityWords:
// the encoder's max_stage_words).
constexpr int UnstStreamCapacityWords(int cap, int warps) { return cap * warps * (kUnstStreamKStage / 16); }
// The smallest capacity whose stages hold `max_stage_words` values (the most stages in flight),
// or 0 when none does (never at 256: a whole stage of values).
inline int UnstStreamCapacity(int max_stage_words, int warps) {
  for (int cap : kUnstStreamCaps)
    if (UnstStreamCapacityWords(cap, warps) >= max_stage_words) return cap;
  return 0;
}
// The launch: stream-K over every block that fits on the device at once (`resident`, two per SM
// where the registers and the ring allow), as the workbench launched the kernels it measured.
// NOTE: not PlanStream's one block per row block or split-K clusters: those were fitted on the
// 2:4 engine at one block per SM, and were never timed with this format.
inline StreamPlan UnstStreamPlan(int row_blocks, int kstages, int resident) {
  const long long total = static_cast<long long>(row_blocks) * kstages;
  const int blocks = resident > 0 ? resident : 1;
  return StreamPlan{static_cast<int>(total < blocks ? total : blocks), 0};
}

// --- The pair stream (issue 24's fourth candidate; the same family, its second form): the
// kPairFrag layout, a bit per A register and both its halves stored where either is nonzero
// (cuda/spmm/stream_unstructured_pairs.cuh). 8 consumer warps (128-row blocks) at every N 1-64,
// stages of 128 columns, a 108 KB ring: the workbench's kind unpr.
constexpr int kUnstPairWarps = 8;
// The ring capacities instantiated, smallest first: stored registers per 16 x 16 tile a ring
// slot holds on average over a stage (the workbench's PairCap of the bitmap's groups; 128: a
// whole tile, any matrix).
constexpr int kUnstPairCaps[] = {16, 32, 72, 100, 128};
constexpr int kUnstPairCapCount = 5;
// Stored registers a stage may hold at capacity `cap` (UnstructuredPairs::CapacityWords: the
// encoder's max_stage_words for kPairFrag).
constexpr int UnstPairCapacityWords(int cap) { return cap * kUnstPairWarps * (kUnstStreamKStage / 16); }
// The smallest capacity whose stages hold `max_stage_words` stored registers, or 0 when none
// does (never at 128).
inline int UnstPairCapacity(int max_stage_words) {
  for (int cap : kUnstPairCaps)
    if (UnstPairCapacityWords(cap) >= max_stage_words) return cap;
  return 0;
}

// Whether the selection runs an unstructured f16/bf16 m x k matrix with nnz nonzeros at N = n
// on the stream kernels (family ube, where it can run: compute capability 9.0), rather than the
// older unstructured families (tc, bm, tile, split): at N <= 64 where the density is at least
// UnstStreamMinDensityPermille(n) per mille.
// The physics: the stream decodes and multiplies every 16 x 16 tile, so its time hardly falls
// with the nonzeros (v25: 20.2 us at 90 % against 23.6 at 70 %, 11008 x 4096, N = 8), while the
// CSR kernel's (split) work is its nonzeros' and, at N = 1, the tensor cores' padding to eight
// columns is the stream's loss; the split kernel takes over at a higher density the smaller N is.
// Fitted on the H200 (v25, `sparse bench --suite llm --tune`: every variant timed per case, f16,
// the suite's three shapes at 80 / 90 / 95 / 98 %, N 1 / 8 / 16 / 64): at N = 1 split is faster
// from 90 % (1.61-1.86x cuBLAS against 1.12-1.34x) and within 3 % at 80 % except on 4096^2
// (1.21 against 1.05x); at N = 8 and 16 the stream is faster at 90 % (by 4-32 %) and split at
// 95 % (by 14-30 %, one tie); at N = 64 they split the 95 % cases (0.96 / 1.05 / 0.78x against
// 0.80 / 1.06 / 0.96x) and split wins at 98 %. N 2-7 and 17-63 lie between measured N and take
// their neighbours' thresholds.
inline int UnstStreamMinDensityPermille(int n) { return n < 8 ? 150 : n <= 16 ? 75 : 50; }
inline bool UnstStreamWins(long long m, long long k, long long nnz, int n) {
  return n >= 1 && n <= kUnstStreamMaxN && m >= 1 && k >= 1 && 1000 * nnz >= UnstStreamMinDensityPermille(n) * m * k;
}

// Which form of the family runs where UnstStreamWins says the family does: the pair stream
// (true) where sparsity is at least 60 %, else the bitmap stream. The pair form spends about
// half the bitmap's instructions a tile for more bytes (4 a stored register against 2 a
// nonzero); the bytes cost least where registers hold few nonzeros.
// Measured on the workbench (H200, f16, N 8-64, six LLM shapes, 2026-12-03; unpr against
// unbmp / unbm4x): the pair form 0.93x the bitmap form's time overall; at 70 % 1.00-1.05x
// cuBLAS against 0.95-0.98x, at 90 % 1.15-1.21x against 0.98-1.01x, at 50 % about 1 % slower.
// The threshold sits between 50 % (bitmap 1 % faster) and 70 % (pairs 5 % faster); held out
// (v25 call 1: 14336 x 4096, 4096 x 14336, 6144 x 4096, N 8-64) the pair form's time is 0.990x
// the bitmap's at 55 %, 0.971x at 60 % and 0.948x at 65 %.
constexpr long long kUnstPairsSparsityPercent = 60;  // pairs where zeros are >= 60 % of m k
inline bool UnstPairsWins(long long m, long long k, long long nnz) {
  return m >= 1 && k >= 1 && 100 * (m * k - nnz) >= kUnstPairsSparsityPercent * m * k;
}

}  // namespace sparse
#endif  // SPARSE_COMMON_STREAM_PLAN_H_
