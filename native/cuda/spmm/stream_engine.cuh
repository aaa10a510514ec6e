#ifndef SPARSE_CUDA_SPMM_STREAM_ENGINE_CUH_
#define SPARSE_CUDA_SPMM_STREAM_ENGINE_CUH_
// The streaming engine for decode-sized N (N <= 64) on Hopper: C[M x N] = A[M x K] * B[K x N]
// where A is a weight stream in some format (a plug-in) and the product is bound by the bytes
// of A. Design (issue 23):
//   - one producer warp per block issues bulk asynchronous copies (cp.async.bulk, completion
//     counted in bytes on an mbarrier) of each stage: the format's runs of A for one row
//     block and one K range, and B's rows for that K range; a ring of kStages stages;
//   - kCW consumer warps wait on the stage's "full" barrier, compute with mma.sync from
//     shared memory, and release the stage on its "empty" barrier: no __syncthreads in the
//     main loop;
//   - the work is a flat list of (row block, K stage) pairs, row block major, cut into equal
//     contiguous ranges, one per block (stream-K): every SM streams the same number of bytes
//     whatever M and K; a row block cut between blocks is summed through an fp32 workspace:
//     each contributor but the last stores its sums in a slot of its own, the last (a counter
//     per row block tells) adds them to its sums, writes C and clears the counter for the
//     next launch;
//   - B is K x N row-major: a stage's B rows are one contiguous run, copied whole when its
//     16-byte rows are conflict-free for ldmatrix (N = 8 or N / 8 odd), else row by row into
//     rows padded by 16 bytes; N not a multiple of 8 is read element by element (the wgmma
//     formats: the consumers store its rows in the descriptor's layout, RowsB).
// A format supplies: kStageABytes(strips, kKS), the copies of one stage (Issue), and the
// compute of one warp on one stage (Compute). Device code only.
#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "common/divisor.h"
#include "common/dtype.h"
#include "common/stream_plan.h"
#include "cuda/common/mma.cuh"
#include "cuda/spmm/spmm_24_kernel.cuh"
#include "cuda/spmm/wgmma.cuh"

namespace sparse {
namespace cuda {
namespace engine {

// --- sm_90 primitives: mbarrier and bulk copies ----------------------------------------

__device__ __forceinline__ void MbarInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void MbarArriveExpectTx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void MbarArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void MbarWait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// MbarWait for a warp with nothing else to do (the signaller): sleeps between tries, so that
// its spinning takes no issue slots from the consumers.
__device__ __forceinline__ void MbarWaitSleep(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  for (;;) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (done) return;
    __nanosleep(256);
  }
}
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Weights are read once: evict them first, so B and the workspace stay in L2.
__device__ __forceinline__ uint64_t EvictFirstPolicy() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// `bytes` (a multiple of 16, both addresses 16-byte aligned) global -> shared, completing on `bar`.
__device__ __forceinline__ void BulkCopy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void BulkCopyHint(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar,
                                             uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}
// `bytes` (a multiple of 16, the address 16-byte aligned) of global memory into L2: no
// destination in shared memory, no completion to wait for (Args::l2_ahead).
__device__ __forceinline__ void BulkPrefetchL2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void NamedBarrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// --- the shape of one launch ------------------------------------------------------------

// How the consumers read B from a stage (chosen on the host from N).
enum BRead : int {
  kBLd = 0,      // ldmatrix.trans from contiguous rows of N halves (N % 8 == 0; conflict-free
                 // when N / 8 is odd)
  kBTma = 1,     // N = 16, 32, 64: one tensor copy whose rows are swizzled over 2 N bytes
                 // (the copy engine's 32/64/128-byte swizzle): ldmatrix.trans conflict-free
  kBScalar = 2,  // N % 8 != 0: element loads from contiguous rows of N halves
  kBWgRows = 3,  // wgmma formats, N % 8 != 0 (and the 2:4 engine's N = 24, 40, 56: SetupBRead):
                 // copied as kBScalar's contiguous rows of N halves, which the consumers lay out
                 // as kBTma's (N < 8: kBLd's) in place (RowsB)
  kBWgK1 = 4,    // wgmma formats, N = 1 (SetupB's k_major_n1): B's K halves copied as they are
                 // (kBLd's bulk copy and ragged end, no layout) and read through a K-major
                 // descriptor whose core matrices overlap (leading byte offset 16): row 0 of core
                 // matrix j is B's halves 8 j .. 8 j + 7, its rows 1-7 the 16-byte chunks after
                 // it, which reach only columns 1-7 of C (never stored); the last ones read up to
                 // 112 bytes past the stage's B, zeroed by StreamKernel at its start. The format
                 // TwoFourWgK1 (the addon's s24e at N = 1, v17)
};

struct Args {
  const void* a0;         // the format's first array (dense: the weights; 2:4: values)
  const void* a1;         // the format's second array (2:4: metadata), or null
  const void* b;          // K x N, row-major, 16-byte aligned
  void* c;                // M x N, row-major
  float* ws;              // row_blocks * slots slots of rows * 8 kNT8 kNG floats (partial sums)
  int* counters;          // row_blocks stage counts, all zero between launches
  int m, k, n;
  int strips, ksteps;     // the format's 16-row strips and k-steps (of kKStep columns)
  int row_blocks, kstages;
  long long total;        // row_blocks * kstages
  Divisor div_kstages;    // kstages, the grid and the cluster as multipliers (SetDivisors, at each
  Divisor div_grid;       // launch): the divisions on the producer's path to its first copy (the
  Divisor div_cluster;    // block's items, its first item's row block) as a multiply-high each
                          // instead of a division sequence (v51); unset (mul 0): divided
  int b_read;             // BRead
  int b_stride;           // bytes per B row in shared memory (2 N)
  int b_swizzle;          // kBTma: the swizzle's 16-byte-chunk mask (1, 3 or 7), else 0
  int b_cols;             // columns of B per staged row (kBTma: the box, N rounded up to 16/32/64
                          // for the wgmma formats; else N)
  unsigned long long b_desc;  // wgmma formats: B's matrix descriptor without its start address
  int fixup;              // Fixup
  int slots;              // kFixupSlots: the most blocks that share one row block
  int cluster;            // > 1: split-K in clusters of this many blocks (see StreamKernel); the
                          // grid is row_blocks x cluster, launched with that cluster size
  int push;               // 1 (with cluster == 2 and an Engine with kPushBytes): the split-K
                          // partners' sums meet by ClusterPush (each block sends half its warps'
                          // sums into its partner's shared memory with st.async) instead of
                          // ClusterReduce's two cluster barriers and remote reads. Workbench
                          // switch ENGINE_PUSH
  int rotate;             // 1: each block walks its share of a row block's K stages from a
                          // different stage (StageOf); 0: in order. The 2:4 engine sets it at
                          // N = 16 (spmm_24_engine_sm90a.cu): all blocks asking for one stage's
                          // B at once make the first fill late there (v22: rotated 0.97x the
                          // time); workbench switch ENGINE_ROTATE
  int lanes_arrive;       // 1: every lane of the producer and of each consumer warp arrives on the
                          // ring's barriers (full: 32, empty: 32 a consumer warp), each ordering
                          // its own shared-memory accesses; 0: lane 0 for its warp after
                          // __syncwarp. SetupB sets it (racecheck follows only the every-lane
                          // form, v15, v20); ENGINE_LANES=0 in the workbench for the other
  int a_first;            // 1: the first stages' A (the weights, which no kernel before this one
                          // writes) requested before any of their B, and B only after the wait
                          // for the previous kernel (GridDependencyWait): required when launched
                          // with programmatic dependent launch. 0: each stage's B right after its
                          // A, so that the first stage is whole before the ring's other A copies
                          // (without PDL the wait returns at once)
  int prefetch;           // 1: the sums of the one other contributor of the row block whose head
                          // ends this block's range are loaded into registers when that
                          // segment begins, if that contributor has counted its stages by then
                          // (PrefetchOther), so that the range's end adds them from registers
                          // instead of reading L2 after the last stage. Workbench switch
                          // ENGINE_PREFETCH; 0: read at the end
  int ring;               // the ring slots in use, 2 ... the kernel's kStages (0: all): a ring
                          // kept shorter than the shared memory allows, so that fewer of A's
                          // bytes are in flight per SM where many blocks stream at once (v42 on
                          // an H100: 132 blocks of w8 at N = 64 with 108 KB of A each in flight
                          // are served unevenly, 1.10-1.69 us a stage, and two slots even that
                          // out). Workbench switch ENGINE_RING; the addon: all, or
                          // SPARSE_S24E_RING (its A/B: within 1 % on an H100, v42; 0.975x as
                          // fast on the H200, v43: not taken)
  int rows_words;         // 1: RowsB reads rows of N halves, N % 8 != 0, a word at a time
                          // (PackRowWords: about half the shared loads) instead of a half at a
                          // time (PackRow). Workbench switch ENGINE_ROWS_WORDS (v42: checked on
                          // the host against PackRow for every N <= 64 and row; v43 on the H200:
                          // w8 no faster at N 33-63, w4 5-12 % faster but slower than w8 there:
                          // not taken); 0 in the addon
  int l2_ahead;           // D > 0: the producer keeps the A runs of the block's next D stages past
                          // the ring's newest in flight into L2 (cp.async.bulk.prefetch.L2; the
                          // tiled formats, HasStageRun): D of its own stages first, right after
                          // the ring's first fill, then one more with each stage it issues, so
                          // that the HBM streams while the consumers work through the first fill
                          // and a refill finds its bytes in L2. 0: none. Workbench switch
                          // ENGINE_L2_AHEAD; the addon's SPARSE_S24E_L2_AHEAD (v46)
  int skip_b;             // workbench experiment (ENGINE_SKIP_B=1; 0 in the addon): no copies
                          // of B at all, its stage areas zeroed once at the start (C is wrong):
                          // what moving B costs the stream
  CUtensorMap b_map;      // kBTma: B as an N x K tensor, box N x kKS
  // The workbench's trace (null elsewhere): per block kTraceWords stamps, see Trace.
  unsigned long long* trace;
  // The workbench's per-stage trace (null elsewhere): see StageTrace.
  unsigned long long* stage_trace;
};

template <int kKS, int kNT8>
struct BStage {
  // Bytes of B per stage: kKS rows of 8 kNT8 halves, a whole number of 1024-byte units (the
  // copy engine's swizzle repeats every 1024 bytes, from a 1024-byte aligned address).
  static constexpr int kBytes = (kKS * 16 * kNT8 + 1023) / 1024 * 1024;
};

__device__ __forceinline__ void TensorCopy2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// Asks for a tensor map's descriptor ahead of the first copy through it (the GEMM engine's
// producer; the workbench switch SPARSE_ENGINE_PREFETCH_MAP here).
__device__ __forceinline__ void PrefetchTensorMap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Stages B's rows [k0, k0 + kKS) into `dst` (rows past K zero): bulk copies for the aligned
// part, plain loads and stores for a ragged end. Returns the bytes the bulk copies bring
// (the same in every lane). All 32 lanes of the producer warp call it.
template <int kKS>
__device__ __forceinline__ uint32_t StageB(const Args& a, int k0, unsigned char* dst, uint32_t bar, int lane,
                                           bool issue) {
  if (a.skip_b) return 0;
  if (a.b_read == kBTma) {
    // One tensor copy of the box: rows past K arrive as zeros, and count.
    if (issue && lane == 0) TensorCopy2d(SmemAddr(dst), &a.b_map, 0, k0, bar);
    return static_cast<uint32_t>(kKS) * 2 * a.b_cols;
  }
  const int rows = min(kKS, a.k - k0);
  const unsigned short* b = static_cast<const unsigned short*>(a.b) + static_cast<int64_t>(k0) * a.n;
  // Contiguous rows of N halves (b_stride == 2 N).
  const int valid = rows * a.n * 2;            // bytes of B in range
  const int bulk = valid & ~15;                // 16-byte multiple: one bulk copy
  const int total = kKS * a.n * 2;
  if (issue) {
    if (lane == 0 && bulk > 0) BulkCopy(SmemAddr(dst), b, bulk, bar);
  } else {
    const unsigned char* src = reinterpret_cast<const unsigned char*>(b);
    for (int i = bulk + lane * 2; i < total; i += 64) {
      unsigned short v = 0;
      if (i < valid) v = *reinterpret_cast<const unsigned short*>(src + i);
      *reinterpret_cast<unsigned short*>(dst + i) = v;
    }
  }
  return static_cast<uint32_t>(bulk);
}

// Whether StageB moves the stage's B rows [k0, k0 + kKS) by bulk copies alone (no plain
// stores), and the bytes those copies bring.
template <int kKS>
__device__ __forceinline__ bool StageBBulkOnly(const Args& a, int k0) {
  if (a.skip_b) return true;
  if (a.b_read == kBTma) return true;
  if (a.b_read == kBScalar) return false;
  return k0 + kKS <= a.k;  // kBLd, kBWgRows: a whole stage of rows is kKS N halves, 16-byte multiples
}
template <int kKS>
__device__ __forceinline__ uint32_t StageBBulkBytes(const Args& a, int k0) {
  if (a.skip_b) return 0;
  if (a.b_read == kBTma) return static_cast<uint32_t>(kKS) * 2 * a.b_cols;
  return static_cast<uint32_t>(min(kKS, a.k - k0)) * a.n * 2 & ~15u;
}

// Plain shared-memory stores made visible to the tensor cores' reads (the async proxy:
// wgmma operands), before the barrier that publishes them.
__device__ __forceinline__ void FenceProxyAsync() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Shared-memory offset of B's row r, 16-byte chunk j (the copy engine's swizzle for kBTma).
__device__ __forceinline__ int BOffset(const Args& a, int r, int j) {
  const int off = r * a.b_stride + j * 16;
  return off ^ (((off >> 7) & a.b_swizzle) << 4);
}

// B with N % 8 != 0 for the wgmma formats (kBWgRows). Rows of N halves are not whole 16-byte
// units, so neither a tensor copy nor a bulk copy lays them out for the descriptor. The
// producer copies the stage's rows as they are (one contiguous run, as kBScalar; rows past K
// zero) into the stage's B area, and the kCW consumer warps lay them out there: thread t owns
// rows t, t + 32 kCW, ...; Read takes its rows into registers (two halves a word, zero past
// N), and after a barrier (every row read) Write stores them whole where kBTma's copy would
// (N < 8: as kBLd's rows of 16 bytes). Each expanded row lies within the area.
// One B row of n halves (n <= 2 kWords; 0: a row past K) packed two halves a word, zero past n.
template <int kWords>
__device__ __forceinline__ void PackRow(const unsigned short* row, int n, uint32_t (&v)[kWords]) {
#pragma unroll
  for (int w = 0; w < kWords; ++w) v[w] = 0;
#pragma unroll
  for (int c = 0; c < 2 * kWords; ++c)
    if (c < n) v[c >> 1] |= static_cast<uint32_t>(row[c]) << (16 * (c & 1));
}

// The same row, halves [first, first + n) of h, read a word at a time: a row of N halves starts
// at half N r, word-aligned where N r is even; else each word is the funnel shift of two. About
// half PackRow's shared loads (N / 2 + 1 against N), and at most one half past the row read (in
// the stage's B area, which is wider than its rows). Args::rows_words.
template <int kWords>
__device__ __forceinline__ void PackRowWords(const unsigned short* h, int first, int n, uint32_t (&v)[kWords]) {
  const uint32_t* w = reinterpret_cast<const uint32_t*>(h) + (first >> 1);
  const int odd = first & 1;
  uint32_t cur = n > 0 ? w[0] : 0u;
#pragma unroll
  for (int i = 0; i < kWords; ++i) {
    const uint32_t nxt = 2 * i + 2 < n + odd ? w[i + 1] : 0u;
    uint32_t o = odd ? __funnelshift_r(cur, nxt, 16) : cur;
    if (2 * i + 1 >= n) o &= 0xffffu;
    if (2 * i >= n) o = 0;
    v[i] = o;
    cur = nxt;
  }
}

template <int kKS, int kCW, int kNT8>
struct RowsB {
  static constexpr int kRows = (kKS + 32 * kCW - 1) / (32 * kCW);
  static constexpr int kWords = 4 * kNT8;
  uint32_t v[kRows][kWords];

