// The 2:4 family on the streaming engine (stream_engine.cuh, format TwoFourWg): decode-sized
// N (1 to 64; N % 8 != 0 moves B's rows unpadded, laid out by the consumers, or with
// SPARSE_S24E_PAD copies B into a buffer of its box's columns first) on Hopper,
// warpgroup MMA (wgmma.mma_async.sp) from a ring of bulk copies, over (row block, K stage)
// as common/stream_plan.h plans it: one block per row block, split-K in clusters, or
// stream-K. Its prepared operand is the 2:4 tiles staged once per matrix (StageSp24Tiles: one
// contiguous run per stage), the plans and the fixup's workspace.
//
// This file is compiled for sm_90a only (native/scripts/nvcc.cjs, from the "_sm90a" in its
// name; SPARSE_SM90A is then defined): wgmma runs on compute capability 9.0 and nowhere else.
// A build without sm_90 keeps the table entry, which then runs nothing (can_run: false).
//
// Variants "s24e_w8_k256": 8 consumer warps (two warpgroups: 128 rows per row block), and
// "s24e_w4_k256": 4 (one warpgroup: 64 rows), K stages of 256 columns; the instruction's N is
// N rounded up to 8 / 16 / 32 / 64 (C's columns past N are neither read nor written). Each has
// a kernel of its own for N = 1, which reads B's K halves as they are (no padding to 8 on the
// wire, no layout by the consumers).
// The row-block height is the operand's layout: a prepared operand serves the variant it was
// prepared for (Serves), and each variant prepares its own.
// The selection picks the engine over the mma.sp 2:4 kernel (rank 10) by SelectEngineFamily's
// rule, and w4 over w8 by common/stream_plan.h's Stream24Rows64.
//
// A prepared operand holds one workspace: launches on it run one at a time (stream order).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/env.h"
#include "common/gemm_plan.h"
#include "common/sparse24.h"
#include "common/stream_plan.h"
#include "cuda/common/device_buffer.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_family.h"
#include "cuda/spmm/spmm_stream.h"
#if defined(SPARSE_SM90A)
#include "cuda/spmm/stream_engine_host.h"
#endif

