// Workbench for the GEMM engine (native/cuda/gemm/gemm_engine.cuh), dense, 2:4 A (the
// `_sp` variants, wgmma.mma_async.sp) and unstructured A (the `_un` variants: the pair stream
// decoded into wgmma's A registers), outside the addon:
// checks every variant against a float64 reference (poisoned outputs, fresh random inputs,
// ragged shapes, a full and a small persistent grid, stream-K's workspace flags left zero)
// and times it beside cuBLAS (dense, on the same A; loaded at
// run time, same row-major layout): CUDA-event medians with a cold L2, and the CUDA-graph
// time per launch over rotated operand copies. Built by gemm_build.sh.
//   gemm_probe selftest                 host logic only (no device): the tile raster, the
//                                       stream-K decomposition
//   gemm_probe check                    every variant (or those VARIANTS names), f16 and bf16
//   gemm_probe list                     the variants
//   gemm_probe time [MxK ...]           N from NS (default 256,512,1024,2048); VARIANTS=a,b
//                                       picks variants (default: every f16 one); the `_un`
//                                       ones at each sparsity of SPARSITY (default 0.5,0.7,0.9)
//   gemm_probe one VARIANT M K N        a few launches of one variant (Nsight Compute; `_un`
//                                       at the first SPARSITY)
// The `_un_w1` / `_un_w2` variants read a stream whose tiles of WHOLE_MIN registers or more
// (default 80 of 128) are stored whole, in `check`, `time`, `one` and `trace` alike.
// GEMM_GROUP sets the raster's row blocks per group (default 8). GEMM_PDL=1 launches every
// kernel with programmatic dependent launch (Params::pdl), in every mode. GEMM_L2_PROMO_A and
// GEMM_L2_PROMO_B (0, 64, 128, 256; v59) set the L2 promotion of A's and B's tensor maps
// (default 256 bytes, the addon's), in every mode.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "common/unstructured_stream.h"
#include "cuda/gemm/gemm_engine_host.h"
#include "scripts/gpu/probe/probe_util.h"

using namespace sparse;
using namespace sparse::probe;
namespace gm = sparse::cuda::gemm;

namespace {

using LaunchFn = cudaError_t (*)(const gm::Params&, int, int, int, cudaStream_t);

struct Variant {
  const char* name;
  DType type;
  int n_tile;
  int stream_k;  // 0, gemm_host::kStreamKHybrid (_sk), kStreamKTail (_tk) or kStreamKTailCoop (_ck)
  LaunchFn launch;
  int sp = 0;  // 2:4 A (strips per consumer warp: tiles of 128 sp rows), 0: dense
  bool ss = false;  // 2:4 A read by wgmma from shared memory (the compressed rows and metadata)
  int un = 0;  // unstructured A (the pair stream; sp is 1: tiles of 128 rows): its slots' room in
              // registers a tile (128: any stage; less refuses a stream with a longer run)
  int whole = 0;  // (un) the tile decode, gemm_engine.cuh's kUnWhole: 0 per register; 1 and 2
                  // read whole tiles with one 16-byte load a lane, and are given a stream with
                  // whole tiles (WholeMin)
};

// Names: tile width, ring stages, then _tma (C staged in shared memory, tensor stores), _sk
// (stream-K for the tiles past the last whole wave), _tk (the ragged wave's tiles split by K), _ck (the
// same, its pieces reducing each tile together), _mc (clusters of 2 along M, B multicast), _mn (clusters
// of 2 along N, A multicast; v36).
#define SPARSE_GEMM_VARIANT(T, TN, NT, S, TMA, SK, CL, SUFFIX) \
  Variant { #TN "_n" #NT "_s" #S SUFFIX, DType::T, NT, SK, &gemm_host::Launch<DType::T, NT, S, TMA, CL> }
#define SPARSE_GEMM_VARIANT_MN(T, TN, NT, S) \
  Variant { #TN "_n" #NT "_s" #S "_tma_mn", DType::T, NT, false, &gemm_host::Launch<DType::T, NT, S, true, 2, 0, false, 0, 0, false, true> }
#define SPARSE_GEMM_VARIANTS(T, TN)                                                                              \
  SPARSE_GEMM_VARIANT(T, TN, 128, 4, false, false, 1, ""), SPARSE_GEMM_VARIANT(T, TN, 128, 5, false, false, 1, ""),   \
      SPARSE_GEMM_VARIANT(T, TN, 128, 6, false, false, 1, ""), SPARSE_GEMM_VARIANT(T, TN, 256, 4, false, false, 1, ""), \
      SPARSE_GEMM_VARIANT(T, TN, 128, 4, true, false, 1, "_tma"),                                                     \
      SPARSE_GEMM_VARIANT(T, TN, 128, 6, true, false, 1, "_tma"),                                                     \
      SPARSE_GEMM_VARIANT(T, TN, 256, 3, true, false, 1, "_tma"), SPARSE_GEMM_VARIANT(T, TN, 128, 5, false, true, 1, "_sk"), \
      SPARSE_GEMM_VARIANT(T, TN, 128, 5, true, true, 1, "_tma_sk"),                                                   \
      SPARSE_GEMM_VARIANT(T, TN, 256, 3, true, true, 1, "_tma_sk"),                                                   \
      SPARSE_GEMM_VARIANT(T, TN, 128, 5, true, false, 2, "_tma_mc"), SPARSE_GEMM_VARIANT(T, TN, 256, 3, true, false, 2, "_tma_mc"), \
      SPARSE_GEMM_VARIANT(T, TN, 64, 8, false, false, 1, ""), SPARSE_GEMM_VARIANT(T, TN, 64, 8, true, false, 1, "_tma"),   \
      SPARSE_GEMM_VARIANT(T, TN, 64, 8, true, true, 1, "_tma_sk"), SPARSE_GEMM_VARIANT(T, TN, 256, 3, true, 2, 1, "_tma_tk"), \
      SPARSE_GEMM_VARIANT(T, TN, 128, 5, true, 2, 1, "_tma_tk"), SPARSE_GEMM_VARIANT(T, TN, 256, 4, 2, 0, 1, "_tma2"), \
      SPARSE_GEMM_VARIANT(T, TN, 256, 4, 2, 2, 1, "_tma2_tk"), SPARSE_GEMM_VARIANT(T, TN, 256, 3, true, 3, 1, "_tma_ck"), \
      SPARSE_GEMM_VARIANT(T, TN, 128, 5, true, 3, 1, "_tma_ck"), SPARSE_GEMM_VARIANT(T, TN, 256, 4, 2, 3, 1, "_tma2_ck"), \
      SPARSE_GEMM_VARIANT(T, TN, 128, 5, false, 3, 1, "_ck"), SPARSE_GEMM_VARIANT_MN(T, TN, 64, 8),                 \
      SPARSE_GEMM_VARIANT_MN(T, TN, 128, 5), SPARSE_GEMM_VARIANT_MN(T, TN, 128, 6), SPARSE_GEMM_VARIANT_MN(T, TN, 256, 3)
// 2:4 A (wgmma.mma_async.sp): _sp tiles of 128 rows, _sp2 of 256 (two m-slices per consumer
// warpgroup); the rest of the name as above.
// CL: blocks a cluster (2: _mc, clusters along M, B multicast; v54, whole tiles only). v63's
// 64-column tiles in clusters (B shared by K rows) ran 1.26-1.45x the plain 128 x 64 tile's time
// on an H100 at N = 256 (256 x 64: 1.06x), and the 128 x 64 tile with A from shared memory
// (`_ss1`) 1.03x: removed (in git at 3788c1f).
#define SPARSE_GEMM_SP_CL_VARIANT(T, TN, MS, NT, S, TMA, CL, SK, SUFFIX) \
  Variant { #TN "_sp" SUFFIX "_n" #NT "_s" #S, DType::T, NT, SK, &gemm_host::Launch<DType::T, NT, S, TMA, CL, MS>, MS }
#define SPARSE_GEMM_SP_VARIANT(T, TN, MS, NT, S, TMA, SK, SUFFIX) SPARSE_GEMM_SP_CL_VARIANT(T, TN, MS, NT, S, TMA, 1, SK, SUFFIX)
#define SPARSE_GEMM_SPMC_VARIANT(T, TN, MS, NT, S, TMA, SUFFIX) SPARSE_GEMM_SP_CL_VARIANT(T, TN, MS, NT, S, TMA, 2, false, SUFFIX)
#define SPARSE_GEMM_SP_VARIANTS(T, TN)                                                                          \
  SPARSE_GEMM_SPMC_VARIANT(T, TN, 2, 128, 4, true, "2_tma_mc"), SPARSE_GEMM_SPMC_VARIANT(T, TN, 1, 256, 4, 2, "_tma2_mc"), \
  SPARSE_GEMM_SPMC_VARIANT(T, TN, 1, 128, 6, true, "_tma_mc"), \
  SPARSE_GEMM_SP_VARIANT(T, TN, 1, 128, 6, false, false, ""),                                                    \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 128, 6, true, false, "_tma"),                                            \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 256, 3, true, false, "_tma"),                                            \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 256, 4, 2, false, "_tma2"), SPARSE_GEMM_SP_VARIANT(T, TN, 1, 256, 4, 2, 2, "_tma2_tk"), \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 128, 6, true, true, "_tma_sk"),                                          \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 5, false, false, "2"),                                              \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 4, true, false, "2_tma"),                                           \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 4, true, true, "2_tma_sk"),                                        \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 128, 7, true, false, "_tma"),                                            \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 5, true, false, "2_tma"),                                           \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 5, true, true, "2_tma_sk"),                                        \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 4, true, 2, "2_tma_tk"),                                        \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 128, 4, true, 3, "2_tma_ck"),                                        \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 128, 6, true, 2, "_tma_tk"), SPARSE_GEMM_SP_VARIANT(T, TN, 1, 128, 6, true, 3, "_tma_ck"), \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 64, 12, true, false, "_tma"), SPARSE_GEMM_SP_VARIANT(T, TN, 1, 64, 12, true, 2, "_tma_tk"), \
      SPARSE_GEMM_SP_VARIANT(T, TN, 1, 64, 12, true, 3, "_tma_ck"), SPARSE_GEMM_SP_VARIANT(T, TN, 2, 64, 8, true, false, "2_tma"), \
      SPARSE_GEMM_SP_VARIANT(T, TN, 2, 64, 8, true, 2, "2_tma_tk"), SPARSE_GEMM_SP_VARIANT(T, TN, 2, 64, 8, true, 3, "2_tma_ck")