  __device__ __forceinline__ void Read(const Args& a, const unsigned char* bs) {
    const unsigned short* h = reinterpret_cast<const unsigned short*>(bs);
    if ((a.n & 7) == 0) {
      // Rows of whole 16-byte units (N a multiple of 8 below the box): one 16-byte load a unit.
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int row = static_cast<int>(threadIdx.x) + r * 32 * kCW;
        const uint4* q = reinterpret_cast<const uint4*>(h + row * a.n);
#pragma unroll
        for (int j = 0; j < kNT8; ++j) {
          const uint4 x = row < kKS && 8 * j < a.n ? q[j] : make_uint4(0, 0, 0, 0);
          v[r][4 * j] = x.x, v[r][4 * j + 1] = x.y, v[r][4 * j + 2] = x.z, v[r][4 * j + 3] = x.w;
        }
      }
      return;
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = static_cast<int>(threadIdx.x) + r * 32 * kCW;
      if (a.rows_words) {
        PackRowWords(h, row * a.n, row < kKS ? a.n : 0, v[r]);
      } else {
        PackRow(h + row * a.n, row < kKS ? a.n : 0, v[r]);
      }
    }
  }
  __device__ __forceinline__ void Write(const Args& a, unsigned char* bs) const {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = static_cast<int>(threadIdx.x) + r * 32 * kCW;
      if (row >= kKS) continue;
#pragma unroll
      for (int j = 0; j < kNT8; ++j)
        *reinterpret_cast<uint4*>(bs + BOffset(a, row, j)) =
            make_uint4(v[r][4 * j], v[r][4 * j + 1], v[r][4 * j + 2], v[r][4 * j + 3]);
    }
  }
};

// A format's optional flag `member` as Trait<F>::value (false when F does not declare it).
#define SPARSE_ENGINE_FORMAT_FLAG(Trait, member)          \
  template <class F, class = void>                        \
  struct Trait {                                          \
    static constexpr bool value = false;                  \
  };                                                      \
  template <class F>                                      \
  struct Trait<F, decltype(void(F::member))> {            \
    static constexpr bool value = F::member;              \
  };

// Formats whose consumers multiply with wgmma from B's descriptor declare kWgB = true.
SPARSE_ENGINE_FORMAT_FLAG(HasWgB, kWgB)
// Formats that read B as kBWgK1 (N = 1) declare kBK1 = true.
SPARSE_ENGINE_FORMAT_FLAG(HasBK1, kBK1)
// Formats whose kernels run lean declare kLean = true: the per-stage trace hooks compiled out and
// the signaller sleeping between its waits' tries (the unstructured decodes: 0.96x the time,
// workbench v23-v24); the others keep them (SPARSE_ENGINE_LEAN: every format lean).
SPARSE_ENGINE_FORMAT_FLAG(HasLean, kLean)
// Formats whose stage (rb, ks) of A is one contiguous run of StageABytes at (rb kstages + ks)
// StageABytes of a0 (IssueStageRun) declare kStageRun = true: Args::l2_ahead prefetches those.
SPARSE_ENGINE_FORMAT_FLAG(HasStageRun, kStageRun)
#undef SPARSE_ENGINE_FORMAT_FLAG

// Where run (rb, ks) of kBytes starts in A (the kStageRun formats): copied by IssueStageRun,
// asked into L2 by the producer's prefetch (Args::l2_ahead).
template <int kBytes>
__device__ __forceinline__ const unsigned char* StageRunSrc(const Args& a, int rb, int ks) {
  return static_cast<const unsigned char*>(a.a0) + (static_cast<int64_t>(rb) * a.kstages + ks) * kBytes;
}

