// Workbench for the streaming engine (native/cuda/spmm/stream_engine.cuh), outside the addon:
// checks every variant against a float64 reference (poisoned outputs, fresh random inputs,
// awkward shapes, Inf/NaN in B) and times it beside cuBLAS (loaded at run time): CUDA-event
// medians with a cold L2, and the CUDA-graph time per launch over rotated copies of A.
// Built on the GPU machine by engine_build.sh (one object per variant group, in parallel).
//   engine_probe check | checksmall    (checksmall: the small cases, for compute-sanitizer)
//   engine_probe time FILTER [shapes...]      FILTER: a variant-name prefix (dense, s24, ...)
//   engine_probe one VARIANT M K N            a few launches of one variant (Nsight Compute)
//   engine_probe trace VARIANT M K N          where one launch's time goes, block by block
//   engine_probe bracket VARIANT M K N        the gaps before its first block and after its last (stamp
//                                             kernels on the same stream), beside an empty kernel alike
#include "scripts/gpu/probe/engine_variants.h"
#include "scripts/gpu/probe/stage_report.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/sparse24.h"
#include "cuda/spmm/stream_engine_host.h"

using namespace sparse;
using namespace sparse::probe;

// A as a dense M x K host matrix (2:4 when `two_four`: two of every four columns, fewer in
// some groups when `special`).
static std::vector<uint16_t> RandomA(int m, int k, bool two_four, bool special, DType t, std::mt19937_64& rng) {
  std::vector<uint16_t> a(static_cast<size_t>(m) * k, 0);
  std::normal_distribution<float> nrm(0.f, 1.f);
  for (int r = 0; r < m; ++r) {
    for (int g = 0; g * 4 < k; ++g) {
      int pick[4] = {0, 1, 2, 3};
      int keep = 4;
      if (two_four) {
        std::shuffle(pick, pick + 4, rng);
        keep = special ? static_cast<int>(rng() % 3) : 2;
      }
      for (int i = 0; i < keep; ++i) {
        const int c = g * 4 + pick[i];
        if (c >= k) continue;
        float v = nrm(rng);
        if (v == 0.f) v = 1.f;
        a[static_cast<size_t>(r) * k + c] = ToBits(v, t);
      }
    }
  }
  return a;
}

// float64 reference, sparse semantics (zeros of A skipped: 0 x Inf contributes nothing).
static void Reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int m, int k, int n, DType t,
                      bool sparse_sem, std::vector<double>* ref) {
  ref->assign(static_cast<size_t>(m) * n, 0.0);
  std::vector<double> bd(b.size());
  for (size_t i = 0; i < b.size(); ++i) bd[i] = FromBits(b[i], t);
  for (int r = 0; r < m; ++r) {
    double* out = ref->data() + static_cast<size_t>(r) * n;
    for (int c = 0; c < k; ++c) {
      const uint16_t bits = a[static_cast<size_t>(r) * k + c];
      if (sparse_sem && (bits & 0x7fff) == 0) continue;
      const double v = FromBits(bits, t);
      const double* brow = bd.data() + static_cast<size_t>(c) * n;
      for (int j = 0; j < n; ++j) out[j] += v * brow[j];
    }
  }
}

static double Compare(const std::vector<uint16_t>& c, const std::vector<double>& ref, DType t, int* bad) {
  ErrorSum e;
  for (size_t i = 0; i < ref.size(); ++i) e.Add(ref[i], FromBits(c[i], t), t);
  *bad = e.bad;
  return e.Relative();
}

// The operand of one format on the device (tiled formats: laid out for the variant's row
// block of `rows` rows and stage of `kks` columns).
struct Operand {
  DevBuf a0{0}, a1{0};
  int strips = 0, ksteps = 0;
  size_t bytes = 0;  // bytes of the weight stream
  static void Put(DevBuf& d, const void* src, size_t bytes) {
    DevBuf x(bytes);
    std::swap(d.p, x.p), std::swap(d.bytes, x.bytes);
    CK(cudaMemcpy(d.p, src, bytes, cudaMemcpyHostToDevice));
  }
  // wg (dense): the stage as kks / 64 images of `rows` rows x 64 columns (DenseWg), each row's
  // 16-byte chunks swizzled as DenseTiled's (the same layout when kks is 64).
  Operand(const std::vector<uint16_t>& dense, int m, int k, bool two_four, bool tiled, bool wg, int rows, int kks, DType t) {
    if (!two_four && !tiled) {
      Put(a0, dense.data(), dense.size() * 2);
      bytes = dense.size() * 2;
      return;
    }
    if (!two_four) {
      const int rbs = (m + rows - 1) / rows, kst = (k + kks - 1) / kks;
      std::vector<uint16_t> out(static_cast<size_t>(rbs) * kst * rows * kks, 0);
      for (int rb = 0; rb < rbs; ++rb)
        for (int ks = 0; ks < kst; ++ks) {
          uint16_t* run = out.data() + (static_cast<size_t>(rb) * kst + ks) * rows * kks;
          for (int r = 0; r < rows && rb * rows + r < m; ++r)
            for (int c = 0; c < kks && ks * kks + c < k; ++c) {
              const size_t at = wg ? static_cast<size_t>(c / 64) * rows * 64 + static_cast<size_t>(r) * 64 +
                                         (((c % 64) / 8) ^ (r & 7)) * 8 + c % 8
                                   : static_cast<size_t>(r) * kks + (((c / 8) ^ (r & 7)) * 8) + c % 8;
              run[at] = dense[static_cast<size_t>(rb * rows + r) * k + ks * kks + c];
            }
        }
      Put(a0, out.data(), out.size() * 2);
      bytes = static_cast<size_t>(m) * k * 2;
      return;
    }
    std::vector<int> off, col;
    std::vector<uint16_t> val;
    DenseToCsr(dense, m, k, &off, &col, &val);
    Sp24Tiles tl;
    const std::string err = BuildSp24Tiles(m, k, off.data(), col.data(), val.data(), &tl);
    if (!err.empty()) {
      std::printf("build: %s\n", err.c_str());
      std::exit(1);
    }
    strips = tl.strips, ksteps = tl.ksteps;
    bytes = tl.Bytes();
    if (!tiled) {
      Put(a0, tl.values.data(), tl.values.size() * 2);
      Put(a1, tl.meta.data(), tl.meta.size() * 4);
      return;
    }
    const std::vector<uint8_t> out = StageSp24Tiles(tl, rows / 16, kks / 32);
    Put(a0, out.data(), out.size());
  }
};

