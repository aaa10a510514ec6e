// The 2:4 family on the Hopper GEMM engine (cuda/gemm/gemm_engine.cuh, kSpMS > 0): N from
// 128 on (prefill, batched serving), where SpMM is compute-bound. A producer warp streams the
// staged 2:4 tiles (one contiguous run per stage, a bulk copy) and B (tensor copies, 128-byte
// swizzle) into a ring; two consumer warpgroups load their strips' fragments and metadata
// into registers and issue wgmma.mma_async.sp; the C tile leaves through tensor stores. Its
// prepared operand is the tiles staged once per matrix (StageSp24Tiles with 16 strips and 2
// k-steps per stage: both tile heights read it) and a stream-K workspace.
//
// This file is compiled for sm_90a only (native/scripts/nvcc.cjs, from the "_sm90a" in its
// name; SPARSE_SM90A is then defined): wgmma runs on compute capability 9.0 and nowhere else.
// A build without sm_90 keeps the table entry, which then runs nothing (can_run: false).
//
// Variants "s24g_m<rows>_n<cols>_s<stages>[_c2|_ss1[_sk2]|_sk1|_sk2|_sk3]": tiles of 128 or 256 rows x 64, 128
// or 256 columns (64 since v53: four times the 128-column tiles' count at N = 256, for the
// problems that fill few SMs), a ring of that many stages of 64 columns of K; "_sk1" shares the last one to two
// waves' tiles out by K (stream-K hybrid), "_sk2" cuts only the ragged last wave's tiles into
// up to 4 pieces by K (gemm_host::Decompose), the first piece adding the others' sums; "_sk3"
// the same cut, the pieces reducing the tile together, each a share of its units (an m-slice's
// 64-column box: CoopTile, v37; selected where the launch model splits, since v38); "_c2" runs
// whole tiles in clusters of 2 along M, each block copying its A and half of B for both (v54;
// s24g_m256_n128_s4_c2 and s24g_m128_n256_s4_c2, not selected); "_ss1" reads A in wgmma from
// shared memory (the compressed rows by tensor copies, the metadata staged by K stage: the
// prepared operand holds those instead of the staged tiles; v54, s24g_m128_n256_s4_ss1, not
// selected). (Every part of a variant name
// is letters then digits: the form names are checked against without the addon's grammar.) On
// the H200, as selected (sparse bench --suite llm --pattern 2:4, v12): 0.81-1.35x cuBLAS f16 at
// N = 256-2048, 1.18x geomean (docs/gemm-engine.md).
//
// The selection runs it for every 2:4 f16/bf16 problem from N = 128 on at a density of at
// least 2.5 % (rank 8, before the streaming engine and the mma.sp kernel), 128 columns, the
// tile height and decomposition of the launch model (Gemm24Pick, common/gemm_plan.h; v38;
// SelectGemmFamily below). Every variant is listed for --tune.
//
// A prepared operand holds one stream-K workspace: launches on it run one at a time (stream
// order), on a device with at most as many SMs as the one it was prepared on.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/gemm_plan.h"
#include "common/sparse24.h"
#include "cuda/common/device_buffer.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/gemm_workspace.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/spmm_stream.h"
#if defined(SPARSE_SM90A)
#include "cuda/gemm/gemm_engine_host.h"
#endif