// Programmatic dependent launch (sm_90): both are no-ops in a kernel launched without it.
// Where a block's time goes (the workbench's `trace` mode): per block the global timer (ns,
// comparable across SMs) at entry and at the end, and the SM clock (cycles, finer) at entry,
// at the first stage's arrival, after the last stage, at the end, (6) when the partners'
// sums are ready (split-K clusters: after the first cluster barrier; stream-K: the last
// contributor, after the count's answer; a block with all of its row block's stages: after
// the Fix, before C), (7) when the producer warp enters its branch, (8) the SM the block
// ran on (%smid, TraceSm: which blocks of equal shares stream slower, by where they ran), and
// the start split by SM clock (stream-engine.md's step 3): (9) thread 0's first instruction,
// (10) its barriers set up (before __syncthreads), (11) the producer's lane 0 past
// __syncthreads, (12) the producer's first stage issued (its A's copies asked for); and the
// producer's path to that copy step by step (v50; its lane 0): (13) the block's items computed,
// before __syncthreads, (14) past the cluster arrival and the dependents' launch, (15) the
// cache policy, the ring and the item walk set up, (16) its first stage's coordinates and byte
// count, (17) the stage's arrival with that count made.
// One uniform branch per stamp when `trace` is null.
constexpr int kTraceWords = 18;
// SPARSE_ENGINE_LEAN (workbench experiment, v23): the traces compiled out and the signaller
// waiting with a back-off sleep instead of spinning.
#ifdef SPARSE_ENGINE_LEAN
constexpr bool kEngineLean = true;
#else
constexpr bool kEngineLean = false;
#endif
// SPARSE_ENGINE_SMEM_TRACE (workbench builds only; never the addon's): the per-stage stamps
// below kept in shared memory, 32-bit clocks from the block's base, and written out once at the
// consumers' end (StageTraceFlush), so that a traced stage costs a shared store instead of a
// global one on the producer's and the consumers' paths; and the lean kinds traced too (v26: the
// traced kinds' global stores slowed their producer, 0.65 us a stage against a bulk copy's 0.18).
#if defined(SPARSE_ENGINE_SMEM_TRACE)
constexpr bool kSmemTrace = true;
#else
constexpr bool kSmemTrace = false;
#endif
// SPARSE_ENGINE_NO_TRACE (the addon's build defines it, native/scripts/nvcc.cjs; the workbenches'
// do not): the stamps compiled out of every format, the signaller unchanged (SPARSE_ENGINE_LEAN
// also makes it sleep between its tries). With the stamps compiled in and the trace pointers null,
// each is still a branch on the producer's and the consumers' paths (the consumers' three a stage
// behind threadIdx.x == 0, which diverges inside warp 0): v52's A/B (an H100, 12 cases, two
// rounds) found them 3.1-3.4 % of the time in events and 4.2-4.3 % in CUDA graphs (0.91-0.99x per
// case; SPARSE_ENGINE_LEAN 0.962-0.964x / 0.958-0.959x, no better).
#if defined(SPARSE_ENGINE_NO_TRACE)
constexpr bool kNoTrace = true;
#else
constexpr bool kNoTrace = false;
#endif
template <bool kLean = kEngineLean>
__device__ __forceinline__ void Trace(const Args& a, int i) {
  if (kNoTrace || (kLean && !kSmemTrace) || a.trace == nullptr) return;
  unsigned long long t;
  if (i == 4 || i == 5) {
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  } else {
    t = clock64();
  }
  a.trace[blockIdx.x * kTraceWords + i] = t;
}
template <bool kLean = kEngineLean>
__device__ __forceinline__ void TraceSm(const Args& a) {
  if (kNoTrace || (kLean && !kSmemTrace) || a.trace == nullptr) return;
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
  a.trace[blockIdx.x * kTraceWords + 8] = sm;
}
// Where each stage's time goes (the workbench's `stages` mode): for a block's first
// kStageTraceMax stages, the SM clock when the producer issues stage s (word 3), and in the
// first consumer warp when it starts waiting for the stage (0), when the stage is there (1)
// and when the stage is computed and released (2). One uniform branch when null.
constexpr int kStageTraceMax = 64;
#if defined(SPARSE_ENGINE_SMEM_TRACE)
constexpr int kSmemTraceStages = 32;  // the first 32 stages of a block (of kStageTraceMax)
struct SmemTraceBuf {
  unsigned long long base;
  uint32_t t[kSmemTraceStages * 4];
};
__device__ __forceinline__ SmemTraceBuf& SmemTraceOf() {
  __shared__ SmemTraceBuf b;
  return b;
}
// Before the block's first __syncthreads: no stamps, and the base clock.
__device__ __forceinline__ void StageTraceStart(const Args& a) {
  if (a.stage_trace == nullptr) return;
  for (int i = threadIdx.x; i < kSmemTraceStages * 4; i += blockDim.x) SmemTraceOf().t[i] = 0;
  if (threadIdx.x == 0) SmemTraceOf().base = clock64();
}
// Thread 0 after the consumers' last stage (the producer's stamps were published with each
// stage's barrier arrival): the 64-bit clocks into the global trace.
__device__ __forceinline__ void StageTraceFlush(const Args& a, int stages) {
  if (a.stage_trace == nullptr) return;
  const SmemTraceBuf& b = SmemTraceOf();
  for (int i = 0; i < min(stages, kSmemTraceStages) * 4; ++i)
    if (b.t[i] != 0)
      a.stage_trace[static_cast<size_t>(blockIdx.x) * kStageTraceMax * 4 + i] =
          b.base + static_cast<uint32_t>(b.t[i] - static_cast<uint32_t>(b.base));
}
#else
__device__ __forceinline__ void StageTraceStart(const Args&) {}
__device__ __forceinline__ void StageTraceFlush(const Args&, int) {}
#endif
template <bool kLean = kEngineLean>
__device__ __forceinline__ void StageTrace(const Args& a, int s, int w) {
#if defined(SPARSE_ENGINE_SMEM_TRACE)
  if (a.stage_trace == nullptr || s >= kSmemTraceStages) return;
  SmemTraceOf().t[s * 4 + w] = static_cast<uint32_t>(clock64()) | 1u;  // never 0: 0 is no stamp
#else
  if (kNoTrace || kLean || a.stage_trace == nullptr || s >= kStageTraceMax) return;
  a.stage_trace[(static_cast<size_t>(blockIdx.x) * kStageTraceMax + s) * 4 + w] = clock64();
#endif
}
__device__ __forceinline__ void GridDependencyWait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void GridDependencyLaunch() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

// The B fragment of n-tile j for k rows [kr, kr + 16) of the stage (m16n8k16: b0, b1).
template <int kNT8>
__device__ __forceinline__ void BFrag16(const Args& a, const unsigned char* bs, int kr, int j, uint32_t& b0,
                                        uint32_t& b1) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  if (a.b_read != kBScalar) {
    LdMatrixX2T(SmemAddr(bs + BOffset(a, kr + (lane & 15), j)), b0, b1);
    return;
  }
  const int col = j * 8 + g;
  const unsigned short* h = reinterpret_cast<const unsigned short*>(bs);
  uint32_t v[4] = {0, 0, 0, 0};
  if (col < a.n) {
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = h[(kr + 2 * t + (i & 1) + 8 * (i >> 1)) * a.n + col];
  }
  b0 = v[0] | (v[1] << 16);
  b1 = v[2] | (v[3] << 16);
}

// The B fragment of n-tile j for k rows [kr, kr + 32) (m16n8k32: b[4]).
template <int kNT8>
__device__ __forceinline__ void BFrag32(const Args& a, const unsigned char* bs, int kr, int j, uint32_t (&bf)[4]) {
  const int lane = threadIdx.x & 31;
  if (a.b_read != kBScalar) {
    LdMatrixX4T(SmemAddr(bs + BOffset(a, kr + lane, j)), bf);
    return;
  }
  BFrag16<kNT8>(a, bs, kr, j, bf[0], bf[1]);
  BFrag16<kNT8>(a, bs, kr + 16, j, bf[2], bf[3]);
}

// --- the kernel -------------------------------------------------------------------------

// Block: kCW consumer warps and one producer warp (the last). Consumer warp w owns strips
// w kMS .. w kMS + kMS - 1 of each row block (16 kMS kCW rows).
// The ring takes as many stages as fit in kBudgetKB of shared memory (2..8).
// kNG: the n-tiles are split over kNG warps (each warp kNT8 of them, kNT8 kNG in all); the
// warps of one n-group own distinct strips.
template <class F, DType kType, int kCW, int kMS, int kNT8, int kKS, int kBudgetKB, int kNG = 1>
struct Engine {
  static_assert(kCW % kNG == 0, "whole n-groups");
  static constexpr int kStrips = kCW / kNG * kMS;
  static constexpr int kRows = 16 * kStrips;
  static constexpr int kABytes = F::template StageABytes<kStrips, kKS>();
  static constexpr int kBBytes = BStage<kKS, kNT8 * kNG>::kBytes;
  // A stage: B's rows first (1024-byte aligned), then the format's A.
  static constexpr int kStageBytes = (kBBytes + kABytes + 1023) / 1024 * 1024;
  static constexpr int kFit = kBudgetKB * 1024 / kStageBytes;
  static constexpr int kStages = kFit < 2 ? 2 : kFit > 8 ? 8 : kFit;
  // The ring and its barriers.
  static constexpr int kRingBytes = kStages * kStageBytes + 2 * kStages * 8;
  // ClusterPush's area after the ring's barriers: its mbarrier (16 bytes) and the partner's
  // sums of half the consumer warps (kPushSums bytes). Only in the one-block-per-SM engines (a
  // ring of 120 KB or more: the 2:4 engine's), so that the smaller rings keep their blocks per
  // SM, and only where it fits beside the ring within 226 KB (room for the static shared memory).
  static constexpr int kPushSums = (kCW / 2) * kMS * kNT8 * 512;
  static constexpr int kPushBytes =
      kBudgetKB >= 120 && kNG == 1 && kCW % 2 == 0 && kRingBytes + 16 + kPushSums + 1024 <= 226 * 1024 ? 16 + kPushSums
                                                                                                      : 0;
  // Everything, and room to align the dynamic shared memory to 1024 bytes.
  static constexpr int kSmemBytes = kRingBytes + kPushBytes + 1024;
  static constexpr int kThreads = 32 * (kCW + 2);
  static_assert(kABytes % 128 == 0, "stage A bytes keep 128-byte alignment");
};

// How partial sums of a row block cut between blocks meet (Args::fixup).
enum Fixup : int {
  kFixupSlots = 0,  // each contributor that is not the last stores its sums (plain, coalesced,
                    // in fragment order) in its own slot; the last adds them to its own
  kFixupDrop = 2,   // timing experiments only: partial sums are dropped, and a row block's
                    // whole sums are not stored (C is wrong)
};

// The block (of `grid`, ranges cut as in StreamKernel: block b holds [total b / grid,
// total (b + 1) / grid)) whose range holds item x. The host counts the fixup's slots with it.
__host__ __device__ __forceinline__ int BlockOf(long long x, long long total, int grid) {
  return static_cast<int>(((x + 1) * grid - 1) / total);
}

// Floats of one contributor's slot: every consumer warp's fragments.
template <int kCW, int kMS, int kNT8>
constexpr int SlotFloats() {
  return kCW * kMS * kNT8 * 128;
}

// Stores one warp's sums of strip ms (fragment f) of row block rb to C.
template <DType kType, int kCW, int kMS, int kNT8, int kNG>
__device__ __forceinline__ void StoreC(const Args& a, int rb, int ms, const float (&f)[kNT8][4]) {
  constexpr int kRows = 16 * (kCW / kNG) * kMS;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int warp = (threadIdx.x >> 5) / kNG, jn = ((threadIdx.x >> 5) % kNG) * kNT8;
  const bool pairs = (a.n & 1) == 0;
  unsigned short* c = static_cast<unsigned short*>(a.c);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = rb * kRows + (warp * kMS + ms) * 16 + g + 8 * h;
    if (row >= a.m) continue;
#pragma unroll
    for (int j = 0; j < kNT8; ++j) {
      const int col = (jn + j) * 8 + 2 * t;
      if (col >= a.n) continue;
      unsigned short* q = c + static_cast<int64_t>(row) * a.n + col;
      if (pairs) {
        *reinterpret_cast<uint32_t*>(q) = PackOut<kType>(f[j][2 * h], f[j][2 * h + 1]);
      } else {
        q[0] = NarrowBits<kType>(f[j][2 * h]);
        if (col + 1 < a.n) q[1] = NarrowBits<kType>(f[j][2 * h + 1]);
      }
    }
  }
}

// --- split-K in clusters: partial sums meet in distributed shared memory ----------------

__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster (exited threads would never arrive).
__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The end of a split-K cluster, in two halves: a relaxed arrival once this thread's reads of
// the other blocks' shared memory are done (their values are in registers: nothing to
// release, and a release here would wait for the C stores still in flight), and the wait
// that keeps this block's shared memory alive until every block has arrived.
__device__ __forceinline__ void ClusterArriveRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void ClusterWait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }
// The most blocks of one cluster the engine uses (the portable cluster size).
constexpr int kMaxCluster = kMaxStreamCluster;
// The address in block `rank` of the cluster of this block's shared address `local`.
__device__ __forceinline__ uint32_t MapaShared(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
// Reads of another block's shared memory, between two cluster barriers (which order them:
// no memory clobber here, so the compiler may issue a fragment's loads back to back).
__device__ __forceinline__ float4 LoadCluster(uint32_t local, uint32_t rank) {
  const uint32_t remote = MapaShared(local, rank);
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote));
  return v;
}