static Operand* Build(const std::vector<uint16_t>& a, int m, int k, const Variant& v) {
  return new Operand(a, m, k, v.two_four, v.tiled, v.wg && !v.two_four, v.rows, v.kks, v.type);
}

// An environment switch: set and not "0".
static bool Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) != 0;
}
// An environment number: its value, 0 when unset.
static int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : 0;
}

static Launch MakeLaunch(const Variant& v, const Operand& op, const void* b, void* c, int m, int k, int n,
                         EngineWorkspace& w) {
  Launch l;
  sparse::cuda::engine::Args& a = l.args;
  a.a0 = op.a0.p, a.a1 = op.a1.p, a.b = b, a.c = c;
  a.ws = static_cast<float*>(w.ws.p), a.counters = static_cast<int*>(w.counters.p);
  a.m = m, a.k = k, a.n = n;
  a.strips = op.strips, a.ksteps = op.ksteps;
  a.row_blocks = (m + v.rows - 1) / v.rows;
  const int kdim = v.two_four ? op.ksteps * 32 : k;
  a.kstages = (kdim + v.kks - 1) / v.kks;
  a.total = static_cast<long long>(a.row_blocks) * a.kstages;
  // ENGINE_WIDE=1: a wgmma kernel may run an N below its width (Fits); B's box is the kernel's.
  // The kBK1 formats (group 12) read B through its K-major descriptor (kBWgK1; N = 1 only: Fits).
  // The 2:4 formats as the addon's (N = 24, 40, 56: B laid out by the consumers); ENGINE_B_TMA=1:
  // by the tensor copy of the wider box, as before v41.
  if (sparse::engine_host::SetupB(&a, b, n, k, v.kks, v.wg, v.wg && Env("ENGINE_WIDE") ? 8 * v.nt8 : 0, v.k1,
                                  v.two_four && !Env("ENGINE_B_TMA")) !=
      cudaSuccess) {
    std::printf("cannot stage B for n=%d k=%d box %d\n", n, k, v.kks);
    std::exit(1);
  }
  l.fn = v.fn;
  l.smem = v.smem;
  const long long cap = static_cast<long long>(SmCount()) * v.per_sm;
  l.grid = static_cast<int>(std::min<long long>(cap, a.total));
  // ENGINE_FIXUP=0 slots (default), 2 drop the partial sums (timing only: C is wrong).
  a.fixup = EnvInt("ENGINE_FIXUP");
  // ENGINE_ROTATE=1: each block walks its share of a row block's K stages from a stage of its
  // own (Args::rotate). v21 at N = 16: 0.96x the in-order time (ten cases, 0.91-1.01), the ring's
  // first fill no longer late; v13 at N = 1, 8, 64 (w8): within noise; v22 at N = 8, 32, 64:
  // 1.04x the time. The addon sets it at N = 16 only (EngineLaunch, B's 16-column tensor copy).
  a.rotate = EnvInt("ENGINE_ROTATE");
  // The ring's first stages: all their A before any B (Args::a_first) when launched with PDL
  // (ENGINE_PDL=1, required) or with ENGINE_A_FIRST=1 (the order before v14); else each stage's
  // B after its A.
  a.a_first = (Env("ENGINE_PDL") || Env("ENGINE_A_FIRST")) ? 1 : 0;
  // ENGINE_PREFETCH=1: the range's last segment loads its row block's other sums ahead
  // (Args::prefetch; stream-K ranges only).
  a.prefetch = Env("ENGINE_PREFETCH") ? 1 : 0;
  // ENGINE_PUSH=1: split-K clusters of 2 meet by ClusterPush (Args::push) where the kernel has
  // the area (Engine::kPushBytes), else by ClusterReduce.
  a.push = Env("ENGINE_PUSH") ? 1 : 0;
  // ENGINE_SKIP_B=1: B is never copied (Args::skip_b; timing only: C is wrong).
  a.skip_b = Env("ENGINE_SKIP_B") ? 1 : 0;
  // ENGINE_ROWS_WORDS=1: ragged rows of B (N % 8 != 0) read a word at a time (Args::rows_words).
  a.rows_words = Env("ENGINE_ROWS_WORDS") ? 1 : 0;
  // ENGINE_RING=R: R ring slots in use (Args::ring; 2 to the variant's stages, 0 or unset: all).
  a.ring = EnvInt("ENGINE_RING");
  // ENGINE_L2_AHEAD=D: the next D stages' A past the ring's kept in flight into L2 (Args::l2_ahead;
  // unset: none, where the addon runs Stream24L2Ahead's one stage, or none on stream-K shares past 25
  // stages a block at N > 16).
  a.l2_ahead = EnvInt("ENGINE_L2_AHEAD");
  // ENGINE_B_BULK=1 (timing only: C is wrong where it applies): B at N = 16 / 32 / 64 on the
  // wgmma formats moved as N = 8's is, one bulk copy of the stage's contiguous rows, instead
  // of one tensor copy with the swizzle; the consumers still read it through the swizzled
  // descriptor. What the tensor copy itself costs (v20: at N = 16 the copy of 32-byte rows costs
  // 3-13 % and a bulk copy nothing; at N = 32-64 the tensor copy is within 3 % of none). v21 found
  // where: in the ring's first fill every block asks for the same stage's B at once, and the
  // tensor copy's 32-byte requests (2.4x the bulk form's L2 requests) make stages 1-3 late.
  if (Env("ENGINE_B_BULK") && a.b_read == sparse::cuda::engine::kBTma && v.wg) {
    a.b_read = sparse::cuda::engine::kBLd;
    a.b_stride = 2 * n, a.b_cols = n, a.b_swizzle = 0;
  }
  // ENGINE_LANES=0: lane 0 arrives for its warp after __syncwarp (Args::lanes_arrive; racecheck
  // reports the ordering as hazards, v15, v20); unset or 1: every lane, as in the addon.
  if (std::getenv("ENGINE_LANES")) a.lanes_arrive = Env("ENGINE_LANES") ? 1 : 0;
  // ENGINE_CLUSTER=auto: the addon's plan (engine_host::Plan: one block per row block, split-K
  // in clusters, or stream-K); ENGINE_CLUSTER=C (2 ... 8): split-K in clusters of C where all
  // row blocks' clusters are resident at once, else stream-K; ENGINE_CLUSTER=rows: one block
  // per row block where they fit at once, else stream-K.
  a.cluster = 0;
  if (const char* c = std::getenv("ENGINE_CLUSTER")) {
    StreamPlan p{l.grid, 0};
    if (std::strcmp(c, "auto") == 0) {
      p = sparse::engine_host::Plan(v.fn, v.threads, l.smem, a.row_blocks, a.kstages);
    } else if (std::strcmp(c, "rows") == 0) {
      // One block per row block (all its K stages), where the row blocks fit at once.
      if (a.row_blocks <= SmCount() * v.per_sm) p = StreamPlan{a.row_blocks, 0};
    } else {
      const int cl = std::atoi(c);
      if (cl > 1 && cl <= kMaxStreamCluster && a.row_blocks <= sparse::engine_host::ResidentClusters(v.fn, v.threads, l.smem, cl))
        p = StreamPlan{a.row_blocks * cl, cl};
    }
    l.grid = p.grid;
    a.cluster = p.cluster;
    l.cluster = p.cluster;
  }
  a.slots = sparse::engine_host::MaxSlots(a.row_blocks, a.kstages, l.grid);
  const size_t need = static_cast<size_t>(a.row_blocks) * a.slots * v.rows * 8 * v.nt8 * 4;
  if (need > w.ws.bytes) {
    std::printf("workspace too small: %zu bytes needed\n", need);
    std::exit(1);
  }
  l.threads = v.threads;
  return l;
}

