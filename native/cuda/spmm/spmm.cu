// SpMM host side: CanImplementSpmm, the kernel selection, and CudaSpmm.
// The kernel itself is in spmm_kernel.cuh (stages: sparse_tile.cuh, compute.cuh,
// output_tile.cuh), instantiated per dtype in spmm_{f32,f16,bf16}.cu.
#include "cuda/spmm/spmm.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_config.h"
#include "cuda/spmm/spmm_launch.h"
#include "cuda/spmm/spmm_prepared.h"
#include "cuda/spmm/spmm_stream.h"
#include "cuda/spmm/spmm_tc.h"

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
// /tmp/benchmarks-perf.md): the picks run at 1.06x the time of the best variant per
// problem (geomean), against 1.24x for the first version of these rules.
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
// The tensor-core kernel: N up to 64 columns; density (nnz / (m k)) from 40%, or from 25%
// when N >= 32.
constexpr int kTcMaxN = 64;
constexpr int kTcWideN = 32;
constexpr double kTcMinDensity = 0.4;
constexpr double kTcMinDensityWide = 0.25;

// Whether the tensor-core kernel runs p (16-bit types, N a multiple of 8 up to 64, and the
// GPU able to run it). The bounds come from the device sweep of every variant on the LLM
// layers (BENCHMARKS.md, v4): the tensor-core kernel was 1.1-3.0x faster than the best SIMT
// variant at 50% sparsity, 1.2-2.2x at 70% with N >= 32, and slower below those densities
// (0.4-0.9x at 90-95%: there the SIMT kernels move fewer bytes per instruction).
bool UseTc(const SpmmProblem& p, int sm_count) {
  if (p.dtype == DType::kF32 || p.n % 8 != 0 || p.n > kTcMaxN) return false;
  const double density = p.m > 0 && p.k > 0 ? static_cast<double>(p.nnz) / (static_cast<double>(p.m) * p.k) : 0.0;
  if (density < (p.n >= kTcWideN ? kTcMinDensityWide : kTcMinDensity)) return false;
  return TcCanRun(p, SelectTc(p, sm_count));
}

// The bitmap kernel's domain (see branch 0b of SelectSpmmKernel).
constexpr int kBitmapMinN = 128;
constexpr double kBitmapMinDensity = 0.2;
bool UseBitmap(const SpmmProblem& p) {
  if (p.dtype == DType::kF32 || p.n < kBitmapMinN) return false;
  const double density = p.m > 0 && p.k > 0 ? static_cast<double>(p.nnz) / (static_cast<double>(p.m) * p.k) : 0.0;
  return density >= kBitmapMinDensity;
}