// ClusterReduce's two cluster barriers, for the warps that only take part in them (the
// producer and the signaller: every thread of the cluster must arrive).
__device__ __forceinline__ void ClusterFollow() {
  ClusterSync();
  ClusterArriveRelaxed();
  ClusterWait();
}

// Warp w's sums as the split-K cluster's ends keep them in shared memory: its fragment (ms, j)
// at `buf` + 512 ((w kMS + ms) kNT8 + j), a float4 a lane.
template <int kMS, int kNT8>
__device__ __forceinline__ void PutSums(unsigned char* buf, int w, const float (&acc)[kMS][kNT8][4]) {
  const int lane = threadIdx.x & 31;
  float* f = reinterpret_cast<float*>(buf);
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
    for (int j = 0; j < kNT8; ++j)
      reinterpret_cast<float4*>(f + ((w * kMS + ms) * kNT8 + j) * 128)[lane] =
          make_float4(acc[ms][j][0], acc[ms][j][1], acc[ms][j][2], acc[ms][j][3]);
}

// The end of a block in split-K clusters (Args::cluster > 1): the cluster's blocks hold the
// same row block's sums over different K ranges. Each consumer warp puts its fragments in
// its block's shared memory (`buf`, the ring's start: every stage has been consumed), and after
// a cluster barrier warp w of block w % cluster adds warp w's fragments of every block (read
// through distributed shared memory) and writes C; a second barrier keeps every block's
// shared memory alive until the reads are done. Consumer threads; the producer and the
// signaller only take part in the two barriers.
template <DType kType, int kCW, int kMS, int kNT8, int kNG>
__device__ __forceinline__ void ClusterReduce(const Args& a, int rb, const float (&acc)[kMS][kNT8][4],
                                              unsigned char* buf) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  float* f = reinterpret_cast<float*>(buf);
  NamedBarrier(1, 32 * kCW);  // every consumer warp is done with the ring
  PutSums(buf, w, acc);
  ClusterSync();
  if (threadIdx.x == 0) Trace(a, 6);
  if (w % a.cluster == static_cast<int>(ClusterRank())) {
    // One block at a time, all of its fragments requested before any is added: one remote
    // round trip per block (no memory clobber on the loads, so they issue back to back).
    float g[kMS][kNT8][4] = {};
#pragma unroll 1
    for (int c = 0; c < a.cluster; ++c) {
      float4 v[kMS][kNT8];
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
        for (int j = 0; j < kNT8; ++j) v[ms][j] = LoadCluster(SmemAddr(f + ((w * kMS + ms) * kNT8 + j) * 128 + 4 * lane), c);
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
        for (int j = 0; j < kNT8; ++j)
          g[ms][j][0] += v[ms][j].x, g[ms][j][1] += v[ms][j].y, g[ms][j][2] += v[ms][j].z, g[ms][j][3] += v[ms][j].w;
    }
    // The sums in registers before the arrival: the loads have returned (without this the
    // compiler could move the additions, and so the loads' completion, past it).
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) wg::Pin<kNT8 * 4>(&g[ms][0][0]);
    ClusterArriveRelaxed();
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) StoreC<kType, kCW, kMS, kNT8, kNG>(a, rb, ms, g[ms]);
  } else {
    ClusterArriveRelaxed();
  }
  ClusterWait();
}

// Waits for phase `parity` of a barrier that another block of the cluster completes (st.async's
// transactions): acquire at cluster scope, so that the other block's stores are visible.
__device__ __forceinline__ void MbarWaitCluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAITC:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAITC;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// 16 bytes into another block's shared memory (a cluster address), completing `bytes` of the
// transaction count of that block's barrier `bar` (a cluster address).
__device__ __forceinline__ void StAsync(uint32_t remote, float4 v, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                   remote),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(bar)
               : "memory");
}
// The end of a block in split-K clusters of 2 with Args::push: warp w's sums are added in block
// w % 2. A warp whose sums are added in the partner sends them into the partner's push area
// (`area`: its mbarrier, then (kCW / 2) warps' fragments, warp w's at w / 2) with st.async,
// after the cluster barrier that StreamKernel's prologue arrived on (the partner's mbarrier is
// initialised), and is done; a warp whose sums are added here waits for the partner's, adds
// them and writes C. One one-way message instead of ClusterReduce's two cluster barriers and a
// round trip of remote reads; no block reads another's shared memory, so no block waits for
// its partner to finish before it exits. The area's barrier expects its bytes from the start.
template <DType kType, int kCW, int kMS, int kNT8, int kNG>
__device__ __forceinline__ void ClusterPush(const Args& a, int rb, float (&acc)[kMS][kNT8][4], unsigned char* area) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const uint32_t rank = ClusterRank(), bar = SmemAddr(area);
  const uint32_t mine = SmemAddr(area + 16) + ((w / 2) * kMS * kNT8) * 512 + 16 * lane;
  if (static_cast<uint32_t>(w % 2) != rank) {
    ClusterWait();
    const uint32_t other = rank ^ 1u, rbar = MapaShared(bar, other), rbuf = MapaShared(mine, other);
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
      for (int j = 0; j < kNT8; ++j)
        StAsync(rbuf + (ms * kNT8 + j) * 512, make_float4(acc[ms][j][0], acc[ms][j][1], acc[ms][j][2], acc[ms][j][3]),
                rbar);
    if (threadIdx.x == 0) Trace(a, 6);
    return;
  }
  MbarWaitCluster(bar, 0);
  if (threadIdx.x == 0) Trace(a, 6);
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms) {
#pragma unroll
    for (int j = 0; j < kNT8; ++j) {
      float4 v;
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "r"(mine + (ms * kNT8 + j) * 512));
      acc[ms][j][0] += v.x, acc[ms][j][1] += v.y, acc[ms][j][2] += v.z, acc[ms][j][3] += v.w;
    }
    StoreC<kType, kCW, kMS, kNT8, kNG>(a, rb, ms, acc[ms]);
  }
}

// The shared state of one block's fixups (consumer threads; thread 0 writes, after a
// NamedBarrier all read).
struct FixupFlags {
  int counted;       // the other contributors had all counted their stages (thread 0's Peek)
  int rb[3];         // by pending partial: its row block (-1: no more), for the signaller
  int stages[3];     //   and the stages this block counts
  int last[2];       //   the signaller's answer: the count completed the row block
  // mbarriers, each used for one phase (a barrier's waiter must not fall two phases behind):
  unsigned long long stored[3];     // consumers -> signaller: partial q stored (or no more)
  unsigned long long signalled[2];  // signaller -> consumers: partial q counted
};

// Where row block rb's slots are, and this block's place among its contributors.
struct Slots {
  float* ws;
  int own, nc;
};
template <int kCW, int kMS, int kNT8>
__device__ __forceinline__ Slots SlotsOf(const Args& a, int rb) {
  const long long i0 = static_cast<long long>(rb) * a.kstages;
  const int b0 = BlockOf(i0, a.total, gridDim.x);
  return Slots{a.ws + static_cast<int64_t>(rb) * a.slots * SlotFloats<kCW, kMS, kNT8>(),
               static_cast<int>(blockIdx.x) - b0, BlockOf(i0 + a.kstages - 1, a.total, gridDim.x) - b0 + 1};
}

// At the start of a segment of row block rb that is not all of its stages: thread 0 loads
// the row block's count (relaxed; the answer is needed only at the segment's end, so the
// load's latency hides behind the segment). Contribute compares it.
__device__ __forceinline__ int Peek(const Args& a, int rb) {
  int v = 0;
  if (threadIdx.x == 0) asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(a.counters + rb) : "memory");
  return v;
}

// A contributor's sums loaded ahead (Args::prefetch): the slots of row block `rb`, found at the
// start, and this warp's fragments of slot `slot` in v; rb < 0: none.
template <int kMS, int kNT8>
struct Prefetched {
  int rb = -1;    // the row block whose slots `sl` are, or -1
  Slots sl;
  int slot = -1;  // the slot whose sums this warp holds in v, or -1
  float4 v[kMS][kNT8];
};
// Adds the slots of row block rb's contributors (all but `skip`) to acc and writes C; clears
// the row block's counter for the next launch (a CUDA graph too).
template <DType kType, int kCW, int kMS, int kNT8, int kNG>
__device__ __forceinline__ void Reduce(const Args& a, int rb, int skip, float (&acc)[kMS][kNT8][4],
                                       const Prefetched<kMS, kNT8>* pre = nullptr) {
  constexpr int kSlot = SlotFloats<kCW, kMS, kNT8>();
  const bool mine = pre != nullptr && pre->rb == rb;
  const Slots sl = mine ? pre->sl : SlotsOf<kCW, kMS, kNT8>(a, rb);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  // The prefetched slot is added here and not loaded again below.
  const int loaded = mine ? pre->slot : -1;
  if (loaded >= 0) {
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
      for (int j = 0; j < kNT8; ++j) {
        const float4 v = pre->v[ms][j];
        acc[ms][j][0] += v.x, acc[ms][j][1] += v.y, acc[ms][j][2] += v.z, acc[ms][j][3] += v.w;
      }
  }
  // Four slots' loads in flight per fragment.
  for (int c0 = 0; c0 < sl.nc; c0 += 4) {
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
      for (int j = 0; j < kNT8; ++j) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int c = c0 + u;
          v[u] = c < sl.nc && c != skip && c != loaded ? __ldcg(reinterpret_cast<const float4*>(
                                                     sl.ws + c * kSlot + ((w * kMS + ms) * kNT8 + j) * 128) +
                                                 lane)
                                        : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u)
          acc[ms][j][0] += v[u].x, acc[ms][j][1] += v[u].y, acc[ms][j][2] += v[u].z, acc[ms][j][3] += v[u].w;
      }
  }
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms) StoreC<kType, kCW, kMS, kNT8, kNG>(a, rb, ms, acc[ms]);
  if (threadIdx.x == 0) a.counters[rb] = 0;
}

// Args::prefetch, when the segment of pre->rb (this block's first `stages` of it) begins: each
// lane reads the row block's count with acquire semantics and, if the other contributor has
// counted its stages, loads that block's sums of this warp's fragments (slot 1) into registers.
// The loads are not waited for here: their first use is at the range's end (Reduce).
template <int kCW, int kMS, int kNT8>
__device__ __forceinline__ void PrefetchOther(const Args& a, Prefetched<kMS, kNT8>* pre, int stages) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(a.counters + pre->rb) : "memory");
  if (v + stages != a.kstages) return;
  constexpr int kSlot = SlotFloats<kCW, kMS, kNT8>();
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  pre->slot = 1;
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
    for (int j = 0; j < kNT8; ++j)
      pre->v[ms][j] = __ldcg(reinterpret_cast<const float4*>(pre->sl.ws + kSlot + ((w * kMS + ms) * kNT8 + j) * 128) + lane);
}