// ENGINE_PDL=1: launched with programmatic dependent launch (the kernel's producer fetches its
// first stages' weights while the previous kernel on the stream finishes).
static cudaError_t Run(const Launch& l, cudaStream_t s) {
  static const bool pdl = Env("ENGINE_PDL");
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(l.grid), cfg.blockDim = dim3(l.threads), cfg.dynamicSmemBytes = l.smem, cfg.stream = s;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (l.cluster > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = l.cluster, attr[n].val.clusterDim.y = 1, attr[n].val.clusterDim.z = 1;
    ++n;
  }
  cfg.attrs = attr, cfg.numAttrs = n;
  sparse::cuda::engine::Args a = l.args;
  sparse::cuda::engine::SetDivisors(a, l.grid);
  return cudaLaunchKernelEx(&cfg, l.fn, a);
}

// The variants that fit N (their n-tiles cover N, and N is not far below them).
// VARIANTS=a,b (substrings of names) narrows every mode to the variants that match one.
static bool Fits(const Variant& v, int n) {
  if (const char* f = std::getenv("VARIANTS")) {
    bool hit = false;
    for (std::string rest = f; !rest.empty();) {
      const size_t c = rest.find(',');
      const std::string part = rest.substr(0, c);
      hit |= !part.empty() && std::strstr(v.name, part.c_str()) != nullptr;
      rest = c == std::string::npos ? "" : rest.substr(c + 1);
    }
    if (!hit) return false;
  }
  if (v.k1 && n != 1) return false;  // kBWgK1 is N = 1's
  // ENGINE_WIDE=1: any N up to the width (the wgmma kernels; B's box then is the kernel's).
  if (v.wg && Env("ENGINE_WIDE")) return n <= 8 * v.nt8;
  return n <= 8 * v.nt8 && (v.nt8 == 1 || n > 4 * v.nt8);
}