namespace sparse {
namespace engine24 {

constexpr int kKStage = kStream24KStage;  // K columns per stage
constexpr int kMaxN = 64;

// The configuration: consumer warps, 8 (two warpgroups, 128-row blocks) or 4 (one, 64 rows).
struct EngineChoice {
  int warps;
};

// The instruction's N for a problem's N: N rounded up to 8, 16, 32 or 64 (common/stream_plan.h).
inline int BoxColumns(int n) { return StreamBoxColumns(n); }
// The kernels by instruction N (8, 16, 32, 64): index 0..3.
inline int KernelIndex(int box_n) { return box_n == 8 ? 0 : box_n == 16 ? 1 : box_n == 32 ? 2 : 3; }
// The launch plan of the kernel for (dtype, consumer warps, instruction N) on the current
// device (defined with the kernels; stream-K on one block without sm_90a code, which never
// launches).
StreamPlan PlanFor(DType t, int warps, int box_n, int row_blocks, int kstages);

// How a launch reads B at N narrower than its box: SPARSE_S24E_PAD (common/stream_plan.h's
// Stream24PadOf), read once.
inline Stream24Pad PadMode() {
  static const Stream24Pad mode = Stream24PadOf(std::getenv("SPARSE_S24E_PAD"));
  return mode;
}

// The staged 2:4 tiles (row blocks of 16 x warps rows), the fixup's slots (sized for the
// instruction N of the N it was prepared for: launches up to that N run), the row blocks'
// counters (zero between launches) and, prepared for an N up to which some N pads
// (Stream24PadsUpTo: by default N > 32, or N > 16 on 64-row blocks), a K x instruction-N buffer
// that a launch at N narrower than its box copies B into (Stream24PadColumns, common/stream_plan.h).
class Sp24EngineMatrix : public SpmmOperand {
 public:
  // For launches up to N = n with `warps` consumer warps (PrepareStreamOperand's Upload).
  cudaError_t Upload(const Sp24Tiles& t, DType dtype, cudaStream_t stream, int n, int warps) {
    m_ = t.m, k_ = t.k, strips_ = t.strips, ksteps_ = t.ksteps, dtype_ = dtype, box_n_ = BoxColumns(n);
    warps_ = warps;
    row_blocks_ = Stream24RowBlocks(t.m, warps);
    kstages_ = Stream24KStages(t.k);
    // A plan per kernel it may launch (N up to the prepared one): their shared memory, and
    // so how many run at once, differ.
    for (int box = 8; box <= box_n_; box *= 2)
      plans_[KernelIndex(box)] = PlanFor(dtype, warps, box, row_blocks_, kstages_);
    const std::vector<uint8_t> staged = StageSp24Tiles(t, warps, kKStage / 32);
    cudaError_t e = staged_.Upload(staged.data(), staged.size(), stream);
    if (e == cudaSuccess) e = AllocateWorkspace(stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  }
  cudaError_t CopyFrom(const Sp24EngineMatrix& o, cudaStream_t stream) {
    m_ = o.m_, k_ = o.k_, strips_ = o.strips_, ksteps_ = o.ksteps_, dtype_ = o.dtype_, box_n_ = o.box_n_;
    warps_ = o.warps_, row_blocks_ = o.row_blocks_, kstages_ = o.kstages_;
    std::copy(o.plans_, o.plans_ + 4, plans_);
    cudaError_t e = CopyParts({{&staged_, &o.staged_}}, stream);
    if (e == cudaSuccess) e = AllocateWorkspace(stream);
    return e;
  }
  size_t Bytes() const override { return staged_.bytes() + ws_.bytes() + counters_.bytes() + pad_.bytes(); }
  cudaError_t Clone(std::unique_ptr<SpmmOperand>* out, cudaStream_t stream) const override {
    return CloneOperand(*this, out, stream);
  }
  // The layout is the row-block height: only the variant of the same warps reads it.
  bool Serves(const SpmmChoice& ch) const override { return ch.Get<EngineChoice>().warps == warps_; }
  // The launch at instruction N box_n (<= box_n()), planned on the device it was prepared
  // on; the fixup's slots are counted for the largest stream-K grid of the plans.
  const StreamPlan& PlanOf(int box_n) const { return plans_[KernelIndex(box_n)]; }
  int Slots() const { return slots_; }

  const void* staged() const { return staged_.get(); }
  float* ws() const { return ws_.as<float>(); }
  int* counters() const { return counters_.as<int>(); }
  // B padded to the instruction N (K x box_n() halves), or null where no N up to the prepared
  // one pads on this operand's kernel (Stream24PadsUpTo).
  void* pad() const { return pad_.get(); }
  int m() const { return m_; }
  int k() const { return k_; }
  int strips() const { return strips_; }
  int ksteps() const { return ksteps_; }
  int warps() const { return warps_; }
  int row_blocks() const { return row_blocks_; }
  int kstages() const { return kstages_; }
  DType dtype() const { return dtype_; }
  int box_n() const { return box_n_; }

 private:
  cudaError_t AllocateWorkspace(cudaStream_t stream) {
    slots_ = 1;
#if defined(SPARSE_SM90A)
    for (int box = 8; box <= box_n_; box *= 2) {
      const StreamPlan& pl = PlanOf(box);
      if (pl.cluster == 0) slots_ = std::max(slots_, engine_host::MaxSlots(row_blocks_, kstages_, pl.grid));
    }
#endif
    const size_t rows = 16 * static_cast<size_t>(warps_);
    cudaError_t e = ws_.Allocate(static_cast<size_t>(row_blocks_) * slots_ * rows * box_n_ * sizeof(float));
    if (e == cudaSuccess) e = counters_.Allocate(static_cast<size_t>(row_blocks_) * sizeof(int));
    if (e == cudaSuccess) e = cudaMemsetAsync(counters_.get(), 0, counters_.bytes(), stream);
    // Written whole by each padded launch (PadB): no contents to keep.
    if (e == cudaSuccess && Stream24PadsUpTo(box_n_, PadMode(), 16 * warps_))
      e = pad_.Allocate(static_cast<size_t>(k_) * box_n_ * 2);
    return e;
  }

  DeviceBuffer staged_, ws_, counters_, pad_;
  int m_ = 0, k_ = 0, strips_ = 0, ksteps_ = 0, warps_ = 8, row_blocks_ = 0, kstages_ = 0, slots_ = 1, box_n_ = 8;
  StreamPlan plans_[4] = {{1, 0}, {1, 0}, {1, 0}, {1, 0}};
  DType dtype_ = DType::kF16;
};

}  // namespace engine24

namespace {

using engine24::kKStage;
using engine24::BoxColumns;
using engine24::EngineChoice;
using engine24::kMaxN;
using engine24::PadMode;
using engine24::Sp24EngineMatrix;

#if defined(SPARSE_SM90A)
namespace e = cuda::engine;

// w8's ring: three stages at every instruction N (120 / 132 / 156 / 204 KB at N = 8 / 16 / 32 /
// 64), that is 108 KB of A in flight per SM. More is slower, not faster: against 5 stages at
// N = 8, three were as fast on 11008 x 4096 and 3-11 % faster on the five other shapes measured
// (the suite's and the held-out 14336 x 4096, 4096 x 14336, 6144 x 4096; graph, v15 call 3);
// against 4 at N = 16, 4-8 % faster on all six; and at N = 64 three beat two
// by 1.10-1.15x (v14 call 3). Little's law: 108 KB per SM at about 2 us of loaded latency is
// 54 GB/s per SM, 4.6 TB/s over 86 SMs, the HBM's peak; a deeper ring only lengthens the queue.
// w4's: a 200 KB ring (8 / 7 / 5 / 4 stages of 64 rows at N = 8 / 16 / 32 / 64), one block
// per SM; on the shapes where the selection runs w4 (4096^2, 2048 / 3072 x 4096, 4096 x 2048)
// three-stage rings were as fast or slower (workbench, v17-v18).
constexpr int kRingStages8 = 3;
constexpr int kRingKB4 = 200;
template <int kWarps, int kNT8>
constexpr int kBudgetKB =
    kWarps == 8 ? kRingStages8 * e::Engine<e::TwoFourWg, DType::kF16, 8, 1, kNT8, kKStage, 1024>::kStageBytes / 1024
                : kRingKB4;

// The ring slots a launch keeps in use (Args::ring): all of them, or SPARSE_S24E_RING's R (A/B
// runs; 0: all). v42 on an H100: w8 on stream-K plans (132 blocks, 14.3 MB of A in flight with
// three slots) streams its equal shares unevenly across SMs, and two slots even that out in the
// workbench (0.96-0.99x the time on 20480 and 28672 x 4096, no PDL); in the addon two slots were
// 0.996x the events time and 1.004x the graph time (PDL) over 20480, 24576 and 28672 x 4096 at N
// 8-64: not taken. v43 on the H200 (the same A/B): two slots 0.975x as fast in events, 0.968x in
// a graph. The switch stays for A/B runs.
inline int RingOf() {
  static const int ring = [] {
    int r = 0;
    EnvInt("SPARSE_S24E_RING", &r);
    return r;
  }();
  return ring;
}

// The stages past the ring whose A a launch of `plan` over `row_blocks` x `kstages` at N keeps in
// flight into L2 (Args::l2_ahead): common/stream_plan.h's Stream24L2Ahead, or SPARSE_S24E_L2_AHEAD's D where it
// is set (A/B runs; 0: none).
inline int L2AheadOf(const StreamPlan& plan, int row_blocks, int kstages, int n) {
  static const int forced = [] {
    int d = 0;
    return EnvInt("SPARSE_S24E_L2_AHEAD", &d) ? std::max(0, d) : -1;
  }();
  return forced >= 0 ? forced : Stream24L2Ahead(plan, row_blocks, kstages, n, PeakDramGBps());
}

// B (K x N halves, row-major) into `pad` (K x box halves, box = 8 cpr), columns N .. box - 1
// zero: one 16-byte store a thread, every column written (an earlier launch at a larger N left
// its columns there). It is launched with programmatic dependent launch where the engine is
// (LaunchWithPdl: in bench's graph by default), so that the chain stays as overlapped as the
// engine's launches alone: each block first lets the engine launch (its producers stream A,
// which no kernel writes, and wait for this grid to complete before reading the buffer:
// GridDependencyWait), then waits for the kernel before it (which may write B, and whose engine
// launch may still read this buffer) before it reads B or writes the buffer.
// SPARSE_S24E_PAD_PDL=off launches it plainly (for A/B runs). Measured (v45, H100, same run,
// on ÷ off, 4096^2, 4096 x 11008, 11008 x 4096, 14336 x 4096): graph time 0.88-0.99 at the
// padded N 33, 47, 63 (geomean 0.928-0.940), events 0.97-1.02 (no PDL there), N = 64 (no copy)
// 0.997-1.002; v44 had found the plainly launched copy costing N = 64's graph time plus 4-8 us.
__global__ void PadBKernel(const unsigned short* __restrict__ b, uint4* __restrict__ pad, int n, int k, int cpr, int pdl) {
  if (pdl) {
    e::GridDependencyLaunch();
    e::GridDependencyWait();
  }
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(k) * cpr) return;
  const long long row = i / cpr;
  const int c0 = static_cast<int>(i - row * cpr) * 8;
  const unsigned short* src = b + row * n;
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int c = c0 + 2 * j;
    const uint32_t lo = c < n ? src[c] : 0u, hi = c + 1 < n ? src[c + 1] : 0u;
    w[j] = lo | hi << 16;
  }
  pad[i] = make_uint4(w[0], w[1], w[2], w[3]);
}
inline bool PadWithPdl() {
  static const bool on = !EnvIs("SPARSE_S24E_PAD_PDL", "off");
  return on;
}
cudaError_t PadB(const void* b, void* pad, int n, int k, int box, cudaStream_t stream) {
  const int cpr = box / 8;
  const long long chunks = static_cast<long long>(k) * cpr;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>((chunks + 255) / 256)), cfg.blockDim = dim3(256), cfg.stream = stream;
  cudaLaunchAttribute at[1];
  const int pdl = PadWithPdl() && engine_host::LaunchWithPdl(stream) ? 1 : 0;
  if (pdl) cfg.attrs = at, cfg.numAttrs = engine_host::AppendPdlAttribute(at, 0);
  return cudaLaunchKernelEx(&cfg, PadBKernel, static_cast<const unsigned short*>(b), static_cast<uint4*>(pad), n, k, cpr, pdl);
}

