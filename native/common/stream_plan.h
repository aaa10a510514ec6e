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

namespace sparse {

// The portable cluster size: the largest C the plan considers.
constexpr int kMaxStreamCluster = 8;

struct StreamPlan {
  int grid;     // blocks launched
  int cluster;  // > 1: split-K in clusters of this many blocks (grid = row blocks x cluster);
                // 0: stream-K over `grid` blocks (grid == row blocks: one block per row block)
};

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
  const long long total = static_cast<long long>(row_blocks) * kstages;
  const int blocks = resident[0] > 0 ? resident[0] : 1;
  return StreamPlan{static_cast<int>(total < blocks ? total : blocks), 0};
}

// Which of the two 2:4 kernels runs an f16/bf16 problem that both can (the streaming
// engine's s24e, N <= 64 on compute capability 9.0, against the mma.sp kernel s24): both
// stream 1.125 bytes per weight. The engine's launch costs more (200 KB of shared memory,
// clusters, a whole ring requested before the first stage arrives) and its stream less per MB,
// and the mma.sp kernel's time grows with N past 8. Lines through same-run medians of the
// three --suite llm shapes on the H200 (2026-12-01, N 1-64): mma.sp 5.1 + 0.46 us/MB (N = 1),
// 5.6 + 0.37 (N = 8); engine 10.3 + 0.25, 11.3 + 0.16; they cross at 25 and 28 MB, and at
// N >= 16 the engine is faster at every size measured. Held out of the fit: 6144 x 4096
// (28 MB), 14336 x 4096, 4096 x 14336; the rule picked the faster kernel in all 45 cases
// measured (docs/stream-engine.md, "v10"). Checked again after v14 shortened the engine's
// start (both kernels forced, N = 1 and 8, 9-28 MB): below 24 MB they are within -11 % ... +8 %
// of each other (K = 4096 favours the engine, K = 2048 the mma.sp kernel), at 28 MB the engine
// is 1.36-1.42x faster; the rule is never more than 11 % off the faster kernel and stays.
// v17 (the engine's N = 1 kernel reads B as it is): at N = 1 the engine is 8-10 % faster on every
// K = 4096 shape below 24 MB measured (2048, 3072, 4096 x 4096) and 8 % slower on 4096 x 2048;
// at N = 8 within 3 % on K = 4096, 4 % slower on 4096 x 2048. A rule by K stages (the engine
// from 16 stages of 256 columns) fits those cases; it waits for a check on held-out shapes
// (docs/stream-engine.md, "Where it stands"), and this one stays meanwhile.
constexpr double kStream24MinBytes = 24e6;  // N <= 8: the engine from this many weight bytes
inline bool Stream24Wins(long long m, long long k, int n) {
  return n > 8 || 1.125 * static_cast<double>(m) * static_cast<double>(k) >= kStream24MinBytes;
}

}  // namespace sparse
#endif  // SPARSE_COMMON_STREAM_PLAN_H_