static int Check(bool small) {
  std::mt19937_64 rng(20261201);
  struct Case {
    int m, k, n;
    bool special, inf;
  };
  const Case cases[] = {
      {7, 96, 8, false, false},     {16, 32, 8, false, false},     {1, 32, 1, false, false},
      {33, 64, 1, true, false},     {100, 320, 16, true, false},   {257, 1024, 64, true, false},
      {129, 256, 24, true, false},  {64, 4096, 16, false, false},  {300, 2048, 8, true, true},
      {512, 512, 32, false, false}, {1000, 3008, 40, true, true},  {131, 1000, 3, true, true},
      {4096, 4096, 8, false, false}, {2000, 11008, 64, false, true}, {77, 16, 64, false, false},
      // N % 8 != 0 (the wgmma formats' B staged by the consumers), one per instruction N.
      {257, 1000, 13, true, true},  {130, 2080, 29, true, false},  {300, 4096, 63, false, true},
      {1000, 4096, 1, false, false}, {45, 520, 7, true, false},
  };
  int failures = 0, runs = 0;
  EngineWorkspace w;
  for (const Case& cs : cases) {
    // `small`: the cases a sanitizer gets through in a minute or two.
    if (small && static_cast<long long>(cs.m) * cs.k > (1 << 20)) continue;
    for (DType t : {DType::kF16, DType::kBF16}) {
      const double tol = t == DType::kF16 ? 5e-3 : 2e-2;
      for (bool two_four : {false, true}) {
        if (!two_four && (cs.k % 16 != 0 || t == DType::kBF16)) continue;
        std::vector<uint16_t> a = RandomA(cs.m, cs.k, two_four, cs.special, t, rng);
        std::vector<uint16_t> b(static_cast<size_t>(cs.k) * cs.n);
        std::normal_distribution<float> nrm(0.f, 1.f);
        for (auto& x : b) x = ToBits(nrm(rng), t);
        if (cs.inf && two_four) {
          for (int j = 0; j < cs.n; ++j) b[static_cast<size_t>(cs.k / 3) * cs.n + j] = ToBits(INFINITY, t);
          b[static_cast<size_t>(cs.k / 2) * cs.n] = ToBits(NAN, t);
        }
        std::vector<double> ref;
        Reference(a, b, cs.m, cs.k, cs.n, t, two_four, &ref);
        DevBuf db(b.size() * 2), dc(static_cast<size_t>(cs.m) * cs.n * 2);
        CK(cudaMemcpy(db.p, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
        for (const Variant& v : AllVariants()) {
          if (v.two_four != two_four || v.type != t || !Fits(v, cs.n)) continue;
          std::unique_ptr<Operand> op(Build(a, cs.m, cs.k, v));
          Launch l = MakeLaunch(v, *op, db.p, dc.p, cs.m, cs.k, cs.n, w);
          for (int rep = 0; rep < 2; ++rep) {  // twice: the workspace must be clean again
            CK(cudaMemset(dc.p, 0xff, dc.bytes));
            cudaError_t e = Run(l, 0);
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            ++runs;
            if (e != cudaSuccess) {
              std::printf("FAIL %s m=%d k=%d n=%d: %s\n", v.name, cs.m, cs.k, cs.n, cudaGetErrorName(e));
              return 1;
            }
            std::vector<uint16_t> c(static_cast<size_t>(cs.m) * cs.n);
            CK(cudaMemcpy(c.data(), dc.p, c.size() * 2, cudaMemcpyDeviceToHost));
            int bad = 0;
            const double err = Compare(c, ref, t, &bad);
            if (bad || !(err < tol)) {
              std::printf("FAIL %s m=%d k=%d n=%d rep %d: relerr %.3g, %d bad\n", v.name, cs.m, cs.k, cs.n, rep, err,
                          bad);
              ++failures;
            }
          }
        }
      }
    }
  }
  std::printf("check: %d runs, %d failures\n", runs, failures);
  return failures ? 1 : 0;
}

// ---------------------------------------------------------------------------------------
// Timing

static int Time(const char* filter, const std::vector<std::pair<int, int>>& shapes, const std::vector<int>& ns,
                bool all_variants) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Cublas cb;
  const bool have_cublas = cb.Load(s);
  if (!have_cublas) std::printf("cuBLAS not loaded: dense columns empty\n");
  Timer timer(s);
  EngineWorkspace w;
  std::mt19937_64 rng(7);
  std::printf("%-34s %-12s %4s | %8s %8s | %8s %8s | %6s %6s | %7s | %4s %2s\n", "variant", "shape", "n", "cub_ev",
              "cub_gr", "ev_us", "gr_us", "x_ev", "x_gr", "TB/s_gr", "grid", "cl");
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (bool two_four : {false, true}) {
      const char* fam = two_four ? (t == DType::kF16 ? "s24_f16" : "s24_bf16") : (t == DType::kF16 ? "dense_f16" : "dense_bf16");
      if (std::strncmp(fam, filter, std::strlen(filter)) != 0 && std::strncmp(filter, fam, std::strlen(fam)) != 0 &&
          std::strcmp(filter, "all") != 0)
        continue;
      bool any = false;
      for (const Variant& v : AllVariants()) any |= v.two_four == two_four && v.type == t;
      if (!any) continue;
      for (auto [m, k] : shapes) {
        std::vector<uint16_t> a = RandomA(m, k, two_four, false, t, rng);
        const size_t abytes = two_four ? a.size() * 9 / 16 : a.size() * 2;
        const int copies = static_cast<int>(std::max<size_t>(3, (256u << 20) / abytes + 1));
        const auto dense = RotatedCopies(a);
        // Operands per layout (variants of one layout share them), built on first use.
        std::vector<std::pair<std::string, std::vector<Operand*>>> layouts;
        auto ops_for = [&](const Variant& v) -> std::vector<Operand*>& {
          const std::string key = std::to_string(v.tiled) + "/" + std::to_string(v.tiled ? v.rows : 0) + "/" +
                                  std::to_string(v.tiled ? v.kks : 0) + "/" + std::to_string(v.wg && !v.two_four);
          for (auto& l : layouts)
            if (l.first == key) return l.second;
          layouts.push_back({key, {}});
          for (int i = 0; i < copies; ++i) layouts.back().second.push_back(Build(a, m, k, v));
          return layouts.back().second;
        };
        for (int n : ns) {
          const std::vector<uint16_t> b = RandomB(k, n, t, rng);
          DevBuf db(b.size() * 2), dc(static_cast<size_t>(m) * n * 2);
          CK(cudaMemcpy(db.p, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
          const DenseTimes cub = TimeDense(cb, have_cublas, timer, dense, db.p, dc.p, m, k, n, t);
          const double cub_ev = cub.events, cub_gr = cub.graph;
          char shape[32];
          std::snprintf(shape, sizeof(shape), "%dx%d", m, k);
          double best = 1e30;
          std::string best_line;
          for (const Variant& v : AllVariants()) {
            if (v.two_four != two_four || v.type != t || !Fits(v, n)) continue;
            std::vector<Operand*>& ops = ops_for(v);
            std::vector<Launch> ls;
            for (Operand* o : ops) ls.push_back(MakeLaunch(v, *o, db.p, dc.p, m, k, n, w));
            auto f = [&](int i) { return Run(ls[i % ls.size()], s); };
            const double ev = timer.Events(f);
            const double gr = timer.Graph(f, static_cast<int>(ops.size()) * 2);
            char line[256];
            std::snprintf(line, sizeof(line), "%-34s %-12s %4d | %8.1f %8.1f | %8.1f %8.1f | %6.2f %6.2f | %7.2f | %4d %2d",
                          v.name, shape, n, cub_ev, cub_gr, ev, gr, cub_ev / ev, cub_gr / gr,
                          (ops[0]->bytes + (static_cast<double>(k) + m) * n * 2) / gr / 1e6, ls[0].grid, ls[0].cluster);
            if (all_variants) std::printf("%s\n", line);
            if (ev < best) best = ev, best_line = line;
          }
          if (!all_variants) std::printf("%s\n", best_line.c_str());
          std::fflush(stdout);
        }
        for (auto& l : layouts)
          for (Operand* o : l.second) delete o;
      }
    }
  }
  return 0;
}

// One variant on one problem, ready to launch (One, TraceOne): A (random, fixed seed), its
// operand, B (all 0x3c3c), C and the workspace.
struct OneCase {
  std::vector<uint16_t> a;
  std::unique_ptr<Operand> op;
  EngineWorkspace w;
  DevBuf db, dc;
  Launch l;
  OneCase(const Variant& v, int m, int k, int n)
      : db(static_cast<size_t>(k) * n * 2), dc(static_cast<size_t>(m) * n * 2) {
    std::mt19937_64 rng(3);
    a = RandomA(m, k, v.two_four, false, v.type, rng);
    op.reset(Build(a, m, k, v));
    CK(cudaMemset(db.p, 0x3c, db.bytes));
    l = MakeLaunch(v, *op, db.p, dc.p, m, k, n, w);
  }
};

// The variant named `name`, or null (after saying so).
static const Variant* Named(const char* name) {
  for (const Variant& v : AllVariants())
    if (std::strcmp(v.name, name) == 0) return &v;
  std::printf("no variant %s\n", name);
  return nullptr;
}

// A few launches of one variant (for Nsight Compute), then cuBLAS's on the same operands.
static int One(const char* name, int m, int k, int n) {
  const Variant* v = Named(name);
  if (!v) return 2;
  OneCase c(*v, m, k, n);
  for (int i = 0; i < 3; ++i) CK(Run(c.l, 0));
  CK(cudaDeviceSynchronize());
  std::printf("one: %s %dx%d n=%d grid %d smem %d\n", name, m, k, n, c.l.grid, c.l.smem);
  CublasBeside(c.a, c.db.p, c.dc.p, m, k, n, v->type);
  return 0;
}

// An empty kernel launched like a variant: the floor of an event-timed launch of that size.
static __global__ void EmptyKernel(sparse::cuda::engine::Args) {}

// The global timer (ns) when a one-thread kernel runs: launched just before and just after a
// variant on the same stream, it brackets that launch.
static __global__ void StampKernel(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  *out = t;
}
// An empty kernel that stamps each block's entry like the engine's Trace (words 4 and 5).
static __global__ void EmptyStampKernel(sparse::cuda::engine::Args a) {
  if (threadIdx.x != 0 || a.trace == nullptr) return;
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  a.trace[blockIdx.x * sparse::cuda::engine::kTraceWords + 4] = t;
  a.trace[blockIdx.x * sparse::cuda::engine::kTraceWords + 5] = t;
}

// Where a launch's time outside its grid span goes (`bracket`): a stamp kernel before it and
// one after it on the same stream, no L2 flush; medians over 15 launches of the gaps from the
// stamp before to the grid's first entry and from the grid's last end to the stamp after, for
// the variant and for an empty kernel launched alike (same grid, threads, shared memory and
// cluster). Where the variant's gaps exceed the empty kernel's, its blocks start late (first)
// or the launch completes after its last block's end stamp (second: outstanding copies, the
// stores' flush).
static int BracketOne(const char* name, int m, int k, int n) {
  const Variant* v = Named(name);
  if (!v) return 2;
  OneCase c(*v, m, k, n);
  Launch& l = c.l;
  constexpr int kW = sparse::cuda::engine::kTraceWords;
  DevBuf tr(static_cast<size_t>(l.grid) * kW * 8), st(16);
  l.args.trace = static_cast<unsigned long long*>(tr.p);
  Launch empty = l;
  empty.fn = EmptyStampKernel;
  CK(cudaFuncSetAttribute(EmptyStampKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, l.smem));
  auto* stamps = static_cast<unsigned long long*>(st.p);
  std::printf("bracket: %s %dx%d n=%d grid %d cluster %d smem %d\n", name, m, k, n, l.grid, l.cluster, l.smem);
  for (const Launch* x : {&l, &empty}) {
    std::vector<double> before, span, after;
    for (int r = 0; r < 16; ++r) {
      CK(cudaMemset(tr.p, 0, tr.bytes));
      CK(cudaDeviceSynchronize());
      StampKernel<<<1, 1>>>(stamps);
      CK(Run(*x, 0));
      StampKernel<<<1, 1>>>(stamps + 1);
      CK(cudaDeviceSynchronize());
      if (r == 0) continue;  // warm-up
      std::vector<unsigned long long> t(static_cast<size_t>(l.grid) * kW);
      unsigned long long s[2];
      CK(cudaMemcpy(t.data(), tr.p, t.size() * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(s, st.p, 16, cudaMemcpyDeviceToHost));
      unsigned long long g0 = ~0ull, g1 = 0;
      for (int b = 0; b < l.grid; ++b) g0 = std::min(g0, t[b * kW + 4]), g1 = std::max(g1, t[b * kW + 5]);
      before.push_back((static_cast<double>(g0) - static_cast<double>(s[0])) * 1e-3);
      span.push_back((static_cast<double>(g1) - static_cast<double>(g0)) * 1e-3);
      after.push_back((static_cast<double>(s[1]) - static_cast<double>(g1)) * 1e-3);
    }
    auto med = [](std::vector<double> x) {
      std::sort(x.begin(), x.end());
      return x[x.size() / 2];
    };
    std::printf("  %-8s stamp -> first entry %6.2f us, grid span %6.2f us, last end -> stamp %6.2f us\n",
                x == &l ? "variant" : "empty", med(before), med(span), med(after));
  }
  return 0;
}

// Where one launch's time goes: per block (the kernel's Trace stamps, the launch after an L2
// flush) the wait from the grid's first entry to the block's entry, from entry to its first
// stage, the stream, and the fixup; the grid's span; and the events time of the same launch
// beside an empty kernel launched with the same grid, threads and shared memory.
static int TraceOne(const char* name, int m, int k, int n) {
  const Variant* v = Named(name);
  if (!v) return 2;
  OneCase c(*v, m, k, n);
  Launch& l = c.l;
  DevBuf tr(static_cast<size_t>(l.grid) * sparse::cuda::engine::kTraceWords * 8);
  CK(cudaMemset(tr.p, 0, tr.bytes));
  l.args.trace = static_cast<unsigned long long*>(tr.p);
  Timer timer;
  const double ev = timer.Events([&](int) { return Run(l, 0); }, 9);
  Launch empty = l;
  empty.fn = EmptyKernel;
  CK(cudaFuncSetAttribute(EmptyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, l.smem));
  const double ev_empty = timer.Events([&](int) { return Run(empty, 0); }, 9);
  Launch empty0 = empty;
  empty0.smem = 0;
  const double ev_empty0 = timer.Events([&](int) { return Run(empty0, 0); }, 9);
  std::vector<unsigned long long> t(static_cast<size_t>(l.grid) * sparse::cuda::engine::kTraceWords);
  CK(cudaMemcpy(t.data(), tr.p, t.size() * 8, cudaMemcpyDeviceToHost));  // the last launch's
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double us_per_cycle = 1e3 / clock_khz;
  unsigned long long g0 = ~0ull, g1 = 0;
  constexpr int kW = sparse::cuda::engine::kTraceWords;
  for (int b = 0; b < l.grid; ++b) g0 = std::min(g0, t[b * kW + 4]), g1 = std::max(g1, t[b * kW + 5]);
  std::vector<double> wait, producer, first, stream, fix, span, ready, tail;
  // The start as steps between SM-clock stamps (label, from word, to word), two tables: the start
  // split (v48: thread 0's first instruction (9) -> its barriers set (10) -> the producer past
  // __syncthreads (11) -> its branch (7) -> its first stage's A asked for (12)), and the
  // producer's own path (v50, its lane 0: items computed (13), past __syncthreads, past the
  // cluster arrival and the dependents' launch (14), its branch, the policy, ring and walk set
  // up (15), stage 0's coordinates and bytes (16), its arrival (17), its A issued). A block
  // counts in a table when every word of it is stamped.
  struct Step {
    const char* what;
    int from, to;
  };
  const std::vector<std::pair<const char*, std::vector<Step>>> tables = {
      {"the start, from thread 0's first instruction (SM clock)",
       {{"barriers set up", 9, 10}, {"-> producer past sync", 10, 11}, {"-> producer's branch", 11, 7},
        {"-> first A asked for", 7, 12}, {"first instr -> first A", 9, 12}, {"first instr -> entry", 9, 0},
        {"first instr -> stage 0", 9, 1}}},
      {"the producer's path (its lane 0; from thread 0's first instruction)",
       {{"items computed", 9, 13}, {"-> past __syncthreads", 13, 11}, {"-> cluster arr., launch", 11, 14},
        {"-> its branch", 14, 7}, {"-> policy, ring, walk", 7, 15}, {"-> stage 0's coords", 15, 16},
        {"-> its arrival", 16, 17}, {"-> its A issued", 17, 12}}}};
  std::vector<std::vector<std::vector<double>>> steps(tables.size());
  for (size_t q = 0; q < tables.size(); ++q) steps[q].resize(tables[q].second.size());
  auto cycles = [&](unsigned long long from, unsigned long long to) {
    return (static_cast<double>(to) - static_cast<double>(from)) * us_per_cycle;
  };
  for (int b = 0; b < l.grid; ++b) {
    const unsigned long long* x = &t[b * kW];
    for (size_t q = 0; q < tables.size(); ++q) {
      bool whole = true;
      for (const Step& st : tables[q].second) whole = whole && x[st.from] != 0 && x[st.to] != 0;
      if (!whole) continue;
      for (size_t i = 0; i < tables[q].second.size(); ++i)
        steps[q][i].push_back(cycles(x[tables[q].second[i].from], x[tables[q].second[i].to]));
    }
    if (x[6] != 0) ready.push_back((x[6] - x[2]) * us_per_cycle), tail.push_back((x[3] - x[6]) * us_per_cycle);
    wait.push_back((x[4] - g0) * 1e-3);
    if (x[7] != 0) producer.push_back((static_cast<double>(x[7]) - static_cast<double>(x[0])) * us_per_cycle);
    first.push_back((x[1] - x[0]) * us_per_cycle);
    stream.push_back((x[2] - x[1]) * us_per_cycle);
    fix.push_back((x[3] - x[2]) * us_per_cycle);
    span.push_back((x[5] - x[4]) * 1e-3);
  }
  auto row = [](const char* what, std::vector<double> x) {
    if (x.empty()) return;
    std::sort(x.begin(), x.end());
    std::printf("  %-22s min %6.2f  median %6.2f  max %6.2f us\n", what, x.front(), x[x.size() / 2], x.back());
  };
  std::printf("trace: %s %dx%d n=%d grid %d cluster %d smem %d, %lld items (%d row blocks x %d stages)\n", name, m,
              k, n, l.grid, l.cluster, l.smem, l.args.total, l.args.row_blocks, l.args.kstages);
  std::printf("  events %.2f us; empty kernel alike %.2f us (no shared memory: %.2f us); grid span %.2f us\n", ev,
              ev_empty, ev_empty0, (g1 - g0) * 1e-3);
  if (l.cluster > 1)
    std::printf("  clusters of %d: %d launched, at most %d resident at once\n", l.cluster, l.grid / l.cluster,
                sparse::engine_host::ResidentClusters(v->fn, v->threads, v->smem, l.cluster));
  row("entry after the first", wait);
  row("entry -> producer", producer);
  row("entry -> first stage", first);
  row("first -> last stage", stream);
  row("fixup and C", fix);
  row("block span", span);
  for (size_t q = 0; q < tables.size(); ++q) {
    if (steps[q][0].empty()) continue;
    std::printf("  %s:\n", tables[q].first);
    for (size_t i = 0; i < tables[q].second.size(); ++i) row(tables[q].second[i].what, steps[q][i]);
  }
  if (!ready.empty()) {
    std::printf("  the blocks that write C (%zu):\n", ready.size());
    row("last stage -> partners", ready);
    row("partners -> end", tail);
  }
  // TRACE_BLOCKS=1: one line per block (its SM, items, and the times above), to tell blocks
  // that stream slower for the same bytes by where they ran.
  const char* per_block = std::getenv("TRACE_BLOCKS");
  if (per_block != nullptr && per_block[0] == '1') {
    std::printf("  block   sm items |  entry  first stream    fix   span (us)\n");
    for (int b = 0; b < l.grid; ++b) {
      const unsigned long long* x = &t[b * kW];
      const long long items = l.cluster > 1 ? -1
                                            : l.args.total * (b + 1) / l.grid - l.args.total * b / l.grid;
      std::printf("  %5d %4llu %5lld | %6.2f %6.2f %6.2f %6.2f %6.2f\n", b, x[8], items, (x[4] - g0) * 1e-3,
                  (x[1] - x[0]) * us_per_cycle, (x[2] - x[1]) * us_per_cycle, (x[3] - x[2]) * us_per_cycle,
                  (x[5] - x[4]) * 1e-3);
    }
  }
  return 0;
}

// Where each stage's time goes (mode "stages"): the per-stage stamps of StageTrace for every
// block's first kStageTraceMax stages, after an L2 flush as Events does it. Per stage index,
// the median over the blocks that have it, in us from the block's entry (SM clock at the
// device's nominal rate): when the producer issued it, when the first consumer warp began to
// wait for it, when it was there, when it was computed and released. Then per block the sums
// of the consumers' busy time (there -> released) and of their waits, and the stages.
static int StagesOne(const char* name, int m, int k, int n) {
  const Variant* v = Named(name);
  if (!v) return 2;
  OneCase c(*v, m, k, n);
  Launch& l = c.l;
  Timer timer;
  const sparse::probe::StageTrace r =
      sparse::probe::TraceStages(l.args, l.grid, [&] { return timer.Events([&](int) { return Run(l, 0); }, 9); });
  std::printf("stages: %s %dx%d n=%d grid %d cluster %d, events %.2f us (SM clock at %.0f MHz nominal)\n", name, m, k, n,
              l.grid, l.cluster, r.events, 1.0 / r.us);
  sparse::probe::PrintStages(r);
  return 0;
}

// What an event-timed launch costs before any work (mode "launch"): an empty kernel with the
// engine's argument block, after the L2 flush as Timer::Events does it, by grid, threads,
// dynamic shared memory and cluster size; then the same with the flush kernel asked to prefer
// the largest shared-memory carveout (does the SMs' L1/shared reconfiguration cost the gap?).
static int LaunchCost() {
  Timer timer;
  CK(cudaFuncSetAttribute(EmptyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  CK(cudaFuncSetAttribute(EmptyKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::printf("%-6s %-7s %-8s %-7s | %8s\n", "grid", "threads", "smem_KB", "cluster", "ev_us");
  for (int carve = 0; carve < 2; ++carve) {
    if (carve) {
      CK(cudaFuncSetAttribute(FlushRead, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      std::printf("flush kernel prefers the largest shared-memory carveout:\n");
    }
    for (int grid : {96, 132, 264})
      for (int threads : {160, 320})
        for (int kb : {0, 100, 201})
          for (int cl : {0, 2, 4}) {
            if (grid % (cl ? cl : 1) || (kb > 110 && grid > 132)) continue;
            Launch l{};
            l.fn = EmptyKernel, l.grid = grid, l.threads = threads, l.smem = kb * 1024, l.cluster = cl;
            const double ev = timer.Events([&](int) { return Run(l, 0); }, 21);
            std::printf("%-6d %-7d %-8d %-7d | %8.2f\n", grid, threads, kb, cl, ev);
          }
  }
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode == "list") {
    for (const Variant& v : AllVariants()) std::printf("%s smem %d threads %d per_sm %d\n", v.name, v.smem, v.threads, v.per_sm);
    return 0;
  }
  if (mode == "check" || mode == "checksmall") return Check(mode == "checksmall");
  if (mode == "time" || mode == "timeall") {
    std::vector<std::pair<int, int>> shapes;
    for (int i = 3; i < argc && std::strchr(argv[i], 'x'); ++i) {
      int m = 0, k = 0;
      std::sscanf(argv[i], "%dx%d", &m, &k);
      shapes.push_back({m, k});
    }
    if (shapes.empty()) shapes = {{11008, 4096}, {4096, 11008}, {4096, 4096}};
    const char* nsenv = std::getenv("NS");
    std::vector<int> ns;
    if (nsenv) {
      for (const char* p = nsenv; *p;) {
        ns.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      ns = {8};
    }
    return Time(argc > 2 ? argv[2] : "all", shapes, ns, mode == "timeall");
  }
  if (mode == "launch") return LaunchCost();
  if (mode == "stages" && argc > 5) return StagesOne(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  if (mode == "bracket" && argc > 5) return BracketOne(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  if (mode == "trace" && argc > 5) return TraceOne(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  if (mode == "one" && argc > 5) return One(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]));
  std::printf("usage: engine_probe check | list | time[all] FILTER [MxK ...] (NS=8,16) | one|trace|stages|bracket VARIANT M K N\n");
  return 2;
}