namespace sparse {
namespace gemm24 {

// One configuration: tile rows (128 sp), tile columns, ring stages, stream-K, cluster size (2:
// clusters of 2 along M, B multicast; no stream-K).
// ss 1: A read by wgmma from shared memory (the `_ss` form: since v61 the compressed rows and
// their metadata as one run per 128 rows and K stage, StageSp24Runs; v54-v60 the rows through a
// tensor map and the staged metadata), not the staged tiles through registers.
struct GemmChoice {
  int sp, n_tile, stages, stream_k, cluster = 1, ss = 0;
};
// The instantiated configurations (the tensor-store epilogue throughout: the register one was
// slower in every cell measured). The selection picks from kSelected's; --tune lists every one.
// The v54 four: 128 x 256 with C staged in halves (room for a fourth stage),
// clusters of 2 of the 256 x 128 and 128 x 256 tiles, and 128 x 256 with A from shared memory
// (on the H200's workbench the fastest tile at N = 1024-2048 in 5 of 8 cells, 0.94x the time of
// 256 x 128 over them: docs/gemm-engine.md "v54"; in the addon on an H100, 1.026x: "v55"), and
// (v56) 256 x 192 with A from shared memory (the workbench's `ss2_tma_n192_s4`: the fewest bytes a
// multiply-add from L2, and with 128 x 256's `_ss1` the fewest through shared memory; on the H200 0.87-0.91x the time of 256 x 128
// where its waves fill, 1.28-1.39x where they do not: "v54"), and (v58) 128 x 256 with A from
// shared memory on a ring of 5 stages, C staged in quarters of its columns (cuSPARSELt's
// 128 x 256 kernel fills 232 KB; on an H100's workbench 0.974x the time of the 4-stage one in
// events, 0.957x in graphs over 12 cells: 0.89x at N = 256, 0.98x at 1024, 1.00-1.04x at 2048;
// 4096^2 at N = 1024 0.93x the 256 x 128 tile's: docs/gemm-engine.md "v58").
constexpr GemmChoice kConfigs[] = {{1, 128, 6, 0}, {1, 256, 3, 0}, {2, 128, 4, 0},    {1, 64, 12, 0},
                                   {2, 64, 8, 0},  {1, 256, 4, 0}, {2, 128, 4, 0, 2}, {1, 256, 4, 0, 2},
                                   {1, 256, 4, 0, 1, 1}, {2, 192, 4, 0, 1, 1}, {1, 256, 5, 0, 1, 1}};
constexpr int kConfigCount = static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0]));
// The entries the selection picks from, one per tile shape: 128 x 128, 256 x 128, the 64-column
// ones, and 128 x 256 and 256 x 192 with A from shared memory (the model weighs them where it has
// their stage cycles: Gemm24Model::Wide, Wide192). The 128 x 256 one is v58's 5-stage tile since
// v59 (its GPU test, verify and compute-sanitizer passed on an H100: docs/gemm-engine.md "v59");
// the 4-stage one stays listed for --tune. --tune lists every entry.
constexpr int kSelected[] = {0, 2, 3, 4, 9, 10};
// How a configuration stages C for its tensor stores: whole, or (2) half its columns at a time,
// where a whole 128 x 256 C tile would leave room for only 3 stages, or (4) a quarter, for a fifth.
constexpr int TmaStoreOf(const GemmChoice& c) { return c.n_tile != 256 || c.stages < 4 ? 1 : c.stages >= 5 ? 4 : 2; }
constexpr int kStageStrips = 16;  // gemm_engine.cuh's kSpStageStrips (checked there)
constexpr int kGemm24MinN = 128;  // the selection's smallest N (the streaming engine's largest is 64)

inline int ConfigIndex(const GemmChoice& c) {
  for (int i = 0; i < kConfigCount; ++i)
    if (kConfigs[i].sp == c.sp && kConfigs[i].n_tile == c.n_tile && kConfigs[i].stages == c.stages &&
        kConfigs[i].cluster == c.cluster && kConfigs[i].ss == c.ss)
      return i;
  return -1;
}

