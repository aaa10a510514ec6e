// The unstructured f16/bf16 family on the Hopper GEMM engine (cuda/gemm/gemm_engine.cuh, kUn):
// N from 128 on (prefill, batched serving), where SpMM is compute-bound (issue 25, step 3). The
// weights are the pair stream (common/unstructured_stream.h, kPairFrag) cut as the engine walks
// it: row blocks of 8 strips (128 rows) by K stages of 64 columns, each stage one contiguous run
// (a 32-byte record per 16 x 16 tile, then the stored registers: both halves of an A register,
// two adjacent weights of a row, stored where either is nonzero). A producer warp moves each run
// with one bulk copy of its own length and B with tensor copies (128-byte swizzle) into a ring;
// two consumer warpgroups decode their strips' tiles straight into wgmma's A registers and
// issue the dense wgmma.mma_async (A from registers, B from shared memory); the C tile leaves
// through tensor stores. Every weight is multiplied (the zeros as zero registers), so the time
// is the dense GEMM's plus the decode, and bytes fall with the sparsity: 1.63 / 1.15 / 0.51
// bytes a weight at 50 / 70 / 90 % against 2 dense. A warp whose sums meet an Inf or NaN of B
// sums its rows again from their nonzeros (gemm_engine.cuh, UnResum): CSR's semantics.
//
// This file is compiled for sm_90a only (native/scripts/nvcc.cjs, from the "_sm90a" in its
// name; SPARSE_SM90A is then defined): wgmma runs on compute capability 9.0 and nowhere else.
// A build without sm_90 keeps the table entry, which then runs nothing (can_run: false).
//
// Variants "ung_n<cols>[_c<cap>][_sk1|_sk2|_sk3]": tiles of 128 rows x 128 or 256 columns; a ring
// slot with room for `cap` stored registers a tile on average over its stage (128: any stage; 120:
// a slot 1 KB shorter, so that the 256-column tiles take 4 stages with C staged in halves, and
// the 128-column ones 6), without it the prepared stream's own (120 where its longest run fits,
// else 128); "_sk1" shares the last one to two waves' tiles out by K among all blocks (stream-K
// hybrid), "_sk2" cuts the ragged last wave's tiles into up to 4 pieces by K, the first piece
// adding the others' partial sums, "_sk3" the same cut with the pieces reducing each tile
// together, each a 1 / pieces share of its columns (gemm_host::Decompose, CoopTile). Workbench
// figures (docs/gemm-engine.md, v29-v30): the 256-column tiles with the 4-stage ring 0.71-0.95x
// cuBLAS f16 at N = 256 and 0.84-0.98x at N = 1024-2048 over 50-90 % sparsity on the three suite
// shapes; "_sk3" 1-7 % faster than "_sk2" at N = 256-1024 and 10-15 % on DLMC-sized problems (v30).
//
// The selection (rank 16, after the streaming engine's unstructured family, which ends at N =
// 64, and und, which takes the large problems from N = 184 on with N and K multiples of 8) takes
// unstructured f16/bf16 matrices from N = 128 on (N a multiple of 8) on compute capability 9.0
// where common/gemm_plan.h's UnstGemmWins says so (from 2^31 multiply-adds on always at a density
// of at least 2.5 %, elsewhere where its estimate beats the CSR kernels'),
// with the tile width and decomposition of UnGemmPick (a model of the launch's cycles: "_sk3", or whole tiles
// where no split pays).
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
#include "common/unstructured_stream.h"
#include "cuda/common/device_buffer.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/gemm_workspace.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/spmm_stream.h"
#if defined(SPARSE_SM90A)
#include "cuda/gemm/gemm_engine_host.h"
#endif

