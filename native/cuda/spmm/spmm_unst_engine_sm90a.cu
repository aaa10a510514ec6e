// The unstructured f16/bf16 family on the streaming engine (issue 24; stream_engine.cuh with the
// formats UnstructuredBitmap<kCap, kBitmapPred>, stream_unstructured_bitmap.cuh, and
// UnstructuredPairs<kCap>, stream_unstructured_pairs.cuh): decode-sized N (1 to 64) on Hopper,
// in two forms of the weights, the bitmap stream and the pair stream (below). The bitmap stream
// is common/unstructured_stream.h's kBitmapFrag stream, built once per matrix: per 16 x 16 tile
// a 48-byte record (a bitmap in wgmma's A-fragment order and eight counts) and the nonzeros'
// values, 2 bytes per nonzero and 0.1875 per weight; each stage (a row block by 128 columns)
// one contiguous run at an offset table's entry. The consumers
// decode each tile's bitmap straight into the registers of wgmma's A and multiply with B from
// the stage's descriptor; the launch is stream-K over every block that fits on the device
// (common/stream_plan.h, UnstStreamPlan).
//
// This file is compiled for sm_90a only (native/scripts/nvcc.cjs, from the "_sm90a" in its
// name; SPARSE_SM90A is then defined): wgmma runs on compute capability 9.0 and nowhere else.
// A build without sm_90 keeps the table entry, which then runs nothing (can_run: false).
//
// The kernels are the workbench's kinds unbmp and unbm4x (scripts/gpu/probe/unst_variants.h),
// its best measured pair (v23: 0.84 / 0.91 / 0.94x cuBLAS f16 at 50 / 70 / 90 %, N 8-64):
//   - instruction N 8, 16, 32 (N 1-32): 8 consumer warps (two warpgroups, 128-row blocks), a
//     70 KB ring, registers bounded for two blocks per SM;
//   - instruction N 64 (N 33-64): 4 consumer warps (one warpgroup, 64-row blocks), a 60 KB ring,
//     two blocks per SM (at N = 64 the A fragments and 32 accumulators of 8 warps do not fit two).
// N % 8 != 0 (N = 1 included) runs the next instruction N, B's rows copied as they are (no
// padding on the wire) and laid out by the consumers (the engine's kBWgRows). K past the last
// 16 or 128 columns: empty tiles in the stream and zero rows of B.
// An Inf or NaN in B reaches only the rows that hold its column (CSR's definition): a strip
// whose sums are not finite is summed again from its nonzeros (UnstBitmapSparse).
// Each kernel exists for five ring capacities (kUnstStreamCaps: values a slot holds per tile on
// average; the smaller, the more stages in flight): 5 x 4 x 2 dtypes = 40 kernels.
//
// Variants "ube_w8" (N <= 32) and "ube_w4" (N 33-64): the capacity is the prepared matrix's,
// the smallest that holds its densest stage (UnstStreamCapacity). "ube_w8_c88" and the like
// force a capacity (16, 32, 88, 144, 256); a matrix with a stage over it is refused at prepare
// with the encoder's message. The row-block height is the operand's layout: an operand serves
// the variants of its warps, at its capacity.
// The selection takes f16/bf16 unstructured matrices at N <= 64 where common/stream_plan.h's
// UnstStreamWins says so (density at least 15 % at N < 8, 7.5 % at N 8-16, 5 % above: fitted
// against the CSR kernels in v25).
//
// The pair stream (the second form): common/unstructured_stream.h's kPairFrag layout, per 16 x 16
// tile a 32-byte record (a bit per A register, one word per lane quad) and the stored registers,
// both halves of a register stored where either is nonzero: 4 bytes per stored register and
// 0.125 per weight (1.63 / 1.15 / 0.51 bytes a weight at 50 / 70 / 90 % sparsity). The kernels
// are the workbench's kind unpr: 8 consumer warps at every instruction N, 128-column stages, a
// 108 KB ring, registers bounded for two blocks per SM at N 8 / 16 / 32 and one at N 64; five
// capacities (kUnstPairCaps: stored registers per tile) x 4 x 2 dtypes = 40 kernels. Variants
// "ube_p8" (N 1-64) and "ube_p8_c72" and the like (16, 32, 72, 100, 128). The selection runs it
// where UnstPairsWins says so (sparsity at least 60 %), the bitmap stream below that.
//
// A prepared operand holds one workspace: launches on it run one at a time (stream order).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/stream_plan.h"
#include "common/unstructured_stream.h"
#include "cuda/common/device_buffer.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/spmm_stream.h"
#if defined(SPARSE_SM90A)
#include "cuda/spmm/stream_engine_host.h"
#include "cuda/spmm/stream_unstructured_bitmap.cuh"
#include "cuda/spmm/stream_unstructured_pairs.cuh"
#include "cuda/spmm/tc_stream.cuh"
#endif