// The block's sums for row block rb over `stages` of its K stages, at the end of its segment.
// All of them: straight to C. Else the row block is shared with neighbouring blocks, which
// count their stages on its counter: if Peek found the others all counted (the usual case
// for the last segment of a range: the next block summed its part first), this block adds
// their slots to its sums and writes C. Otherwise it stores its sums in its slot and hands
// the count to the signaller warp (a release fence and an atomic add, which would stall a
// consumer warp for a microsecond or two); the answer is read in Finish, at the end of the
// range. Returns the row block left pending, or -1. `q`: the pending partials so far.
template <DType kType, int kCW, int kMS, int kNT8, int kNG>
__device__ __forceinline__ int Contribute(const Args& a, int rb, int stages, float (&acc)[kMS][kNT8][4],
                                          FixupFlags* fl, int peeked, int q,
                                          const Prefetched<kMS, kNT8>* pre = nullptr) {
  if (stages == a.kstages) {
    if (threadIdx.x == 0) Trace(a, 6);  // the workbench's trace: the sums' end, before C
    if (a.fixup != kFixupDrop) {  // kFixupDrop (workbench timing only): C not written
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) StoreC<kType, kCW, kMS, kNT8, kNG>(a, rb, ms, acc[ms]);
    }
    return -1;
  }
  if (a.fixup == kFixupDrop) return -1;
  NamedBarrier(1, 32 * kCW);  // the previous reader of fl->counted is done
  if (threadIdx.x == 0) {
    fl->counted = peeked + stages == a.kstages;
    if (fl->counted) __threadfence();  // acquire the others' slots (they released theirs)
  }
  NamedBarrier(1, 32 * kCW);
  const Slots sl = pre != nullptr && pre->rb == rb ? pre->sl : SlotsOf<kCW, kMS, kNT8>(a, rb);
  if (fl->counted) {
    Reduce<kType, kCW, kMS, kNT8, kNG>(a, rb, sl.own, acc, pre);
    return -1;
  }
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  constexpr int kSlot = SlotFloats<kCW, kMS, kNT8>();
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
    for (int j = 0; j < kNT8; ++j)
      __stcg(reinterpret_cast<float4*>(sl.ws + sl.own * kSlot + ((w * kMS + ms) * kNT8 + j) * 128) + lane,
             make_float4(acc[ms][j][0], acc[ms][j][1], acc[ms][j][2], acc[ms][j][3]));
  if (threadIdx.x == 0) fl->rb[q] = rb, fl->stages[q] = stages;
  __syncwarp();
  if (lane == 0) MbarArrive(SmemAddr(&fl->stored[q]));
  return rb;
}

// The signaller warp: for each partial the consumers stored, a release fence (their stores,
// ordered by the mbarrier, first) and the count; the answer goes back through `signalled`.
template <bool kLean>
__device__ __forceinline__ void Signaller(const Args& a, FixupFlags* fl) {
  const int lane = threadIdx.x & 31;
  for (int q = 0; q < 3; ++q) {
    if constexpr (kLean) {
      MbarWaitSleep(SmemAddr(&fl->stored[q]), 0);
    } else {
      MbarWait(SmemAddr(&fl->stored[q]), 0);
    }
    const int rb = fl->rb[q];
    if (rb < 0) return;
    if (lane == 0) {
      __threadfence();
      fl->last[q] = atomicAdd(a.counters + rb, fl->stages[q]) + fl->stages[q] == a.kstages;
      MbarArrive(SmemAddr(&fl->signalled[q]));
    }
    __syncwarp();
  }
}

// At the end of the range: tell the signaller there is no more, then reduce each pending row
// block whose count completed it (the others finished after this block stored its part),
// from every slot.
template <DType kType, int kCW, int kMS, int kNT8, int kNG>
__device__ __forceinline__ void Finish(const Args& a, int pend0, int pend1, FixupFlags* fl,
                                       const Prefetched<kMS, kNT8>* pre = nullptr) {
  const int np = (pend0 >= 0) + (pend1 >= 0);
  if (threadIdx.x == 0) fl->rb[np] = -1;
  __syncwarp();
  if ((threadIdx.x & 31) == 0) MbarArrive(SmemAddr(&fl->stored[np]));
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const int rb = q == 0 ? pend0 : pend1;
    if (rb < 0) continue;
    MbarWait(SmemAddr(&fl->signalled[q]), 0);
    if (!fl->last[q]) continue;
    if (threadIdx.x == 0) Trace(a, 6);
    if (threadIdx.x == 0) __threadfence();  // acquire the others' slots
    NamedBarrier(1, 32 * kCW);
    float f[kMS][kNT8][4] = {};
    Reduce<kType, kCW, kMS, kNT8, kNG>(a, rb, -1, f, pre);
  }
}

// This block's items [i0, i1) of the (row block, K stage) list: a stream-K range, or in
// split-K clusters the cluster's row block's K stages cut in `cluster` ranges (blockIdx.x %
// cluster is the block's rank). Formats that keep state across a block's stages ask it too.
struct BlockItems {
  long long i0, i1;
};
// i / d for 0 <= i and 0 < d, dv = MakeDivisor(d) or unset: a multiply-high where i < 2^31 and dv
// is set (every plan of an LLM layer's shape), else a 32-bit division where i fits in 32 bits,
// else the 64-bit one (each a subroutine of dependent instructions: v49's trace, v51's SASS).
__device__ __forceinline__ long long DivFast(long long i, int d, Divisor dv) {
  if (dv.mul != 0 && i < (1LL << 31)) return DivideBy(static_cast<uint32_t>(i), dv);
  return i <= 0xffffffffLL ? static_cast<long long>(static_cast<uint32_t>(i) / static_cast<uint32_t>(d)) : i / d;
}
// The block's cluster index (clusters of a.cluster > 1 consecutive blocks).
__device__ __forceinline__ int ClusterIndex(const Args& a) {
  return static_cast<int>(DivFast(blockIdx.x, a.cluster, a.div_cluster));
}
__device__ __forceinline__ BlockItems ItemsOfBlock(const Args& a) {
  if (a.cluster > 1) {
    const int q = ClusterIndex(a);
    const long long first = static_cast<long long>(q) * a.kstages;
    const int r = static_cast<int>(blockIdx.x) - q * a.cluster;
    return BlockItems{first + DivFast(static_cast<long long>(a.kstages) * r, a.cluster, a.div_cluster),
                      first + DivFast(static_cast<long long>(a.kstages) * (r + 1), a.cluster, a.div_cluster)};
  }
  const int g = static_cast<int>(gridDim.x);
  return BlockItems{DivFast(a.total * blockIdx.x, g, a.div_grid), DivFast(a.total * (blockIdx.x + 1), g, a.div_grid)};
}

// Args' divisors for a launch of `grid` blocks (at the launch, so that they match its grid).
inline void SetDivisors(Args& a, int grid) {
  a.div_kstages = MakeDivisor(a.kstages);
  a.div_grid = MakeDivisor(grid);
  a.div_cluster = MakeDivisor(a.cluster);  // read only where cluster > 1 (ClusterIndex)
}

// A ring slot and its phase, stepped with the block's stages (Args::ring slots in use: no
// division by a run-time count per stage).
struct RingPos {
  int slot = 0, phase = 0;
  __device__ __forceinline__ void Next(int ring) {
    if (++slot == ring) slot = 0, phase ^= 1;
  }
};
// The ring slots in use of a kernel with `stages` (Args::ring), the same in the producer and the
// consumers (each computes it in its own branch: not live across the kernel).
__device__ __forceinline__ int RingSlots(const Args& a, int stages) {
  return a.ring > 1 && a.ring < stages ? a.ring : stages;
}

// The walk over a block's items: item i is (row block i / kstages, K stage i % kstages). The
// loops step it with an increment (a 64-bit division per stage sat on the consumers' serial
// path between two stages).
struct ItemWalk {
  int rb, ks;
  __device__ __forceinline__ ItemWalk(const Args& a, long long i) {
    const long long q = DivFast(i, a.kstages, a.div_kstages);
    rb = static_cast<int>(q), ks = static_cast<int>(i - q * a.kstages);
  }
  __device__ __forceinline__ void Next(const Args& a) {
    if (++ks == a.kstages) ks = 0, ++rb;
  }
};

// The K stage a block streams at item (rb, ks) of its range [i0, i1). In order unless a.rotate:
// then the block's share [first, end) of the item's row block is walked from first + rb mod
// (end - first), so that blocks working on different row blocks ask for different stages' B
// (one stage's B at N = 1 is four L2 lines). The share is the same set of stages in either
// order, so the fixup and the exact re-sums (Fix, over [first, end)) are unchanged.
__device__ __forceinline__ int StageOf(const Args& a, long long i0, long long i1, const ItemWalk& w) {
  if (!a.rotate) return w.ks;
  const long long base = static_cast<long long>(w.rb) * a.kstages;
  const int first = static_cast<int>(max(i0, base) - base), end = static_cast<int>(min(i1, base + a.kstages) - base);
  const int len = end - first;
  return first + (w.ks - first + w.rb % len) % len;
}

