#ifndef SPARSE_COMMON_GEMM_PLAN_H_
#define SPARSE_COMMON_GEMM_PLAN_H_
// How the Hopper GEMM engine (cuda/gemm/gemm_engine.cuh) cuts its tiles over the GPU, which
// of its 2:4 tile heights the selection runs, and where it runs unstructured matrices. Pure
// C++: the kernels' host side (gemm_engine_host.h), the addon's GEMM families
// (spmm_24_gemm_sm90a.cu, spmm_unst_gemm_sm90a.cu, spmm_und_gemm_sm90a.cu) and a CPU test share it.
#include <cstddef>
#include <cstdint>
#include <initializer_list>

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
// The selection's tiles of `rows` x `cols` over M x N.
inline long long Gemm24Tiles(long long m, long long n, int rows, int cols = 128) {
  return (m + rows - 1) / rows * ((n + cols - 1) / cols);
}
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

// The 2:4 family's shape by a model of the launch (v37; the library's selection since v38):
// v12's records say a split of the ragged wave costs a fixed 7-13 us on these kernels (the
// owner's read of the other pieces' sums), which Gemm24Rows does not weigh (6144 x 4096 at N =
// 256: whole 128-row tiles 23.9 us against its 256-row split's 26.3). scripts/gpu/s24g-fit.py
// fits the model on `sparse bench --tune` reports (every s24g shape timed) and checks it held
// out by shape; it is mirrored there (test/kernels/gemm-plan.test.ts keeps the two in step). A launch's time, us:
//   fixed_us + (split_us for a _sk2 split, coop_us for _sk3) + max(tile cycles, L2 cycles) / 1980
// with tile cycles those of GemmTileCycles' form at a K stage of s128 or s256 cycles (the fixup:
// the owner's split x rows x 512 bytes for _sk2, each piece's 2 (split - 1) / split of them for
// _sk3; the store rows x 256 bytes; both at bytes_per_cycle) and L2 cycles the operands' bytes
// (A's values and metadata, 1.125 bytes a weight, once per column of tiles; B once per row of
// tiles) at l2_bytes_per_cycle. Off (On() false) the selection is v12's: Gemm24Rows and the split.
// The library runs kGemm24Fitted; SPARSE_S24G_MODEL (spmm_24_gemm_sm90a.cu) replaces it or turns
// it off, for a measurement.
struct Gemm24Model {
  double s128 = 0, s256 = 0, bytes_per_cycle = 0, fixed_us = 0, split_us = 0, l2_bytes_per_cycle = 0;
  double coop_us = -1;  // below 0: _sk3 is not a candidate
  // The stage cycles of 64-column tiles of 128 and 256 rows (v53); 0: those tiles are not
  // candidates (the model weighs 128 columns only).
  double s128_n64 = 0, s256_n64 = 0;
  // The stage cycles of the 128 x 256 tile with A read by wgmma from shared memory (`_ss1`, v55;
  // whole or the owner's split); 0: not a candidate.
  double s128_n256 = 0;
  // The stage cycles of the 256 x 192 tile with A read by wgmma from shared memory (`_ss1`, v56:
  // per multiply-add the fewest bytes from L2 of any tile and, with 128 x 256's `_ss1`, the
  // fewest through shared memory; 192 accumulators a consumer thread; on the H200's workbench the fastest where its waves fill,
  // v54; whole or the owner's split); 0: not a candidate.
  double s256_n192 = 0;
  bool On() const {
    return s128 > 0 && s256 > 0 && bytes_per_cycle > 0 && l2_bytes_per_cycle > 0 && fixed_us >= 0 && split_us >= 0;
  }
  bool Narrow() const { return s128_n64 > 0 && s256_n64 > 0; }
  bool Wide() const { return s128_n256 > 0; }
  bool Wide192() const { return s256_n192 > 0; }
  double Stage(int rows, int cols) const {
    if (cols == 256) return s128_n256;
    if (cols == 192) return s256_n192;
    return cols == 64 ? (rows == 256 ? s256_n64 : s128_n64) : (rows == 256 ? s256 : s128);
  }
};
// The constants (v53): fitted by scripts/gpu/s24g-fit.py on every s24g variant's time under
// `sparse bench --tune` (an H100: the suite's three LLM shapes and three held out, N = 128, 256
// and 512, 270 times, 7.6 % rms; the 64-column tiles among them), rounded. They agree with v43's
// refit on the H200 (554, 955, 29.8, 6.27, 1.71, 5497, 4.22) within its spread. Checked held out
// in the addon (same H100, `sparse bench --pattern 2:4`, N 128-2048 against cuBLAS and
// cuSPARSELt): the constants fitted on the held-out shapes ran the suite in 0.97x the time of
// v38's (x cuBLAS at N >= 256 1.202 -> 1.230), those fitted on the suite ran the held-out shapes
// in 0.995x (1.216 -> 1.219). The 64-column tiles win where 128-column ones leave most SMs idle
// (4096^2 at N = 128: 17.8 us against 19.3). v38's constants (H200 v12 records) were {600, 1100,
// 60, 1.1, 7.2, 5300, 7.2}, 128 columns only.
// v57: refitted with the two `_ss1` tiles (128 x 256 and 256 x 192, A read by wgmma from shared
// memory) on every s24g variant's time under `--tune` (an H100: the suite's three LLM shapes and the
// three held out, N = 256, 1024 and 2048, 288 times, 5.0 % rms). Held out by shape its picks took
// 1.012x the fastest candidate's time (the v53 constants' 1.023x); in the bench's times, scaled by
// the pick's over the selection's, 1.325x cuBLAS and 1.005x cuSPARSELt against 1.309x and 0.993x
// (docs/gemm-engine.md "v57"). The 256 x 192 tile takes large N (11008 x 4096 from N = 512 on,
// 4096^2 from 4096); the other picks are v53's but for 4096 x 14336 at N = 256 (128 rows, the
// owner adding, for the 256-row split reduced together).
// v62: refitted on the H200 after v61 folded the unrolled 2:4 loop and the runs of `_ss` into the
// engine (the 128 x 256 tile's stage 1000 -> 880 cycles): every s24g variant's time under `--tune`
// (the suite's three LLM shapes and the three held out, N = 256, 1024 and 2048, 288 times, 3.0 %
// rms). Held out by shape its picks took 1.003x the fastest candidate's time (worst 1.038), v57's
// constants' 1.037x (worst 1.103); in the bench's times, scaled by the pick's over the selection's,
// 1.360x cuBLAS and 1.048x cuSPARSELt against 1.315x and 1.014x (docs/gemm-engine.md "v62"). The
// 128 x 256 tile takes N = 1024 on 4096^2 and 4096 x 11008 and N = 256 on 11008 x 4096 and
// 14336 x 4096 from the 256 x 128 one; 4096^2 at N = 256 runs whole 128 x 64 tiles (1.032x the
// fastest there, v57's split 128 x 128 tiles 1.000x; over all 18 cases 1.007x against 1.040x).
constexpr Gemm24Model kGemm24Fitted{545, 980, 26.2, 4.73, 1.78, 5716, 4.07, 415, 622, 880, 1234};
struct Gemm24Shape {
  int rows;
  int stream_k;     // 0 whole tiles, 2 the ragged wave split (the owner adds), 3 the same reduced together
  int cols = 128;   // 64 only where the model has those tiles' stage cycles (Narrow), 256 (128 rows) where Wide,
                    // 192 (256 rows) where Wide192
};
inline double Gemm24Us(const Gemm24Model& md, long long m, long long n, long long k, int rows, int stream_k, int sms,
                       int cols = 128) {
  const double stage = md.Stage(rows, cols), f = md.bytes_per_cycle;
  const long long tiles = Gemm24Tiles(m, n, rows, cols), k_blocks = (k + 63) / 64;
  const double store = rows * static_cast<double>(cols) * 2 / f;
  double cycles = static_cast<double>(tiles / sms) * (k_blocks * stage + store), fixed = md.fixed_us;
  if (tiles % sms != 0) {
    const int s = stream_k ? TailSplit(tiles, sms, static_cast<int>(k_blocks)) : 1;
    if (s < 2) {
      cycles += k_blocks * stage + store;
    } else {
      const double bytes = rows * static_cast<double>(cols) * 4;
      cycles += static_cast<double>((k_blocks + s - 1) / s) * stage + store +
                (stream_k == 3 ? 2.0 * (s - 1) / s * bytes : s * bytes) / f;
      fixed += stream_k == 3 ? md.coop_us : md.split_us;
    }
  }
  const double l2 = (static_cast<double>(m) * k * 1.125 * ((n + cols - 1) / cols) +
                     2.0 * static_cast<double>(k) * n * ((m + rows - 1) / rows)) /
                    md.l2_bytes_per_cycle;
  return fixed + (cycles > l2 ? cycles : l2) / 1980.0;
}
// The ragged wave's pieces of a shape (below 2: whole tiles).
inline int Gemm24Split(long long m, long long n, long long k, int rows, int sms, int cols = 128) {
  return TailSplit(Gemm24Tiles(m, n, rows, cols), sms, static_cast<int>((k + 63) / 64));
}
// The shapes the model weighs, in order: 128 columns, then (Narrow) 64; 256 rows then 128, each
// whole, split (where the split splits) and, with coop_us set, split and reduced together; then
// (Wide) 128 x 256 whole and split with the owner adding, and (Wide192) 256 x 192 the same.
// f(shape) for each.
template <class F>
inline void ForEachGemm24Shape(const Gemm24Model& md, long long m, long long n, long long k, int sms, F f) {
  for (int cols : {128, 64}) {
    if (cols == 64 && !md.Narrow()) continue;
    for (int rows : {256, 128})
      for (int sk : {0, 2, 3}) {
        if (sk == 3 && md.coop_us < 0) continue;
        if (sk != 0 && Gemm24Split(m, n, k, rows, sms, cols) < 2) continue;
        f(Gemm24Shape{rows, sk, cols});
      }
  }
  for (const Gemm24Shape ss1 : {Gemm24Shape{128, 0, 256}, Gemm24Shape{256, 0, 192}}) {
    if (md.Stage(ss1.rows, ss1.cols) <= 0) continue;
    f(ss1);
    if (Gemm24Split(m, n, k, ss1.rows, sms, ss1.cols) >= 2) f(Gemm24Shape{ss1.rows, 2, ss1.cols});
  }
}
// The cheapest of them; ties to the earlier.
inline Gemm24Shape Gemm24Pick(const Gemm24Model& md, long long m, long long n, long long k, int sms) {
  Gemm24Shape best{256, 0};
  double least = -1;
  ForEachGemm24Shape(md, m, n, k, sms, [&](const Gemm24Shape& s) {
    const double t = Gemm24Us(md, m, n, k, s.rows, s.stream_k, sms, s.cols);
    if (least < 0 || t < least) least = t, best = s;
  });
  return best;
}
// What the selection runs: Gemm24Pick's shape with the model on, else Gemm24Rows' height with the
// tail split (the owner adding).
inline Gemm24Shape Gemm24Choose(const Gemm24Model& md, long long m, long long n, long long k, int sms) {
  return md.On() ? Gemm24Pick(md, m, n, k, sms) : Gemm24Shape{Gemm24Rows(m, n, k, sms), 2};
}