namespace sparse {
namespace unst_engine {

constexpr int kKStage = kUnstStreamKStage;  // K columns per stage

// The family's two forms of the weights (one layout and one decode each).
enum class UnstForm : int {
  kBitmap = 0,  // kBitmapFrag, UnstructuredBitmap: "ube_w8", "ube_w4"
  kPairs = 1,   // kPairFrag, UnstructuredPairs: "ube_p8"
};

// The configuration: the form, consumer warps (bitmap: 8 for N <= 32, 4 for N 33-64; pairs: 8)
// and the ring capacity (one of the form's capacities; 0: the prepared matrix's own).
struct UnstChoice {
  int warps;
  int cap;
  UnstForm form;
};

// The instruction's N for a problem's N: N rounded up to 8, 16, 32 or 64 (common/stream_plan.h).
inline int BoxColumns(int n) { return StreamBoxColumns(n); }
// The kernels of one capacity by instruction N (8, 16, 32 with 8 warps; 64 with 4, the pair
// stream's with 8): index 0..3.
inline int KernelIndex(int box_n) { return box_n == 8 ? 0 : box_n == 16 ? 1 : box_n == 32 ? 2 : 3; }
// Whether `cap` is one of the form's capacities.
inline bool IsCap(UnstForm form, int cap) {
  for (int i = 0; i < kUnstStreamCapCount; ++i)
    if ((form == UnstForm::kPairs ? kUnstPairCaps[i] : kUnstStreamCaps[i]) == cap) return true;
  return false;
}
static_assert(kUnstStreamCapCount == kUnstPairCapCount, "one table of kernels per form");
// The form's consumer warps at N = n (the bitmap form: 4 at N 33-64).
inline int FormWarps(UnstForm form, int n) { return form == UnstForm::kPairs ? kUnstPairWarps : UnstStreamWarps(n); }
// A stage's room (values or stored registers) at capacity `cap`, and the smallest capacity that
// holds `max_stage_words` (0: none).
constexpr int CapacityWords(UnstForm form, int cap, int warps) {
  return form == UnstForm::kPairs ? UnstPairCapacityWords(cap) : UnstStreamCapacityWords(cap, warps);
}
inline int SmallestCap(UnstForm form, int max_stage_words, int warps) {
  return form == UnstForm::kPairs ? UnstPairCapacity(max_stage_words) : UnstStreamCapacity(max_stage_words, warps);
}
// The launch plan of the kernel for (dtype, form, capacity, instruction N) over row_blocks x
// kstages on the current device (defined with the kernels; one block without sm_90a code, which
// never launches).
StreamPlan PlanFor(DType t, UnstForm form, int cap, int box_n, int row_blocks, int kstages);

// The bitmap or pair stream on the device (its runs and offset table), the capacity its kernels
// run at, the plans, the fixup's slots (sized for the instruction N of the N it was prepared for:
// launches up to that N on the same warps run) and the row blocks' counters (zero between
// launches).
class UnstEngineMatrix : public SpmmOperand {
 public:
  // For launches up to N = n of `form` with `warps` consumer warps, at capacity `cap` (0: the
  // smallest that holds the densest stage) (PrepareStreamOperandWith's Upload).
  cudaError_t Upload(const UnstStream& s, DType dtype, cudaStream_t stream, int n, int warps, int cap,
                     UnstForm form) {
    m_ = s.m, k_ = s.k, dtype_ = dtype, box_n_ = BoxColumns(n), warps_ = warps, form_ = form;
    row_blocks_ = s.row_blocks, kstages_ = s.kstages;
    cap_ = cap != 0 ? cap : SmallestCap(form, s.stats.max_stage_words, warps);
    if (cap_ == 0 || CapacityWords(form, cap_, warps) < s.stats.max_stage_words) return cudaErrorInvalidValue;
    PlanAll();
    cudaError_t e = UploadParts({{&data_, s.data.data(), s.data.size()},
                                 {&offsets_, s.offsets.data(), 4 * s.offsets.size()}},
                                stream);
    if (e == cudaSuccess) e = AllocateWorkspace(stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  cudaError_t CopyFrom(const UnstEngineMatrix& o, cudaStream_t stream) {
    m_ = o.m_, k_ = o.k_, dtype_ = o.dtype_, box_n_ = o.box_n_, warps_ = o.warps_, cap_ = o.cap_, form_ = o.form_;
    row_blocks_ = o.row_blocks_, kstages_ = o.kstages_;
    std::copy(o.plans_, o.plans_ + 4, plans_);
    cudaError_t e = CopyParts({{&data_, &o.data_}, {&offsets_, &o.offsets_}}, stream);
    if (e == cudaSuccess) e = AllocateWorkspace(stream);
    return e;
  }
  // Every device byte it holds: the stream, its offsets, the fixup's slots and the counters.
  size_t Bytes() const override { return data_.bytes() + offsets_.bytes() + ws_.bytes() + counters_.bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  // The layout is the form and the row-block height (the warps); the kernels' ring is the
  // capacity.
  bool Serves(const SpmmChoice& ch) const override {
    const UnstChoice c = ch.Get<UnstChoice>();
    return c.form == form_ && c.warps == warps_ && (c.cap == 0 || c.cap == cap_);
  }
  const StreamPlan& PlanOf(int box_n) const { return plans_[KernelIndex(box_n)]; }
  int Slots() const { return slots_; }

  const void* data() const { return data_.get(); }
  const void* offsets() const { return offsets_.get(); }
  float* ws() const { return ws_.as<float>(); }
  int* counters() const { return counters_.as<int>(); }
  int m() const { return m_; }
  int k() const { return k_; }
  int warps() const { return warps_; }
  int cap() const { return cap_; }
  UnstForm form() const { return form_; }
  int row_blocks() const { return row_blocks_; }
  int kstages() const { return kstages_; }
  DType dtype() const { return dtype_; }
  int box_n() const { return box_n_; }

 private:
  // Whether the kernel of instruction N `box` runs on this operand's warps.
  bool Launches(int box) const { return FormWarps(form_, box) == warps_; }
  // A plan per kernel of its warps it may launch (instruction N up to the prepared one): their
  // shared memory and registers, and so how many blocks run at once, differ.
  void PlanAll() {
    for (int box = 8; box <= box_n_; box *= 2)
      if (Launches(box)) plans_[KernelIndex(box)] = PlanFor(dtype_, form_, cap_, box, row_blocks_, kstages_);
  }
  cudaError_t AllocateWorkspace(cudaStream_t stream) {
    slots_ = 1;
#if defined(SPARSE_SM90A)
    for (int box = 8; box <= box_n_; box *= 2)
      if (Launches(box))
        slots_ = std::max(slots_, engine_host::MaxSlots(row_blocks_, kstages_, PlanOf(box).grid));
#endif
    const size_t rows = 16 * static_cast<size_t>(warps_);
    cudaError_t e = ws_.Allocate(static_cast<size_t>(row_blocks_) * slots_ * rows * box_n_ * sizeof(float));
    if (e == cudaSuccess) e = counters_.Allocate(static_cast<size_t>(row_blocks_) * sizeof(int));
    if (e == cudaSuccess) e = cudaMemsetAsync(counters_.get(), 0, counters_.bytes(), stream);
    return e;
  }

  DeviceBuffer data_, offsets_, ws_, counters_;
  int m_ = 0, k_ = 0, warps_ = 8, cap_ = 0, row_blocks_ = 0, kstages_ = 0, slots_ = 1, box_n_ = 8;
  StreamPlan plans_[4] = {{1, 0}, {1, 0}, {1, 0}, {1, 0}};
  DType dtype_ = DType::kF16;
  UnstForm form_ = UnstForm::kBitmap;
};

}  // namespace unst_engine

namespace {

using unst_engine::BoxColumns;
using unst_engine::IsCap;
using unst_engine::kKStage;
using unst_engine::UnstChoice;
using unst_engine::UnstForm;
using unst_engine::UnstEngineMatrix;

#if defined(SPARSE_SM90A)
namespace e = cuda::engine;

// The addon's sparse semantics for non-finite B, shared by both forms. Every tile is
// multiplied, so an Inf or NaN in B's row k reaches every row of the product through the zeros
// (0 x Inf = NaN; the dense product's answer, and the workbench's), where CSR's definition (the
// float64 reference, the other families) keeps it to the rows that hold column k. A warp whose
// sums over the block's stages [ks0, ks1) are not all finite sums its strip again from its
// nonzeros alone, read from the stream in global memory: per stage (its run at the offset
// table's entry) and tile, `walk(rec, vals, g, col0, add)` finds lane quad g's nonzeros (rows g
// and g + 8 of the strip) in the tile's record `rec` and the stage's values `vals` (both in
// global memory; col0 the tile's first column) and calls add(h, col, bits) for each, row half h
// first (h a constant of an unrolled loop, so that the accumulators stay in registers: an index
// known only at run time puts them in local memory).
template <int kTileBytes, DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG, class Walk>
__device__ __forceinline__ void ResumFromStream(const e::Args& a, int rb, int ks0, int ks1,
                                                float (&acc)[kMS][kNT8][4], Walk walk) {
  static_assert(kMS == 1 && kNG == 1, "one strip per warp");
  constexpr int kTiles = kKS / 16;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  if (rb * kCW + warp >= a.strips || cuda::WarpAllFinite<kNT8>(acc[0])) return;
#pragma unroll
  for (int j = 0; j < kNT8; ++j) acc[0][j][0] = acc[0][j][1] = acc[0][j][2] = acc[0][j][3] = 0.f;
  const unsigned short* b16 = static_cast<const unsigned short*>(a.b);
  const uint32_t* offsets = static_cast<const uint32_t*>(a.a1) + static_cast<int64_t>(rb) * a.kstages;
  auto add = [&](int h, int col, unsigned short bits) {
    cuda::AccumulateExact<kType, kNT8>(acc[0], b16, a.n, 0, t, h, col, cuda::Widen<kType>(bits));
  };
  for (int ks = ks0; ks < ks1; ++ks) {
    const unsigned char* run = static_cast<const unsigned char*>(a.a0) + 16 * static_cast<int64_t>(offsets[ks]);
    const unsigned char* vals = run + kCW * kTiles * kTileBytes;
    for (int j = 0; j < kTiles; ++j) walk(run + (warp * kTiles + j) * kTileBytes, vals, g, ks * kKS + j * 16, add);
  }
}

// The bitmap stream: the workbench's UnstructuredBitmap<kCap, kBitmapPred>, with the re-sum.
template <int kCap>
struct UnstBitmapSparse : e::UnstructuredBitmap<kCap, e::kBitmapPred> {
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const e::Args& a, int rb, int ks0, int ks1, float (&acc)[kMS][kNT8][4]) {
    ResumFromStream<kUnstBitmapTileBytes, kType, kCW, kMS, kNT8, kKS, kNG>(
        a, rb, ks0, ks1, acc, [](const unsigned char* rec, const unsigned char* vals, int g, int col0, auto& add) {
          // Lane quad g's bitmap word (a byte a lane) and its values from the quad's count on,
          // lane by lane, slot by slot.
          const uint32_t word = *reinterpret_cast<const uint32_t*>(rec + 4 * g);
          const int first = *reinterpret_cast<const unsigned short*>(rec + 32 + 2 * g);
          const unsigned short* v16 = reinterpret_cast<const unsigned short*>(vals);
#pragma unroll
          for (int h = 0; h < 2; ++h)
            for (int i = 0; i < 32; ++i) {
              // Slot s of the quad's lane q (i = 8 q + s): row g + 8 ((s >> 1) & 1), column
              // 8 (s >> 2) + 2 q + (s & 1) (UnstBitmapLane and UnstBitmapSlot, inverted); its
              // value after those of the quad's bits below it.
              const int q = i >> 3, slot = i & 7;
              if (((slot >> 1) & 1) != h || !((word >> i) & 1u)) continue;
              add(h, col0 + 8 * (slot >> 2) + 2 * q + (slot & 1), v16[first + __popc(word & ((1u << i) - 1u))]);
            }
        });
  }
};

// The pair stream: the workbench's UnstructuredPairs<kCap>, with the re-sum.
template <int kCap>
struct UnstPairsSparse : e::UnstructuredPairs<kCap> {
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const e::Args& a, int rb, int ks0, int ks1, float (&acc)[kMS][kNT8][4]) {
    ResumFromStream<kUnstPairTileBytes, kType, kCW, kMS, kNT8, kKS, kNG>(
        a, rb, ks0, ks1, acc, [](const unsigned char* rec, const unsigned char* vals, int g, int col0, auto& add) {
          e::UnstructuredPairs<kCap>::WalkQuad(rec, vals, g, col0, add);
        });
  }
};

struct KernelRef {
  void (*fn)(e::Args);
  int smem, threads;
};
// The workbench's unbmp (8 warps, 70 KB) and unbm4x (4 warps, 60 KB), both bounded for two
// blocks per SM; its unpr (8 warps, 108 KB), bounded for two blocks per SM at instruction N 8,
// 16 and 32 and one at N 64 (32 accumulators). Stages of 128 columns, one strip per warp.
template <UnstForm kForm, int kWarps>
constexpr int kBudgetKB = kForm == UnstForm::kPairs ? 108 : kWarps == 8 ? 70 : 60;
template <UnstForm kForm, int kNT8>
constexpr int kMinBlocks = kForm == UnstForm::kPairs && kNT8 == 8 ? 1 : 2;
template <UnstForm kForm, int kCap>
using FormatOf = std::conditional_t<kForm == UnstForm::kPairs, UnstPairsSparse<kCap>, UnstBitmapSparse<kCap>>;

template <UnstForm kForm, int kCap, DType kType, int kWarps, int kNT8>
KernelRef RefOf() {
  using F = FormatOf<kForm, kCap>;
  constexpr int kKB = kBudgetKB<kForm, kWarps>, kBlocks = kMinBlocks<kForm, kNT8>;
  using E = e::Engine<F, kType, kWarps, 1, kNT8, kKStage, kKB>;
  static_assert(F::template CapacityWords<E::kStrips, kKStage>() == unst_engine::CapacityWords(kForm, kCap, kWarps),
                "the encoder's capacity is the ring's");
  static_assert(kBlocks * (E::kSmemBytes + 1024) <= 228 * 1024, "the blocks' rings fit in an SM");
  return KernelRef{&e::StreamKernel<F, kType, kWarps, 1, kNT8, kKStage, kKB, 1, kBlocks>, E::kSmemBytes,
                   E::kThreads};
}
// One capacity's kernels for a form and a dtype, by instruction N (unst_engine::KernelIndex).
template <UnstForm kForm, int kCap, DType kType>
const KernelRef* CapKernels() {
  constexpr int kWide = kForm == UnstForm::kPairs ? 8 : 4;  // the warps at instruction N 64
  static const KernelRef t[4] = {RefOf<kForm, kCap, kType, 8, 1>(), RefOf<kForm, kCap, kType, 8, 2>(),
                                 RefOf<kForm, kCap, kType, 8, 4>(), RefOf<kForm, kCap, kType, kWide, 8>()};
  return t;
}
template <DType kType, size_t... I>
const KernelRef* ByCap(UnstForm form, int cap, std::index_sequence<I...>) {
  const KernelRef* r = nullptr;
  if (form == UnstForm::kPairs)
    ((r = cap == kUnstPairCaps[I] ? CapKernels<UnstForm::kPairs, kUnstPairCaps[I], kType>() : r), ...);
  else
    ((r = cap == kUnstStreamCaps[I] ? CapKernels<UnstForm::kBitmap, kUnstStreamCaps[I], kType>() : r), ...);
  return r;
}
// The kernel for a dtype, a form, a capacity (one of the form's) and an instruction N.
KernelRef KernelFor(DType t, UnstForm form, int cap, int box_n) {
  constexpr auto caps = std::make_index_sequence<kUnstStreamCapCount>();
  const KernelRef* k = t == DType::kBF16 ? ByCap<DType::kBF16>(form, cap, caps) : ByCap<DType::kF16>(form, cap, caps);
  return k[unst_engine::KernelIndex(box_n)];
}
// Every kernel's shared-memory limit raised once (outside any graph capture: at prepare).
cudaError_t RaiseSmemLimits() {
  static const cudaError_t result = [] {
    for (DType t : {DType::kF16, DType::kBF16})
      for (UnstForm form : {UnstForm::kBitmap, UnstForm::kPairs})
        for (int i = 0; i < kUnstStreamCapCount; ++i)
          for (int box : {8, 16, 32, 64}) {
            const int cap = form == UnstForm::kPairs ? kUnstPairCaps[i] : kUnstStreamCaps[i];
            const KernelRef r = KernelFor(t, form, cap, box);
            const cudaError_t e = cudaFuncSetAttribute(r.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, r.smem);
            if (e != cudaSuccess) return e;
          }
    return cudaSuccess;
  }();
  return result;
}
#endif

std::string UnstFamilyName(const SpmmChoice& ch) {
  const UnstChoice c = ch.Get<UnstChoice>();
  std::string name = std::string(c.form == UnstForm::kPairs ? "ube_p" : "ube_w") + std::to_string(c.warps);
  if (c.cap != 0) name += "_c" + std::to_string(c.cap);
  return name;
}
// "ube_w<warps>", "ube_p8", either with "_c<cap>", written exactly as UnstFamilyName writes it.
bool ParseUnstFamily(const char* name, SpmmChoice* ch) {
  UnstChoice c{0, 0, UnstForm::kBitmap};
  char letter = 0;
  int used = 0;
  if (std::sscanf(name, "ube_%c%d%n", &letter, &c.warps, &used) != 2 || (letter != 'w' && letter != 'p')) return false;
  c.form = letter == 'p' ? UnstForm::kPairs : UnstForm::kBitmap;
  if (name[used] != '\0' && std::sscanf(name + used, "_c%d", &c.cap) != 1) return false;
  const bool warps_ok = c.form == UnstForm::kPairs ? c.warps == kUnstPairWarps : c.warps == 4 || c.warps == 8;
  if (!warps_ok || (c.cap != 0 && !IsCap(c.form, c.cap))) return false;
  SpmmChoice parsed;
  parsed.Set(c);
  if (UnstFamilyName(parsed) != name) return false;
  ch->Set(c);
  return true;
}

// Any structure (a 2:4 matrix is an unstructured one too); the warps of the form at N's
// instruction N.
bool UnstFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  const UnstChoice c = ch.Get<UnstChoice>();
  return (p.dtype == DType::kF16 || p.dtype == DType::kBF16) && p.m >= 1 && p.k >= 1 && p.n >= 1 &&
         p.n <= kUnstStreamMaxN && c.warps == unst_engine::FormWarps(c.form, p.n) &&
         (c.cap == 0 || IsCap(c.form, c.cap)) && Aligned(p.b, 16) && Aligned(p.c, 4) && SPARSE_SM90A_CAN_RUN();
}

// The ones worth timing: each form at N's warps and the matrix's own capacity (a larger one
// only holds fewer stages in flight; a smaller one refuses the matrix).
void UnstFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  for (UnstForm form : {UnstForm::kBitmap, UnstForm::kPairs}) {
    SpmmChoice ch;
    ch.Set(UnstChoice{unst_engine::FormWarps(form, p.n), 0, form});
    if (UnstFamilyCanRun(p, ch)) out->push_back(UnstFamilyName(ch));
  }
}

// Rank 15: after the 2:4 kernels (8-10), which take 2:4 matrices, and before the bitmap (20) and
// tensor-core (30) kernels and the CSR ones, which take what this one declines: unstructured
// f16/bf16 at N <= 64 on compute capability 9.0 where common/stream_plan.h's UnstStreamWins says
// so (density at least 15 / 7.5 / 5 % at N < 8 / 8-16 / above). The form by UnstPairsWins: the pair stream where
// sparsity is at least 60 % (measured faster at 70 and 90 %), the bitmap stream below.
bool SelectUnstFamily(const SpmmProblem& p, int, SpmmChoice* ch) {
  const UnstForm form = UnstPairsWins(p.m, p.k, p.nnz) ? UnstForm::kPairs : UnstForm::kBitmap;
  SpmmChoice mine;
  mine.Set(UnstChoice{unst_engine::FormWarps(form, p.n), 0, form});
  if (p.structure != SpmmProblem::kUnstructured || !UnstFamilyCanRun(p, mine) ||
      !UnstStreamWins(p.m, p.k, p.nnz, p.n))
    return false;
  *ch = mine;
  return true;
}

cudaError_t UnstPrepare(const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream,
                        std::unique_ptr<SpmmOperand>* out, std::string* why) {
#if defined(SPARSE_SM90A)
  const cudaError_t e = RaiseSmemLimits();
  if (e != cudaSuccess) return e;
#endif
  const UnstChoice c = ch.Get<UnstChoice>();
  const std::string name = UnstFamilyName(ch);
  const bool pairs = c.form == UnstForm::kPairs;
  auto build = [&](int m, int k, const int* row_offsets, const int* cols, const uint16_t* values, UnstStream* s) {
    const int limit = c.cap != 0 ? unst_engine::CapacityWords(c.form, c.cap, c.warps) : 0;
    const std::string err = BuildUnstStream(m, k, row_offsets, cols, values, c.warps, kKStage, limit, s,
                                            pairs ? UnstLayout::kPairFrag : UnstLayout::kBitmapFrag);
    if (err.empty() || c.cap == 0) return err;
    return name + ": " + err + " (ube_" + (pairs ? "p" : "w") + std::to_string(c.warps) +
           " picks the smallest capacity that holds it)";
  };
  return PrepareStreamOperandWith<UnstEngineMatrix, UnstStream>(p, stream, build, out, why, p.n, c.warps, c.cap,
                                                                c.form);
}

cudaError_t UnstLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* op, int, cudaStream_t stream) {
  if (!UnstFamilyCanRun(p, ch) || op == nullptr) return cudaErrorInvalidValue;
#if defined(SPARSE_SM90A)
  const UnstEngineMatrix& a = *static_cast<const UnstEngineMatrix*>(op);
  const int box = BoxColumns(p.n);
  if (a.m() != p.m || a.k() != p.k || a.dtype() != p.dtype || box > a.box_n() || !a.Serves(ch))
    return cudaErrorInvalidValue;
  e::Args args{};
  args.a0 = a.data(), args.a1 = a.offsets(), args.b = p.b, args.c = p.c;
  args.ws = a.ws(), args.counters = a.counters();
  args.m = p.m, args.k = p.k, args.n = p.n;
  args.strips = (p.m + 15) / 16, args.ksteps = (p.k + 15) / 16;
  args.row_blocks = a.row_blocks(), args.kstages = a.kstages();
  args.total = static_cast<long long>(a.row_blocks()) * a.kstages();
  const StreamPlan& plan = a.PlanOf(box);
  args.fixup = e::kFixupSlots, args.slots = a.Slots(), args.cluster = plan.cluster;
  // B for wgmma: a tensor copy (N = 16, 32, 64), copied whole (N = 8), or for N % 8 != 0 copied as
  // it is and laid out by the consumers (kBWgRows). K in order (no rotation: not measured here).
  const cudaError_t err = engine_host::SetupB(&args, p.b, p.n, p.k, kKStage, true);
  if (err != cudaSuccess) return err;
  const KernelRef r = KernelFor(p.dtype, a.form(), a.cap(), box);
  return engine_host::LaunchPlanned(r.fn, plan, r.threads, r.smem, stream, args);
#else
  (void)stream;
  return cudaErrorInvalidValue;
#endif
}