// kMinBlocks: the blocks per SM the registers must allow (__launch_bounds__; the addon's
// kernels run one block per SM; the unstructured workbench's small rings two or three).
template <class F, DType kType, int kCW, int kMS, int kNT8, int kKS, int kBudgetKB, int kNG = 1, int kMinBlocks = 1>
__global__ void __launch_bounds__(32 * (kCW + 2), kMinBlocks) StreamKernel(const __grid_constant__ Args a) {
  using E = Engine<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB, kNG>;
  constexpr int kStages = E::kStages;
  constexpr bool kLean = kEngineLean || HasLean<F>::value;
  if (threadIdx.x == 0) Trace<kLean>(a, 9);
#if defined(SPARSE_ENGINE_PREFETCH_MAP)
  // (v64 workbench switch) B's tensor-map descriptor asked for at the block's entry, by the
  // producer's lane 0 (idle until __syncthreads), not fetched by the first stage's tensor copy.
  if (threadIdx.x == 32 * kCW && a.b_read == kBTma) PrefetchTensorMap(&a.b_map);
#endif
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ FixupFlags fl;
  // The ring from a 1024-byte aligned address (the swizzled tensor copies of B need it).
  unsigned char* smem = smem_raw + ((1024 - (SmemAddr(smem_raw) & 1023)) & 1023);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t bars = SmemAddr(smem + kStages * E::kStageBytes);
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (kStages + s); };
  // ClusterPush's area (its barrier, then the partner's sums), after the ring's barriers.
  unsigned char* push_area = smem + E::kRingBytes;
  const bool push = E::kPushBytes > 0 && a.push && a.cluster == 2;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      MbarInit(full(s), a.lanes_arrive ? 32 : 1);
      MbarInit(empty(s), kCW * (a.lanes_arrive ? 32 : 1));
    }
    for (int q = 0; q < 3; ++q) MbarInit(SmemAddr(&fl.stored[q]), kCW);
    for (int q = 0; q < 2; ++q) MbarInit(SmemAddr(&fl.signalled[q]), 1);
    if (push) MbarInit(SmemAddr(push_area), 1);
    FenceBarrierInit();
    // Its one arrival now: the phase completes when the partner's bytes have all come.
    if (push) MbarArriveExpectTx(SmemAddr(push_area), E::kPushSums);
    Trace<kLean>(a, 10);
  }
  if (HasBK1<F>::value && a.b_read == kBWgK1) {
    // kBWgK1's last core matrices of a stage read up to 112 bytes past its kKS halves of B
    // (rows 1-7: C's unstored columns). Zeros there, not what an earlier kernel left: a
    // non-finite value in those columns sends the strip to FixSp24's exact sums (v17: 30 us a
    // stage in split-K clusters).
    static_assert(2 * kKS + 128 <= E::kBBytes, "the K1 tail fits in the stage's B area");
    // The threads that store (the first kStages * 8: consumers) fence their stores for wgmma; the
    // others (the producer and the signaller among them) go on to __syncthreads (v51: every
    // thread fenced, a MEMBAR on the producer's path to its first copy).
    for (int i = threadIdx.x; i < kStages * 8; i += blockDim.x)
      reinterpret_cast<uint4*>(smem + (i / 8) * E::kStageBytes + 2 * kKS)[i % 8] = make_uint4(0, 0, 0, 0);
    if (threadIdx.x < kStages * 8) FenceProxyAsync();
  }
  if (a.skip_b) {
    for (int i = threadIdx.x; i < kStages * (E::kBBytes / 16); i += blockDim.x)
      reinterpret_cast<uint4*>(smem + (i / (E::kBBytes / 16)) * E::kStageBytes)[i % (E::kBBytes / 16)] = make_uint4(0, 0, 0, 0);
    FenceProxyAsync();
  }
  StageTraceStart(a);
  // The block's items, before __syncthreads (v51: by Args' divisors, DivFast).
  const BlockItems items = ItemsOfBlock(a);
  const long long i0 = items.i0, i1 = items.i1;
  if (warp == kCW && lane == 0) Trace<kLean>(a, 13);
  __syncthreads();
  if (threadIdx.x == 0) Trace<kLean>(a, 4), Trace<kLean>(a, 0), TraceSm<kLean>(a);
  if (warp == kCW && lane == 0) Trace<kLean>(a, 11);
  // ClusterPush: every thread arrives once, here; the warps that send wait before sending.
  if (push) ClusterArriveRelaxed();
  // The next kernel (launched with programmatic dependent launch) may start its blocks as
  // this grid's blocks finish: its producers then fetch their weights during this tail.
  GridDependencyLaunch();
  if (warp == kCW && lane == 0) Trace<kLean>(a, 14);
  const bool clustered = a.cluster > 1;
  const int crb = clustered ? ClusterIndex(a) : 0;

  if (warp == kCW + 1) {
    GridDependencyWait();
    if (!clustered) {
      Signaller<kLean>(a, &fl);
    } else if (!push) {
      ClusterFollow();
    }
    return;
  }
  if (warp == kCW) {
    // Producer.
    if (lane == 0) Trace<kLean>(a, 7);
    const uint64_t policy = EvictFirstPolicy();
    // The ring's first stages, before any slot is waited for. With a.a_first (launched after
    // another kernel with programmatic dependent launch) their A (the weights: nothing the
    // previous kernel writes) is requested before waiting for it, their B after; else each
    // stage's B right after its A, so that stage 0 is not queued behind the ring's other A
    // copies. Not past a stage whose B needs plain stores (a ragged end).
    const int ring = RingSlots(a, kStages);
    int s = 0;
    ItemWalk w(a, i0);
    RingPos pos;  // slot s % ring, round s / ring (the first fill: slot s, round 0)
    if (lane == 0) Trace<kLean>(a, 15);
    for (long long i = i0; i < i1 && s < ring; ++i, ++s, w.Next(a), pos.Next(ring)) {
      const int rb = w.rb, ks = StageOf(a, i0, i1, w);
      if (!StageBBulkOnly<kKS>(a, ks * kKS)) break;
      const uint32_t bytes = F::template StageBytes<E::kStrips, kKS>(a, rb, ks) + StageBBulkBytes<kKS>(a, ks * kKS);
      if (s == 0 && lane == 0) Trace<kLean>(a, 16);
      if (lane == 0) StageTrace<kLean>(a, s, 3), MbarArriveExpectTx(full(s), bytes);
      else if (a.lanes_arrive) MbarArrive(full(s));
      __syncwarp();
      if (s == 0 && lane == 0) Trace<kLean>(a, 17);
      F::template Issue<E::kStrips, kKS>(a, rb, ks, smem + s * E::kStageBytes + E::kBBytes, full(s), lane, policy);
      if (s == 0 && lane == 0) Trace<kLean>(a, 12);
      if (!a.a_first) StageB<kKS>(a, ks * kKS, smem + s * E::kStageBytes, full(s), lane, true);
    }
    // Args::l2_ahead: the A runs of the next stages past the ring's into L2 (the weights: before
    // the wait for a previous kernel), then one more with each stage issued below.
    long long ip = i0 + s;
    ItemWalk wp = w;  // item i0 + s, where the first fill stopped (no second division)
    auto prefetch = [&] {
      if constexpr (HasStageRun<F>::value) {
        constexpr int kRun = F::template StageABytes<E::kStrips, kKS>();
        if (lane == 0) BulkPrefetchL2(StageRunSrc<kRun>(a, wp.rb, StageOf(a, i0, i1, wp)), kRun);
      }
      ++ip, wp.Next(a);
    };
    if (HasStageRun<F>::value)
      for (int q = 0; q < a.l2_ahead && ip < i1; ++q) prefetch();
    GridDependencyWait();
    if (a.a_first) {
      ItemWalk v(a, i0);
      for (int q = 0; q < s; ++q, v.Next(a))
        StageB<kKS>(a, StageOf(a, i0, i1, v) * kKS, smem + q * E::kStageBytes, full(q), lane, true);
    }
    // Stage (rb, ks) into ring slot `slot` as the block's stage q, its slot free: plain stores
    // first (ragged B ends, zero rows), then the arrival that publishes them with the byte count
    // of the asynchronous copies, then the copies.
    auto issue = [&](int slot, int q, int rb, int ks) {
      unsigned char* st = smem + slot * E::kStageBytes;
      const uint32_t bbytes = StageB<kKS>(a, ks * kKS, st, full(slot), lane, false);
      const uint32_t bytes = F::template StageBytes<E::kStrips, kKS>(a, rb, ks) + bbytes;
      // A ragged end's plain stores, read by wgmma (the async proxy) in the wgmma formats.
      if (HasWgB<F>::value && !StageBBulkOnly<kKS>(a, ks * kKS)) FenceProxyAsync();
      __syncwarp();
      if (lane == 0) StageTrace<kLean>(a, q, 3), MbarArriveExpectTx(full(slot), bytes);
      else if (a.lanes_arrive) MbarArrive(full(slot));
      __syncwarp();
      F::template Issue<E::kStrips, kKS>(a, rb, ks, st + E::kBBytes, full(slot), lane, policy);
      StageB<kKS>(a, ks * kKS, st, full(slot), lane, true);
    };
    // A slot's first reuse (s >= ring, round 1) waits for phase 0 of its empty barrier.
    for (long long i = i0 + s; i < i1; ++i, ++s, w.Next(a), pos.Next(ring)) {
      if (s >= ring) MbarWait(empty(pos.slot), pos.phase ^ 1);
      issue(pos.slot, s, w.rb, StageOf(a, i0, i1, w));
      if (HasStageRun<F>::value && a.l2_ahead > 0 && ip < i1) prefetch();
    }
    if (clustered && !push) {
      ClusterFollow();
    }
    return;
  }

  // Consumers: B, C, the workspace and the counters may be the previous kernel's.
  GridDependencyWait();
  float acc[kMS][kNT8][4];
  auto zero = [&] {
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
      for (int j = 0; j < kNT8; ++j) acc[ms][j][0] = acc[ms][j][1] = acc[ms][j][2] = acc[ms][j][3] = 0.f;
  };
  zero();
  // Ragged N on the wgmma formats: the consumers lay B's rows out (RowsB), per stage.
  const bool ragged = HasWgB<F>::value && a.b_read == kBWgRows;
  int cur = -1, first = 0, s = 0, peeked = 0, pend0 = -1, pend1 = -1;
  // Args::prefetch: the range's last segment, if it is the head of a row block (its first
  // stages, not all) shared with one other block, which walks that row block's rest at the start
  // of its own range: that block's sums are usually stored and counted when this segment begins.
  Prefetched<kMS, kNT8> pre;
  int pre_stages = 0;
  if (a.prefetch && !clustered && a.fixup == kFixupSlots && i1 > i0) {
    const ItemWalk last(a, i1 - 1);
    if (static_cast<long long>(last.rb) * a.kstages >= i0 && last.ks + 1 < a.kstages) {
      const Slots sl = SlotsOf<kCW, kMS, kNT8>(a, last.rb);
      if (sl.nc == 2 && sl.own == 0) pre.rb = last.rb, pre.sl = sl, pre_stages = last.ks + 1;
    }
  }
  auto contribute = [&](int stages) {
    const int q = pend0 < 0 ? 0 : 1;
    const int p = Contribute<kType, kCW, kMS, kNT8, kNG>(a, cur, stages, acc, &fl, peeked, q, &pre);
    if (p >= 0) (q == 0 ? pend0 : pend1) = p;
  };
  // At item (rb, ks): a new row block ends the previous one's sums.
  auto begin = [&](int rb, int ks) {
    if (rb == cur) return;
    if (cur >= 0) {
      F::template Fix<kType, kCW, kMS, kNT8, kKS, kNG>(a, cur, first, a.kstages, acc);
      contribute(a.kstages - first);
      zero();
    }
    cur = rb, first = ks;
    peeked = Peek(a, rb);
    if (rb == pre.rb) PrefetchOther<kCW, kMS, kNT8>(a, &pre, pre_stages);
  };
  // The block's stage q in ring slot pos: waits for it and lays a ragged B out; returns the
  // stage (B first).
  const int ring = RingSlots(a, kStages);
  RingPos pos;
  auto ready = [&](int q) {
    const int slot = pos.slot;
    if (threadIdx.x == 0) StageTrace<kLean>(a, q, 0);
    MbarWait(full(slot), pos.phase);
    if (threadIdx.x == 0) StageTrace<kLean>(a, q, 1);
    if (q == 0 && threadIdx.x == 0) Trace<kLean>(a, 1);
    unsigned char* st = smem + slot * E::kStageBytes;
    if (ragged) {
      // Every row read before any is overwritten; then published to every consumer warp's
      // wgmma (the async proxy).
      RowsB<kKS, kCW, kNT8 * kNG> rows;
      rows.Read(a, st);
      NamedBarrier(1, 32 * kCW);
      rows.Write(a, st);
      FenceProxyAsync();
      NamedBarrier(1, 32 * kCW);
    }
    return st;
  };
  auto release = [&](int q) {
    __syncwarp();
    if (lane == 0 || a.lanes_arrive) MbarArrive(empty(pos.slot));
    if (threadIdx.x == 0) StageTrace<kLean>(a, q, 2);
    pos.Next(ring);
  };
  ItemWalk w(a, i0);
  int last_ks = 0;  // the K stage of the range's last item (no 64-bit division at the end)
  for (long long i = i0; i < i1; ++i, ++s, w.Next(a)) {
    begin(w.rb, w.ks);
    last_ks = w.ks;
    unsigned char* st = ready(s);
    F::template Compute<kType, kCW, kMS, kNT8, kKS, kNG>(a, w.rb, StageOf(a, i0, i1, w), st + E::kBBytes, st, acc);
    release(s);
  }
  if (threadIdx.x == 0) Trace<kLean>(a, 2), StageTraceFlush(a, s);
  if (cur >= 0) {
    const int end = last_ks + 1;
    F::template Fix<kType, kCW, kMS, kNT8, kKS, kNG>(a, cur, first, end, acc);
    if (!clustered) contribute(end - first);
  }
  if (push) {
    ClusterPush<kType, kCW, kMS, kNT8, kNG>(a, crb, acc, push_area);
  } else if (clustered) {
    static_assert(SlotFloats<kCW, kMS, kNT8>() * 4 <= kStages * E::kStageBytes, "the sums fit in the ring");
    ClusterReduce<kType, kCW, kMS, kNT8, kNG>(a, crb, acc, smem);
  } else {
    Finish<kType, kCW, kMS, kNT8, kNG>(a, pend0, pend1, &fl, &pre);
  }
  if (threadIdx.x == 0) Trace<kLean>(a, 3), Trace<kLean>(a, 5);
}