struct KernelRef {
  void (*fn)(e::Args);
  int smem, threads;
};
template <class F, DType kType, int kWarps, int kNT8>
KernelRef RefOf() {
  using E = e::Engine<F, kType, kWarps, 1, kNT8, kKStage, kBudgetKB<kWarps, kNT8>>;
  return KernelRef{&e::StreamKernel<F, kType, kWarps, 1, kNT8, kKStage, kBudgetKB<kWarps, kNT8>>, E::kSmemBytes,
                   E::kThreads};
}
// A dtype's and a warp count's kernels: [0, 4) by instruction N 8 / 16 / 32 / 64
// (engine24::KernelIndex), and kK1Kernel, N = 1's: TwoFourWgK1 (B read as it is, through a
// K-major descriptor; SetupB's k_major_n1), with the ring, shared memory and threads of
// instruction N 8's, and so its plan (w4's since v19; before, w4 ran N = 1 on its instruction
// N 8 kernel, whose consumers lay B's row out every stage).
// Workbench v17 (events, no L2 flush and flushed, against instruction N 8's kernel at N = 1,
// whose consumers lay B's rows out every stage): 4-11 % faster on five of the six shapes
// measured (11008 x 4096 20.3 -> 18.0 us, 4096^2 13.3 -> 12.3, flushed), as fast on 14336 x 4096.
constexpr int kKernels = 5, kK1Kernel = 4;
template <DType kType, int kWarps>
const KernelRef* TableOf() {
  using W = e::TwoFourWg;
  using K1 = e::TwoFourWgK1;
  static const KernelRef t[kKernels] = {RefOf<W, kType, kWarps, 1>(), RefOf<W, kType, kWarps, 2>(),
                                        RefOf<W, kType, kWarps, 4>(), RefOf<W, kType, kWarps, 8>(),
                                        RefOf<K1, kType, kWarps, 1>()};
  return t;
}
const KernelRef* KernelsOf(DType t, int warps) {
  if (t == DType::kBF16) return warps == 4 ? TableOf<DType::kBF16, 4>() : TableOf<DType::kBF16, 8>();
  return warps == 4 ? TableOf<DType::kF16, 4>() : TableOf<DType::kF16, 8>();
}
// The kernel for a dtype, a warp count and an instruction N of 8 nt8 (1, 2, 4, 8), or N = 1's (k1).
KernelRef KernelFor(DType t, int warps, int nt8, bool k1 = false) {
  return KernelsOf(t, warps)[k1 ? kK1Kernel : engine24::KernelIndex(8 * nt8)];
}
// Every kernel's shared-memory limit raised once (outside any graph capture: at prepare).
cudaError_t RaiseSmemLimits() {
  static const cudaError_t result = [] {
    for (DType t : {DType::kF16, DType::kBF16})
      for (int warps : {4, 8})
        for (int i = 0; i < kKernels; ++i) {
          const KernelRef& r = KernelsOf(t, warps)[i];
          const cudaError_t e = cudaFuncSetAttribute(r.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, r.smem);
          if (e != cudaSuccess) return e;
        }
    return cudaSuccess;
  }();
  return result;
}
#endif