// NOTE: a family has one form in words (the bench's "... built once" note); which of the two a
// variant reads is its name's (ube_w: the bitmap stream, ube_p: the pair stream; TypeScript's
// spmmVariantForm).
const SpmmFamily kUnstEngineFamily = {
    "ube",
    "ube_(w[48](_c(16|32|88|144|256))?|p8(_c(16|32|72|100|128))?)",
    15,
    SelectUnstFamily,
    ParseUnstFamily,
    UnstFamilyName,
    UnstFamilyCanRun,
    UnstFamilyVariants,
    "bitmap or pair stream",
    UnstPrepare,
    UnstLaunch,
};

}  // namespace

StreamPlan unst_engine::PlanFor(DType t, UnstForm form, int cap, int box_n, int row_blocks, int kstages) {
#if defined(SPARSE_SM90A)
  const KernelRef r = KernelFor(t, form, cap, box_n);
  return UnstStreamPlan(row_blocks, kstages, engine_host::ResidentClusters(r.fn, r.threads, r.smem, 1));
#else
  (void)t, (void)form, (void)cap, (void)box_n, (void)row_blocks, (void)kstages;
  return StreamPlan{1, 0};
#endif
}

SPARSE_SPMM_FAMILY(kUnstEngineFamily);

}  // namespace sparse