// The staged tiles, or (the `_ss1` variants) the runs of the compressed rows and their metadata,
// one per 128 rows and K stage (StageSp24Runs; v61), their count padded to a multiple of the
// tile's 128-row units (ss_units: 1 or 2), and the stream-K workspace (partial sums and flags for
// `slots` blocks; the flags are zero between launches).
class Sp24GemmMatrix : public SpmmOperand {
 public:
  cudaError_t Upload(const Sp24Tiles& t, DType dtype, cudaStream_t stream, int ss_units) {
    m_ = t.m, k_ = t.k, dtype_ = dtype;
    cudaError_t e = cudaSuccess;
    if (ss_units > 0) {
      const std::vector<uint8_t> runs = StageSp24Runs(t, ss_units);
      e = runs_.Upload(runs.data(), runs.size(), stream);
    } else {
      const std::vector<uint8_t> staged = StageSp24Tiles(t, kStageStrips, 2);
      e = staged_.Upload(staged.data(), staged.size(), stream);
    }
    if (e == cudaSuccess) e = ws_.Allocate(stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  cudaError_t CopyFrom(const Sp24GemmMatrix& o, cudaStream_t stream) {
    m_ = o.m_, k_ = o.k_, dtype_ = o.dtype_;
    cudaError_t e = CopyParts({{&staged_, &o.staged_}, {&runs_, &o.runs_}}, stream);
    if (e == cudaSuccess) e = ws_.Allocate(stream);
    return e;
  }
  size_t Bytes() const override { return staged_.bytes() + runs_.bytes() + ws_.Bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  const void* staged() const { return staged_.get(); }
  const void* runs() const { return runs_.get(); }  // (ss; else null)
  bool ss() const { return runs_.bytes() > 0; }
  // (ss) the runs per K stage: the buffer holds that many for each of K's ceil(K / 64) stages.
  int units() const { return static_cast<int>(runs_.bytes() / kSp24RunBytes / ((k_ + 63) / 64)); }
  const GemmWorkspace& ws() const { return ws_; }
  int m() const { return m_; }
  int k() const { return k_; }
  DType dtype() const { return dtype_; }

 private:
  DeviceBuffer staged_, runs_;
  GemmWorkspace ws_;
  int m_ = 0, k_ = 0;
  DType dtype_ = DType::kF16;
};

}  // namespace gemm24

namespace {

using gemm24::ConfigIndex;
using gemm24::GemmChoice;
using gemm24::kConfigCount;
using gemm24::kConfigs;
using gemm24::TmaStoreOf;
using gemm24::kGemm24MinN;
using gemm24::Sp24GemmMatrix;

#if defined(SPARSE_SM90A)
static_assert(gemm24::kStageStrips == cuda::gemm::kSpStageStrips, "one staged form");

using gemm_host::KernelRef;
// The kernel of kConfigs[I].
template <DType kType, int I>
constexpr KernelRef RefOf() {
  constexpr GemmChoice c = kConfigs[I];
  return KernelRef{&gemm_host::Launch<kType, c.n_tile, c.stages, TmaStoreOf(c), c.cluster, c.sp, c.ss != 0>,
                   &gemm_host::SetUp<kType, c.n_tile, c.stages, TmaStoreOf(c), c.cluster, c.sp, c.ss != 0>};
}
// The kernels by dtype and configuration (kConfigs' order).
constexpr gemm_host::KernelTable<kConfigCount> kKernelTable = {
    {RefOf<DType::kF16, 0>(), RefOf<DType::kF16, 1>(), RefOf<DType::kF16, 2>(), RefOf<DType::kF16, 3>(),
     RefOf<DType::kF16, 4>(), RefOf<DType::kF16, 5>(), RefOf<DType::kF16, 6>(), RefOf<DType::kF16, 7>(),
     RefOf<DType::kF16, 8>(), RefOf<DType::kF16, 9>(), RefOf<DType::kF16, 10>()},
    {RefOf<DType::kBF16, 0>(), RefOf<DType::kBF16, 1>(), RefOf<DType::kBF16, 2>(), RefOf<DType::kBF16, 3>(),
     RefOf<DType::kBF16, 4>(), RefOf<DType::kBF16, 5>(), RefOf<DType::kBF16, 6>(), RefOf<DType::kBF16, 7>(),
     RefOf<DType::kBF16, 8>(), RefOf<DType::kBF16, 9>(), RefOf<DType::kBF16, 10>()}};
static_assert(kKernelTable.Full(), "a kernel per configuration");
#endif

std::string Name(const GemmChoice& c) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "s24g_m%d_n%d_s%d%s%s%s", 128 * c.sp, c.n_tile, c.stages, c.cluster == 2 ? "_c2" : "",
                c.ss ? "_ss1" : "",
                c.stream_k == 1 ? "_sk1" : c.stream_k == 2 ? "_sk2" : c.stream_k == 3 ? "_sk3" : "");
  return buf;
}

bool ParseGemmFamily(const char* name, SpmmChoice* ch) {
  int rows = 0, cols = 0, stages = 0, used = 0;
  if (std::sscanf(name, "s24g_m%d_n%d_s%d%n", &rows, &cols, &stages, &used) != 3) return false;
  const char* rest = name + used;
  const int cluster = std::strcmp(rest, "_c2") == 0 ? 2 : 1;  // (no stream-K with clusters)
  const int ss = std::strncmp(rest, "_ss1", 4) == 0 ? 1 : 0;
  const int sk = cluster == 2 ? 0 : StreamKSuffix(rest + 4 * ss, 3);
  // (`_ss1` whole or with the ragged wave's owner split: the decompositions its workbench form ran)
  if (sk < 0 || (ss && sk != 0 && sk != 2) || (rows != 128 && rows != 256)) return false;
  const GemmChoice c{rows / 128, cols, stages, sk, cluster, ss};
  if (Name(c) != name) return false;  // no leading zeros or signs
  ch->Set(c);
  return true;
}
std::string GemmFamilyName(const SpmmChoice& ch) { return Name(ch.Get<GemmChoice>()); }

// 2:4 f16/bf16 on compute capability 9.0; N a multiple of 8 (B's and C's tensor maps step
// rows of 16 bytes); B and C 16-byte aligned; an instantiated configuration.
bool GemmFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  const GemmChoice c = ch.Get<GemmChoice>();
  return p.structure == SpmmProblem::k24 && (p.dtype == DType::kF16 || p.dtype == DType::kBF16) && p.m >= 1 &&
         p.k >= 1 && p.n >= 8 && p.n % 8 == 0 && Aligned(p.b, 16) && Aligned(p.c, 16) && ConfigIndex(c) >= 0 &&
         (c.cluster == 1 || c.stream_k == 0) && (c.ss == 0 || c.stream_k == 0 || c.stream_k == 2) &&
         SPARSE_SM90A_CAN_RUN();
}