// 2:4 A from shared memory: _ss2 tiles of 256 rows, _ss3 of 384; the rest as above.
// TMA 2 (_tma2): C staged in halves of its columns (room for a fourth stage of 128 x 256), 4 (_tma4)
// in quarters (a fifth), 3 (_tma3) in thirds (a fifth stage of 256 x 192, its barriers in the
// alignment's room: Layout::kBarriersInPad); no _tma: C stored from registers (v58: a fifth stage
// of 128 x 256 and of 256 x 192 without the C tile in shared memory); CL as
// for _sp (v61's `_tma4_mc`, the selection's 5-stage 128 x 256 tile in clusters of 2 along M
// sharing B, ran 1.051x the plain tile's time on the H200 in v62: the full wave is not L2-bound;
// removed, in git at 68d1a30).
#define SPARSE_GEMM_SS_AT_VARIANT(T, TN, MS, NT, S, TMA, CL, SK, SUFFIX) \
  Variant { #TN "_ss" #MS SUFFIX "_n" #NT "_s" #S, DType::T, NT, SK, &gemm_host::Launch<DType::T, NT, S, TMA, CL, MS, true>, MS, true }
#define SPARSE_GEMM_SS_VARIANT(T, TN, MS, NT, S, SK, SUFFIX) SPARSE_GEMM_SS_AT_VARIANT(T, TN, MS, NT, S, true, 1, SK, SUFFIX)
#define SPARSE_GEMM_SS2_VARIANT(T, TN, MS, NT, S, SK, SUFFIX) SPARSE_GEMM_SS_AT_VARIANT(T, TN, MS, NT, S, 2, 1, SK, SUFFIX)
#define SPARSE_GEMM_SSMC_VARIANT(T, TN, MS, NT, S, TMA, SUFFIX) SPARSE_GEMM_SS_AT_VARIANT(T, TN, MS, NT, S, TMA, 2, false, SUFFIX)
#define SPARSE_GEMM_SS_VARIANTS(T, TN)                                                                      \
  SPARSE_GEMM_SSMC_VARIANT(T, TN, 1, 256, 4, 2, "_tma2_mc"), SPARSE_GEMM_SSMC_VARIANT(T, TN, 2, 128, 5, true, "_tma_mc"), \
  SPARSE_GEMM_SS2_VARIANT(T, TN, 1, 256, 4, false, "_tma2"), SPARSE_GEMM_SS2_VARIANT(T, TN, 1, 256, 4, 2, "_tma2_tk"), \
  SPARSE_GEMM_SS_AT_VARIANT(T, TN, 1, 256, 5, 4, 1, false, "_tma4"), SPARSE_GEMM_SS_AT_VARIANT(T, TN, 1, 256, 5, 0, 1, false, ""), \
  SPARSE_GEMM_SS_AT_VARIANT(T, TN, 2, 192, 5, 0, 1, false, ""), SPARSE_GEMM_SS_AT_VARIANT(T, TN, 2, 192, 5, 3, 1, false, "_tma3"), \
  SPARSE_GEMM_SS_AT_VARIANT(T, TN, 2, 192, 5, 3, 1, 2, "_tma3_tk"), \
  SPARSE_GEMM_SS_VARIANT(T, TN, 2, 128, 4, false, "_tma"), SPARSE_GEMM_SS_VARIANT(T, TN, 2, 128, 5, false, "_tma"), \
      SPARSE_GEMM_SS_VARIANT(T, TN, 2, 128, 5, true, "_tma_sk"),                                            \
      SPARSE_GEMM_SS_VARIANT(T, TN, 2, 192, 4, false, "_tma"), SPARSE_GEMM_SS_VARIANT(T, TN, 2, 192, 4, true, "_tma_sk"), \
      SPARSE_GEMM_SS_VARIANT(T, TN, 3, 128, 4, false, "_tma"), SPARSE_GEMM_SS_VARIANT(T, TN, 3, 128, 4, true, "_tma_sk"), \
      SPARSE_GEMM_SS_VARIANT(T, TN, 1, 128, 6, false, "_tma"), SPARSE_GEMM_SS_VARIANT(T, TN, 2, 128, 5, 2, "_tma_tk"), \
      SPARSE_GEMM_SS_VARIANT(T, TN, 2, 192, 4, 2, "_tma_tk"), SPARSE_GEMM_SS_VARIANT(T, TN, 3, 128, 4, 2, "_tma_tk")
// Unstructured A (the pair stream, dense wgmma with A from registers): _un, tiles of 128 rows,
// slots with room for every register (CAP 128) or, with _cCAP, CAP registers a tile on average;
// _tma2: C staged in two halves of its columns (room for another stage); the rest as above.
#define SPARSE_GEMM_UN_VARIANT(T, TN, NT, S, TMA, SK, CAP, SUFFIX)                                               \
  Variant {                                                                                                      \
    #TN "_un" SUFFIX "_n" #NT "_s" #S, DType::T, NT, SK, &gemm_host::Launch<DType::T, NT, S, TMA, 1, 1, false, CAP>, \
        1, false, CAP                                                                                            \
  }
// _wW: the whole-tile decode W (slots of 128 registers a tile: a stage of whole tiles).
#define SPARSE_GEMM_UNW_VARIANT(T, TN, NT, S, TMA, SK, W, SUFFIX)                                                   \
  Variant {                                                                                                        \
    #TN "_un" SUFFIX "_n" #NT "_s" #S, DType::T, NT, SK, &gemm_host::Launch<DType::T, NT, S, TMA, 1, 1, false, 128, W>, \
        1, false, 128, W                                                                                           \
  }
#define SPARSE_GEMM_UN_VARIANTS(T, TN)                                                                               \
  SPARSE_GEMM_UN_VARIANT(T, TN, 128, 6, 0, 0, 128, ""), SPARSE_GEMM_UN_VARIANT(T, TN, 128, 5, 1, 0, 128, "_tma"),     \
      SPARSE_GEMM_UN_VARIANT(T, TN, 128, 5, 1, 2, 128, "_tma_tk"), SPARSE_GEMM_UN_VARIANT(T, TN, 256, 3, 1, 0, 128, "_tma"), \
      SPARSE_GEMM_UN_VARIANT(T, TN, 256, 3, 1, 2, 128, "_tma_tk"), SPARSE_GEMM_UN_VARIANT(T, TN, 256, 4, 0, 0, 128, ""),  \
      SPARSE_GEMM_UN_VARIANT(T, TN, 256, 4, 2, 0, 120, "_c120_tma2"), SPARSE_GEMM_UN_VARIANT(T, TN, 256, 4, 2, 2, 120, "_c120_tma2_tk"), \
      SPARSE_GEMM_UN_VARIANT(T, TN, 128, 6, 1, 2, 120, "_c120_tma_tk"), SPARSE_GEMM_UN_VARIANT(T, TN, 256, 4, 2, 1, 120, "_c120_tma2_sk"), \
      SPARSE_GEMM_UN_VARIANT(T, TN, 128, 6, 1, 1, 120, "_c120_tma_sk"), SPARSE_GEMM_UN_VARIANT(T, TN, 256, 4, 2, 3, 120, "_c120_tma2_ck"), \
      SPARSE_GEMM_UN_VARIANT(T, TN, 128, 6, 1, 3, 120, "_c120_tma_ck"), SPARSE_GEMM_UN_VARIANT(T, TN, 128, 6, 0, 3, 120, "_c120_ck"), \
      SPARSE_GEMM_UNW_VARIANT(T, TN, 128, 5, 1, 0, 1, "_w1_tma"), SPARSE_GEMM_UNW_VARIANT(T, TN, 128, 5, 1, 0, 2, "_w2_tma"), \
      SPARSE_GEMM_UNW_VARIANT(T, TN, 128, 5, 1, 3, 1, "_w1_tma_ck"), SPARSE_GEMM_UNW_VARIANT(T, TN, 128, 5, 1, 3, 2, "_w2_tma_ck"), \
      SPARSE_GEMM_UNW_VARIANT(T, TN, 256, 3, 1, 0, 1, "_w1_tma"), SPARSE_GEMM_UNW_VARIANT(T, TN, 256, 3, 1, 0, 2, "_w2_tma"), \
      SPARSE_GEMM_UNW_VARIANT(T, TN, 256, 3, 1, 3, 1, "_w1_tma_ck"), SPARSE_GEMM_UNW_VARIANT(T, TN, 256, 3, 1, 3, 2, "_w2_tma_ck")
// GEMM_PROBE_SP24 (gemm_build.sh's SP24=1): the 2:4 f16 variants alone (A in registers, _sp, and from shared memory, _ss), a build of minutes for
// an A/B of 2:4 tiles.
#if defined(GEMM_PROBE_SP24)
const Variant kVariants[] = {SPARSE_GEMM_SP_VARIANTS(kF16, f16), SPARSE_GEMM_SS_VARIANTS(kF16, f16)};
#else
const Variant kVariants[] = {SPARSE_GEMM_VARIANTS(kF16, f16),       SPARSE_GEMM_VARIANTS(kBF16, bf16),
                             SPARSE_GEMM_SP_VARIANTS(kF16, f16),    SPARSE_GEMM_SP_VARIANTS(kBF16, bf16),
                             SPARSE_GEMM_SS_VARIANTS(kF16, f16),    SPARSE_GEMM_SS_VARIANTS(kBF16, bf16),
                             SPARSE_GEMM_UN_VARIANTS(kF16, f16),    SPARSE_GEMM_UN_VARIANTS(kBF16, bf16)};
#endif
#undef SPARSE_GEMM_UN_VARIANTS
#undef SPARSE_GEMM_UNW_VARIANT
#undef SPARSE_GEMM_UN_VARIANT
#undef SPARSE_GEMM_SS_VARIANTS
#undef SPARSE_GEMM_SSMC_VARIANT
#undef SPARSE_GEMM_SS2_VARIANT
#undef SPARSE_GEMM_SS_VARIANT
#undef SPARSE_GEMM_SS_AT_VARIANT
#undef SPARSE_GEMM_SP_VARIANTS
#undef SPARSE_GEMM_SPMC_VARIANT
#undef SPARSE_GEMM_SP_VARIANT
#undef SPARSE_GEMM_SP_CL_VARIANT
#undef SPARSE_GEMM_VARIANTS
#undef SPARSE_GEMM_VARIANT

// One stream-K workspace for every launch of the process (launches on one stream run one at
// a time, and each leaves the flags zero): room for `blocks` blocks.
struct Workspace {
  DevBuf partials, flags;
  int blocks;
  explicit Workspace(int b)
      : partials(gemm_host::PartialFloats(b) * sizeof(float)), flags(gemm_host::FlagInts(b) * sizeof(int)), blocks(b) {
    CK(cudaMemset(flags.p, 0, flags.bytes));
  }
  float* Partials() const { return static_cast<float*>(partials.p); }
  int* Flags() const { return static_cast<int*>(flags.p); }
};

// Whether VARIANTS (a comma-separated list of names) names v; without it, every variant (or,
// with f16_only, the f16 ones).
bool Picked(const Variant& v, bool f16_only) {
  const char* pick = std::getenv("VARIANTS");
  if (!pick) return !f16_only || v.type == DType::kF16;
  return std::strstr((std::string(",") + pick + ",").c_str(), (std::string(",") + v.name + ",").c_str()) != nullptr;
}

int Group() {
  const char* g = std::getenv("GEMM_GROUP");
  return g ? std::max(1, std::atoi(g)) : 8;
}

// GEMM_PDL=1: every launch with programmatic dependent launch (Params::pdl, v35): the ring's
// first stages' A before griddepcontrol.wait, their B after; the consumers wait before C.
int Pdl() {
  const char* e = std::getenv("GEMM_PDL");
  return e && std::atoi(e) != 0 ? 1 : 0;
}


std::vector<uint16_t> Random(size_t count, DType t, std::mt19937_64& rng) {
  std::vector<uint16_t> v(count);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& x : v) x = ToBits(u(rng), t);
  return v;
}