// The kernel selection: ONE function, a heuristic per branch. Inputs: m, n, nnz (mean row
// length), the vector width, and the SM count. (`sparse bench --tune` measures every
// variant of SpmmVariants() per problem and can force the winner through
// CudaSpmmVariant; see /tmp/readme-perf.md.)
SpmmChoice SelectSpmmKernel(const SpmmProblem& p, int sm_count) {
  SpmmChoice ch;
  // Branch 0a -- a 2:4 matrix in f16/bf16 (the caller checked the pattern): the 2:4 kernel
  // (spmm_24_kernel.cuh) moves 1.125 bytes per weight and runs mma.sp; on the H200 it was
  // faster than every other kernel of ours at every N measured (1 to 256; BENCHMARKS.md, v5).
  if (p.dtype != DType::kF32 && p.structure == SpmmProblem::k24) {
    ch.kind = SpmmKind::k24;
    ch.stream = SelectStream((p.m + 15) / 16, (p.k + 63) / 64, p.n, sm_count, false);
    return ch;
  }
  // Branch 0b -- f16/bf16 at N >= 128 and density >= 20%: the bitmap kernel
  // (spmm_bitmap_kernel.cuh) decodes each 16 x 16 tile once for up to 128 columns on tensor
  // cores, where the SIMT kernels pay per nonzero and column (H200: 1.5-4x the SIMT kernels'
  // speed there; BENCHMARKS.md, v5).
  if (UseBitmap(p)) {
    ch.kind = SpmmKind::kBitmap;
    ch.stream = SelectStream((p.m + 15) / 16, (p.k + 63) / 64, p.n, sm_count, true);
    return ch;
  }
  // Branch 0 -- f16/bf16 on tensor cores (spmm_tc_kernel.cuh) where it wins: see UseTc.
  if (UseTc(p, sm_count)) {
    ch.kind = SpmmKind::kTc;
    ch.tc = SelectTc(p, sm_count);
    return ch;
  }
  ch.vec_elems = VectorWidth(p);
  const int64_t vectors = (p.n + ch.vec_elems - 1) / ch.vec_elems;
  const double mean_row = p.m > 0 ? static_cast<double>(p.nnz) / p.m : 0.0;
  const int64_t target = static_cast<int64_t>(sm_count) * (mean_row >= kLongRow ? kLongRowWarpsPerSm : kTargetWarpsPerSm);
  const bool full_vec = ch.vec_elems == FullWidth(p.dtype);

  // Branch 1 -- wide N (>= 64 vectors) with rows enough to fill every SM's 64 warp slots (16
  // for rows of kLongRow nonzeros or more):
  // Sputnik's tile kernel, a full warp per strip of 64 vectors (two per lane), values and
  // offsets staged once in shared memory and reused by 64 vectors of B per nonzero: the
  // least index work per FMA, and no reduction.
  if (vectors >= 64 && static_cast<int64_t>(p.m) * ((vectors + 63) / 64) >= target) {
    ch.kind = SpmmKind::kTile;
    ch.threads_x = 32;
    ch.vecs_x = 2;
    return ch;
  }

  // Branch 2 -- everything else (small N, or too few rows to fill the GPU): the split-row
  // kernel. Start with the narrowest slice that covers the strip (or 32 lanes), then:
  //   (a) while the grid is very short (< 4 warps per SM), halve the slice width: twice the
  //       strips (each re-reads the sparse row, from L2) and twice the slices per warp;
  //   (b) then put 2 or 4 warps on each row (split-K across warps, reduced through shared
  //       memory) while the grid is short of 64 warps per SM and the lanes keep work; for
  //       N <= 4 vectors only when the grid is short of 16 warps per SM (there the slices
  //       already split the row, and the extra reduction cost more than it gained on the
  //       LLM layers). Full vector width only (the instantiated shapes).
  ch.kind = SpmmKind::kSplit;
  ch.vecs_x = 1;
  int tx = 2;
  while (tx < 32 && tx < vectors) tx <<= 1;
  auto warps = [&](int t, int w) { return static_cast<int64_t>(p.m) * ((vectors + t - 1) / t) * w; };
  while (tx > 2 && warps(tx, 1) < static_cast<int64_t>(sm_count) * kNarrowBelowWarpsPerSm &&
         mean_row / (2.0 * (32 / tx)) >= kNarrowMinNonzeros) {
    tx >>= 1;
  }
  int w = 1;
  const bool may_split =
      full_vec && (vectors > 4 || warps(tx, 1) < static_cast<int64_t>(sm_count) * kSmallNSplitBelowWarpsPerSm);
  if (may_split) {
    while (w < 4 && warps(tx, w) < target && mean_row / (2.0 * w * (32 / tx)) >= kSplitMinNonzeros) w <<= 1;
  }
  ch.threads_x = tx;
  ch.warps_per_row = w;
  return ch;
}

