#ifndef SPARSE_COMMON_GEMM_PLAN_H_
#define SPARSE_COMMON_GEMM_PLAN_H_
// How the Hopper GEMM engine (cuda/gemm/gemm_engine.cuh) cuts its tiles over the GPU, and
// which of its 2:4 tile heights the selection runs. Pure C++: the kernels' host side
// (gemm_engine_host.h), the addon's 2:4 family (spmm_24_gemm_sm90a.cu) and a CPU test share it.

namespace sparse {

// The ragged last wave split by K (gemm_host::kStreamKTail): of `tiles` equal tiles on `grid`
// persistent blocks, the r = tiles % grid left after the whole waves (all of them below one
// wave) are each cut into TailSplit pieces by K stages, run at once by r x split blocks. At
// most kGemmMaxSplit (a tile's owner adds split - 1 partial sums) and `grid / r` (one wave),
// never more pieces than K stages; a result below 2 means the tiles stay whole.
constexpr int kGemmMaxSplit = 4;
inline int TailSplit(long long tiles, int grid, int k_blocks) {
  const long long r = tiles % grid;  // (below one wave: all of them)
  if (r == 0) return 1;
  long long split = grid / r;
  if (split > kGemmMaxSplit) split = kGemmMaxSplit;
  if (split > k_blocks) split = k_blocks;
  return static_cast<int>(split);
}

// How long the launch takes in units of one tile's time: the whole waves, then the last one
// (a 1 / split share of a tile when it is split).
inline double TailWaves(long long tiles, int grid, int k_blocks) {
  const long long whole = tiles / grid, r = tiles % grid;
  if (r == 0) return static_cast<double>(whole);
  const int split = TailSplit(tiles, grid, k_blocks);
  return static_cast<double>(whole) + (split >= 2 ? 1.0 / split : 1.0);
}

// The 2:4 tile height the selection runs (128 or 256 rows; 128 columns, the tail split): the
// one whose launch keeps the SMs busiest, weighting a 256-row tile's multiply-adds 1.15x: per
// multiply-add it moves 12 % fewer bytes through shared memory (the tensor cores re-read B
// for every 64 rows, and the tile's own bytes are written once), which is what limits the
// 2:4 kernels (ncu: L1 data pipe 79 % busy at 59 % tensor-pipe use; docs/gemm-engine.md).
constexpr double kGemm24TallGain = 1.15;
// The selection's tiles of `rows` x 128 over M x N.
inline long long Gemm24Tiles(long long m, long long n, int rows) { return (m + rows - 1) / rows * ((n + 127) / 128); }
inline int Gemm24Rows(long long m, long long n, long long k, int sms) {
  const long long k_blocks = (k + 63) / 64;
  double best = 0;
  int rows = 256;
  for (int r : {256, 128}) {
    const long long tiles = Gemm24Tiles(m, n, r);
    const double busy = static_cast<double>(tiles) / sms / TailWaves(tiles, sms, static_cast<int>(k_blocks));
    const double score = busy * (r == 256 ? kGemm24TallGain : 1.0);
    if (score > best) best = score, rows = r;
  }
  return rows;
}

}  // namespace sparse
#endif  // SPARSE_COMMON_GEMM_PLAN_H_