// A random 2:4 matrix (M x K row-major): in each group of four columns of a row, two kept at
// random positions, one in 8 groups with only one and one in 16 with none (so the tiles'
// padding and partly empty groups are exercised); K % 4 columns at the end are a partial group.
std::vector<uint16_t> Random24(int m, int k, DType t, std::mt19937_64& rng) {
  std::vector<uint16_t> v = Random(static_cast<size_t>(m) * k, t, rng);
  std::uniform_int_distribution<int> pick(0, 3), keep(0, 15);
  for (int r = 0; r < m; ++r)
    for (int g = 0; g < k; g += 4) {
      const int x = pick(rng), y = (x + 1 + pick(rng) % 3) % 4, roll = keep(rng);
      const int kept = roll == 0 ? 0 : roll <= 2 ? 1 : 2;
      for (int j = 0; j < 4 && g + j < k; ++j) {
        const bool on = (kept >= 1 && j == x) || (kept == 2 && j == y);
        if (!on) v[static_cast<size_t>(r) * k + g + j] = 0;
      }
    }
  return v;
}

// A dense M x K matrix of 16-bit words as CSR, its zeros (either sign) left out.
struct Csr16 {
  std::vector<int> offsets{0}, cols;
  std::vector<uint16_t> vals;
};
Csr16 ToCsr(const std::vector<uint16_t>& a, int m, int k) {
  Csr16 csr;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < k; ++c) {
      const uint16_t x = a[static_cast<size_t>(r) * k + c];
      if ((x & 0x7fff) == 0) continue;
      csr.cols.push_back(c), csr.vals.push_back(x);
    }
    csr.offsets.push_back(static_cast<int>(csr.cols.size()));
  }
  return csr;
}

// The 2:4 tiles of a dense 2:4 matrix.
Sp24Tiles Tiles24(const std::vector<uint16_t>& a, int m, int k) {
  const Csr16 csr = ToCsr(a, m, k);
  Sp24Tiles tiles;
  const std::string err = BuildSp24Tiles(m, k, csr.offsets.data(), csr.cols.data(), csr.vals.data(), &tiles);
  if (!err.empty()) {
    std::printf("BuildSp24Tiles: %s\n", err.c_str());
    std::exit(1);
  }
  return tiles;
}

// The workbench's `_ss` runs and its selftest's reference pad the strips to a multiple of this
// (48 strips: 768 rows, 6 runs of 128 rows), so tiles of 128, 256 and 384 rows read whole runs
// of one form; the addon pads its runs to its tile's height alone (StageSp24Runs' unit_multiple).
// (These helpers lived in gemm_engine.cuh until v62; the engine reads only the runs.)
constexpr int kSsStripMultiple = 48;
// Where the metadata of tile row block mb (tiles of `rows` rows), K stage kb starts in
// StageSp24Meta's form with meta_strips strips per K stage (bytes): its rows / 16 strips are
// contiguous, 128 bytes each (2 k-steps of 16 words). The selftest reads the runs' metadata
// against it.
constexpr int64_t SsMetaOffset(int meta_strips, int rows, int mb, int kb) {
  return (static_cast<int64_t>(kb) * meta_strips + static_cast<int64_t>(mb) * (rows / 16)) * 128;
}
// The strips per K stage of StageSp24Meta(t, kSsStripMultiple, 2) for M rows (8 times the runs'
// units), and the compressed values' columns for K (K / 2, padded to whole k-steps of 16): the
// sizes StageSp24Meta and Sp24CompressedRows give, which the selftest addresses.
constexpr int SsMetaStrips(int m) { return ((m + 15) / 16 + kSsStripMultiple - 1) / kSsStripMultiple * kSsStripMultiple; }
constexpr int SsColumns(int k) { return (k + 31) / 32 * 16; }

// The forms the 2:4 kernels read: the staged tiles of every `_sp` kernel (StageSp24Tiles with
// kSpStageStrips strips and 2 k-steps per stage) and the `_ss` kernels' runs (StageSp24Runs padded
// to kSsStripMultiple / 8 = 6 units, whole for every tile height); and, for the selftest's
// reference of the runs, the compressed rows and their
// metadata by K stage (Sp24CompressedRows, StageSp24Meta), which the runs are built from.
struct Forms24 {
  std::vector<uint8_t> staged;
  std::vector<uint16_t> rows;
  std::vector<uint32_t> meta;
  std::vector<uint8_t> runs;
};
Forms24 Forms(const std::vector<uint16_t>& a, int m, int k) {
  const Sp24Tiles tiles = Tiles24(a, m, k);
  return Forms24{StageSp24Tiles(tiles, gm::kSpStageStrips, 2), Sp24CompressedRows(tiles),
                 StageSp24Meta(tiles, kSsStripMultiple, 2), StageSp24Runs(tiles, kSsStripMultiple / 8)};
}

// A random unstructured matrix: each weight kept with probability 1 - sparsity; with `awkward`,
// row 3 dense (a stage at full capacity), every 17th row from row 5 empty.
std::vector<uint16_t> RandomUnst(int m, int k, DType t, double sparsity, bool awkward, std::mt19937_64& rng) {
  std::vector<uint16_t> v = Random(static_cast<size_t>(m) * k, t, rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < k; ++c) {
      const bool keep = awkward && r == 3 ? true : awkward && r % 17 == 5 ? false : u(rng) >= sparsity;
      if (!keep) v[static_cast<size_t>(r) * k + c] = 0;
    }
  return v;
}

// The whole-tile threshold of the `_w` variants' streams (WHOLE_MIN, default 80 registers of
// 128: 50 % sparse tiles are whole, 70 % ones not; the check's 60 % ones split).
int WholeMin() {
  const char* w = std::getenv("WHOLE_MIN");
  return w ? std::max(0, std::min(128, std::atoi(w))) : 80;
}

// The pair stream the `_un` kernels read (kUnStrips strips, kKTile columns a stage); whole_min:
// BuildUnstStream's (tiles stored whole).
UnstStream PairStream(const std::vector<uint16_t>& a, int m, int k, int whole_min = 0) {
  const Csr16 csr = ToCsr(a, m, k);
  UnstStream s;
  const std::string err = BuildUnstStream(m, k, csr.offsets.data(), csr.cols.data(), csr.vals.data(), gm::kUnStrips,
                                          gm::kKTile, 0, &s, UnstLayout::kPairFrag, whole_min);
  if (!err.empty()) {
    std::printf("BuildUnstStream: %s\n", err.c_str());
    std::exit(1);
  }
  return s;
}

// float64 reference of C = A B (A: M x K, B: K x N, row-major).
std::vector<double> Reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int m, int k, int n,
                              DType t) {
  std::vector<double> ref(static_cast<size_t>(m) * n, 0.0), bd(b.size());
  for (size_t i = 0; i < b.size(); ++i) bd[i] = FromBits(b[i], t);
  for (int r = 0; r < m; ++r) {
    double* out = ref.data() + static_cast<size_t>(r) * n;
    for (int c = 0; c < k; ++c) {
      const double v = FromBits(a[static_cast<size_t>(r) * k + c], t);
      const double* brow = bd.data() + static_cast<size_t>(c) * n;
      for (int j = 0; j < n; ++j) out[j] += v * brow[j];
    }
  }
  return ref;
}