// --- formats ----------------------------------------------------------------------------

// --- the mma.sync formats' k-step loops (the formats differ only in where A's fragments are)

// One warp's dense k-steps of a stage: `steps` steps of 16 columns; load_a(ms, kk, af) loads
// the A fragment of the warp's strip ms at step kk (ldmatrix).
template <DType kType, int kMS, int kNT8, int kNG, class LoadA>
__device__ __forceinline__ void DenseSteps(const Args& a, const unsigned char* bs, int steps, LoadA load_a,
                                           float (&acc)[kMS][kNT8][4]) {
  const int jn = ((threadIdx.x >> 5) % kNG) * kNT8;
#pragma unroll 4
  for (int kk = 0; kk < steps; ++kk) {
    uint32_t af[kMS][4];
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) load_a(ms, kk, af[ms]);
#pragma unroll
    for (int j = 0; j < kNT8; ++j) {
      if ((jn + j) * 8 >= a.n) break;
      uint32_t b0, b1;
      BFrag16<kNT8>(a, bs, kk * 16, jn + j, b0, b1);
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) Mma16816<kType>(acc[ms][j], af[ms], b0, b1);
    }
  }
}

// Where one 2:4 tile's values (512 bytes in fragment order) and metadata (64 bytes) are.
struct Sp24TileAt {
  const unsigned char* values;
  const unsigned char* meta;
};

// The metadata word of a 2:4 tile that lane `lane` passes to mma.sp / wgmma.sp (selector 0:
// lanes 4 g and 4 g + 1 supply words 2 g and 2 g + 1; the others' are not read).
__host__ __device__ constexpr int Sp24MetaWord(int lane) { return (lane >> 2) * 2 + (lane & 1); }

// A lane's part of one 2:4 tile: its A fragment (16 bytes: the m16n8k16 / wgmma register
// order) and its metadata word (Sp24MetaWord).
__device__ __forceinline__ void LoadSp24Fragment(const Sp24TileAt& at, uint32_t (&af)[4], uint32_t& e) {
  const int lane = threadIdx.x & 31;
  const uint4 av = *reinterpret_cast<const uint4*>(at.values + 16 * lane);
  af[0] = av.x, af[1] = av.y, af[2] = av.z, af[3] = av.w;
  e = *reinterpret_cast<const uint32_t*>(at.meta + 4 * Sp24MetaWord(lane));
}

// One warp's 2:4 k-steps of a stage: `steps` steps of 32 columns; tile(ms, kt) locates the
// tile of the warp's strip ms at step kt.
template <DType kType, int kMS, int kNT8, int kNG, class Tile>
__device__ __forceinline__ void Sp24Steps(const Args& a, const unsigned char* bs, int steps, Tile tile,
                                          float (&acc)[kMS][kNT8][4]) {
  const int jn = ((threadIdx.x >> 5) % kNG) * kNT8;
#pragma unroll 2
  for (int kt = 0; kt < steps; ++kt) {
    uint32_t af[kMS][4], e[kMS];
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) LoadSp24Fragment(tile(ms, kt), af[ms], e[ms]);
#pragma unroll
    for (int j = 0; j < kNT8; ++j) {
      if ((jn + j) * 8 >= a.n) break;
      uint32_t bf[4];
      BFrag32<kNT8>(a, bs, kt * 32, jn + j, bf);
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) MmaSp16832<kType>(acc[ms][j], af[ms], bf, e[ms]);
    }
  }
}

// Plain dense row-major A (M x K halves), K % 16 == 0 and A 16-byte aligned: each stage holds
// the row block's kKS columns, one bulk copy per row, rows padded by 16 bytes.
struct DenseRows {
  static constexpr int kKStep = 16;
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    return 16 * kStrips * (2 * kKS + 16);
  }
  template <int kStrips, int kKS>
  __device__ static uint32_t StageBytes(const Args& a, int rb, int ks) {
    const int rows = min(16 * kStrips, a.m - rb * 16 * kStrips);
    return static_cast<uint32_t>(rows) * 2 * min(kKS, a.k - ks * kKS);
  }
  template <int kStrips, int kKS>
  __device__ static void Issue(const Args& a, int rb, int ks, unsigned char* st, uint32_t bar, int lane,
                               uint64_t policy) {
    const int rows = min(16 * kStrips, a.m - rb * 16 * kStrips);
    const int cols = min(kKS, a.k - ks * kKS);
    const unsigned short* w = static_cast<const unsigned short*>(a.a0) +
                              static_cast<int64_t>(rb) * 16 * kStrips * a.k + static_cast<int64_t>(ks) * kKS;
    for (int r = lane; r < rows; r += 32)
      BulkCopyHint(SmemAddr(st + r * (2 * kKS + 16)), w + static_cast<int64_t>(r) * a.k, 2 * cols, bar, policy);
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) / kNG;
    constexpr int kStride = 2 * kKS + 16;
    const uint32_t abase = SmemAddr(st) + ((warp * kMS) * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * kStride +
                           (lane >> 4) * 16;
    DenseSteps<kType, kMS, kNT8, kNG>(
        a, bs, min(kKS, a.k - ks * kKS) / 16,
        [&](int ms, int kk, uint32_t(&af)[4]) { LdMatrixX4(abase + ms * 16 * kStride + kk * 32, af); }, acc);
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const Args&, int, int, int, float (&)[kMS][kNT8][4]) {}
};


// Sparse semantics with non-finite B, for the 2:4 formats: the padded zeros of a group
// multiply B too (0 x Inf = NaN); a strip whose sums over stages [ks0, ks1) are not all finite
// is summed again from its nonzeros alone (tiles read through `s`).
template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
__device__ __forceinline__ void FixSp24(const Args& a, const Sp24Args& s, int rb, int ks0, int ks1,
                                        float (&acc)[kMS][kNT8][4]) {
  const int warp = (threadIdx.x >> 5) / kNG, n0 = ((threadIdx.x >> 5) % kNG) * kNT8 * 8;
  const int j0 = ks0 * (kKS / 32), j1 = min(a.ksteps, ks1 * (kKS / 32));
#pragma unroll
  for (int ms = 0; ms < kMS; ++ms) {
    const int strip = rb * (kCW / kNG) * kMS + warp * kMS + ms;
    if (strip < a.strips && n0 < a.n && !WarpAllFinite<kNT8>(acc[ms]))
      Sp24ExactSums<kType, kNT8>(s, strip, j0, j1, n0, acc[ms]);
  }
}

// The 2:4 tiles of common/sparse24.h (values in mma.sp fragment order, metadata beside):
// a strip's k-steps are contiguous, so a stage is two bulk copies per strip.
struct TwoFour {
  static constexpr int kKStep = 32;
  template <int kKS>
  static constexpr int StripBytes() {
    return (kKS / 32) * kSp24TileBytes;
  }
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    return kStrips * StripBytes<kKS>();
  }
  template <int kStrips, int kKS>
  __device__ static uint32_t StageBytes(const Args& a, int rb, int ks) {
    const int strips = min(kStrips, a.strips - rb * kStrips);
    const int steps = min(kKS / 32, a.ksteps - ks * (kKS / 32));
    return static_cast<uint32_t>(strips) * steps * kSp24TileBytes;
  }
  template <int kStrips, int kKS>
  __device__ static void Issue(const Args& a, int rb, int ks, unsigned char* st, uint32_t bar, int lane,
                               uint64_t policy) {
    const int steps = min(kKS / 32, a.ksteps - ks * (kKS / 32));
    for (int q = lane; q < kStrips; q += 32) {
      const int strip = rb * kStrips + q;
      if (strip >= a.strips) break;
      const int64_t tile = static_cast<int64_t>(strip) * a.ksteps + ks * (kKS / 32);
      unsigned char* d = st + q * StripBytes<kKS>();
      BulkCopyHint(SmemAddr(d), static_cast<const unsigned char*>(a.a0) + tile * 512, steps * 512, bar, policy);
      BulkCopyHint(SmemAddr(d + (kKS / 32) * 512), static_cast<const unsigned char*>(a.a1) + tile * 64, steps * 64, bar,
                   policy);
    }
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    const int warp = (threadIdx.x >> 5) / kNG;
    if (rb * (kCW / kNG) * kMS + warp * kMS >= a.strips) return;
    // A strip past the last was not staged: stale bytes whose sums are never stored.
    Sp24Steps<kType, kMS, kNT8, kNG>(
        a, bs, min(kKS / 32, a.ksteps - ks * (kKS / 32)),
        [&](int ms, int kt) {
          const unsigned char* d = st + (warp * kMS + ms) * StripBytes<kKS>();
          return Sp24TileAt{d + kt * 512, d + (kKS / 32) * 512 + kt * 64};
        },
        acc);
  }
  // Sparse semantics with non-finite B: the padded zeros of a group multiply B too (0 x Inf =
  // NaN); a strip whose sums are not all finite is summed again from its nonzeros alone.
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const Args& a, int rb, int ks0, int ks1, float (&acc)[kMS][kNT8][4]) {
    FixSp24<kType, kCW, kMS, kNT8, kKS, kNG>(
        a, Sp24Args{static_cast<const uint4*>(a.a0), static_cast<const uint4*>(a.a1), a.b, a.c, a.m, a.k, a.n,
                    a.strips, a.ksteps, 1, 0},
        rb, ks0, ks1, acc);
  }
};

// The copies of one stage of a tiled format: the stage is one contiguous run of kBytes at
// (rb kstages + ks) kBytes of the format's array, moved by up to four lanes in equal parts.
template <int kBytes>
__device__ __forceinline__ void IssueStageRun(const Args& a, int rb, int ks, unsigned char* st, uint32_t bar, int lane,
                                              uint64_t policy) {
  constexpr int kParts = kBytes % 4 == 0 && kBytes >= 32768 ? 4 : kBytes % 2 == 0 && kBytes >= 16384 ? 2 : 1;
  static_assert((kBytes / kParts) % 16 == 0, "copies of whole 16-byte units");
  const unsigned char* src = StageRunSrc<kBytes>(a, rb, ks);
  if (lane < kParts)
    BulkCopyHint(SmemAddr(st + lane * (kBytes / kParts)), src + lane * (kBytes / kParts), kBytes / kParts, bar, policy);
}