// Every listed configuration with each decomposition (whole tiles, hybrid stream-K, tail split,
// the cooperative tail split). The first three's GPU tests passed on the H200 (v12, calls 1, 5
// and 7: test/kernels/kernels.test.ts, "the GEMM engine's variants"), _sk3's on an H100 (v38
// call 1), the v54 configurations' on an H100 (v55: with the workbench's check and `verify`), the
// 256 x 192 one's on an H100 (v57; until then it ran only when forced by name, since --tune
// checks no candidate's output), v58's 5-stage 128 x 256 one's on an H100 (v59). The clusters
// run whole tiles only, `_ss1` whole or with the owner's split (GemmFamilyCanRun).
void GemmFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  for (const GemmChoice& base : kConfigs)
    for (int sk : {0, 1, 2, 3}) {
      GemmChoice c = base;
      c.stream_k = sk;
      SpmmChoice ch;
      ch.Set(c);
      if (GemmFamilyCanRun(p, ch)) out->push_back(Name(c));
    }
}

// The model of Gemm24Pick (common/gemm_plan.h) with its constants, kGemm24Fitted (v53).
// SPARSE_S24G_MODEL="S128,S256,F,T0,FX0,L2[,FX3[,S128N64,S256N64[,S128N256[,S256N192]]]]" (the
// line scripts/gpu/s24g-fit.py prints; FX3 below 0 leaves the cooperative split out, S128N64 and
// S256N64 above 0 add the 64-column tiles (both 0 with more numbers after them: not), S128N256
// the 128 x 256 `_ss1` tile and S256N192 the 256 x 192 one (S128N256 0 before it: not that one))
// replaces them and "off" turns the model off (v12's Gemm24Rows and the owner's split), for a
// measurement; anything else is ignored. Read once.
const Gemm24Model& S24gModel() {
  static const Gemm24Model model = [] {
    if (EnvIs("SPARSE_S24G_MODEL", "off")) return Gemm24Model{};
    Gemm24Model md = kGemm24Fitted;
    double x[11] = {0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0};
    const int got = EnvNumbers("SPARSE_S24G_MODEL", x, 11);
    const bool narrow_ok = (x[7] > 0 && x[8] > 0) || (got >= 10 && x[7] == 0 && x[8] == 0);
    if (got == 6 || (got == 7 && x[6] >= 0) || (got == 9 && narrow_ok) || (got == 10 && narrow_ok && x[9] > 0) ||
        (got == 11 && narrow_ok && x[9] >= 0 && x[10] > 0)) {
      Gemm24Model m{x[0], x[1], x[2], x[3], x[4], x[5], x[6] >= 0 ? x[6] : -1};
      m.s128_n64 = x[7], m.s256_n64 = x[8], m.s128_n256 = x[9], m.s256_n192 = x[10];
      if (m.On()) md = m;
    }
    return md;
  }();
  return model;
}