std::string VariantName(const SpmmChoice& ch) {
  if (ch.kind == SpmmKind::kTc) return TcVariantName(ch.tc);
  if (ch.kind == SpmmKind::kBitmap) return StreamVariantName("bm", ch.stream);
  if (ch.kind == SpmmKind::k24) return StreamVariantName("s24", ch.stream);
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

bool ParseVariant(const char* name, SpmmChoice* ch) {
  int a = 0, b = 0, c = 0, u = 0;
  char tail = 0;
  if (std::sscanf(name, "tile_v%d_t%d_x%d_u%d%c", &a, &b, &c, &u, &tail) == 4) {
    ch->kind = SpmmKind::kTile;
    ch->vec_elems = a, ch->threads_x = b, ch->vecs_x = c, ch->warps_per_row = 1, ch->unroll = u;
    return true;
  }
  if (std::sscanf(name, "split_v%d_t%d_w%d_u%d%c", &a, &b, &c, &u, &tail) == 4) {
    ch->kind = SpmmKind::kSplit;
    ch->vec_elems = a, ch->threads_x = b, ch->vecs_x = 1, ch->warps_per_row = c, ch->unroll = u;
    return true;
  }
  if (std::sscanf(name, "tile_v%d_t%d_x%d%c", &a, &b, &c, &tail) == 3) {
    ch->kind = SpmmKind::kTile;
    ch->vec_elems = a, ch->threads_x = b, ch->vecs_x = c, ch->warps_per_row = 1;
    return true;
  }
  if (std::sscanf(name, "split_v%d_t%d_w%d%c", &a, &b, &c, &tail) == 3) {
    ch->kind = SpmmKind::kSplit;
    ch->vec_elems = a, ch->threads_x = b, ch->vecs_x = 1, ch->warps_per_row = c;
    return true;
  }
  if (ParseTcVariant(name, &ch->tc)) {
    ch->kind = SpmmKind::kTc;
    return true;
  }
  if (ParseStreamVariant("bm", name, &ch->stream)) {
    ch->kind = SpmmKind::kBitmap;
    return true;
  }
  if (ParseStreamVariant("s24", name, &ch->stream)) {
    ch->kind = SpmmKind::k24;
    return true;
  }
  return false;
}

// Whether `ch` is instantiated and can run `p` (see SpmmVariants).
bool CanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  if (ch.kind == SpmmKind::kTc) return TcCanRun(p, ch.tc);
  if (ch.kind == SpmmKind::kBitmap || ch.kind == SpmmKind::k24) {
    // Any m, k, n and alignment (the kernels mask edges and stage B element-wise when they
    // must); 16-bit types only; the 2:4 kernel only where the caller vouched for the pattern.
    if (p.dtype == DType::kF32 || !StreamChoiceValid(ch.stream)) return false;
    if (ch.kind == SpmmKind::k24 && p.structure != SpmmProblem::k24) return false;
    const int64_t rows = static_cast<int64_t>(ch.stream.warps) * ch.stream.strips * 16;
    return (p.m + rows - 1) / rows * ch.stream.splits <= 0x7fffffff && (p.n + 127) / 128 <= 65535;
  }
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

// The choice CudaSpmm launches: SPARSE_SPMM_VARIANT when set and runnable, else the
// selection.
SpmmChoice EffectiveChoice(const SpmmProblem& p, int sm_count) {
  if (const char* forced = std::getenv("SPARSE_SPMM_VARIANT")) {
    SpmmChoice ch;
    if (*forced && std::strcmp(forced, "auto") != 0 && ParseVariant(forced, &ch) && CanRun(p, ch)) return ch;
  }
  return SelectSpmmKernel(p, sm_count);
}

// Checks shared by every variant (dimensions, pointers, alignment, index range).
cudaError_t CheckProblem(const SpmmProblem& p) {
  if (p.m < 0 || p.k < 0 || p.n < 0 || p.nnz < 0) return cudaErrorInvalidValue;
  if (p.index_bits != 16 && p.index_bits != 32) return cudaErrorInvalidValue;
  // 16-bit indices hold columns 0..32767.
  if (p.index_bits == 16 && p.k > 32768) return cudaErrorInvalidValue;
  if (p.m == 0 || p.n == 0) return cudaSuccess;  // nothing to write
  if (!p.row_offsets || !p.c) return cudaErrorInvalidValue;
  if (p.nnz > 0 && (!p.values || !p.column_indices || !p.b)) return cudaErrorInvalidValue;
  // Reverse offset memory alignment (tile kernel) assumes 16-byte aligned value and index
  // arrays (cudaMalloc gives 256 bytes).
  if (!Aligned(p.values, 16) || !Aligned(p.column_indices, 16)) return cudaErrorInvalidValue;
  // Pre-scaled offsets (column * n) are int32.
  if (static_cast<int64_t>(p.k) * p.n > INT_MAX) return cudaErrorInvalidValue;
  return cudaSuccess;
}

// The bitmap and 2:4 kernels on their prepared matrix.
cudaError_t LaunchStreamKind(const SpmmPrepared& a, const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream) {
  StreamOperands op;
  op.n = p.n, op.b = p.b, op.c = p.c;
  if (ch.kind == SpmmKind::kBitmap) return LaunchSpmmBitmap(a.bitmap, op, ch.stream, stream);
  return LaunchSpmm24(a.s24, op, ch.stream, stream);
}

cudaError_t Launch(const SpmmProblem& p, const SpmmChoice& ch, int sms, cudaStream_t stream,
                   const SpmmPrepared* prepared = nullptr) {
  if (ch.kind == SpmmKind::kTc || ch.kind == SpmmKind::kBitmap || ch.kind == SpmmKind::k24) {
    const bool ready = prepared && (ch.kind == SpmmKind::kTc      ? !prepared->tc.empty()
                                    : ch.kind == SpmmKind::kBitmap ? !prepared->bitmap.empty()
                                                                   : !prepared->s24.empty());
    if (ready) {
      return ch.kind == SpmmKind::kTc ? LaunchSpmmTc(prepared->tc, p, ch.tc, stream)
                                      : LaunchStreamKind(*prepared, p, ch, stream);
    }
    // Plain CSR: convert now (synchronous), launch, and wait before the prepared form is freed.
    SpmmPrepared tmp;
    cudaError_t e = tmp.Build(p, VariantName(ch), stream);
    if (e == cudaSuccess) e = Launch(p, ch, sms, stream, &tmp);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  switch (p.dtype) {
    case DType::kF32:
      return LaunchSpmmF32(p, ch, sms, stream);
    case DType::kF16:
      return LaunchSpmmF16(p, ch, sms, stream);
    case DType::kBF16:
      return LaunchSpmmBF16(p, ch, sms, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t CanImplementSpmm(const SpmmProblem& p) {
  const cudaError_t ok = CheckProblem(p);
  if (ok != cudaSuccess || p.m == 0 || p.n == 0) return ok;
  if (!CanRun(p, EffectiveChoice(p, SmCount()))) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t CudaSpmm(const SpmmProblem& p, cudaStream_t stream) { return CudaSpmmVariant(p, nullptr, stream); }

cudaError_t CudaSpmmVariant(const SpmmProblem& p, const char* variant, cudaStream_t stream) {
  return CudaSpmmPrepared(p, variant, nullptr, stream);
}

std::string SpmmEffectiveVariant(const SpmmProblem& p, const char* variant) {
  SpmmChoice ch;
  if (variant && *variant && std::strcmp(variant, "auto") != 0) {
    if (!ParseVariant(variant, &ch)) return "";
  } else {
    ch = EffectiveChoice(p, SmCount());
  }
  return VariantName(ch);
}

cudaError_t CudaSpmmPrepared(const SpmmProblem& p, const char* variant, const SpmmPrepared* prepared,
                             cudaStream_t stream) {
  const cudaError_t ok = CheckProblem(p);
  if (ok != cudaSuccess) return ok;
  if (p.m == 0 || p.n == 0) return cudaSuccess;
  const int sms = SmCount();
  SpmmChoice ch;
  if (variant && *variant && std::strcmp(variant, "auto") != 0) {
    if (!ParseVariant(variant, &ch)) return cudaErrorInvalidValue;
  } else {
    ch = EffectiveChoice(p, sms);
  }
  if (!CanRun(p, ch)) return cudaErrorInvalidValue;
  return Launch(p, ch, sms, stream, prepared);
}

std::string SpmmSelectedVariant(const SpmmProblem& p) { return VariantName(SelectSpmmKernel(p, SmCount())); }

std::vector<std::string> SpmmVariants(const SpmmProblem& p) {
  std::vector<std::string> out;
  // Only the widest vector the problem allows (a narrower one only adds instructions).
  {
    const int v = VectorWidth(p);
    for (int t = 2; t <= 32; t <<= 1) {
      SpmmChoice tile;
      tile.kind = SpmmKind::kTile, tile.vec_elems = v, tile.threads_x = t, tile.vecs_x = 1;
      if (CanRun(p, tile)) out.push_back(VariantName(tile));
      if (t == 32) {
        tile.vecs_x = 2;
        if (CanRun(p, tile)) out.push_back(VariantName(tile));
      }
      for (int w = 1; w <= 4; w <<= 1) {
        SpmmChoice split;
        split.kind = SpmmKind::kSplit, split.vec_elems = v, split.threads_x = t, split.warps_per_row = w;
        if (CanRun(p, split)) out.push_back(VariantName(split));
      }
    }
  }
  // The deep variants (f32): "_u16".
  for (int t = 4; t <= 32; t <<= 1) {
    for (int x = 1; x <= 2; ++x) {
      SpmmChoice deep;
      deep.kind = SpmmKind::kTile, deep.vec_elems = VectorWidth(p), deep.threads_x = t, deep.vecs_x = x, deep.unroll = 16;
      if (CanRun(p, deep)) out.push_back(VariantName(deep));
      deep.kind = SpmmKind::kSplit, deep.vecs_x = 1, deep.warps_per_row = x;
      if (CanRun(p, deep)) out.push_back(VariantName(deep));
    }
  }
  for (const std::string& v : TcVariants(p)) out.push_back(v);
  if (p.dtype != DType::kF32) {
    for (const std::string& v : StreamVariants("bm", p.m, p.k, p.n)) out.push_back(v);
    if (p.structure == SpmmProblem::k24)
      for (const std::string& v : StreamVariants("s24", p.m, p.k, p.n)) out.push_back(v);
  }
  return out;
}

const char* SpmmKernelName(const SpmmProblem& p) {
  thread_local char name[80];
  std::snprintf(name, sizeof(name), "spmm_%s_i%d_%s", DTypeName(p.dtype), p.index_bits,
                VariantName(EffectiveChoice(p, SmCount())).c_str());
  return name;
}

}  // namespace sparse
