#ifndef SPARSE_CUDA_GEMM_GEMM_ENGINE_HOST_H_
#define SPARSE_CUDA_GEMM_GEMM_ENGINE_HOST_H_
// Host side of the dense GEMM engine (gemm_engine.cuh): which shapes it takes, the tensor
// maps of one launch, and the launch itself.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>

#include "common/gemm_plan.h"
#include "cuda/gemm/gemm_engine.cuh"
#include "cuda/spmm/stream_engine_host.h"

namespace sparse {
namespace gemm_host {

// The engine's shape limits: N and K multiples of 8 (a tensor map's row stride is a multiple
// of 16 bytes), K >= 8, any M >= 1, sizes that fit a tensor map's 32-bit box coordinates;
// A, B and C 16-byte aligned.
inline bool CanImplement(int m, int n, int k, const void* a, const void* b, const void* c) {
  const auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
  return m >= 1 && n >= 8 && k >= 8 && n % 8 == 0 && k % 8 == 0 && aligned(a) && aligned(b) && aligned(c);
}

// The L2 promotion of the operands' tensor maps (0: A's, 1: B's): 256 bytes. Only the GEMM
// workbench changes it, for an A/B (v59: its GEMM_L2_PROMO_A and GEMM_L2_PROMO_B); the addon
// never does.
inline CUtensorMapL2promotion& OperandPromotion(int which) {
  static CUtensorMapL2promotion promotion[2] = {CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
  return promotion[which];
}

// A 2-D tensor map over 16-bit elements: `inner` x `outer` elements, rows of `inner`
// contiguous, box box_inner x box_outer, 128-byte swizzle (or `swizzle`), L2 promotion of 256
// bytes (or `promotion`); reads past the edges give zeros.
inline cudaError_t Map2d(CUtensorMap* map, const void* base, int inner, int outer, int box_inner, int box_outer,
                         CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B,
                         CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = engine_host::EncodeTiled();
  if (!encode) return cudaErrorInvalidValue;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(inner) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(base), dims, strides, box, estr,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// The stream-K workspace for grids of up to `blocks` blocks: partials (floats) and flags (ints,
// to be zeroed once when allocated; launches leave them zero).
// A slot holds a consumer warpgroup's sums: 128 threads of up to kMaxAccPerThread floats.
inline size_t PartialFloats(int blocks) {
  return static_cast<size_t>(blocks) * 2 * 128 * cuda::gemm::kMaxAccPerThread;
}
inline size_t FlagInts(int blocks) { return static_cast<size_t>(blocks) * 2; }

// Fills the launch of C = A B (A: M x K row-major, B: K x N row-major, C: M x N row-major, all
// on the device) for tiles of 128 x n_tile; `group`: row blocks per raster group. partials and
// flags: a stream-K workspace for `slots` blocks (PartialFloats, FlagInts), or null and 0 for
// launches without stream-K.
// sp_ms > 0: A is 2:4, `a` its staged tiles (StageSp24Tiles(tiles, kSpStageStrips, 2): device,
// 16-byte aligned) for the kSpMS = sp_ms kernels, tiles of 128 sp_ms rows; K need not be a
// multiple of 8 then (no tensor map of A).
// ss_units > 0: the `_ss` kernels' form instead (sp_ms 1 to 3): `a` the runs of the compressed
// values and their metadata (StageSp24Runs), ss_units of them per K stage (at least the tiles'
// sp_ms units each: the launch is refused otherwise), on the device, 16-byte aligned.
// a_runs non-null: unstructured A (the kUn kernels, sp_ms 1): `a` the pair stream's runs and
// a_runs its offset table (BuildUnstStream with kUnStrips strips, kKTile columns a stage,
// UnstLayout::kPairFrag), both on the device, `a` 16-byte aligned; a_run_max its longest run in
// bytes (UnRunMax, common/gemm_plan.h: a kernel whose slots are shorter refuses it).
inline cudaError_t MakeParams(cuda::gemm::Params* p, const void* a, const void* b, void* c, int m, int n, int k,
                              int n_tile, int group, float* partials = nullptr, int* flags = nullptr, int slots = 0,
                              int sp_ms = 0, int ss_units = 0, const uint32_t* a_runs = nullptr,
                              int a_run_max = 0) {
  namespace g = cuda::gemm;
  const bool ss = ss_units > 0;
  if (!CanImplement(m, n, sp_ms > 0 ? 8 : k, a, b, c) || k < 1 || group < 1 || sp_ms < 0 || sp_ms > (ss ? 3 : 2) ||
      ss_units < 0 || (ss && (sp_ms == 0 || ss_units < (m + g::kMTile * sp_ms - 1) / (g::kMTile * sp_ms) * sp_ms)) ||
      (a_runs && (ss || sp_ms != 1)))
    return cudaErrorInvalidValue;
  p->c = c, p->b = b, p->m = m, p->n = n, p->k = k, p->group = group;
  p->pdl = 0;  // (the workbench's GEMM_PDL sets it after)
  p->a_tiles = sp_ms > 0 ? a : nullptr;
  p->ss = ss ? 1 : 0;
  p->a_runs = a_runs;
  p->a_run_max = a_run_max;
  p->a_dense = sp_ms == 0 ? a : nullptr;
  p->partials = partials, p->flags = flags, p->slots = slots;
  const int rows = sp_ms > 0 ? g::kMTile * sp_ms : g::kMTile;
  p->m_blocks = (m + rows - 1) / rows;
  p->n_blocks = (n + n_tile - 1) / n_tile;
  p->k_blocks = (k + g::kKTile - 1) / g::kKTile;
  p->m_units = p->m_blocks;  // Launch pairs them for clusters
  p->n_units = p->n_blocks;  // (or the column blocks, for clusters along N)
  p->grid = 1, p->dp_tiles = p->m_blocks * p->n_blocks, p->sk_tiles = 0;  // Decompose sets these per launch
  // (2:4 tiles, `_ss` runs included: no tensor map of A; the stages are plain bulk copies.)
  cudaError_t e = sp_ms > 0 ? cudaSuccess
                            : Map2d(&p->a_map, a, k, m, g::kKTile, g::kMTile, CU_TENSOR_MAP_SWIZZLE_128B, OperandPromotion(0));
  if (e == cudaSuccess) e = Map2d(&p->b_map, b, n, k, g::kAtomN, g::kKTile, CU_TENSOR_MAP_SWIZZLE_128B, OperandPromotion(1));
  if (e == cudaSuccess) e = Map2d(&p->c_map, c, n, m, g::kAtomN, g::kMTile / 2);
  return e;
}

// The work decomposition of a launch on up to `grid` blocks or clusters (> 0) over the
// m_units x n_units raster. Without stream-K: one per tile up to `grid`, tiles dealt round robin. With stream-K (the rule of the
// Stream-K paper's hybrid, Osama et al. 2023): when the tiles are not a whole number of waves,
// the last wave and the ragged one (grid + tiles % grid tiles; all of them when there are
// fewer tiles than blocks) are shared out by K stages, so every block does 1 to 2 tiles' worth
// of them (each tile in at most a few pieces) and all finish together; earlier waves stay
// whole tiles, with no partials. The grid is capped at the total K stages (no empty runs).
// stream_k 2 (kStreamKTail): only the ragged last wave's r = tiles % grid tiles (all of them
// below one wave) are shared out, each cut into TailSplit (common/gemm_plan.h) pieces by K,
// run by the first r split blocks, the other blocks idle (none launched below one wave); a
// split below 2 leaves every tile whole. Blocks running together then work on the same few
// tiles, so the L2 keeps serving their panels (the hybrid spreads every block over 1 to 2 tiles
// at different K offsets: on 4096 x 11008, N = 1024 it read 797 MB from DRAM for 113 MB of
// operands; v11), and a tile's owner adds at most kMaxSplit - 1 partials.
// Returns false when stream-K needs more workspace slots than p has (MakeParams).
// stream_k 3 (kStreamKTailCoop): the tail split, each tile's pieces reducing it together
// (CoopTile: piece j adds the others' sums of its 1 / split of the tile's columns and stores
// them) instead of its owner adding every piece's whole partial.
constexpr int kStreamKHybrid = 1, kStreamKTail = 2, kStreamKTailCoop = 3, kMaxSplit = kGemmMaxSplit;
// The raster group (row blocks a group walks before the next column block: TileOf) the addon's
// families launch with, as the workbench's default.
constexpr int kRasterGroup = 8;
inline bool Decompose(cuda::gemm::Params* p, int grid, int stream_k) {
  const int tiles = p->m_units * p->n_units;
  p->sk_tiles = 0, p->sk_grid = 0, p->coop = 0;
  if (stream_k == kStreamKHybrid) {
    const int64_t stages = static_cast<int64_t>(tiles) * p->k_blocks;
    if (grid > stages) grid = static_cast<int>(stages);
    if (tiles % grid != 0) p->sk_tiles = tiles < grid ? tiles : grid + tiles % grid;
    p->sk_grid = grid;
  } else if (stream_k == kStreamKTail || stream_k == kStreamKTailCoop) {
    const int r = tiles % grid, split = TailSplit(tiles, grid, p->k_blocks);
    if (split >= 2) {
      p->sk_tiles = r, p->sk_grid = r * split;
      if (stream_k == kStreamKTailCoop) p->coop = split;
      if (tiles < grid) grid = p->sk_grid;
    }
  }
  if (p->sk_tiles == 0 && grid > tiles) grid = tiles;
  p->grid = grid;
  p->dp_tiles = tiles - p->sk_tiles;
  return p->sk_tiles == 0 || (p->partials && p->flags && grid <= p->slots);
}

// Sets the kernel's shared-memory limit (once per instance) and launches it on up to `grid`
// blocks (<= 0: one per SM; Decompose picks the number), stream_k 0 (whole tiles), kStreamKHybrid
// or kStreamKTail (not with clusters).
// Clusters of 2: on pairs of row blocks (kAlongN: of column blocks, A's tensor map re-made with
// boxes of 64 rows, half a tile's, from Params::a_dense), and no more clusters than fit at once
// (an SM count per GPC that is odd leaves an SM out), so that they stay persistent.
// Raises the kernel's shared-memory limit (once per instance; the first call does it). A
// library calls it when it prepares, outside any graph capture; Launch calls it too.
template <DType kType, int kNTile, int kStages, int kTmaStore, int kCluster, int kSpMS = 0, bool kSpSs = false,
          int kUn = 0, int kUnWhole = 0, bool kDenseResum = false, bool kAlongN = false>
cudaError_t SetUp() {
  using L = cuda::gemm::Layout<kNTile, kStages, kTmaStore, kSpMS, kSpSs, kUn>;
  static const cudaError_t attr = cudaFuncSetAttribute(
      cuda::gemm::GemmKernel<kType, kNTile, kStages, kTmaStore, kCluster, kSpMS, kSpSs, kUn, kUnWhole, kDenseResum,
                             kAlongN>,
      cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes);
  return attr;
}

// kUnWhole: the unstructured consumers' tile decode (gemm_engine.cuh, DecodeUnTile); kDenseResum:
// dense A holding a sparse matrix, CSR's semantics for Inf and NaN (DenseResum).
template <DType kType, int kNTile, int kStages, int kTmaStore, int kCluster, int kSpMS = 0, bool kSpSs = false,
          int kUn = 0, int kUnWhole = 0, bool kDenseResum = false, bool kAlongN = false>
cudaError_t Launch(const cuda::gemm::Params& params, int sms, int grid, int stream_k, cudaStream_t s) {
  using L = cuda::gemm::Layout<kNTile, kStages, kTmaStore, kSpMS, kSpSs, kUn>;
  const auto kernel = cuda::gemm::GemmKernel<kType, kNTile, kStages, kTmaStore, kCluster, kSpMS, kSpSs, kUn, kUnWhole,
                                             kDenseResum, kAlongN>;
  // A's form must match the kernel's (and the rows its parameters were made for).
  if ((kSpMS > 0) != (params.a_tiles != nullptr) || kSpSs != (params.ss != 0) || (kUn > 0) != (params.a_runs != nullptr) ||
      (kUn > 0 && params.a_run_max > L::kABytes) ||
      (kDenseResum && params.a_dense == nullptr) || params.m_blocks != (params.m + L::kRows - 1) / L::kRows)
    return cudaErrorInvalidValue;
  const cudaError_t attr =
      SetUp<kType, kNTile, kStages, kTmaStore, kCluster, kSpMS, kSpSs, kUn, kUnWhole, kDenseResum, kAlongN>();
  if (attr != cudaSuccess) return attr;
  if (grid <= 0 || grid > sms) grid = sms;
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attrs[2];
  int n_attrs = 0;
  if (kCluster > 1) {  // (without clusters, the plain launch step 1 was proven with)
    attrs[n_attrs].id = cudaLaunchAttributeClusterDimension;
    attrs[n_attrs].val.clusterDim.x = kCluster, attrs[n_attrs].val.clusterDim.y = 1, attrs[n_attrs].val.clusterDim.z = 1;
    ++n_attrs;
  }
  if (params.pdl != 0) {  // programmatic dependent launch (Params::pdl): only with the kernels' hooks
    if (!cuda::gemm::kGemmPdl) return cudaErrorInvalidValue;
    n_attrs = static_cast<int>(sparse::engine_host::AppendPdlAttribute(attrs, static_cast<unsigned>(n_attrs)));
  }
  cfg.blockDim = dim3(cuda::gemm::kThreads);
  cfg.dynamicSmemBytes = L::kSmemBytes;
  cfg.stream = s;
  cfg.attrs = attrs;
  cfg.numAttrs = n_attrs;
  cuda::gemm::Params p = params;
  if (kCluster > 1) {
    if (stream_k) return cudaErrorInvalidValue;
    static const int resident = [&] {
      int n = 0;
      cudaLaunchConfig_t probe = cfg;
      probe.gridDim = dim3(sms / kCluster * kCluster);
      return cudaOccupancyMaxActiveClusters(&n, kernel, &probe) == cudaSuccess && n > 0 ? n : sms / kCluster;
    }();
    grid = grid / kCluster < resident ? grid / kCluster : resident;
    if (grid < 1) grid = 1;
    if constexpr (kAlongN) {
      if (p.a_dense == nullptr) return cudaErrorInvalidValue;
      const cudaError_t m = Map2d(&p.a_map, p.a_dense, p.k, p.m, cuda::gemm::kKTile, cuda::gemm::kMTile / 2);
      if (m != cudaSuccess) return m;
      p.n_units = (p.n_blocks + kCluster - 1) / kCluster;
    } else {
      p.m_units = (p.m_blocks + kCluster - 1) / kCluster;
    }
  }
  if (!Decompose(&p, grid, stream_k)) return cudaErrorInvalidValue;
  cfg.gridDim = dim3(p.grid * kCluster);
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p);
  return e == cudaSuccess ? cudaGetLastError() : e;
}

// One instantiated kernel of a GEMM-engine family (spmm_24_gemm_sm90a.cu,
// spmm_unst_gemm_sm90a.cu, spmm_und_gemm_sm90a.cu): its Launch and its SetUp.
struct KernelRef {
  cudaError_t (*launch)(const cuda::gemm::Params&, int sms, int grid, int stream_k, cudaStream_t);
  cudaError_t (*set_up)();
};
// A family's kernels by dtype, kCount each, in the order of its table of configurations: For
// gives the one a launch runs; SetUp raises every one's shared-memory limit once, at prepare
// (outside any graph capture). Full: every entry written (checked at compile time by each family:
// a list shorter than its configurations would leave null entries).
template <int kCount>
struct KernelTable {
  KernelRef f16[kCount], bf16[kCount];
  const KernelRef& For(DType t, int i) const { return t == DType::kBF16 ? bf16[i] : f16[i]; }
  cudaError_t SetUp() const {
    for (const KernelRef* table : {f16, bf16})
      for (int i = 0; i < kCount; ++i) {
        const cudaError_t e = table[i].set_up();
        if (e != cudaSuccess) return e;
      }
    return cudaSuccess;
  }
  constexpr bool Full() const {
    for (int i = 0; i < kCount; ++i)
      if (!f16[i].launch || !f16[i].set_up || !bf16[i].launch || !bf16[i].set_up) return false;
    return true;
  }
};

}  // namespace gemm_host
}  // namespace sparse
#endif  // SPARSE_CUDA_GEMM_GEMM_ENGINE_HOST_H_