// Tiled formats: the host lays a row block's stage out as one contiguous run, so the producer
// moves a stage with a few large copies whatever the row block's shape.

// Dense f16/bf16 in stages of kRows x kKS: run (rb, ks) at (rb kstages + ks) kRows kKS halves,
// row-major inside, 16-byte chunk c of row r stored at chunk c ^ (r & 7) (ldmatrix reads
// 8 rows of one chunk: conflict-free); rows past M and columns past K are zero.
struct DenseTiled {
  static constexpr int kKStep = 16;
  static constexpr bool kStageRun = true;
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    return 16 * kStrips * 2 * kKS;
  }
  template <int kStrips, int kKS>
  __device__ static uint32_t StageBytes(const Args&, int, int) {
    return StageABytes<kStrips, kKS>();
  }
  template <int kStrips, int kKS>
  __device__ static void Issue(const Args& a, int rb, int ks, unsigned char* st, uint32_t bar, int lane,
                               uint64_t policy) {
    IssueStageRun<StageABytes<kStrips, kKS>()>(a, rb, ks, st, bar, lane, policy);
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) / kNG;
    constexpr int kStride = 2 * kKS;
    const int r = (warp * kMS) * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
    const uint32_t abase = SmemAddr(st) + r * kStride;
    const int sw = r & 7, half = lane >> 4;
    DenseSteps<kType, kMS, kNT8, kNG>(
        a, bs, (min(kKS, a.k - ks * kKS) + 15) / 16,
        [&](int ms, int kk, uint32_t(&af)[4]) {
          LdMatrixX4(abase + ms * 16 * kStride + (((2 * kk + half) ^ sw) << 4), af);
        },
        acc);
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const Args&, int, int, int, float (&)[kMS][kNT8][4]) {}
};

// 2:4 tiles (common/sparse24.h) in stages of kStrips strips x kKS / 32 k-steps: run (rb, ks)
// holds tile (strip q, k-step kt) at (q kKS / 32 + kt) x 576 bytes: its 512 bytes of values
// in fragment order, then its 64 bytes of metadata. Padded tiles are zero with metadata
// 0x44444444 (indices 0, 1).
struct TwoFourTiled {
  static constexpr int kKStep = 32;
  static constexpr bool kStageRun = true;
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    return kStrips * (kKS / 32) * kSp24TileBytes;
  }
  template <int kStrips, int kKS>
  __device__ static uint32_t StageBytes(const Args&, int, int) {
    return StageABytes<kStrips, kKS>();
  }
  template <int kStrips, int kKS>
  __device__ static void Issue(const Args& a, int rb, int ks, unsigned char* st, uint32_t bar, int lane,
                               uint64_t policy) {
    IssueStageRun<StageABytes<kStrips, kKS>()>(a, rb, ks, st, bar, lane, policy);
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    const int warp = (threadIdx.x >> 5) / kNG;
    if (rb * (kCW / kNG) * kMS + warp * kMS >= a.strips) return;
    Sp24Steps<kType, kMS, kNT8, kNG>(
        a, bs, min(kKS / 32, a.ksteps - ks * (kKS / 32)),
        [&](int ms, int kt) {
          const unsigned char* d = st + ((warp * kMS + ms) * (kKS / 32) + kt) * kSp24TileBytes;
          return Sp24TileAt{d, d + 512};
        },
        acc);
  }
  // The exact sums read the staged tiles themselves (Sp24Args' stage geometry).
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const Args& a, int rb, int ks0, int ks1, float (&acc)[kMS][kNT8][4]) {
    FixSp24<kType, kCW, kMS, kNT8, kKS, kNG>(a,
                                             Sp24Args{static_cast<const uint4*>(a.a0), nullptr, a.b, a.c, a.m, a.k, a.n,
                                                      a.strips, a.ksteps, 1, 0, (kCW / kNG) * kMS, kKS / 32, a.kstages},
                                             rb, ks0, ks1, acc);
  }
};


// 2:4 tiles as TwoFourTiled, multiplied by warpgroup MMA (wgmma.mma_async.sp, sm_90a): each
// warp loads its strip's A fragment and metadata from the stage into registers, and the
// warpgroup issues one m64nNk32 per k-step with B read by the tensor cores from the stage
// through a descriptor (B staged as kBTma, N rounded up to 16 / 32 / 64, N = 8 as kBLd, or,
// N % 8 != 0, by the consumers in kBTma's layout: kBWgRows).
// The four warps of a warpgroup own four strips of the row block (any four: rows need not be
// contiguous); kNT8 8 is the instruction's N. Needs kNG == 1 and kCW % 4 == 0.
// kLds: the fragments and metadata read with explicit ld.shared instead of generic loads (the
// GEMM engine's 2:4 consumers waited on the generic ones: ncu put 30 % of their stall samples
// there, and ld.shared gained 10-14 %; v11). Here the H200 put TwoFourWgLds (engine_variants
// group 9) within 4 % of TwoFourWg either way (v13); the addon runs TwoFourWg.
// kK1: B read as kBWgK1 (N = 1 only; the host sets it up with SetupB's k_major_n1).
// (v63: the stage's wgmma in two chains of sums instead of one, so that the last stage's 0.25 us
// from its arrival to its release would halve, measured at N = 1 on an H100: 0.25 against 0.26
// us a stage, the launch unchanged, so the chain is not what that time is; removed, in git at
// 3788c1f.)
template <bool kLds, bool kK1 = false>
struct TwoFourWgT : TwoFourTiled {
  static constexpr bool kWgB = true;  // B through a descriptor (ragged N: kBWgRows)
  static constexpr bool kBK1 = kK1;
  // One warp's A fragments and metadata words of a stage: every strip, every k-step.
  template <int kMS, int kKS>
  struct Frags {
    uint32_t af[kMS][kKS / 32][4];
    uint32_t e[kMS][kKS / 32];
  };
  template <int kMS, int kKS>
  __device__ static void Load(Frags<kMS, kKS>& f, const unsigned char* st) {
    constexpr int kSteps = kKS / 32;
    const int warp = threadIdx.x >> 5;
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms)
#pragma unroll
      for (int kt = 0; kt < kSteps; ++kt) {
        const unsigned char* d = st + ((warp * kMS + ms) * kSteps + kt) * kSp24TileBytes;
        if constexpr (kLds) {
          const uint32_t at = SmemAddr(d), lane = threadIdx.x & 31;
          uint32_t(&x)[4] = f.af[ms][kt];
          asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                       : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3])
                       : "r"(at + 16 * lane));
          asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(f.e[ms][kt]) : "r"(at + 512 + 4 * Sp24MetaWord(lane)));
        } else {
          LoadSp24Fragment(Sp24TileAt{d, d + 512}, f.af[ms][kt], f.e[ms][kt]);
        }
      }
  }
  // The stage's wgmma group (one m64nNk32 per k-step and strip, B through the stage's
  // descriptor), committed, not waited for.
  template <DType kType, int kMS, int kNT8, int kKS>
  __device__ static void Multiply(const Args& a, const unsigned char* bs, const Frags<kMS, kKS>& f,
                                  float (&acc)[kMS][kNT8][4]) {
    const uint32_t b0 = SmemAddr(bs);
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) wg::Pin<kNT8 * 4>(&acc[ms][0][0]);
    wg::Fence();
    // A k-step's B: 32 rows of 16 kNT8 bytes, or (kBWgK1, N = 1: K-major) 32 halves in 64 bytes.
    static_assert(!kK1 || kNT8 == 1, "kBWgK1 has one n-tile");
    constexpr int kBStep = kK1 ? 64 : 32 * 16 * kNT8;
    using Mma = std::conditional_t<kK1, wg::WgmmaSpK<kType>, wg::WgmmaSp<kType, 8 * kNT8>>;
#pragma unroll
    for (int kt = 0; kt < kKS / 32; ++kt) {
      const uint64_t desc = wg::Desc(a.b_desc, b0 + kt * kBStep);
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) Mma::Run(&acc[ms][0][0], f.af[ms][kt], desc, f.e[ms][kt]);
    }
    wg::Commit();
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    static_assert(kNG == 1 && kCW % 4 == 0, "whole warpgroups, no n-split");
    // Every k-step of the stage, every strip: the tiled stream pads a row block's last strips
    // and a stage's k-steps past K with zero tiles (B's rows past K arrive as zeros), and a
    // uniform path lets the wgmma chain run unserialised.
    Frags<kMS, kKS> f;
    Load<kMS, kKS>(f, st);
    Multiply<kType, kMS, kNT8, kKS>(a, bs, f, acc);
    wg::Wait<0>();
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) wg::Pin<kNT8 * 4>(&acc[ms][0][0]);
  }
};
using TwoFourWg = TwoFourWgT<false>;
using TwoFourWgLds = TwoFourWgT<true>;
// N = 1 with B as it is (kBWgK1): the addon's s24e at N = 1.
using TwoFourWgK1 = TwoFourWgT<false, true>;

// Dense f16/bf16 in DenseTiled's stages, multiplied by warpgroup MMA with A and B both read
// through descriptors (sm_90a; the engine's dense proof, workbench only). The host lays a
// stage out as kKS / 64 images of kRows rows x 128 bytes with the 128-byte swizzle (16-byte
// chunk c of row r at chunk c ^ (r & 7); DenseTiled's own layout when kKS is 64), which is the
// layout a K-major descriptor names: the consumers load nothing, and warpgroup g issues kKS / 16
// m64nNk16 on rows 64 g .. 64 g + 63 (the rows of its four warps' strips). B is staged as for
// TwoFourWg. Every k16 slice of a stage runs: columns past K are zero in the images and B's
// rows past K arrive as zeros. (DenseTiled's mma.sync consumers spent about 370 instructions
// per warp and stage, 8 cycles apart: 25 GB/s per SM at one block per SM, ncu v13.)
// Needs kMS == 1, kNG == 1, kCW % 4 == 0, kKS % 64 == 0.
struct DenseWg : DenseTiled {
  static constexpr bool kWgB = true;
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int, int, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    static_assert(kMS == 1 && kNG == 1 && kCW % 4 == 0 && kKS % 64 == 0, "warpgroups of contiguous rows, 64-column images");
    constexpr int kImage = 16 * kCW * 128;  // one 64-column image of the stage's rows
    const int g = (threadIdx.x >> 5) / 4;
    // A slice's start is an addition to the 14-bit address field (shared addresses < 2^18).
    const uint64_t da = wg::Desc(wg::kSwizzle128KMajor, SmemAddr(st) + g * 64 * 128), db = wg::Desc(a.b_desc, SmemAddr(bs));
    wg::Pin<kNT8 * 4>(&acc[0][0][0]);
    wg::Fence();
#pragma unroll
    for (int kk = 0; kk < kKS / 16; ++kk)
      wg::WgmmaSs<kType, 8 * kNT8>::Run(&acc[0][0][0], da + (((kk / 4) * kImage + 32 * (kk % 4)) >> 4),
                                         db + ((kk * 16 * 16 * kNT8) >> 4));
    wg::Commit();
    wg::Wait<0>();
    wg::Pin<kNT8 * 4>(&acc[0][0][0]);
  }
};

}  // namespace engine
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_ENGINE_CUH_