// The tile raster must visit every tile exactly once, whatever the grid: the producer and
// the consumers walk it independently and must agree.
// Calls fn(mb, kb, cw, ms, w, kt) for every place a 2:4 consumer warp reads: row block mb,
// K stage kb, consumer warpgroup cw, m-slice ms, warp w, k-step kt (tiles of 128 sp rows).
template <class Fn>
void ForEachSpRead(int m_blocks, int k_blocks, int sp, Fn fn) {
  for (int mb = 0; mb < m_blocks; ++mb)
    for (int kb = 0; kb < k_blocks; ++kb)
      for (int cw = 0; cw < 2; ++cw)
        for (int ms = 0; ms < sp; ++ms)
          for (int w = 0; w < 4; ++w)
            for (int kt = 0; kt < 2; ++kt) fn(mb, kb, cw, ms, w, kt);
}

// Whether `back` (rows x cols, zero-padded past the matrix) holds exactly the m x k matrix a
// (stored zeros of either sign as +0).
bool DecodedIs(const std::vector<uint16_t>& back, int rows, int cols, const std::vector<uint16_t>& a, int m, int k) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const uint16_t want = r < m && c < k ? a[static_cast<size_t>(r) * k + c] : 0;
      if ((want & 0x7fff ? want : 0) != back[static_cast<size_t>(r) * cols + c]) return false;
    }
  return true;
}

