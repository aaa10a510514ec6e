// The CSR kernels' host side: the tile kernel (spmm_kernel.cuh) and the split-row kernel
// (spmm_split_kernel.cuh), instantiated per dtype in spmm_{f32,f16,bf16}.cu. Their names,
// rules, checks and the two table entries (spmm_family.h). They read the CSR arrays: no
// prepared operand.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_family.h"

namespace sparse {
namespace {

// Widest vector (16 bytes first) for which every row of B and C starts on a vector
// boundary (n a multiple of the width, base addresses aligned; null pointers count as
// aligned, for planning). Otherwise narrower: half2 for 16-bit types, then one element
// (residue handling for any N).
int VectorWidth(const SpmmProblem& p) {
  const int elem = DTypeBytes(p.dtype);
  const int widths_f32[] = {4, 1};
  const int widths_16[] = {8, 2, 1};
  const int* widths = p.dtype == DType::kF32 ? widths_f32 : widths_16;
  const int count = p.dtype == DType::kF32 ? 2 : 3;
  for (int i = 0; i < count; ++i) {
    const int w = widths[i];
    if (p.n % w == 0 && Aligned(p.b, w * elem) && Aligned(p.c, w * elem)) return w;
  }
  return 1;
}

int FullWidth(DType t) { return t == DType::kF32 ? 4 : 8; }

// The selection's constants, fitted (grid search over the rules below) to a device sweep
// that timed every variant on all 219 DLMC dev-subset problems and on LLM-shaped layers
// at N = 16 and 64, f32 and f16, on the H200 (test/kernels/spmm-variants.sweep.test.ts;
// BENCHMARKS.md, v6): the picks run at 1.06x the time of the best variant per problem
// (geomean), against 1.24x for the first version of these rules.
// Warp slots to fill before splitting rows over more warps: 64 per SM (a full SM's worth).
constexpr int kTargetWarpsPerSm = 64;
// Warp slots below which a strip is narrowed (more strips, more slices per warp): 4 per SM.
constexpr int kNarrowBelowWarpsPerSm = 4;
// ... and only while each lane keeps this many nonzeros of the mean row per half-step.
constexpr double kNarrowMinNonzeros = 8.0;
// Splitting a row over 2 or 4 warps needs 2 nonzeros per lane per split (mean row).
constexpr double kSplitMinNonzeros = 2.0;
// For N of at most 4 vectors (LLM decode: N = 16) the slices already split each row 8-16
// ways; more warps per row then only pay while the grid is short of 16 warps per SM.
constexpr int kSmallNSplitBelowWarpsPerSm = 16;
// Rows of at least kLongRow nonzeros (mean) keep a warp's loads in flight on their own: the
// tile kernel needs only kLongRowWarpsPerSm warps per SM to be picked, and rows are split over
// more warps only below that many (LLM layers at 30% density: 1229-3302 nonzeros per row;
// fitted on the 70% LLM layers and DLMC at 0.5/0.7/0.9/0.98, checked on the held-out 90% LLM
// layers and DLMC at 0.6/0.8/0.95; BENCHMARKS.md, v6).
constexpr double kLongRow = 1000.0;
constexpr int kLongRowWarpsPerSm = 16;

// What both rules read of p: the vector width, the vectors across N, the mean row and the
// warp slots to fill.
struct CsrShape {
  int vec = 1;
  int64_t vectors = 0;
  double mean_row = 0;
  int64_t target = 0;
  bool full_vec = false;
};
CsrShape ShapeOf(const SpmmProblem& p, int sm_count) {
  CsrShape s;
  s.vec = VectorWidth(p);
  s.vectors = (p.n + s.vec - 1) / s.vec;
  s.mean_row = p.m > 0 ? static_cast<double>(p.nnz) / p.m : 0.0;
  s.target = static_cast<int64_t>(sm_count) * (s.mean_row >= kLongRow ? kLongRowWarpsPerSm : kTargetWarpsPerSm);
  s.full_vec = s.vec == FullWidth(p.dtype);
  return s;
}

// Rank 40 -- wide N (>= 64 vectors) with rows enough to fill every SM's 64 warp slots (16 for
// rows of kLongRow nonzeros or more): Sputnik's tile kernel, a full warp per strip of 64
// vectors (two per lane), values and offsets staged once in shared memory and reused by 64
// vectors of B per nonzero: the least index work per FMA, and no reduction.
bool SelectTile(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  const CsrShape s = ShapeOf(p, sm_count);
  if (!(s.vectors >= 64 && static_cast<int64_t>(p.m) * ((s.vectors + 63) / 64) >= s.target)) return false;
  ch->kind = SpmmKind::kTile;
  ch->vec_elems = s.vec;
  ch->threads_x = 32;
  ch->vecs_x = 2;
  return true;
}

// Rank 50 -- everything else (small N, or too few rows to fill the GPU): the split-row
// kernel. Start with the narrowest slice that covers the strip (or 32 lanes), then:
//   (a) while the grid is very short (< 4 warps per SM), halve the slice width: twice the
//       strips (each re-reads the sparse row, from L2) and twice the slices per warp;
//   (b) then put 2 or 4 warps on each row (split-K across warps, reduced through shared
//       memory) while the grid is short of 64 warps per SM and the lanes keep work; for
//       N <= 4 vectors only when the grid is short of 16 warps per SM (there the slices
//       already split the row, and the extra reduction cost more than it gained on the
//       LLM layers). Full vector width only (the instantiated shapes).
bool SelectSplit(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  const CsrShape s = ShapeOf(p, sm_count);
  const int64_t vectors = s.vectors;
  const double mean_row = s.mean_row;
  ch->kind = SpmmKind::kSplit;
  ch->vec_elems = s.vec;
  ch->vecs_x = 1;
  int tx = 2;
  while (tx < 32 && tx < vectors) tx <<= 1;
  auto warps = [&](int t, int w) { return static_cast<int64_t>(p.m) * ((vectors + t - 1) / t) * w; };
  while (tx > 2 && warps(tx, 1) < static_cast<int64_t>(sm_count) * kNarrowBelowWarpsPerSm &&
         mean_row / (2.0 * (32 / tx)) >= kNarrowMinNonzeros) {
    tx >>= 1;
  }
  int w = 1;
  const bool may_split =
      s.full_vec && (vectors > 4 || warps(tx, 1) < static_cast<int64_t>(sm_count) * kSmallNSplitBelowWarpsPerSm);
  if (may_split) {
    while (w < 4 && warps(tx, w) < s.target && mean_row / (2.0 * w * (32 / tx)) >= kSplitMinNonzeros) w <<= 1;
  }
  ch->threads_x = tx;
  ch->warps_per_row = w;
  return true;
}

// "tile_v<vec>_t<threads>_x<vecs>" and "split_v<vec>_t<threads>_w<warps>", with "_u16" for
// the deep variants.
std::string CsrName(const SpmmChoice& ch) {
  char name[48];
  if (ch.kind == SpmmKind::kTile) {
    std::snprintf(name, sizeof(name), "tile_v%d_t%d_x%d", ch.vec_elems, ch.threads_x, ch.vecs_x);
  } else {
    std::snprintf(name, sizeof(name), "split_v%d_t%d_w%d", ch.vec_elems, ch.threads_x, ch.warps_per_row);
  }
  std::string out = name;
  if (ch.unroll != 0) out += "_u" + std::to_string(ch.unroll);
  return out;
}

// Scans a CSR kernel's name: `with_unroll` (the deep variant, "..._u%d%c") or `plain`
// ("...%c"); three numbers and the unroll (0 for a plain name). The trailing %c catches junk.
bool ScanCsrName(const char* name, const char* with_unroll, const char* plain, int v[3], int* unroll) {
  char tail = 0;
  if (std::sscanf(name, with_unroll, &v[0], &v[1], &v[2], unroll, &tail) == 4) return true;
  *unroll = 0;
  return std::sscanf(name, plain, &v[0], &v[1], &v[2], &tail) == 3;
}

bool ParseTile(const char* name, SpmmChoice* ch) {
  int v[3], u = 0;
  if (!ScanCsrName(name, "tile_v%d_t%d_x%d_u%d%c", "tile_v%d_t%d_x%d%c", v, &u)) return false;
  ch->kind = SpmmKind::kTile;
  ch->vec_elems = v[0], ch->threads_x = v[1], ch->vecs_x = v[2], ch->warps_per_row = 1, ch->unroll = u;
  return true;
}

bool ParseSplit(const char* name, SpmmChoice* ch) {
  int v[3], u = 0;
  if (!ScanCsrName(name, "split_v%d_t%d_w%d_u%d%c", "split_v%d_t%d_w%d%c", v, &u)) return false;
  ch->kind = SpmmKind::kSplit;
  ch->vec_elems = v[0], ch->threads_x = v[1], ch->vecs_x = 1, ch->warps_per_row = v[2], ch->unroll = u;
  return true;
}

// Whether `ch` is instantiated and can run `p` (see the variants listed below).
bool CsrCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  const int elem = DTypeBytes(p.dtype);
  const int full = FullWidth(p.dtype);
  const int v = ch.vec_elems;
  const bool width_ok = v == full || v == 1 || (v == 2 && p.dtype != DType::kF32);
  if (!width_ok || p.n % v != 0 || !Aligned(p.b, v * elem) || !Aligned(p.c, v * elem)) return false;
  const int t = ch.threads_x;
  if (t != 2 && t != 4 && t != 8 && t != 16 && t != 32) return false;
  if (ch.unroll != 0) {
    // The deep variants: f32, 16-byte vectors, 4-32 threads; tile with one or two vectors per
    // thread, split with one or two warps per row.
    if (ch.unroll != 16 || p.dtype != DType::kF32 || v != full || t < 4) return false;
    if (ch.kind == SpmmKind::kTile ? (ch.vecs_x != 1 && ch.vecs_x != 2)
                                   : (ch.vecs_x != 1 || (ch.warps_per_row != 1 && ch.warps_per_row != 2))) {
      return false;
    }
    return p.n == 0 || (p.n + ch.BlockItemsX() - 1) / ch.BlockItemsX() <= 65535;
  }
  if (ch.kind == SpmmKind::kTile) {
    if (!(ch.vecs_x == 1 || (ch.vecs_x == 2 && t == 32))) return false;
  } else {
    if (ch.vecs_x != 1) return false;
    const int w = ch.warps_per_row;
    if (!(w == 1 || ((w == 2 || w == 4) && v == full))) return false;
  }
  if (p.n > 0 && (p.n + ch.BlockItemsX() - 1) / ch.BlockItemsX() > 65535) return false;
  return true;
}

// Only the widest vector the problem allows (a narrower one only adds instructions); then the
// deep f32 variants ("_u16").
void TileVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  const int v = VectorWidth(p);
  for (int t = 2; t <= 32; t <<= 1)
    for (int x = 1; x <= (t == 32 ? 2 : 1); ++x) {
      SpmmChoice tile;
      tile.kind = SpmmKind::kTile, tile.vec_elems = v, tile.threads_x = t, tile.vecs_x = x;
      if (CsrCanRun(p, tile)) out->push_back(CsrName(tile));
    }
  for (int t = 4; t <= 32; t <<= 1)
    for (int x = 1; x <= 2; ++x) {
      SpmmChoice deep;
      deep.kind = SpmmKind::kTile, deep.vec_elems = v, deep.threads_x = t, deep.vecs_x = x, deep.unroll = 16;
      if (CsrCanRun(p, deep)) out->push_back(CsrName(deep));
    }
}

void SplitVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  const int v = VectorWidth(p);
  for (int t = 2; t <= 32; t <<= 1)
    for (int w = 1; w <= 4; w <<= 1) {
      SpmmChoice split;
      split.kind = SpmmKind::kSplit, split.vec_elems = v, split.threads_x = t, split.warps_per_row = w;
      if (CsrCanRun(p, split)) out->push_back(CsrName(split));
    }
  for (int t = 4; t <= 32; t <<= 1)
    for (int w = 1; w <= 2; ++w) {
      SpmmChoice deep;
      deep.kind = SpmmKind::kSplit, deep.vec_elems = v, deep.threads_x = t, deep.warps_per_row = w, deep.unroll = 16;
      if (CsrCanRun(p, deep)) out->push_back(CsrName(deep));
    }
}

cudaError_t CsrLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand*, int sm_count,
                      cudaStream_t stream) {
  switch (p.dtype) {
    case DType::kF32:
      return LaunchSpmmF32(p, ch, sm_count, stream);
    case DType::kF16:
      return LaunchSpmmF16(p, ch, sm_count, stream);
    case DType::kBF16:
      return LaunchSpmmBF16(p, ch, sm_count, stream);
  }
  return cudaErrorInvalidValue;
}

const SpmmFamily kTileFamily = {
    "tile", "tile_v\\d+_t\\d+_x\\d+(_u\\d+)?", 40, SelectTile, ParseTile, CsrName, CsrCanRun, TileVariants,
    nullptr, nullptr, CsrLaunch,
};
const SpmmFamily kSplitFamily = {
    "split", "split_v\\d+_t\\d+_w\\d+(_u\\d+)?", 50, SelectSplit, ParseSplit, CsrName, CsrCanRun, SplitVariants,
    nullptr, nullptr, CsrLaunch,
};

}  // namespace

SPARSE_SPMM_FAMILY(kTileFamily);
SPARSE_SPMM_FAMILY(kSplitFamily);

}  // namespace sparse