bool ParseEngineFamily(const char* name, SpmmChoice* ch) {
  int warps = 0;
  if (std::strcmp(name, "s24e_w8_k256") == 0) warps = 8;
  if (std::strcmp(name, "s24e_w4_k256") == 0) warps = 4;
  if (warps == 0) return false;
  ch->Set(EngineChoice{warps});
  return true;
}
std::string EngineFamilyName(const SpmmChoice& ch) {
  return ch.Get<EngineChoice>().warps == 4 ? "s24e_w4_k256" : "s24e_w8_k256";
}

bool EngineFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  const int warps = ch.Get<EngineChoice>().warps;
  return p.structure == SpmmProblem::k24 && (p.dtype == DType::kF16 || p.dtype == DType::kBF16) && p.m >= 1 &&
         p.k >= 1 && p.n >= 1 && p.n <= kMaxN && (warps == 4 || warps == 8) && Aligned(p.b, 16) && Aligned(p.c, 4) &&
         SPARSE_SM90A_CAN_RUN();
}

void EngineFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  for (int warps : {8, 4}) {
    SpmmChoice ch;
    ch.Set(EngineChoice{warps});
    if (EngineFamilyCanRun(p, ch)) out->push_back(EngineFamilyName(ch));
  }
}

// Rank 9, before the mma.sp 2:4 kernel (rank 10, which takes what this one declines): the
// engine where common/stream_plan.h's Stream24Wins says it is the faster, with 64-row blocks
// (w4) where Stream24Rows64 says so of w4's plan on this device, else 128 (w8). Planning needs
// the kernels' shared-memory limits raised; where that fails, w8. Not below 2.5 % dense
// (DenseWorkPays, common/gemm_plan.h).
bool SelectEngineFamily(const SpmmProblem& p, int, SpmmChoice* ch) {
  SpmmChoice mine;
  mine.Set(EngineChoice{8});
  if (!EngineFamilyCanRun(p, mine) || !Stream24Wins(p.m, p.k, p.n) || !DenseWorkPays(p.m, p.k, p.nnz)) return false;
  bool rows64 = false;
#if defined(SPARSE_SM90A)
  if (RaiseSmemLimits() == cudaSuccess) {
    const int row_blocks = Stream24RowBlocks(p.m, 4), kstages = Stream24KStages(p.k);
    const StreamPlan w4 = engine24::PlanFor(p.dtype, 4, BoxColumns(p.n), row_blocks, kstages);
    rows64 = Stream24Rows64At(w4, row_blocks, kstages, p.n, PadMode());
  }
#endif
  ch->Set(EngineChoice{rows64 ? 4 : 8});
  return true;
}