// Where the selection runs unstructured f16/bf16 matrices on the GEMM engine (the family ung,
// spmm_unst_gemm_sm90a.cu): from N = kUnGemmMinN on (below it, the streaming engine's family up to
// N = 64 and the other kernels): always on large problems at a density of at least
// kUnGemmMinDensityPermille / 1000, elsewhere where it is estimated faster. Its time is the dense
// GEMM's whatever the density (every weight is multiplied, about 1.1x cuBLAS's time), the CSR
// kernels' falls with the nonzeros: below some density they win. Measured (v29 call 6, --tune over
// every family, f16, N = 256, the three suite shapes): at 90 and 95 % this family is the fastest on
// all three (the CSR kernels 2.7-3.7x its time at 95 %); at 98 % it is on two (43 against 47 us, 43
// against 55 us) and the CSR tile kernel on 4096 x 4096 (20 against 25 us). The threshold sits
// between: 2.5 %. From kUnGemmMinWork multiply-adds (M N K) on always at that density (the LLM
// shapes start at 2^31: 4096 x 4096 at N = 128); below either bound by UnstGemmWins' estimates
// (since v31 also below the density: refitted, they pick right on all four problems measured at
// 98 %, the three above and DLMC's 2048 x 512 at N = 2048, where the family ran 14.3 us against 26.8
// for the CSR kernels that the density bound had left it to). v29 had kept it off smaller problems
// altogether (call 10, `bench-dlmc --op spmm --dtype f16`: on 158 DLMC problems below 2^31 it ran
// 9-64 us, median 20, 1.11x Sputnik geomean, slower than Sputnik in 79 of them).
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
// The family's tile width (128 or 256 columns) and decomposition, from a model of a launch's
// cycles fitted to the engine's trace (v30: scripts/gpu/probe/gemm_probe.cu trace on the H200,
// docs/gemm-engine.md): a K stage of a 128 x w tile takes UnStageCycles(w), 1220 cycles at w =
// 256 (the multiply, 1024 at the tensor pipe's rate, hides most of the decode) and 950 at w =
// 128 (each warp's decode of its strip, the same for either width, outlasts the 512-cycle
// multiply); the ragged wave's tiles cut into s pieces that reduce together (stream_k 3) each
// move 2 (s - 1) / s of the tile's fp32 sums (512 w bytes) out to L2 and back at about
// kUnFixupBytesPerCycle an SM (4096², N = 256, 256 columns in 4 pieces: 13.0 K of a piece's
// 41.1 K cycles); every tile's store moves its 256 w bytes of f16 C at the same rate (v31: on
// the DLMC problems of one or two K stages, 256 x 64 at N = 25088 among them, the store is most
// of a tile's time, and 128 columns ran 12.6 us against 14.2 for 256, which the model without it
// had picked). The ring's fill, alike for every choice, is left out.
// Measured against it (v30, f16, the workbench's times): 256 columns on 6144 x 4096, 11008 x 4096,
// 4096 x 11008 at N = 256 and 2048 x 512 at N = 2048; 128 on 512 x 2048 (N = 256) and 512 x 512
// (N = 2048); a tie on 4096² at N = 256 (both 28 us); wrong by 7 % on 1000 x 2048 at N = 2048.
// With the store (v31, against v30 call 9's bench-dlmc runs with ung_n128_sk3 and ung_n256_sk3
// forced): the faster width, or one within 3 % of it, on all 219 DLMC problems (without: 207).
constexpr double kUnFixupBytesPerCycle = 15;
inline double UnStageCycles(int n_tile) { return n_tile == 256 ? 1220 : 950; }
// A launch's cycles on one SM's row of tiles (128 x n_tile, K stages of 64): the whole waves,
// then the ragged one, whole or cut into pieces (split); `stage` the cycles of a K stage,
// `bytes_per_cycle` the rate of the fixup's and the store's bytes. Shared by ung's and und's
// models.
inline double GemmTileCycles(long long m, long long n, long long k, int n_tile, bool split, int sms, double stage,
                             double bytes_per_cycle) {
  const long long tiles = (m + 127) / 128 * ((n + n_tile - 1) / n_tile), k_blocks = (k + 63) / 64;
  const double store = 256.0 * n_tile / bytes_per_cycle;
  const double whole_waves = static_cast<double>(tiles / sms) * (k_blocks * stage + store);
  if (tiles % sms == 0) return whole_waves;
  const int s = split ? TailSplit(tiles, sms, static_cast<int>(k_blocks)) : 1;
  if (s < 2) return whole_waves + k_blocks * stage + store;
  return whole_waves + static_cast<double>((k_blocks + s - 1) / s) * stage +
         2.0 * (s - 1) / s * 512.0 * n_tile / bytes_per_cycle + store;
}
inline double UnGemmCycles(long long m, long long n, long long k, int n_tile, bool split, int sms) {
  return GemmTileCycles(m, n, k, n_tile, split, sms, UnStageCycles(n_tile), kUnFixupBytesPerCycle);
}
// The cheapest of 256- and 128-column tiles by `cycles`, each with the ragged wave cut into
// pieces that reduce together (split: stream_k 3, which leaves the tiles whole where no split
// pays) or kept whole; ties to the wider tile and the split.
struct UnGemmShape {
  int n_tile;
  bool split;
};
template <class Cycles>
inline UnGemmShape CheapestGemmShape(Cycles cycles) {
  const UnGemmShape order[] = {{256, true}, {128, true}, {256, false}, {128, false}};
  UnGemmShape best = order[0];
  double least = cycles(best);
  for (const UnGemmShape& c : order) {
    const double t = cycles(c);
    if (t < least) least = t, best = c;
  }
  return best;
}
inline UnGemmShape UnGemmPick(long long m, long long n, long long k, int sms) {
  return CheapestGemmShape([&](const UnGemmShape& c) { return UnGemmCycles(m, n, k, c.n_tile, c.split, sms); });
}
constexpr long long kUnGemmMinDensityPermille = 25;
// Whether an m x k matrix of `nnz` nonzeros is at least kUnGemmMinDensityPermille / 1000 dense:
// the floor of the kernels whose work is dense whatever the density. This family's (every weight
// multiplied) takes it for its "always" from 2^31 on; the 2:4 families (s24g, s24e, s24: half of
// every row moved and multiplied) run no matrix below it (since v31): a matrix far sparser than
// 2:4 that fits the pattern by chance (most small ones at 98 %) runs faster on the kernels of its
// nonzeros. v30 call 10's two 64 x 256 ResNet-50 matrices of DLMC at 98 % (327 nonzeros, N =
// 3136 and 25088) ran s24g at 0.48x and 0.62x Sputnik, where their siblings at 95 % ran
// 0.93-1.02x on the other kernels.
inline bool DenseWorkPays(long long m, long long k, long long nnz) {
  return m >= 1 && k >= 1 && 1000 * nnz >= kUnGemmMinDensityPermille * m * k;
}
// Below kUnGemmMinWork, where the family now runs small problems in 8-20 us (v30: the
// cooperative split and 128-column tiles; v29's 13-64 us had set the bound), the choice weighs
// two estimates fitted to the DLMC subset at N >= 128 (v30 call 9: bench-dlmc f16 with ung_n128_sk3
// and ung_n256_sk3 forced, against the selection's kernels in call 8): this family's time
// kUnGemmFixedUs + kUnGemmUsPerCycle x UnGemmCycles of UnGemmPick's shape, the CSR kernels'
// kCsrFixedUs + kCsrUsPerMac x nnz N. v31 refitted both by relative error, with the store in the
// cycles, on every DLMC time measured in v30 calls 8-10 and v31 call 7 (the kernel's own shape
// where it ran: v30's fit had taken the forced split's times also where whole tiles are faster,
// and its least squares had let the larger times set the CSR kernels' fixed cost at 13.2 us,
// where they run the small problems in 7-10). On the 185 problems at N >= 128 whose picked
// kernel was measured, its picks give 2.094x Sputnik against 2.065x for v30's rule (the faster
// of the two on each: 2.119x). Held out by model family: fitted on the ResNet-50 matrices, it
// picked the faster kernel (within 3 %) on 54 of 60 Transformer problems (v30's rule: 52); the
// Transformer's fit on 114 of 125 ResNet-50 ones (v30's: 101).
constexpr double kUnGemmFixedUs = 6.18, kUnGemmUsPerCycle = 0.000584, kCsrFixedUs = 8.26, kCsrUsPerMac = 2.17e-7;
// The two estimates, us: this family's on `shape`, the CSR kernels'.
inline double UnGemmUs(long long m, long long n, long long k, const UnGemmShape& shape, int sms) {
  return kUnGemmFixedUs + kUnGemmUsPerCycle * UnGemmCycles(m, n, k, shape.n_tile, shape.split, sms);
}
inline double CsrUs(long long nnz, long long n) { return kCsrFixedUs + kCsrUsPerMac * static_cast<double>(nnz) * n; }
// `shape`: the one the family would run (UnGemmPick(m, n, k, sms)).
inline bool UnstGemmWins(long long m, long long k, long long nnz, int n, int sms, const UnGemmShape& shape) {
  if (n < kUnGemmMinN || m < 1 || k < 1 || sms < 1) return false;
  if (m * k * n >= kUnGemmMinWork && DenseWorkPays(m, k, nnz)) return true;
  return UnGemmUs(m, n, k, shape, sms) < CsrUs(nnz, n);
}