namespace sparse {
namespace ungemm {

// One configuration: tile columns, slot capacity (0: the prepared stream's), stream-K (0: whole
// tiles, 1: the hybrid, 2: the ragged wave split by K, 3: the same, reduced together).
struct UnGemmChoice {
  int n_tile, cap, stream_k;
};
// The instantiated kernels: tile columns, capacity, ring stages, C staging (1 whole, 2 halves).
struct UnGemmKernel {
  int n_tile, cap, stages, c_pieces;
};
// (kUnGemmCaps' capacities by tile width.)
constexpr UnGemmKernel kKernels[] = {{256, 120, 4, 2}, {256, 128, 3, 1}, {128, 120, 6, 1}, {128, 128, 5, 1}};
constexpr int kKernelCount = sizeof(kKernels) / sizeof(kKernels[0]);
inline int KernelIndex(int n_tile, int cap) {
  for (int i = 0; i < kKernelCount; ++i)
    if (kKernels[i].n_tile == n_tile && kKernels[i].cap == cap) return i;
  return -1;
}

// The pair stream on the device (its runs and offset table), the capacity it runs at (the
// smallest slot that holds its densest stage: UnGemmCapacity), its longest run, and the
// stream-K workspace (partial sums and flags for `slots` blocks; zero flags between launches).
class UnGemmMatrix : public SpmmOperand {
 public:
  cudaError_t Upload(const UnstStream& s, DType dtype, cudaStream_t stream) {
    m_ = s.m, k_ = s.k, dtype_ = dtype;
    cap_ = UnGemmCapacity(s.stats.max_stage_words);
    run_max_ = UnRunMax(s.offsets.data(), s.offsets.size());
    if (cap_ == 0) return cudaErrorInvalidValue;
    cudaError_t e = UploadParts({{&data_, s.data.data(), s.data.size()},
                                 {&offsets_, s.offsets.data(), 4 * s.offsets.size()}},
                                stream);
    if (e == cudaSuccess) e = ws_.Allocate(stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  cudaError_t CopyFrom(const UnGemmMatrix& o, cudaStream_t stream) {
    m_ = o.m_, k_ = o.k_, dtype_ = o.dtype_, cap_ = o.cap_, run_max_ = o.run_max_;
    cudaError_t e = CopyParts({{&data_, &o.data_}, {&offsets_, &o.offsets_}}, stream);
    if (e == cudaSuccess) e = ws_.Allocate(stream);
    return e;
  }
  size_t Bytes() const override { return data_.bytes() + offsets_.bytes() + ws_.Bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  const void* data() const { return data_.get(); }
  const uint32_t* offsets() const { return offsets_.as<uint32_t>(); }
  int cap() const { return cap_; }
  int run_max() const { return run_max_; }
  const GemmWorkspace& ws() const { return ws_; }
  int m() const { return m_; }
  int k() const { return k_; }
  DType dtype() const { return dtype_; }

 private:
  DeviceBuffer data_, offsets_;
  GemmWorkspace ws_;
  int m_ = 0, k_ = 0, cap_ = 0, run_max_ = 0;
  DType dtype_ = DType::kF16;
};

}  // namespace ungemm

namespace {

using ungemm::KernelIndex;
using ungemm::kKernelCount;
using ungemm::kKernels;
using ungemm::UnGemmChoice;
using ungemm::UnGemmMatrix;

#if defined(SPARSE_SM90A)
static_assert(kUnGemmStrips == cuda::gemm::kUnStrips && kUnGemmKStage == cuda::gemm::kKTile &&
                  kUnGemmTiles == cuda::gemm::kUnTiles,
              "the stream's cut is the engine's tile");

using gemm_host::KernelRef;
// The kernel of kKernels[I].
template <DType kType, int I>
constexpr KernelRef RefOf() {
  constexpr ungemm::UnGemmKernel k = kKernels[I];
  return KernelRef{&gemm_host::Launch<kType, k.n_tile, k.stages, k.c_pieces, 1, 1, false, k.cap>,
                   &gemm_host::SetUp<kType, k.n_tile, k.stages, k.c_pieces, 1, 1, false, k.cap>};
}
// The kernels by dtype, in kKernels' order.
constexpr gemm_host::KernelTable<kKernelCount> kKernelTable = {
    {RefOf<DType::kF16, 0>(), RefOf<DType::kF16, 1>(), RefOf<DType::kF16, 2>(), RefOf<DType::kF16, 3>()},
    {RefOf<DType::kBF16, 0>(), RefOf<DType::kBF16, 1>(), RefOf<DType::kBF16, 2>(), RefOf<DType::kBF16, 3>()}};
static_assert(kKernelTable.Full(), "a kernel per entry of kKernels");
#endif

std::string Name(const UnGemmChoice& c) {
  std::string name = "ung_n" + std::to_string(c.n_tile);
  if (c.cap != 0) name += "_c" + std::to_string(c.cap);
  if (c.stream_k != 0) name += "_sk" + std::to_string(c.stream_k);
  return name;
}

bool ParseUnGemmFamily(const char* name, SpmmChoice* ch) {
  UnGemmChoice c{0, 0, 0};
  int used = 0;
  if (std::sscanf(name, "ung_n%d%n", &c.n_tile, &used) != 1) return false;
  const char* rest = name + used;
  if (std::strncmp(rest, "_c", 2) == 0) {
    int more = 0;
    if (std::sscanf(rest, "_c%d%n", &c.cap, &more) != 1) return false;
    rest += more;
  }
  c.stream_k = StreamKSuffix(rest, 3);
  if (c.stream_k < 0 || KernelIndex(c.n_tile, c.cap != 0 ? c.cap : 128) < 0) return false;
  if (Name(c) != name) return false;  // no leading zeros or signs
  ch->Set(c);
  return true;
}
std::string UnGemmFamilyName(const SpmmChoice& ch) { return Name(ch.Get<UnGemmChoice>()); }

// f16/bf16 (any structure: a 2:4 matrix is an unstructured one too) on compute capability 9.0;
// N from 128 on and a multiple of 8 (B's and C's tensor maps step rows of 16 bytes); B and C
// 16-byte aligned; an instantiated configuration.
bool UnGemmFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  const UnGemmChoice c = ch.Get<UnGemmChoice>();
  return (p.dtype == DType::kF16 || p.dtype == DType::kBF16) && p.m >= 1 && p.k >= 1 && p.n >= kUnGemmMinN &&
         p.n % 8 == 0 && Aligned(p.b, 16) && Aligned(p.c, 16) && KernelIndex(c.n_tile, c.cap != 0 ? c.cap : 128) >= 0 &&
         c.stream_k >= 0 && c.stream_k <= 3 && SPARSE_SM90A_CAN_RUN();
}

// Both tile widths at the stream's own capacity, with each decomposition (forcing a capacity is
// for the workbench's comparisons; a smaller one only refuses dense stages).
void UnGemmFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  for (int n_tile : {256, 128})
    for (int sk : {0, 1, 2, 3}) {
      SpmmChoice ch;
      ch.Set(UnGemmChoice{n_tile, 0, sk});
      if (UnGemmFamilyCanRun(p, ch)) out->push_back(Name(ch.Get<UnGemmChoice>()));
    }
}

// Rank 16: after the 2:4 kernels (8-10), und (14: the large problems from N = 184 on) and the
// streaming engine's unstructured family (15, N <= 64); before the bitmap (20), tensor-core (30) and CSR kernels, which take what this one
// declines. Unstructured f16/bf16 from N = 128 on where UnstGemmWins says so (common/gemm_plan.h:
// from 2^31 multiply-adds on always at a density of at least 2.5 %, elsewhere by its estimates
// against the CSR kernels); the stream's own capacity; the tile width and decomposition of
// UnGemmPick (a model of the cycles fitted to the v30 trace): the cooperative tail split (3), or whole tiles (0) where
// no split pays. Not the hybrid (1): `--tune` at N = 256 (v30 call 9) put it 4-15 % behind the
// cooperative split on 6144 x 4096 and 14336 x 4096, 0-7 % ahead on 11008 x 4096.
bool SelectUnGemmFamily(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  const int sms = std::max(sm_count > 0 ? sm_count : SmCount(), 1);
  const UnGemmShape shape = UnGemmPick(p.m, p.n, p.k, sms);
  SpmmChoice mine;
  mine.Set(UnGemmChoice{shape.n_tile, 0, shape.split ? 3 : 0});
  if (p.structure != SpmmProblem::kUnstructured || !UnGemmFamilyCanRun(p, mine) ||
      !UnstGemmWins(p.m, p.k, p.nnz, p.n, sms, shape))
    return false;
  *ch = mine;
  return true;
}

cudaError_t UnGemmPrepare(const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream,
                          std::unique_ptr<SpmmOperand>* out, std::string* why) {
#if defined(SPARSE_SM90A)
  const cudaError_t e = kKernelTable.SetUp();
  if (e != cudaSuccess) return e;
#endif
  const UnGemmChoice c = ch.Get<UnGemmChoice>();
  const std::string name = Name(c);
  auto build = [&](int m, int k, const int* row_offsets, const int* cols, const uint16_t* values, UnstStream* s) {
    // A forced capacity is the encoder's limit: a denser stage is refused, named.
    const int limit = c.cap != 0 ? c.cap * kUnGemmTiles : 0;
    const std::string err = BuildUnstStream(m, k, row_offsets, cols, values, kUnGemmStrips, kUnGemmKStage, limit, s,
                                            UnstLayout::kPairFrag);
    if (err.empty() || c.cap == 0) return err;
    return name + ": " + err + " (ung_n" + std::to_string(c.n_tile) + " picks the capacity that holds it)";
  };
  return PrepareStreamOperandWith<UnGemmMatrix, UnstStream>(p, stream, build, out, why);
}

cudaError_t UnGemmLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* op, int sm_count,
                         cudaStream_t stream) {
  if (!UnGemmFamilyCanRun(p, ch) || op == nullptr) return cudaErrorInvalidValue;
#if defined(SPARSE_SM90A)
  const UnGemmMatrix& a = *static_cast<const UnGemmMatrix*>(op);
  if (a.m() != p.m || a.k() != p.k || a.dtype() != p.dtype) return cudaErrorInvalidValue;
  const UnGemmChoice c = ch.Get<UnGemmChoice>();
  const int index = KernelIndex(c.n_tile, c.cap != 0 ? c.cap : a.cap());
  if (index < 0) return cudaErrorInvalidValue;
  cuda::gemm::Params params{};
  cudaError_t e = gemm_host::MakeParams(&params, a.data(), p.b, p.c, p.m, p.n, p.k, c.n_tile, gemm_host::kRasterGroup,
                                        a.ws().partials(), a.ws().flags(), a.ws().slots(), 1, 0, a.offsets(),
                                        a.run_max());
  if (e != cudaSuccess) return e;
  return a.ws().Launch(kKernelTable.For(p.dtype, index), params, sm_count, c.stream_k, stream);
#else
  (void)sm_count, (void)stream;
  return cudaErrorInvalidValue;
#endif
}

const SpmmFamily kUnGemmFamily = {
    "ung",
    "ung_n(128|256)(_c(120|128))?(_sk[123])?",
    16,
    SelectUnGemmFamily,
    ParseUnGemmFamily,
    UnGemmFamilyName,
    UnGemmFamilyCanRun,
    UnGemmFamilyVariants,
    "pair stream (GEMM engine)",
    UnGemmPrepare,
    UnGemmLaunch,
};

}  // namespace

SPARSE_SPMM_FAMILY(kUnGemmFamily);

}  // namespace sparse