cudaError_t EnginePrepare(const SpmmProblem& p, const SpmmChoice& ch, cudaStream_t stream,
                          std::unique_ptr<SpmmOperand>* out, std::string* why) {
#if defined(SPARSE_SM90A)
  const cudaError_t e = RaiseSmemLimits();
  if (e != cudaSuccess) return e;
#endif
  return PrepareStreamOperand<Sp24EngineMatrix>(p, stream, BuildSp24Tiles, out, why, p.n,
                                                ch.Get<EngineChoice>().warps);
}

cudaError_t EngineLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* op, int, cudaStream_t stream) {
  if (!EngineFamilyCanRun(p, ch) || op == nullptr) return cudaErrorInvalidValue;
#if defined(SPARSE_SM90A)
  const Sp24EngineMatrix& a = *static_cast<const Sp24EngineMatrix*>(op);
  if (a.m() != p.m || a.k() != p.k || a.dtype() != p.dtype || BoxColumns(p.n) > a.box_n() || !a.Serves(ch))
    return cudaErrorInvalidValue;
  e::Args args{};
  args.a0 = a.staged(), args.a1 = nullptr, args.b = p.b, args.c = p.c;
  args.ws = a.ws(), args.counters = a.counters();
  args.m = p.m, args.k = p.k, args.n = p.n;
  args.strips = a.strips(), args.ksteps = a.ksteps();
  args.row_blocks = a.row_blocks(), args.kstages = a.kstages();
  args.total = static_cast<long long>(a.row_blocks()) * a.kstages();
  const StreamPlan& plan = a.PlanOf(BoxColumns(p.n));
  args.fixup = e::kFixupSlots, args.slots = a.Slots(), args.cluster = plan.cluster;
  // N = 1: B (K x 1) is one contiguous run of K halves, read as it is (kBWgK1).
  const bool k1 = p.n == 1;
  // Where SPARSE_S24E_PAD pads (Stream24PadColumns; by default N 33-63 not a multiple of 8, and
  // N 17-31 not one on the 64-row kernel, v44): B copied
  // into the operand's buffer of the box's columns first, streamed as at N = box; args.b stays
  // the user's B (the exact re-sums of non-finite sums read it) and args.n N (C's stores). Else
  // N = 24, 40, 56 and N % 8 != 0: B's rows laid out by the consumers (SetupBRead's
  // rows_partial_sectors).
  const int pad = Stream24PadColumns(p.n, PadMode(), 16 * a.warps());
  cudaError_t err;
  if (pad != 0 && a.pad() != nullptr) {
    err = PadB(p.b, a.pad(), p.n, p.k, pad, stream);
    if (err == cudaSuccess) err = engine_host::SetupB(&args, a.pad(), pad, p.k, kKStage, true);
  } else {
    err = engine_host::SetupB(&args, p.b, p.n, p.k, kKStage, true, 0, k1, true);
  }
  if (err != cudaSuccess) return err;
  const int nt8 = BoxColumns(p.n) / 8;
  // N = 16 (B's tensor copy of a 16-column box: 256 rows of 32 bytes a stage, one L2 request
  // each, not merged across SMs): every block walks its share of K from a stage of its own
  // (StageOf), so that the ring's first fill does not have every block ask for the same stage's
  // 8 KB of B at once (v21: stages 1-3 of that fill arrived 0.3-0.5 us late; v22: rotated, 0.95x
  // the time on the workbench, ten cases, and 0.97x in the addon, six shapes). Not at N = 8, 32
  // or 64, whose B comes in longer rows or one run: rotated, 1.04x the time there (24 cases, v22).
  args.rotate = args.b_read == e::kBTma && nt8 == 2 ? 1 : 0;
  // Split-K clusters of 2 (4096^2 and 4096 x 11008 on w4, 6144 x 4096 on w8, N 1-64): the
  // partners' sums meet by ClusterPush, one st.async message instead of two cluster barriers
  // and a round trip of remote reads (v27 workbench, 36 cases: 0.95-0.98x the time where
  // clusters of 2 run, unchanged elsewhere).
  args.push = plan.cluster == 2 ? 1 : 0;
  // Stream-K plans (more row blocks than resident blocks: w8 past M = 16896): a range whose last
  // segment heads a row block shared with one other block loads that block's sums at the
  // segment's start instead of after its own last stage (v27 workbench: 0.97-0.99x the time on
  // 28672 x 4096 and 20480 x 4096; the kernel ignores it on the other plans).
  args.prefetch = 1;
  args.ring = RingOf();
  args.l2_ahead = L2AheadOf(plan, a.row_blocks(), a.kstages(), p.n);
  const KernelRef r = KernelFor(p.dtype, a.warps(), nt8, k1);
  return engine_host::LaunchPlanned(r.fn, plan, r.threads, r.smem, stream, args);
#else
  (void)stream;
  return cudaErrorInvalidValue;
#endif
}