// N >= 128 (below, the streaming engine and the mma.sp kernel): Gemm24Pick's tile (128 columns,
// or 64, 256 or 192 where the model has their stage cycles), height and decomposition (whole tiles, the
// owner's split or the split reduced together) on this GPU's SMs (kConfigs' entry of that
// height and width); with SPARSE_S24G_MODEL=off, Gemm24Rows' height, 128 columns and the
// owner's split. Not below 2.5 % dense
// (DenseWorkPays, common/gemm_plan.h: the CSR kernels take those).
bool SelectGemmFamily(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  if (p.n < kGemm24MinN || !DenseWorkPays(p.m, p.k, p.nnz)) return false;
  const int sms = sm_count > 0 ? sm_count : SmCount();
  const Gemm24Shape shape = Gemm24Choose(S24gModel(), p.m, p.n, p.k, sms);
  GemmChoice c{};  // kConfigs' selected entry of that height and width
  for (const int i : gemm24::kSelected)
    if (kConfigs[i].sp == shape.rows / 128 && kConfigs[i].n_tile == shape.cols) c = kConfigs[i];
  c.stream_k = shape.stream_k;
  SpmmChoice mine;
  mine.Set(c);
  if (!GemmFamilyCanRun(p, mine)) return false;
  ch->Set(c);
  return true;
}

// The operand holds the form the choice's kernel reads (the staged tiles, or for `_ss1` the
// runs of compressed rows and metadata).
cudaError_t GemmPrepare(const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream,
                        std::unique_ptr<SpmmOperand>* out, std::string* why) {
#if defined(SPARSE_SM90A)
  const cudaError_t e = kKernelTable.SetUp();
  if (e != cudaSuccess) return e;
#endif
  const GemmChoice c = ch.Get<GemmChoice>();
  return PrepareStreamOperand<Sp24GemmMatrix>(p, stream, BuildSp24Tiles, out, why, c.ss ? c.sp : 0);
}

cudaError_t GemmLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* op, int sm_count,
                       cudaStream_t stream) {
  if (!GemmFamilyCanRun(p, ch) || op == nullptr) return cudaErrorInvalidValue;
#if defined(SPARSE_SM90A)
  const Sp24GemmMatrix& a = *static_cast<const Sp24GemmMatrix*>(op);
  const GemmChoice c = ch.Get<GemmChoice>();
  if (a.m() != p.m || a.k() != p.k || a.dtype() != p.dtype || a.ss() != (c.ss != 0)) return cudaErrorInvalidValue;
  cuda::gemm::Params params{};
  cudaError_t e = gemm_host::MakeParams(&params, c.ss ? a.runs() : a.staged(), p.b, p.c, p.m, p.n, p.k, c.n_tile,
                                        gemm_host::kRasterGroup, a.ws().partials(), a.ws().flags(), a.ws().slots(), c.sp,
                                        c.ss ? a.units() : 0);
  if (e != cudaSuccess) return e;
  return a.ws().Launch(kKernelTable.For(p.dtype, ConfigIndex(c)), params, sm_count, c.stream_k, stream);
#else
  (void)sm_count, (void)stream;
  return cudaErrorInvalidValue;
#endif
}

// Rank 8, before the streaming engine (9) and the mma.sp kernel (10).
const SpmmFamily kSp24GemmFamily = {
    "s24g",          "s24g_m(128|256)_n(64|128|192|256)_s\\d+(_c2|_ss1(_sk2)?|_sk[123])?", 8, SelectGemmFamily, ParseGemmFamily, GemmFamilyName,
    GemmFamilyCanRun, GemmFamilyVariants, "2:4 tiles, staged (GEMM engine)", GemmPrepare, GemmLaunch,
};

}  // namespace

SPARSE_SPMM_FAMILY(kSp24GemmFamily);

}  // namespace sparse
