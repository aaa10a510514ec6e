// Unstructured f16/bf16 on the Hopper GEMM engine with A stored dense (family und, v34): the
// matrix's nonzeros written into a zeroed M x K array once, at prepare, and multiplied by the
// engine's dense kernels (cuda/gemm/gemm_engine.cuh): the producer moves A's and B's tiles with
// tensor copies, the consumers issue wgmma with both operands from shared memory. Nothing is
// decoded, so a launch takes the dense GEMM's time whatever the sparsity, and A costs 2 bytes a
// weight on the device (the user's matrix stays sparse). Where every 16 x 16 tile holds a nonzero
// (random sparsity up to about 95 %) the pair stream's kernels (ung) multiply every weight too,
// and pay for their decode; v32's trace put the dense main loop at 19.7 K cycles against 29.0 K
// for ung's 128-column one on 4096², N = 256, 50 %. CSR's semantics for Inf and NaN in B: a
// warp whose sums are not all finite sums its rows again from A's nonzeros (DenseResum).
//
// Compiled for sm_90a only (native/scripts/nvcc.cjs, from the "_sm90a" in its name).
//
// Variants "und_n<cols>[_sk1|_sk2|_sk3]": tiles of 128 rows x 256 columns (a ring of 4 stages,
// C staged in halves) or 128 (5 stages); the decompositions as ung's (gemm_host::Decompose).
// Selected (v35) where ung's rule would run ung always, from N = 184 on (UndGemmWins,
// common/gemm_plan.h).
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
#include "cuda/common/device_buffer.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/gemm_workspace.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/spmm_stream.h"
#if defined(SPARSE_SM90A)
#include "cuda/gemm/gemm_engine_host.h"
#endif