const SpmmFamily kSp24EngineFamily = {
    "s24e", "s24e_w[48]_k256", 9, SelectEngineFamily, ParseEngineFamily, EngineFamilyName, EngineFamilyCanRun,
    EngineFamilyVariants, "2:4 tiles, staged", EnginePrepare, EngineLaunch,
};

}  // namespace

// SPARSE_S24E_PLAN=streamk (A/B runs, v49): every launch planned as stream-K over all the blocks
// that fit at once (or one block an item where the items are fewer), whatever PlanStream would
// choose; the selection's w4 / w8 choice follows from that plan (Stream24Rows64: w8 on stream-K).
// The question it answers: on the H200 the one-block-per-row-block plans leave SMs idle (11008 x
// 4096 on w8: 86 blocks of 132, each streaming 53 GB/s, v49), and a plan over every SM pays a
// fixup. Unset, or any other value: PlanStream (common/stream_plan.h).
inline bool PlanStreamKOnly() {
  static const bool streamk = EnvIs("SPARSE_S24E_PLAN", "streamk");
  return streamk;
}

StreamPlan engine24::PlanFor(DType t, int warps, int box_n, int row_blocks, int kstages) {
#if defined(SPARSE_SM90A)
  const KernelRef r = KernelFor(t, warps, box_n / 8);
  if (PlanStreamKOnly()) return PlanStreamK(row_blocks, kstages, engine_host::ResidentClusters(r.fn, r.threads, r.smem, 1));
  return engine_host::Plan(r.fn, r.threads, r.smem, row_blocks, kstages);
#else
  (void)t, (void)warps, (void)box_n, (void)row_blocks, (void)kstages;
  return StreamPlan{1, 0};
#endif
}

SPARSE_SPMM_FAMILY(kSp24EngineFamily);

}  // namespace sparse