// Unstructured A stored dense (the family und, spmm_und_gemm_sm90a.cu, v35): the engine's dense
// kernels on a zeroed M x K copy of A, nothing decoded. Selected where ung's rule says "always"
// (UnstGemmWins' first test: from kUnGemmMinWork multiply-adds on at a density of at least 2.5 %),
// N is at least the machine's ridge (below) and N and K are multiples of 8 (its tensor maps):
// there ung multiplies every weight too and pays for its decode. Measured (v35, `sparse bench
// --tune`, f16, N = 256, 50 / 70 / 90 %): its fastest variant ran 1.01-1.25x as fast as ung's
// selected one on all 18 cases (the three suite LLM shapes and the three held out of it),
// 0.785-0.98x cuBLAS where ung ran 0.66-0.96x.
// Its tile width and decomposition (UndGemmPick): the cycles of GemmTileCycles with a K stage of
// UndStageCycles (600 for 128 x 128, 1110 for 128 x 256: 92 % and 99 % of the tensor pipe's
// 1024 f16 multiply-adds a cycle), the fixup's and store's bytes at kUndFixupBytesPerCycle an SM
// (ung's 15 fitted on its trace), or, where more, the operand bytes the SMs read through L2
// (A once per column of tiles, B once per row of tiles) at kUndL2BytesPerCycle for the GPU
// (about 9.7 TB/s at 1.98 GHz). Fitted (relative least squares, 1.98 GHz) to the suite's 36
// times of und_n256, und_n256_sk3, und_n128, und_n128_sk3: 3.7 % rms; on the held-out shapes 3.1 %,
// and the pick the fastest of the four on all nine held-out cases (14336 x 4096, 4096 x 14336,
// 6144 x 4096), within 3 % on the suite's (a tie on 4096 x 11008 at 70 %, 43.9 against 42.6 us).
// Without the L2 term (5.4 % rms) it picked 128 columns on 4096 x 14336, 5 % slower: there two
// columns of 128-column tiles read A's 117 MB twice.
constexpr double kUndFixupBytesPerCycle = 14, kUndL2BytesPerCycle = 4900;
inline double UndStageCycles(int n_tile) { return n_tile == 256 ? 1110 : 600; }
inline double UndGemmCycles(long long m, long long n, long long k, int n_tile, bool split, int sms) {
  const double tiles = GemmTileCycles(m, n, k, n_tile, split, sms, UndStageCycles(n_tile), kUndFixupBytesPerCycle);
  const double l2 = 2.0 * static_cast<double>(m) * k * ((n + n_tile - 1) / n_tile) +
                    2.0 * static_cast<double>(k) * n * ((m + 127) / 128);
  const double l2_cycles = l2 / kUndL2BytesPerCycle;
  return tiles > l2_cycles ? tiles : l2_cycles;
}
inline UnGemmShape UndGemmPick(long long m, long long n, long long k, int sms) {
  return CheapestGemmShape([&](const UnGemmShape& c) { return UndGemmCycles(m, n, k, c.n_tile, c.split, sms); });
}
// From the H200's ridge on: a dense f16/bf16 A does N multiply-adds (2 N flops) per 2-byte weight,
// so N flops a byte, and below the ridge of the measured ceilings (f16 tensor 748.7 TFLOP/s over
// copy 4218 GB/s: 177.5 flops a byte, `sparse bench`'s header) its launch waits on A's bytes,
// where ung's stream is 0.8x of them at 50 % and about 0.15x at 95 %. Measured (v35, f16, the
// suite's three shapes at 50 and 95 %, ung_n128_sk3 and ung_n256_sk3 forced against und): at N =
// 1024 and 2048 und ran 1.01-1.08x the faster ung's speed on all 12; at N = 128 0.90-1.24x (ung
// faster on 4096 x 11008 at both, and on 4096^2 at 95 %).
constexpr double kUndMinFlopsPerByte = 177.5;
// Below kUnGemmMinWork (v37's branch, fitted in v38): und where its own estimate, fixed_us +
// us_per_cycle x UndGemmCycles of UndGemmPick's shape, is below both of UnstGemmWins' estimates
// (ung's and the CSR kernels'), N and K as above. `UndSmallModel{}` is the branch off (v35's
// selection); the library runs `kUndSmallFitted`: fitted (scripts/gpu/und-dlmc.py, relative least
// squares, 7.4 % rms) on v38's --tune times of und on the 190 DLMC problems it can run (f16, an
// H100: no H200 was lent that session). Held out by model family (fitted on one, the rule checked
// on the other) it picked the faster kernel (within 3 %) on 111 of 120 ResNet-50 and 58 of 70
// Transformer problems; over all 219 problems the DLMC geomean over Sputnik went from 1.927 to
// 2.010 held out and 2.007 with these constants (2.043 had und run wherever it was faster).
// SPARSE_UND_SMALL="FIXED,PER_CYCLE" replaces the constants and "off" turns the branch off, to
// measure the rule without a rebuild (spmm_und_gemm_sm90a.cu).
struct UndSmallModel {
  double fixed_us = -1, us_per_cycle = 0;
  bool On() const { return fixed_us >= 0 && us_per_cycle > 0; }
};
constexpr UndSmallModel kUndSmallFitted{5.669, 0.0006903};
inline bool UndGemmWins(long long m, long long k, long long nnz, long long n, int sms, const UndSmallModel& small) {
  if (!(static_cast<double>(n) >= kUndMinFlopsPerByte && n % 8 == 0 && k % 8 == 0 && m >= 1)) return false;
  if (m * k * n >= kUnGemmMinWork) return DenseWorkPays(m, k, nnz);
  if (!small.On() || sms < 1) return false;
  const UnGemmShape und = UndGemmPick(m, n, k, sms);
  const double und_us = small.fixed_us + small.us_per_cycle * UndGemmCycles(m, n, k, und.n_tile, und.split, sms);
  return und_us < UnGemmUs(m, n, k, UnGemmPick(m, n, k, sms), sms) && und_us < CsrUs(nnz, n);
}

}  // namespace sparse
#endif  // SPARSE_COMMON_GEMM_PLAN_H_