namespace sparse {
namespace undgemm {

// One configuration: tile columns, stream-K (0: whole tiles, 1: the hybrid, 2: the ragged wave
// split by K, 3: the same, reduced together).
struct UndChoice {
  int n_tile, stream_k;
};
// The instantiated kernels: tile columns, ring stages, C staging (1 whole, 2 halves).
struct UndKernel {
  int n_tile, stages, c_pieces;
};
constexpr UndKernel kKernels[] = {{256, 4, 2}, {128, 5, 1}};
constexpr int kKernelCount = sizeof(kKernels) / sizeof(kKernels[0]);
inline int KernelIndex(int n_tile) {
  for (int i = 0; i < kKernelCount; ++i)
    if (kKernels[i].n_tile == n_tile) return i;
  return -1;
}

// The matrix dense on the host: M x K 16-bit words, the nonzeros in place, zeros elsewhere.
struct DenseA {
  int m = 0, k = 0;
  std::vector<uint16_t> words;
};

// Writes the CSR's nonzeros into a zeroed M x K array (+0 and -0 left out, as the pair stream
// does); "" or what is wrong with the CSR (a column out of range, a repeated nonzero column).
std::string Densify(int m, int k, const int* row_offsets, const int* cols, const uint16_t* values, DenseA* out) {
  out->m = m, out->k = k;
  out->words.assign(static_cast<size_t>(m) * k, 0);
  for (int r = 0; r < m; ++r) {
    uint16_t* row = out->words.data() + static_cast<size_t>(r) * k;
    for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i) {
      const int c = cols[i];
      if (c < 0 || c >= k) return "column index " + std::to_string(c) + " of row " + std::to_string(r) + " out of range";
      if ((values[i] & 0x7fff) == 0) continue;
      if (row[c] != 0) return "repeated column " + std::to_string(c) + " in row " + std::to_string(r);
      row[c] = values[i];
    }
  }
  return "";
}

// A on the device and the stream-K workspace (partial sums and flags for `slots` blocks; zero
// flags between launches).
class UndMatrix : public SpmmOperand {
 public:
  cudaError_t Upload(const DenseA& a, DType dtype, cudaStream_t stream) {
    m_ = a.m, k_ = a.k, dtype_ = dtype;
    cudaError_t e = UploadParts({{&data_, a.words.data(), 2 * a.words.size()}}, stream);
    if (e == cudaSuccess) e = ws_.Allocate(stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  cudaError_t CopyFrom(const UndMatrix& o, cudaStream_t stream) {
    m_ = o.m_, k_ = o.k_, dtype_ = o.dtype_;
    cudaError_t e = CopyParts({{&data_, &o.data_}}, stream);
    if (e == cudaSuccess) e = ws_.Allocate(stream);
    return e;
  }
  size_t Bytes() const override { return data_.bytes() + ws_.Bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  const void* data() const { return data_.get(); }
  const GemmWorkspace& ws() const { return ws_; }
  int m() const { return m_; }
  int k() const { return k_; }
  DType dtype() const { return dtype_; }

 private:
  DeviceBuffer data_;
  GemmWorkspace ws_;
  int m_ = 0, k_ = 0;
  DType dtype_ = DType::kF16;
};

}  // namespace undgemm

namespace {

using undgemm::DenseA;
using undgemm::KernelIndex;
using undgemm::kKernelCount;
using undgemm::kKernels;
using undgemm::UndChoice;
using undgemm::UndMatrix;

#if defined(SPARSE_SM90A)
using gemm_host::KernelRef;
// The kernel of kKernels[I]: dense A, no clusters, the re-sum on.
template <DType kType, int I>
constexpr KernelRef RefOf() {
  constexpr undgemm::UndKernel k = kKernels[I];
  return KernelRef{&gemm_host::Launch<kType, k.n_tile, k.stages, k.c_pieces, 1, 0, false, 0, 0, true>,
                   &gemm_host::SetUp<kType, k.n_tile, k.stages, k.c_pieces, 1, 0, false, 0, 0, true>};
}
// The kernels by dtype, in kKernels' order.
constexpr gemm_host::KernelTable<kKernelCount> kKernelTable = {{RefOf<DType::kF16, 0>(), RefOf<DType::kF16, 1>()},
                                                                {RefOf<DType::kBF16, 0>(), RefOf<DType::kBF16, 1>()}};
static_assert(kKernelTable.Full(), "a kernel per entry of kKernels");
#endif

std::string Name(const UndChoice& c) {
  std::string name = "und_n" + std::to_string(c.n_tile);
  if (c.stream_k != 0) name += "_sk" + std::to_string(c.stream_k);
  return name;
}

bool ParseUndFamily(const char* name, SpmmChoice* ch) {
  UndChoice c{0, 0};
  int used = 0;
  if (std::sscanf(name, "und_n%d%n", &c.n_tile, &used) != 1) return false;
  c.stream_k = StreamKSuffix(name + used, 3);
  if (c.stream_k < 0 || KernelIndex(c.n_tile) < 0) return false;
  if (Name(c) != name) return false;  // no leading zeros or signs
  ch->Set(c);
  return true;
}
std::string UndFamilyName(const SpmmChoice& ch) { return Name(ch.Get<UndChoice>()); }

// f16/bf16 (any structure) on compute capability 9.0; N from 128 on and a multiple of 8, K a
// multiple of 8 (the tensor maps of B and A step rows of 16 bytes); B and C 16-byte aligned.
bool UndFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  const UndChoice c = ch.Get<UndChoice>();
  return (p.dtype == DType::kF16 || p.dtype == DType::kBF16) && p.m >= 1 && p.k >= 8 && p.k % 8 == 0 &&
         p.n >= kUnGemmMinN && p.n % 8 == 0 && Aligned(p.b, 16) && Aligned(p.c, 16) && KernelIndex(c.n_tile) >= 0 &&
         c.stream_k >= 0 && c.stream_k <= 3 && SPARSE_SM90A_CAN_RUN();
}

// Both tile widths, whole tiles and the cooperative split (the decompositions ung's rule picks
// from).
void UndFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  for (int n_tile : {256, 128})
    for (int sk : {0, 3}) {
      SpmmChoice ch;
      ch.Set(UndChoice{n_tile, sk});
      if (UndFamilyCanRun(p, ch)) out->push_back(Name(ch.Get<UndChoice>()));
    }
}

cudaError_t UndPrepare(const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream, std::unique_ptr<SpmmOperand>* out,
                       std::string* why) {
#if defined(SPARSE_SM90A)
  const cudaError_t e = kKernelTable.SetUp();
  if (e != cudaSuccess) return e;
#endif
  (void)ch;
  return PrepareStreamOperand<UndMatrix, DenseA>(p, stream, undgemm::Densify, out, why);
}

cudaError_t UndLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* op, int sm_count,
                      cudaStream_t stream) {
  if (!UndFamilyCanRun(p, ch) || op == nullptr) return cudaErrorInvalidValue;
#if defined(SPARSE_SM90A)
  const UndMatrix& a = *static_cast<const UndMatrix*>(op);
  if (a.m() != p.m || a.k() != p.k || a.dtype() != p.dtype) return cudaErrorInvalidValue;
  const UndChoice c = ch.Get<UndChoice>();
  const int index = KernelIndex(c.n_tile);
  if (index < 0) return cudaErrorInvalidValue;
  cuda::gemm::Params params{};
  cudaError_t e = gemm_host::MakeParams(&params, a.data(), p.b, p.c, p.m, p.n, p.k, c.n_tile, gemm_host::kRasterGroup,
                                        a.ws().partials(), a.ws().flags(), a.ws().slots());
  if (e != cudaSuccess) return e;
  return a.ws().Launch(kKernelTable.For(p.dtype, index), params, sm_count, c.stream_k, stream);
#else
  (void)sm_count, (void)stream;
  return cudaErrorInvalidValue;
#endif
}

// Rank 14: after the 2:4 kernels (8-10), before the streaming engine's unstructured family (15,
// N <= 64, which never meets this one's N >= 128) and ung (16), which takes what this one
// declines. Unstructured f16/bf16 where UndGemmWins (common/gemm_plan.h): N from the ridge on
// (184 and up: 177.5 flops a byte), from 2^31 multiply-adds at a density of at least 2.5 % (where
// ung's rule runs it always), N and K multiples of 8; the tile width and decomposition of
// UndGemmPick (a model of the launch's cycles with the operands' bytes through L2, fitted to
// v35's --tune times): the cooperative tail split (3), or whole tiles (0) where no split pays.
// Below 2^31 multiply-adds the rule's estimate with the fitted constants (kUndSmallFitted,
// common/gemm_plan.h; v38). SPARSE_UND_SMALL="FIXED,PER_CYCLE" (us, us a modelled cycle; both
// finite, FIXED >= 0, PER_CYCLE > 0) replaces them and "off" turns the branch off (v35's
// selection), for a measurement; anything else is ignored. Read once.
const UndSmallModel& UndSmall() {
  static const UndSmallModel model = [] {
    UndSmallModel m = kUndSmallFitted;
    if (EnvIs("SPARSE_UND_SMALL", "off")) return UndSmallModel{};
    double x[2] = {0, 0};
    if (EnvNumbers("SPARSE_UND_SMALL", x, 2) == 2 && x[0] >= 0 && x[1] > 0) m.fixed_us = x[0], m.us_per_cycle = x[1];
    return m;
  }();
  return model;
}

bool SelectUndFamily(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  if (p.structure != SpmmProblem::kUnstructured) return false;
  const int sms = std::max(sm_count > 0 ? sm_count : SmCount(), 1);
  if (!UndGemmWins(p.m, p.k, p.nnz, p.n, sms, UndSmall())) return false;
  const UnGemmShape shape = UndGemmPick(p.m, p.n, p.k, sms);
  SpmmChoice mine;
  mine.Set(UndChoice{shape.n_tile, shape.split ? 3 : 0});
  if (!UndFamilyCanRun(p, mine)) return false;
  *ch = mine;
  return true;
}

const SpmmFamily kUndFamily = {
    "und",
    "und_n(128|256)(_sk[123])?",
    14,
    SelectUndFamily,
    ParseUndFamily,
    UndFamilyName,
    UndFamilyCanRun,
    UndFamilyVariants,
    "dense A (GEMM engine)",
    UndPrepare,
    UndLaunch,
    true,  // stores_dense: 2 bytes a weight, zeros included
};

}  // namespace

SPARSE_SPMM_FAMILY(kUndFamily);

}  // namespace sparse