int SelfTest() {
  alignas(16) static char buf[16];
  int failures = 0, cases = 0;
  for (int mb = 1; mb <= 40; ++mb)
    for (int nb = 1; nb <= 20; ++nb)
      for (int group : {1, 2, 3, 8, 16, 64}) {
        const int tiles = mb * nb;
        for (int grid : {1, 3, 7, 132}) {
          std::vector<int> seen(tiles, 0);
          bool ok = true;
          for (int b = 0; b < std::min(grid, tiles); ++b)
            for (int t = b; t < tiles; t += std::min(grid, tiles)) {
              const gm::Tile x = gm::TileOf(t, mb, nb, group);
              if (x.mb < 0 || x.mb >= mb || x.nb < 0 || x.nb >= nb) {
                ok = false;
                continue;
              }
              ++seen[x.mb * nb + x.nb];
            }
          for (int s : seen) ok = ok && s == 1;
          ++cases;
          if (!ok) {
            ++failures;
            if (failures <= 5) std::printf("FAIL raster m_blocks %d n_blocks %d group %d grid %d\n", mb, nb, group, grid);
          }
        }
      }
  // Clusters of 2 along M (_mc) and along N (_mn): the raster's units (pairs of row or column
  // blocks) and the blocks' ranks give every tile once (ClusterTile), anything else past M or N.
  for (int mb = 1; mb <= 40; ++mb)
    for (int nb = 1; nb <= 20; ++nb)
      for (int group : {1, 3, 8})
        for (bool along_n : {false, true}) {
          const int mu = along_n ? mb : (mb + 1) / 2, nu = along_n ? (nb + 1) / 2 : nb;
          std::vector<int> seen(mb * nb, 0);
          bool ok = true;
          for (int t = 0; t < mu * nu; ++t)
            for (int rank = 0; rank < 2; ++rank) {
              const gm::Tile x = gm::ClusterTile(gm::TileOf(t, mu, nu, group), rank, 2, along_n);
              if (x.mb < 0 || x.nb < 0 || (x.mb >= mb + 1 || x.nb >= nb + 1)) ok = false;  // at most one past
              else if (x.mb < mb && x.nb < nb) ++seen[x.mb * nb + x.nb];
            }
          for (int s : seen) ok = ok && s == 1;
          ++cases;
          if (!ok) {
            ++failures;
            if (failures <= 5) std::printf("FAIL cluster tiles m_blocks %d n_blocks %d group %d along_n %d\n", mb, nb, group, along_n);
          }
        }
  // The cooperative fixup's units (CoopTile, v37): a warpgroup's kSlices m-slices of kAcc sums,
  // 64-column boxes of each. Every unit has exactly one of the split pieces for owner, every
  // partial-slot float4 lies in one unit, and the unit of float4 i is the one the 2:4 store
  // reads it for: slice i / (kAcc / 4), box (its n8 tile i % (kAcc / 4)) / 8.
  {
    auto units = [&](auto acc_tag, int slices) {
      constexpr int kAcc = decltype(acc_tag)::value;
      const int n = slices * kAcc / 32;
      for (int split = 2; split <= gemm_host::kMaxSplit; ++split) {
        std::vector<int> owners(n, 0);
        for (int j = 0; j < split; ++j)
          for (int u = gm::CoopLo(j, split, n); u < gm::CoopLo(j + 1, split, n); ++u) ++owners[u];
        bool ok = gm::CoopLo(0, split, n) == 0 && gm::CoopLo(split, split, n) == n;
        for (int o : owners) ok = ok && o == 1;
        // With at least as many units as pieces, every piece owns one (v37: 256-row 2:4 tiles in 4).
        for (int j = 0; j < split && n >= split; ++j) ok = ok && gm::CoopLo(j, split, n) < gm::CoopLo(j + 1, split, n);
        for (int i = 0; i < slices * kAcc / 4; ++i) {
          const int u = gm::CoopUnit<kAcc>(i), ms = i / (kAcc / 4), box = (i % (kAcc / 4)) / 8;
          ok = ok && u >= 0 && u < n && u == ms * (kAcc / 32) + box;
        }
        ++cases;
        if (!ok) {
          ++failures;
          if (failures <= 5) std::printf("FAIL coop units acc %d slices %d split %d\n", kAcc, slices, split);
        }
      }
    };
    for (int slices : {1, 2}) {
      units(std::integral_constant<int, 32>{}, slices);
      units(std::integral_constant<int, 64>{}, slices);
      units(std::integral_constant<int, 128>{}, slices);
    }
  }
  // The stream-K decomposition, for grids that fill the machine and grids far smaller than
  // the tiles, K runs of one stage to many: every (tile, K stage) done once; a partial
  // (segment past stage 0) only as a block's first stream-K segment and an unfinished one only
  // as its last; each tile's K-stage-0 block finds exactly the blocks holding its partials,
  // all later than itself (no wait cycles); whole waves before the stream-K tiles.
  for (int mb : {1, 2, 3, 5, 8, 13, 34, 86, 112})
    for (int nb : {1, 2, 3, 4, 7, 8, 16})
      for (int kb : {1, 2, 3, 7, 19, 64})
        for (int grid : {1, 2, 3, 7, 64, 132})
          for (int sk : {0, gemm_host::kStreamKHybrid, gemm_host::kStreamKTail, gemm_host::kStreamKTailCoop}) {
            gm::Params p{};
            p.m_blocks = p.m_units = mb, p.n_blocks = p.n_units = nb, p.k_blocks = kb, p.slots = 132;
            p.partials = reinterpret_cast<float*>(buf), p.flags = reinterpret_cast<int*>(buf);
            const bool took = gemm_host::Decompose(&p, grid, sk);
            const int tiles = mb * nb;
            bool ok = took && p.grid >= 1 && p.grid <= grid && p.dp_tiles + p.sk_tiles == tiles &&
                      (sk || p.sk_tiles == 0) && (p.sk_tiles == 0 || p.dp_tiles % p.grid == 0);
            std::vector<int> done(static_cast<size_t>(tiles) * kb, 0);
            std::vector<int> holders(tiles, 0);  // blocks holding a partial of each tile
            std::vector<int> owner(tiles, -1);
            for (int b = 0; b < p.grid && ok; ++b) {
              gm::Cursor cur(p, b);
              gm::Segment sg;
              std::vector<gm::Segment> segs;
              while (cur.Next(p, &sg)) segs.push_back(sg);
              int sk_first = 0;
              while (sk_first < static_cast<int>(segs.size()) && segs[sk_first].tile < p.dp_tiles) ++sk_first;
              // The cooperative fixup's pieces of stream-K tile t are blocks coop (t - dp_tiles) ..
              // coop (t - dp_tiles + 1) - 1, one segment each (CoopTile).
              if (sk == gemm_host::kStreamKTailCoop)
                ok = (p.sk_tiles == 0 ? p.coop == 0 : p.coop >= 2 && p.sk_grid == p.coop * p.sk_tiles) &&
                     static_cast<int>(segs.size()) - sk_first == (b < p.sk_grid ? 1 : 0) &&
                     (b >= p.sk_grid || segs[sk_first].tile == p.dp_tiles + b / p.coop);
              else
                ok = p.coop == 0;
              for (int i = 0; i < static_cast<int>(segs.size()) && ok; ++i) {
                const gm::Segment& x = segs[i];
                ok = x.tile >= 0 && x.tile < tiles && 0 <= x.kb0 && x.kb0 < x.kb1 && x.kb1 <= kb &&
                     (x.kb0 == 0 || i == sk_first) && (x.kb1 == kb || i + 1 == static_cast<int>(segs.size())) &&
                     (x.tile >= p.dp_tiles || (x.kb0 == 0 && x.kb1 == kb));
                if (!ok) break;
                for (int s2 = x.kb0; s2 < x.kb1; ++s2) ++done[static_cast<size_t>(x.tile) * kb + s2];
                if (x.kb0 > 0) ++holders[x.tile];
                if (x.kb0 == 0 && x.tile >= p.dp_tiles) owner[x.tile] = b;
              }
            }
            for (int v : done) ok = ok && v == 1;
            // Each owner's wait list: the later blocks whose first stream-K segment is a partial of its tile.
            for (int t = p.dp_tiles; t < tiles && ok; ++t) {
              const int tile_end = (t - p.dp_tiles + 1) * kb;
              int waits = 0;
              for (int j = owner[t] + 1; gm::SkContributes(p, j, tile_end); ++j) {
                gm::Cursor cur(p, j);
                gm::Segment sg{-1, 0, 0};
                while (cur.Next(p, &sg) && sg.tile < p.dp_tiles) {
                }
                ok = ok && sg.tile == t && sg.kb0 > 0;
                ++waits;
              }
              ok = ok && owner[t] >= 0 && waits == holders[t] &&
                   (sk < gemm_host::kStreamKTail || waits < gemm_host::kMaxSplit);
            }
            ++cases;
            if (!ok) {
              ++failures;
              if (failures <= 5)
                std::printf("FAIL decomposition m_blocks %d n_blocks %d k_blocks %d grid %d stream-K %d\n", mb, nb, kb,
                            grid, sk);
            }
          }
  // Stream-K refuses a grid larger than its workspace.
  {
    gm::Params p{};
    p.m_blocks = p.m_units = 3, p.n_blocks = p.n_units = 1, p.k_blocks = 8, p.slots = 2;
    p.partials = reinterpret_cast<float*>(buf), p.flags = reinterpret_cast<int*>(buf);
    ++cases;
    if (gemm_host::Decompose(&p, 4, gemm_host::kStreamKHybrid)) {
      ++failures;
      std::printf("FAIL Decompose accepted a grid of 4 on 2 workspace slots\n");
    }
  }
  // Shapes the engine must refuse (N or K not a multiple of 8, K < 8) and ones it takes.
  const struct {
    int m, n, k;
    bool ok;
  } shapes[] = {{200, 72, 96, true}, {1, 8, 8, true}, {7, 40, 96, true}, {16, 12, 64, false},
                {16, 64, 100, false}, {16, 64, 0, false}, {0, 64, 64, false}};
  for (const auto& s : shapes) {
    ++cases;
    if (gemm_host::CanImplement(s.m, s.n, s.k, buf, buf, buf) != s.ok) {
      ++failures;
      std::printf("FAIL CanImplement(%d, %d, %d) should be %d\n", s.m, s.n, s.k, s.ok);
    }
  }
  // 2:4: what the consumers read from the staged tiles (tile (mb, kb) at SpStageOffset; strip
  // SpStrip, k-step kt of it; lane l's fragment words and metadata word), decoded and placed
  // where the epilogue stores it (SpSliceRow + 16 w), is the matrix, for both tile heights
  // from the one staged form; and the form is the size the kernels' addresses assume.
  {
    std::mt19937_64 rng(11);
    const struct {
      int m, k;
    } sp_shapes[] = {{1, 8}, {7, 40}, {200, 96}, {129, 264}, {333, 520}, {300, 72}};
    for (int sp : {1, 2})
      for (const auto& sh : sp_shapes) {
        ++cases;
        const auto a = Random24(sh.m, sh.k, DType::kF16, rng);
        const auto staged = Forms(a, sh.m, sh.k).staged;
        const int rows = gm::kMTile * sp, m_blocks = (sh.m + rows - 1) / rows, k_blocks = (sh.k + 63) / 64;
        const int staged_rbs = (sh.m + 255) / 256;
        bool ok = staged.size() == static_cast<size_t>(staged_rbs) * k_blocks * gm::kSpStageBytes;
        std::vector<uint16_t> back(static_cast<size_t>(m_blocks) * rows * k_blocks * 64, 0);
        if (ok)
          ForEachSpRead(m_blocks, k_blocks, sp, [&](int mb, int kb, int cw, int ms, int w, int kt) {
                    const uint8_t* tile = staged.data() + gm::SpStageOffset(sp, k_blocks, mb, kb) +
                                          static_cast<size_t>(gm::SpStrip(sp, cw, ms, w) * 2 + kt) * kSp24StagedTileBytes;
                    const int row0 = mb * rows + gm::SpSliceRow(sp, cw, ms) + 16 * w, col0 = kb * 64 + 32 * kt;
                    for (int lane = 0; lane < 32; ++lane) {
                      const int g = lane >> 2, t = lane & 3;
                      uint16_t words[8];
                      std::memcpy(words, tile + 16 * lane, 16);
                      // Compressed (row, column) of each of the lane's 8 words (common/sparse24.h).
                      const int cr[8] = {g, g, g + 8, g + 8, g, g, g + 8, g + 8};
                      const int cc[8] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9, 2 * t + 8, 2 * t + 9};
                      for (int i = 0; i < 8; ++i) {
                        const int grp = cc[i] / 2, h = grp / 4, c = grp % 4, hi = cr[i] >= 8 ? 16 : 0;
                        uint32_t meta;
                        std::memcpy(&meta, tile + 512 + 4 * (2 * (cr[i] & 7) + h), 4);
                        const int idx = (meta >> (hi + 4 * c + 2 * (cc[i] & 1))) & 3;
                        const size_t at = static_cast<size_t>(row0 + cr[i]) * (k_blocks * 64) + col0 + 4 * grp + idx;
                        if (words[i] != 0) back[at] = words[i];
                      }
                    }
          });
        ok = ok && DecodedIs(back, m_blocks * rows, k_blocks * 64, a, sh.m, sh.k);
        if (!ok && ++failures <= 5) std::printf("FAIL 2:4 staged tiles sp %d M %d K %d\n", sp, sh.m, sh.k);
      }
    // The `_ss` form: what wgmma reads of the compressed rows (the tensor copy of K stage kb
    // holds compressed columns 32 kb.., k-step kt 16 kt.. of them; rows past M and columns past
    // the rows' end arrive as zeros) and the metadata the consumers load (SsMetaOffset, strip
    // SpStrip), decoded, is the matrix, for tiles of 128, 256 and 384 rows.
    for (int sp : {1, 2, 3})
      for (const auto& sh : sp_shapes) {
        ++cases;
        const auto a = Random24(sh.m, sh.k, DType::kF16, rng);
        const Forms24 f = Forms(a, sh.m, sh.k);
        const int rows = gm::kMTile * sp, m_blocks = (sh.m + rows - 1) / rows, k_blocks = (sh.k + 63) / 64;
        const int kc = SsColumns(sh.k), meta_strips = SsMetaStrips(sh.m);
        bool ok = f.rows.size() == static_cast<size_t>(sh.m) * kc &&
                  f.meta.size() * 4 == static_cast<size_t>(k_blocks) * meta_strips * 128 &&
                  static_cast<int64_t>(f.meta.size()) * 4 >=
                      SsMetaOffset(meta_strips, rows, m_blocks - 1, k_blocks - 1) + rows * 8;
        std::vector<uint16_t> back(static_cast<size_t>(m_blocks) * rows * k_blocks * 64, 0);
        if (ok)
          ForEachSpRead(m_blocks, k_blocks, sp, [&](int mb, int kb, int cw, int ms, int w, int kt) {
                    uint32_t words[16];
                    std::memcpy(words,
                                reinterpret_cast<const uint8_t*>(f.meta.data()) + SsMetaOffset(meta_strips, rows, mb, kb) +
                                    (gm::SpStrip(sp, cw, ms, w) * 2 + kt) * 64,
                                64);
                    const int row0 = mb * rows + gm::SpSliceRow(sp, cw, ms) + 16 * w;
                    for (int r = 0; r < 16; ++r)
                      for (int c = 0; c < 16; ++c) {
                        const int row = row0 + r, col = kb * 32 + kt * 16 + c;
                        const uint16_t v = row < sh.m && col < kc ? f.rows[static_cast<size_t>(row) * kc + col] : 0;
                        const int grp = c / 2, h = grp / 4, cc = grp % 4, hi = r >= 8 ? 16 : 0;
                        const int idx = (words[2 * (r & 7) + h] >> (hi + 4 * cc + 2 * (c & 1))) & 3;
                        if (v != 0) back[static_cast<size_t>(row) * (k_blocks * 64) + kb * 64 + kt * 32 + 4 * grp + idx] = v;
                      }
          });
        ok = ok && DecodedIs(back, m_blocks * rows, k_blocks * 64, a, sh.m, sh.k);
        if (!ok && ++failures <= 5) std::printf("FAIL 2:4 ss form sp %d M %d K %d\n", sp, sh.m, sh.k);
        // The runs the `_ss` kernels read (StageSp24Runs) hold that form: every 128-row unit of
        // every tile height's blocks present, its values un-swizzled and its metadata the form's.
        ++cases;
        const std::vector<uint8_t>& runs = f.runs;
        const int units = meta_strips / 8;
        bool run_ok = units % 6 == 0 && m_blocks * sp <= units &&
                      runs.size() == static_cast<size_t>(units) * k_blocks * gm::kSsRunBytes;
        for (int u = 0; u < units && run_ok; ++u)
          for (int kb = 0; kb < k_blocks && run_ok; ++kb) {
            const uint8_t* run = runs.data() + gm::SsRunOffset(k_blocks, u, kb);
            for (int r = 0; r < gm::kMTile; ++r)
              for (int col = 0; col < 32; ++col) {
                const int row = u * gm::kMTile + r, at = kb * 32 + col;
                uint16_t got;
                std::memcpy(&got, run + r * 64 + 16 * ((col / 8) ^ ((r >> 1) & 3)) + 2 * (col % 8), 2);
                const uint16_t want = row < sh.m && at < kc ? f.rows[static_cast<size_t>(row) * kc + at] : 0;
                run_ok = run_ok && got == want;
              }
            run_ok = run_ok && std::memcmp(run + gm::kMTile * 64,
                                           reinterpret_cast<const uint8_t*>(f.meta.data()) +
                                               SsMetaOffset(meta_strips, gm::kMTile, u, kb),
                                           gm::kMTile * 8) == 0;
          }
        if (!run_ok && ++failures <= 5) std::printf("FAIL 2:4 ss runs sp %d M %d K %d\n", sp, sh.m, sh.k);
      }
  }
  // Unstructured: what the consumers decode from the pair stream (run (mb, kb) at the offset
  // table's entry mb k_blocks + kb; warp w of warpgroup cw, tile j: its quad's word in the
  // record at (4 SpStrip + j) 32 bytes, its stored registers from kUnRecordBytes on), placed as
  // wgmma reads A registers (register i: row g + 8 (i & 1), columns 2 t + 8 (i >> 1) and the
  // next), is the matrix; every run fits a stage (UnStageBytes(128)) and is whole 16-byte units.
  // Each of DecodeUnTile's forms (kUnWhole 0, 1, 2) on streams with and without whole tiles
  // (whole_min 0, 1, 80): 1 reads a tile whose 32 lanes all pass the vote with one 16-byte load
  // a lane, 2 a lane whose own four bits are set and whose first register is a multiple of 4;
  // every such load 16-byte aligned and inside the run.
  {
    std::mt19937_64 rng(12);
    const struct {
      int m, k;
    } un_shapes[] = {{1, 8}, {7, 40}, {200, 96}, {129, 264}, {333, 520}, {300, 77}};
    for (double sparsity : {0.0, 0.5, 0.9, 1.0})
      for (const auto& sh : un_shapes) {
        // One matrix; its stream without and with whole tiles, each read by every decode form.
        const auto a = RandomUnst(sh.m, sh.k, DType::kF16, sparsity, true, rng);
        std::vector<char> tile_used(static_cast<size_t>((sh.m + 15) / 16) * ((sh.k + 15) / 16), 0);
        for (int r = 0; r < sh.m; ++r)
          for (int c = 0; c < sh.k; ++c)
            if (a[static_cast<size_t>(r) * sh.k + c] & 0x7fff) tile_used[(r / 16) * ((sh.k + 15) / 16) + c / 16] = 1;
        const long long nonempty = std::count(tile_used.begin(), tile_used.end(), 1);
        for (int whole_min : {0, 1, 80}) {
          const UnstStream st = PairStream(a, sh.m, sh.k, whole_min);
          for (int form = 0; form < 3; ++form) {
            ++cases;
            long long wide = 0;  // lanes that read a tile with one 16-byte load
            const int m_blocks = (sh.m + gm::kMTile - 1) / gm::kMTile, k_blocks = (sh.k + gm::kKTile - 1) / gm::kKTile;
            bool ok = st.row_blocks == m_blocks && st.kstages == k_blocks &&
                      st.offsets.size() == static_cast<size_t>(m_blocks) * k_blocks + 1;
            std::vector<uint16_t> back(static_cast<size_t>(m_blocks) * gm::kMTile * k_blocks * gm::kKTile, 0);
            for (int mb = 0; mb < m_blocks && ok; ++mb)
              for (int kb = 0; kb < k_blocks && ok; ++kb) {
                const uint32_t u0 = st.offsets[mb * k_blocks + kb], u1 = st.offsets[mb * k_blocks + kb + 1];
                ok = u1 >= u0 && (u1 - u0) * 16 <= gm::UnStageBytes(128) && (u1 - u0) * 16 >= gm::kUnRecordBytes &&
                     static_cast<size_t>(u1) * 16 <= st.data.size();
                if (!ok) break;
                const uint8_t* run = st.data.data() + static_cast<size_t>(u0) * 16;
                for (int cw = 0; cw < 2; ++cw)
                  for (int w = 0; w < 4; ++w)
                    for (int j = 0; j < gm::kKTile / 16; ++j) {
                      const uint8_t* rec = run + (gm::SpStrip(1, cw, 0, w) * 4 + j) * kUnstPairTileBytes;
                      bool vote = true;  // form 1: every lane's quad word has 16 bits set, bits 16-17 clear
                      for (int q = 0; q < 8; ++q) {
                        uint32_t x;
                        std::memcpy(&x, rec + 4 * q, 4);
                        vote = vote && (x & 0x3ffffu) == 0xffffu;
                      }
                      for (int lane = 0; lane < 32; ++lane) {
                        const int g = lane >> 2, t = lane & 3, sh4 = 4 * t;
                        uint32_t word;
                        std::memcpy(&word, rec + 4 * (lane >> 2), 4);
                        uint32_t first = (word >> 16) + __builtin_popcount(word & ((1u << sh4) - 1));
                        const bool v4 = form == 1 ? vote : form == 2 && ((word >> sh4) & 15) == 15 && first % 4 == 0;
                        if (v4) {
                          ++wide;
                          // (the device's address: the quad's count + 4 (lane % 4) registers)
                          const uint32_t at = form == 1 ? gm::kUnRecordBytes + 4 * (word >> 16) + 16 * t
                                                        : gm::kUnRecordBytes + 4 * first;
                          if (at % 16 != 0 || at + 16 > (u1 - u0) * 16 || at != gm::kUnRecordBytes + 4 * first) {
                            ok = false;
                            break;
                          }
                        }
                        for (int i = 0; i < 4; ++i) {
                          uint32_t reg = 0;
                          if (v4 || ((word >> (sh4 + i)) & 1)) {
                            if (gm::kUnRecordBytes + 4 * (first + 1) > (u1 - u0) * 16) {
                              ok = false;
                              break;
                            }
                            std::memcpy(&reg, run + gm::kUnRecordBytes + 4 * first, 4);
                            ++first;
                          }
                          const int row = mb * gm::kMTile + gm::SpSliceRow(1, cw, 0) + 16 * w + g + 8 * (i & 1);
                          const int col = kb * gm::kKTile + 16 * j + 2 * t + 8 * (i >> 1);
                          uint16_t* at = back.data() + static_cast<size_t>(row) * (k_blocks * gm::kKTile) + col;
                          at[0] = static_cast<uint16_t>(reg & 0xffff), at[1] = static_cast<uint16_t>(reg >> 16);
                        }
                      }
                    }
              }
            ok = ok && DecodedIs(back, m_blocks * gm::kMTile, k_blocks * gm::kKTile, a, sh.m, sh.k);
            // Form 1 reads exactly the whole tiles whole (the encoder's count: whole_min's, and full
            // tiles aligned by chance), and form 2 at least their lanes.
            if (form == 1) ok = ok && wide == 32 * st.stats.whole_tiles;
            if (form == 2) ok = ok && wide >= 32 * st.stats.whole_tiles;
            // (at whole_min 1 every tile with a nonzero is whole, and no other)
            if (whole_min == 1) ok = ok && st.stats.whole_tiles == nonempty;
            if (!ok && ++failures <= 5)
              std::printf("FAIL unstructured pair stream M %d K %d sparsity %.1f whole_min %d form %d\n", sh.m, sh.k, sparsity,
                          whole_min, form);
          }
        }
      }
  }
  std::printf("selftest: %d cases, %d failures\n", cases, failures);
  return failures ? 1 : 0;
}

