#ifndef SPARSE_COMMON_GEMM_PLAN_H_
#define SPARSE_COMMON_GEMM_PLAN_H_
// How the Hopper GEMM engine (cuda/gemm/gemm_engine.cuh) cuts its tiles over the GPU, which
// of its 2:4 tile heights the selection runs, and where it runs unstructured matrices. Pure
// C++: the kernels' host side (gemm_engine_host.h), the addon's GEMM families
// (spmm_24_gemm_sm90a.cu, spmm_unst_gemm_sm90a.cu) and a CPU test share it.
#include <cstddef>
#include <cstdint>

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

// Where the selection runs unstructured f16/bf16 matrices on the GEMM engine (the family ung,
// spmm_unst_gemm_sm90a.cu): from N = kUnGemmMinN on (below it, the streaming engine's family
// up to N = 64 and the other kernels), where the density is at least
// kUnGemmMinDensityPermille / 1000. Its time is the dense GEMM's whatever the density (every
// weight is multiplied, about 1.1x cuBLAS's time), the CSR kernels' falls with the nonzeros:
// below some density they win. Measured (v29 call 6, --tune over every family, f16, N = 256, the
// three suite shapes): at 90 and 95 % this family is the fastest on all three (the CSR kernels
// 2.7-3.7x its time at 95 %); at 98 % it is on two (43 against 47 us, 43 against 55 us) and the
// CSR tile kernel on 4096 x 4096 (20 against 25 us). The threshold sits between: 2.5 %.
// And only for problems of at least kUnGemmMinWork multiply-adds (M N K): a launch costs about
// 13-20 us on the H200 whatever its size (the fill of the ring, the fixup, the launch), which
// the CSR kernels undercut on small problems. Measured (v29 call 10, `bench-dlmc --op spmm --dtype
// f16`, before this bound): on the 158 DLMC problems below 2^31 that the family ran, 9-64 us
// (median 20), 1.11x Sputnik geomean and slower than Sputnik in 79 of them; on the 12 from 2^31 on
// 1.71-11.8x (4.9x geomean); the LLM shapes start at 2^31 (4096 x 4096 at N = 128).
constexpr int kUnGemmMinN = 128;
constexpr long long kUnGemmMinWork = 1LL << 31;
// The family's cut of the pair stream (common/unstructured_stream.h, kPairFrag): row blocks of
// kUnGemmStrips 16-row strips (the engine's 128-row tile) by K stages of kUnGemmKStage columns
// (its ring's stage), each stage one run of kUnGemmTiles records and the stored registers.
constexpr int kUnGemmStrips = 8, kUnGemmKStage = 64, kUnGemmTiles = kUnGemmStrips * kUnGemmKStage / 16;
// Its ring slots hold `cap` stored registers a tile on average over a stage: 128 any stage, 120
// one whose registers fill at most 94 % of it (a slot 1 KB shorter, room for one more stage on
// the 256-column tiles). The smallest that holds a stage of `words` stored registers (0: none).
constexpr int kUnGemmCaps[] = {120, 128};
inline int UnGemmCapacity(long long words) {
  for (int cap : kUnGemmCaps)
    if (static_cast<long long>(cap) * kUnGemmTiles >= words) return cap;
  return 0;
}
// The longest run of a pair stream in bytes, from its offset table (`entries` entries in 16-byte
// units): the kernels' Params::a_run_max (gemm_host::MakeParams).
inline int UnRunMax(const uint32_t* offsets, size_t entries) {
  uint32_t most = 0;
  for (size_t i = 0; i + 1 < entries; ++i)
    if (offsets[i + 1] - offsets[i] > most) most = offsets[i + 1] - offsets[i];
  return static_cast<int>(most) * 16;
}
constexpr long long kUnGemmMinDensityPermille = 25;
inline bool UnstGemmWins(long long m, long long k, long long nnz, int n) {
  return n >= kUnGemmMinN && m >= 1 && k >= 1 && m * k * n >= kUnGemmMinWork &&
         1000 * nnz >= kUnGemmMinDensityPermille * m * k;
}

}  // namespace sparse
#endif  // SPARSE_COMMON_GEMM_PLAN_H_