int Check() {
  struct Shape {
    int m, k, n;
  };
  // Ragged in every direction (M any; N and K multiples of 8), single tiles, one element row;
  // 4100 x 136 x 1160 has more tiles than SMs and not a whole number of waves (stream-K after
  // whole-tile waves), the others fewer (stream-K throughout, tiles cut into many pieces);
  // 77 x 100 x 136 has K % 8 != 0 (the 2:4 variants only: dense A needs a tensor map).
  const Shape shapes[] = {{200, 96, 72},     {1000, 1000, 136}, {7, 96, 40},      {1, 8, 8},
                          {128, 64, 256},    {129, 72, 264},    {333, 4104, 520}, {1024, 512, 1024},
                          {4100, 136, 1160}, {77, 100, 136}};
  const int sms = SmCount(), group = Group();
  Workspace ws(sms);
  std::vector<int> flags(gemm_host::FlagInts(sms));
  std::mt19937_64 rng(2025);
  int runs = 0, failures = 0;
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (const Shape& s : shapes) {
      const auto a = Random(static_cast<size_t>(s.m) * s.k, t, rng);
      const auto b = Random(static_cast<size_t>(s.k) * s.n, t, rng);
      const auto ref_dense = Reference(a, b, s.m, s.k, s.n, t);
      // The 2:4 variants' A: another random matrix, 2:4, staged once (both tile heights read the one form).
      const auto a24 = Random24(s.m, s.k, t, rng);
      const auto ref24 = Reference(a24, b, s.m, s.k, s.n, t);
      const Forms24 f24 = Forms(a24, s.m, s.k);
      const std::vector<uint8_t>& staged = f24.staged;
      // The unstructured variants' A: 60 or 90 % sparse (the first shape dense: slots with less
      // room than a dense stage must refuse it), a dense row, empty rows; its pair stream.
      const int si = static_cast<int>(&s - shapes);
      const auto aun = RandomUnst(s.m, s.k, t, si == 0 ? 0.0 : si % 2 ? 0.9 : 0.6, true, rng);
      const auto refun = Reference(aun, b, s.m, s.k, s.n, t);
      // The `_w` variants' stream of the same matrix, with whole tiles (WholeMin).
      const UnstStream un = PairStream(aun, s.m, s.k), unw = PairStream(aun, s.m, s.k, WholeMin());
      DevBuf dun(un.data.size()), druns(un.offsets.size() * 4), dunw(unw.data.size()), drunsw(unw.offsets.size() * 4);
      const int un_max = UnRunMax(un.offsets.data(), un.offsets.size());
      const int unw_max = UnRunMax(unw.offsets.data(), unw.offsets.size());
      CK(cudaMemcpy(dun.p, un.data.data(), dun.bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(druns.p, un.offsets.data(), druns.bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dunw.p, unw.data.data(), dunw.bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(drunsw.p, unw.offsets.data(), drunsw.bytes, cudaMemcpyHostToDevice));
      std::printf("M %5d K %5d: pair stream %zu bytes; with whole tiles (%d registers or more) %zu bytes, %lld whole tiles\n",
                  s.m, s.k, un.Bytes(), WholeMin(), unw.Bytes(), unw.stats.whole_tiles);
      DevBuf da(a.size() * 2), db(b.size() * 2), dc(ref_dense.size() * 2), ds(staged.size()), dss(f24.runs.size());
      CK(cudaMemcpy(dss.p, f24.runs.data(), dss.bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(da.p, a.data(), da.bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(db.p, b.data(), db.bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(ds.p, staged.data(), ds.bytes, cudaMemcpyHostToDevice));
      std::vector<uint16_t> c(ref_dense.size());
      for (const Variant& v : kVariants) {
        if (v.type != t || !Picked(v, false) || (v.sp == 0 && s.k % 8 != 0)) continue;
        const std::vector<double>& ref = v.un ? refun : v.sp ? ref24 : ref_dense;
        const void* a_dev = v.un ? (v.whole ? dunw.p : dun.p) : v.sp == 0 ? da.p : v.ss ? dss.p : ds.p;
        const int run_max = v.whole ? unw_max : un_max;
        gm::Params p;
        CK(gemm_host::MakeParams(&p, a_dev, db.p, dc.p, s.m, s.n, s.k, v.n_tile, group, ws.Partials(), ws.Flags(),
                                 ws.blocks, v.sp, v.ss ? SsMetaStrips(s.m) / 8 : 0,
                                 v.un ? static_cast<const uint32_t*>(v.whole ? drunsw.p : druns.p) : nullptr, run_max));
        p.pdl = Pdl();
        // The full grid, and a grid of 3: several tiles per block, the ring's phases carried
        // across tiles (and for stream-K: whole-tile rounds, then runs of many stages).
        if (v.un && run_max > gm::UnStageBytes(v.un)) {
          const cudaError_t e = v.launch(p, sms, 0, v.stream_k, 0);
          const bool ok = e == cudaErrorInvalidValue;
          ++runs;
          if (!ok) ++failures;
          std::printf("%-16s M %5d K %5d N %5d a run of %d bytes: %s %s\n", v.name, s.m, s.k, s.n, run_max,
                      ok ? "refused" : "not refused", ok ? "ok" : "FAIL");
          continue;
        }
        for (int grid : {0, 3}) {
          CK(cudaMemset(dc.p, 0xff, dc.bytes));
          {
            const Watchdog watch(v.name, 20);
            CK(v.launch(p, sms, grid, v.stream_k, 0));
            CK(cudaDeviceSynchronize());
          }
          CK(cudaMemcpy(c.data(), dc.p, dc.bytes, cudaMemcpyDeviceToHost));
          ErrorSum e;
          for (size_t i = 0; i < ref.size(); ++i) e.Add(ref[i], FromBits(c[i], t), t);
          // Every flag a contributor raised was consumed and reset by its tile's owner.
          CK(cudaMemcpy(flags.data(), ws.flags.p, ws.flags.bytes, cudaMemcpyDeviceToHost));
          const bool flags_clear = std::all_of(flags.begin(), flags.end(), [](int f) { return f == 0; });
          if (!flags_clear) CK(cudaMemset(ws.flags.p, 0, ws.flags.bytes));
          const bool ok = e.bad == 0 && e.Relative() < 1e-2 && flags_clear;
          ++runs;
          if (!ok) ++failures;
          std::printf("%-16s M %5d K %5d N %5d grid %-4s rel %.2e bad %d%s %s\n", v.name, s.m, s.k, s.n,
                      grid ? "3" : "sms", e.Relative(), e.bad, flags_clear ? "" : " flags left set", ok ? "ok" : "FAIL");
        }
      }
    }
  }
  std::printf("check: %d runs, %d failures\n", runs, failures);
  return failures ? 1 : 0;
}

// Rotated device copies of A and B (enough that a launch finds none of its operands in L2),
// one C, and each copy's launch parameters for a given tile width.
// A's form: dense, 2:4 (Random24; each copy also has its staged tiles, the one form both 2:4
// tile heights read, and the `_ss` form) or unstructured (RandomUnst at `sparsity`; each copy
// also has its pair stream, the runs in `staged` and the offset table in `runs`). cuBLAS
// multiplies A's dense form.
enum class AForm { kDense, kSp24, kUnst };
AForm FormOf(const Variant& v) { return v.un ? AForm::kUnst : v.sp ? AForm::kSp24 : AForm::kDense; }
struct Operands {
  std::vector<DevBuf*> a, b, staged, runs, ss;
  DevBuf c;
  int m, k, n;
  int run_max = 0;  // (unstructured) the pair stream's longest run
  int whole_tiles = 0;  // (unstructured) tiles stored whole, and of how many
  long long tiles = 0;
  double a_bytes = 0;  // A's bytes as the kernels read them (dense, or the stream)
  Operands(int m_, int k_, int n_, DType t, int copies, AForm form = AForm::kDense, double sparsity = 0, int whole_min = 0)
      : c(static_cast<size_t>(m_) * n_ * 2), m(m_), k(k_), n(n_) {
    std::mt19937_64 rng(7);
    const bool sparse = form == AForm::kSp24;
    const auto ha = sparse                  ? Random24(m, k, t, rng)
                    : form == AForm::kUnst ? RandomUnst(m, k, t, sparsity, false, rng)
                                           : Random(static_cast<size_t>(m) * k, t, rng);
    const auto hb = Random(static_cast<size_t>(k) * n, t, rng);
    Forms24 f;
    if (sparse) f = Forms(ha, m, k);
    UnstStream un;
    a_bytes = 2.0 * m * k;
    if (form == AForm::kUnst) {
      un = PairStream(ha, m, k, whole_min);
      run_max = UnRunMax(un.offsets.data(), un.offsets.size());
      whole_tiles = static_cast<int>(un.stats.whole_tiles);
      tiles = static_cast<long long>(un.row_blocks) * un.kstages * gm::kUnTiles;
      a_bytes = static_cast<double>(un.Bytes());
    }
    const auto upload = [](std::vector<DevBuf*>* to, const void* host, size_t bytes) {
      to->push_back(new DevBuf(bytes));
      CK(cudaMemcpy(to->back()->p, host, bytes, cudaMemcpyHostToDevice));
    };
    for (int i = 0; i < copies; ++i) {
      upload(&a, ha.data(), ha.size() * 2);
      upload(&b, hb.data(), hb.size() * 2);
      if (sparse) {
        upload(&staged, f.staged.data(), f.staged.size());
        upload(&ss, f.runs.data(), f.runs.size());
      }
      if (form == AForm::kUnst) {
        upload(&staged, un.data.data(), un.data.size());
        upload(&runs, un.offsets.data(), un.offsets.size() * 4);
      }
    }
  }
  ~Operands() {
    for (auto* v : {&a, &b, &staged, &runs, &ss})
      for (DevBuf* x : *v) delete x;
  }
  std::vector<gm::Params> Launches(const Variant& v, int group, const Workspace& ws) const {
    std::vector<gm::Params> ps(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const void* a_dev = v.sp == 0 ? a[i]->p : v.ss ? ss.at(i)->p : staged.at(i)->p;
      CK(gemm_host::MakeParams(&ps[i], a_dev, b[i]->p, c.p, m, n, k, v.n_tile, group, ws.Partials(), ws.Flags(),
                               ws.blocks, v.sp, v.ss ? SsMetaStrips(m) / 8 : 0,
                               v.un ? static_cast<const uint32_t*>(runs.at(i)->p) : nullptr, run_max));
      ps[i].pdl = Pdl();
    }
    return ps;
  }
};

// The comma-separated numbers of environment variable `name`, or of `fallback` without it.
std::vector<double> EnvList(const char* name, const char* fallback) {
  std::vector<double> out;
  const char* env = std::getenv(name);
  for (const char* q = env ? env : fallback; *q;) {
    out.push_back(std::atof(q));
    while (*q && *q != ',') ++q;
    if (*q == ',') ++q;
  }
  return out;
}
// The sparsities the `_un` variants are timed at (SPARSITY, default 0.5,0.7,0.9).
std::vector<double> Sparsities() { return EnvList("SPARSITY", "0.5,0.7,0.9"); }

int Time(const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& ns) {
  const int sms = SmCount(), group = Group();
  const Workspace ws(sms);
  std::vector<const Variant*> vs;
  for (const Variant& v : kVariants)
    if (Picked(v, true)) vs.push_back(&v);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  Timer timer(s);
  Cublas cublas;
  const bool have_cublas = cublas.Load(s);
  if (!have_cublas) std::printf("cuBLAS not found: our times only\n");
  std::printf("%-16s %6s %6s %5s  %9s %9s %7s  %9s %9s  %7s %7s\n", "variant", "M", "K", "N", "ev_us", "graph_us",
              "TFLOP/s", "cublas_ev", "cublas_gr", "ratio_e", "ratio_g");
  for (const auto& mk : shapes)
    for (int n : ns) {
      const int m = mk.first, k = mk.second;
      const double bytes = 2.0 * (static_cast<double>(m) * k + static_cast<double>(k) * n);
      const int copies = static_cast<int>(std::min(8.0, std::max(2.0, std::ceil(200e6 / bytes))));
      const double flop = 2.0 * m * n * k;
      for (DType t : {DType::kF16, DType::kBF16}) {
        if (std::none_of(vs.begin(), vs.end(), [&](const Variant* v) { return v->type == t; })) continue;
        // Dense variants multiply a dense A, 2:4 ones a 2:4 A, unstructured ones an unstructured A
        // at each sparsity (each its own operands when a call picks several kinds); cuBLAS
        // multiplies the dense one, or else the 2:4 A's or the first unstructured A's dense form.
        const auto picks = [&](AForm form) {
          return std::any_of(vs.begin(), vs.end(), [&](const Variant* v) { return v->type == t && FormOf(*v) == form; });
        };
        const std::vector<double> sparsities = Sparsities();
        std::unique_ptr<Operands> dense, sparse;
        // (the `_w` variants: the same matrices, their streams with whole tiles)
        std::vector<std::unique_ptr<Operands>> unst, unstw;
        const bool whole = std::any_of(vs.begin(), vs.end(), [&](const Variant* v) { return v->type == t && v->whole; });
        if (picks(AForm::kDense)) dense.reset(new Operands(m, k, n, t, copies));
        if (picks(AForm::kSp24)) sparse.reset(new Operands(m, k, n, t, copies, AForm::kSp24));
        if (picks(AForm::kUnst))
          for (double sp : sparsities) {
            unst.emplace_back(new Operands(m, k, n, t, copies, AForm::kUnst, sp));
            if (!whole) continue;
            unstw.emplace_back(new Operands(m, k, n, t, copies, AForm::kUnst, sp, WholeMin()));
            const Operands& w = *unstw.back();
            std::printf("# %d x %d at %.0f %%: whole tiles (%d registers or more) %d of %lld; A %.3f bytes a weight "
                        "(without whole tiles %.3f)\n",
                        m, k, 100 * sp, WholeMin(), w.whole_tiles, w.tiles, w.a_bytes / (static_cast<double>(m) * k),
                        unst.back()->a_bytes / (static_cast<double>(m) * k));
          }
        const Operands& base = dense ? *dense : sparse ? *sparse : *unst.front();
        double cb_ev = 0, cb_gr = 0;
        if (have_cublas) {
          auto f = [&](int i) {
            return cublas.Gemm(base.a[i % copies]->p, base.b[i % copies]->p, base.c.p, m, k, n, t);
          };
          cb_ev = timer.Events(f);
          cb_gr = timer.Graph(f, 4 * copies);
        }
        for (const Variant* v : vs) {
          if (v->type != t) continue;
          const AForm form = FormOf(*v);
          for (size_t si = 0; si < (form == AForm::kUnst ? unst.size() : 1); ++si) {
            const Operands& ops = form == AForm::kUnst ? *(v->whole ? unstw : unst)[si] : form == AForm::kSp24 ? *sparse : *dense;
            const auto ps = ops.Launches(*v, group, ws);
            auto f = [&](int i) { return v->launch(ps[i % copies], sms, 0, v->stream_k, s); };
            const Watchdog watch(v->name, 60);  // (about 70 launches and their flushes)
            const double ev = timer.Events(f), gr = timer.Graph(f, 4 * copies);
            // (unstructured: the name with the sparsity in %)
            char name[64];
            std::snprintf(name, sizeof name, form == AForm::kUnst ? "%s@%.0f" : "%s", v->name, 100 * sparsities[si]);
            std::printf("%-16s %6d %6d %5d  %9.1f %9.1f %7.1f  %9.1f %9.1f  %7.3f %7.3f\n", name, m, k, n, ev, gr,
                        flop / gr * 1e-6, cb_ev, cb_gr, cb_ev / ev, cb_gr / gr);
          }
        }
      }
    }
  CK(cudaStreamDestroy(s));
  return 0;
}

// Runs the variant named `name` `times` times on one copy of M x K x N operands (an unstructured
// A at the first SPARSITY), then `then` with a function that launches it once more; 1 when there
// is no such variant.
int WithVariant(const char* name, int m, int k, int n, int times, const std::function<int(const std::function<void()>&)>& then) {
  for (const Variant& v : kVariants) {
    if (std::strcmp(v.name, name) != 0) continue;
    Operands ops(m, k, n, v.type, 1, FormOf(v), Sparsities().front(), v.whole ? WholeMin() : 0);
    const int sms = SmCount();
    const Workspace ws(sms);
    const auto ps = ops.Launches(v, Group(), ws);
    const auto launch = [&] { CK(v.launch(ps[0], sms, 0, v.stream_k, 0)); };
    const Watchdog watch(v.name, 20);
    for (int i = 0; i < times; ++i) launch();
    CK(cudaDeviceSynchronize());
    return then(launch);
  }
  std::printf("no variant %s (gemm_probe list)\n", name);
  return 1;
}

int One(const char* name, int m, int k, int n) {
  return WithVariant(name, m, k, n, 3, [&](const std::function<void()>&) {
    std::printf("ran %s M %d K %d N %d x3\n", name, m, k, n);
    return 0;
  });
}

// trace VARIANT M K N: one launch of the variant traced (gemm_engine.cuh, SPARSE_GEMM_TRACE),
// after five untraced ones: for each phase of the blocks' last segments, the median and the
// largest over the blocks (cycles; the start and end offsets in ns by the global timer), and
// the launch's span from the first block's start to the last one's end.
int Trace(const char* name, int m, int k, int n) {
#if !defined(SPARSE_GEMM_TRACE)
  std::printf("trace: built without SPARSE_GEMM_TRACE (gemm_build.sh defines it)\n");
  (void)name, (void)m, (void)k, (void)n;
  return 1;
#else
  return WithVariant(name, m, k, n, 5, [&](const std::function<void()>& launch) {
    static unsigned long long t[gm::kTraceBlocks][gm::kTraceSlots];  // zero
    CK(cudaMemcpyToSymbol(gm::g_gemm_trace, t, sizeof t));
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpyFromSymbol(t, gm::g_gemm_trace, sizeof t));
    std::vector<int> blocks;
    unsigned long long t0 = ~0ull, t1 = 0;
    for (int b = 0; b < gm::kTraceBlocks; ++b)
      if (t[b][8] != 0) blocks.push_back(b), t0 = std::min(t0, t[b][8]), t1 = std::max(t1, t[b][9]);
    if (blocks.empty()) {
      std::printf("trace: no block recorded (built without SPARSE_GEMM_TRACE?)\n");
      return 1;
    }
    struct Phase {
      const char* name;
      std::function<double(const unsigned long long*)> of;
    };
    const Phase phases[] = {
        {"start_ns", [&](const unsigned long long* r) { return static_cast<double>(r[8] - t0); }},
        {"first_full", [](const unsigned long long* r) { return static_cast<double>(r[1] - r[0]); }},
        {"main_loop", [](const unsigned long long* r) { return static_cast<double>(r[2] - r[1]); }},
        {"full_waits", [](const unsigned long long* r) { return static_cast<double>(r[6]); }},
        {"stages", [](const unsigned long long* r) { return static_cast<double>(r[7]); }},
        {"fixup", [](const unsigned long long* r) { return static_cast<double>(r[3] - r[2]); }},
        {" fx_save", [](const unsigned long long* r) { return r[10] ? static_cast<double>(r[10] - r[2]) : 0.0; }},
        {" fx_wait", [](const unsigned long long* r) { return r[10] ? static_cast<double>(r[11] - r[10]) : 0.0; }},
        {" fx_add", [](const unsigned long long* r) { return r[10] ? static_cast<double>(r[12] - r[11]) : 0.0; }},
        {" fx_count", [](const unsigned long long* r) { return r[10] ? static_cast<double>(r[3] - r[12]) : 0.0; }},
        {"store", [](const unsigned long long* r) { return static_cast<double>(r[4] - r[3]); }},
        {"to_end", [](const unsigned long long* r) { return static_cast<double>(r[5] - r[4]); }},
        {"block", [](const unsigned long long* r) { return static_cast<double>(r[5] - r[0]); }},
        {"end_ns", [&](const unsigned long long* r) { return static_cast<double>(r[9] - t0); }},
    };
    std::printf("trace %s M %d K %d N %d: %zu blocks, span %.2f us (first start to last end)\n", name, m, k, n,
                blocks.size(), (t1 - t0) * 1e-3);
    for (const Phase& ph : phases) {
      std::vector<double> x;
      for (int b : blocks) x.push_back(ph.of(t[b]));
      std::sort(x.begin(), x.end());
      std::printf("  %-11s median %9.0f  min %9.0f  max %9.0f\n", ph.name, x[x.size() / 2], x.front(), x.back());
    }
    // The cooperative fixup's skew: per tile (a run of pieces 0, 1, ..), the last piece's arrival
    // after the first one's (global timer, ns).
    std::vector<double> skew;
    for (size_t i = 0; i < blocks.size();) {
      size_t e = i + 1;
      while (e < blocks.size() && t[blocks[e]][13] != 0 && blocks[e] == blocks[e - 1] + 1) ++e;
      if (e - i > 1 && t[blocks[i]][14] != 0) {
        unsigned long long lo = ~0ull, hi = 0;
        for (size_t q = i; q < e; ++q) lo = std::min(lo, t[blocks[q]][14]), hi = std::max(hi, t[blocks[q]][14]);
        skew.push_back(static_cast<double>(hi - lo));
      }
      i = e;
    }
    if (!skew.empty()) {
      std::sort(skew.begin(), skew.end());
      std::printf("  %-11s median %9.0f  min %9.0f  max %9.0f  (ns, %zu tiles)\n", "arrive_skew", skew[skew.size() / 2],
                  skew.front(), skew.back(), skew.size());
    }
    return 0;
  });
#endif
}

}  // namespace

// GEMM_L2_PROMO_A, GEMM_L2_PROMO_B (v59): the L2 promotion of A's and B's tensor maps, 0 (none),
// 64, 128 or 256 bytes (the default, the addon's); false for any other value.
bool SetPromotions() {
  const char* names[2] = {"GEMM_L2_PROMO_A", "GEMM_L2_PROMO_B"};
  for (int which = 0; which < 2; ++which) {
    const char* v = std::getenv(names[which]);
    if (!v) continue;
    const std::string s = v;
    CUtensorMapL2promotion& p = gemm_host::OperandPromotion(which);
    if (s == "0") p = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    else if (s == "64") p = CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    else if (s == "128") p = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    else if (s == "256") p = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    else {
      std::printf("%s=%s: 0, 64, 128 or 256\n", names[which], v);
      return false;
    }
    std::printf("%s: %s bytes\n", names[which], v);
  }
  return true;
}

int main(int argc, char** argv) {
  // Line by line, so that what ran before a hang or a kill is in the log.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (!SetPromotions()) return 2;
  if (mode == "selftest") return SelfTest();
  if (mode == "check") return Check();
  if (mode == "list") {
    for (const Variant& v : kVariants) std::printf("%s\n", v.name);
    return 0;
  }
  if (mode == "time") {
    std::vector<std::pair<int, int>> shapes;
    for (int i = 2; i < argc; ++i) {
      int m = 0, k = 0;
      if (std::sscanf(argv[i], "%dx%d", &m, &k) == 2) shapes.emplace_back(m, k);
    }
    if (shapes.empty())
      shapes = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096}, {4096, 14336}, {6144, 4096}};
    std::vector<int> ns;
    for (double n : EnvList("NS", "256,512,1024,2048")) ns.push_back(static_cast<int>(n));
    return Time(shapes, ns);
  }
  if (mode == "one" && argc > 5) return One(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  if (mode == "trace" && argc > 5) return Trace(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  std::printf("usage: gemm_probe selftest | check | list | time [MxK ...] (NS=256,512) | one|trace VARIANT M K N\n");
  return 2;
}
