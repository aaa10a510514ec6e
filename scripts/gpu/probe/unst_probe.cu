// Workbench for the unstructured formats on the streaming engine (issue 24;
// native/cuda/spmm/stream_unstructured.cuh and stream_unstructured_wg.cuh, stream
// common/unstructured_stream.h; the decodes are unst_variants.h's kinds), outside the addon:
// checks them against a float64 reference of the dense product (poisoned outputs, fresh random
// inputs, awkward shapes, empty and dense tiles, empty rows, Inf/NaN in B) and times them
// beside cuBLAS (loaded at run time): CUDA-event medians with a cold L2, the CUDA-graph time per
// launch over rotated copies of A, and the time over the stream's byte floor (its bytes at the
// 4.18 TB/s the H200 copies at). Built by unst_build.sh (one object per kind and capacity).
//   unst_probe check                      every N-fitting variant with room for the matrix
//   unst_probe time [MxK ...]             SPARSITY=0.5,0.7,0.9  NS=1,8,16,32,64  TYPES=f16,bf16
//                                         KINDS=unst,unwgzf2,unbmp,... (default every kind of
//                                         unst_variants.h; a line per kind)
//   (check also takes KINDS: only those kinds' variants)
//   unst_probe one VARIANT M K N S        a few launches of one variant (Nsight Compute)
//   unst_probe stages VARIANT M K N S     where each stage's time goes (a kind with the engine's
//                                         trace hooks: unprt, unrowpt)
//   unst_probe list
// Launch experiments (environment, check and timing modes): UNST_GRID=B, UNST_FIXUP=2,
// UNST_CLUSTER=auto|C (split-K in clusters), UNST_LANES=0, UNST_SKIP_B=1 (MakeLaunch).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/unstructured_stream.h"
#include "cuda/spmm/stream_engine_host.h"
#include "scripts/gpu/probe/stage_report.h"
#include "scripts/gpu/probe/unst_variants.h"

using namespace sparse;
using namespace sparse::probe;

namespace {

constexpr double kCopyBytesPerSecond = 4.18e12;  // H200, measured copy (issue 24)

int SmCount() {
  int d = 0, n = 0;
  CK(cudaGetDevice(&d));
  CK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d));
  return n;
}

// A dense M x K matrix with each entry nonzero with probability 1 - sparsity; `special`: some
// 16 x 16 tiles empty, some fully dense, every seventh row empty.
std::vector<uint16_t> RandomA(int m, int k, double sparsity, bool special, DType t, std::mt19937_64& rng) {
  std::vector<uint16_t> a(static_cast<size_t>(m) * k, 0);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<float> nrm(0.f, 1.f);
  for (int s = 0; s * 16 < m; ++s)
    for (int tk = 0; tk * 16 < k; ++tk) {
      const double kind = special ? u(rng) : 1.0;
      const double density = kind < 0.15 ? 0.0 : kind < 0.25 ? 1.0 : 1.0 - sparsity;
      for (int r = s * 16; r < std::min(m, s * 16 + 16); ++r)
        for (int c = tk * 16; c < std::min(k, tk * 16 + 16); ++c) {
          if (u(rng) >= density) continue;
          float v = nrm(rng);
          if (v == 0.f) v = 1.f;
          a[static_cast<size_t>(r) * k + c] = ToBits(v, t);
        }
    }
  if (special)
    for (int r = 3; r < m; r += 7) std::fill(a.begin() + static_cast<size_t>(r) * k, a.begin() + static_cast<size_t>(r + 1) * k, 0);
  return a;
}

// float64 reference of the dense product (zeros of A multiply B too: 0 x Inf = NaN).
// csr: CSR's definition (only the nonzeros multiplied: an Inf in B reaches only the rows that hold
// its column; the kRows kind), else the dense product's (0 x Inf = NaN; the tensor-core kinds).
void Reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int m, int k, int n, DType t,
               std::vector<double>* ref, bool csr = false) {
  ref->assign(static_cast<size_t>(m) * n, 0.0);
  std::vector<double> bd(b.size());
  for (size_t i = 0; i < b.size(); ++i) bd[i] = FromBits(b[i], t);
  std::vector<char> finite(k, 1);
  for (int c = 0; c < k; ++c)
    for (int j = 0; j < n; ++j) finite[c] &= std::isfinite(bd[static_cast<size_t>(c) * n + j]) ? 1 : 0;
  for (int r = 0; r < m; ++r) {
    double* out = ref->data() + static_cast<size_t>(r) * n;
    for (int c = 0; c < k; ++c) {
      const uint16_t bits = a[static_cast<size_t>(r) * k + c];
      if ((bits & 0x7fff) == 0 && (finite[c] || csr)) continue;  // adds exactly zero
      const double v = FromBits(bits, t);
      const double* brow = bd.data() + static_cast<size_t>(c) * n;
      for (int j = 0; j < n; ++j) out[j] += v * brow[j];
    }
  }
}

double Compare(const std::vector<uint16_t>& c, const std::vector<double>& ref, DType t, int* bad) {
  ErrorSum e;
  for (size_t i = 0; i < ref.size(); ++i) e.Add(ref[i], FromBits(c[i], t), t);
  *bad = e.bad;
  return e.Relative();
}

// The stream of a dense host matrix for a layout (strips per row block, columns per stage),
// with no capacity limit: the caller picks a variant with room for its densest stage.
UnstStream Encode(const std::vector<uint16_t>& a, int m, int k, int strips, int kks, UnstLayout layout) {
  std::vector<int> off, col;
  std::vector<uint16_t> val;
  DenseToCsr(a, m, k, &off, &col, &val);
  UnstStream s;
  const std::string err = BuildUnstStream(m, k, off.data(), col.data(), val.data(), strips, kks, 0, &s, layout);
  if (!err.empty()) {
    std::printf("encode: %s\n", err.c_str());
    std::exit(1);
  }
  return s;
}

// The stream on the device: a0 the stages' runs, a1 the offset table.
struct Operand {
  DevBuf data, offsets;
  explicit Operand(const UnstStream& s) : data(s.data.size()), offsets(s.offsets.size() * 4) {
    CK(cudaMemcpy(data.p, s.data.data(), s.data.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(offsets.p, s.offsets.data(), s.offsets.size() * 4, cudaMemcpyHostToDevice));
  }
};

struct Launch {
  sparse::cuda::engine::Args args{};
  UnstKernelFn fn = nullptr;
  int grid = 0, threads = 0, smem = 0, cluster = 0;  // cluster > 1: split-K in clusters (UNST_CLUSTER)
};

Launch MakeLaunch(const UnstVariant& v, const UnstStream& s, const Operand& op, const void* b, void* c, int n,
                  EngineWorkspace& w) {
  Launch l;
  sparse::cuda::engine::Args& a = l.args;
  a.a0 = op.data.p, a.a1 = op.offsets.p, a.b = b, a.c = c;
  a.ws = static_cast<float*>(w.ws.p), a.counters = static_cast<int*>(w.counters.p);
  a.m = s.m, a.k = s.k, a.n = n;
  a.strips = (s.m + 15) / 16, a.ksteps = (s.k + 15) / 16;
  a.row_blocks = s.row_blocks, a.kstages = s.kstages;
  a.total = static_cast<long long>(a.row_blocks) * a.kstages;
  if (a.row_blocks > static_cast<int>(w.counters.bytes / 4)) {
    std::printf("too many row blocks for the counters\n");
    std::exit(1);
  }
  if (engine_host::SetupB(&a, b, n, s.k, v.kks, v.wg) != cudaSuccess) {
    std::printf("cannot stage B for n=%d k=%d box %d\n", n, s.k, v.kks);
    std::exit(1);
  }
  // Engine experiments (v26, timing only): UNST_LANES=0 has one producer lane arrive on a stage's
  // full barrier (not all 32); UNST_SKIP_B=1 stages no B (zeros: C wrong).
  if (const char* e = std::getenv("UNST_LANES")) a.lanes_arrive = std::atoi(e) != 0;
  if (const char* e = std::getenv("UNST_SKIP_B")) a.skip_b = std::atoi(e) != 0;
  l.fn = v.fn, l.smem = v.smem, l.threads = v.threads;
  l.grid = static_cast<int>(std::min<long long>(static_cast<long long>(SmCount()) * v.per_sm, a.total));
  // Timing experiments (stages, time): UNST_GRID blocks instead of every resident one (at most
  // those), UNST_FIXUP=2 drops the partial sums and C (kFixupDrop: C wrong).
  if (const char* g = std::getenv("UNST_GRID")) l.grid = std::max(1, std::min(l.grid, std::atoi(g)));
  a.fixup = std::getenv("UNST_FIXUP") && std::atoi(std::getenv("UNST_FIXUP")) == 2 ? sparse::cuda::engine::kFixupDrop
                                                                                    : sparse::cuda::engine::kFixupSlots;
  a.slots = engine_host::MaxSlots(a.row_blocks, a.kstages, l.grid);
  a.cluster = 0;
  // UNST_CLUSTER (timing and check experiments, v26): "auto" launches as common/stream_plan.h's
  // PlanStream says (one block per row block or split-K clusters where every row block gets
  // its block or cluster at once, else stream-K as above); C (2-8) split-K in clusters of C
  // blocks, one cluster per row block, where that many clusters fit at once (else stream-K).
  if (const char* cl = std::getenv("UNST_CLUSTER")) {
    sparse::StreamPlan p{l.grid, 0};
    if (std::string(cl) == "auto") {
      p = engine_host::Plan(v.fn, v.threads, v.smem, a.row_blocks, a.kstages);
    } else {
      const int c = std::max(2, std::min(sparse::kMaxStreamCluster, std::atoi(cl)));
      if (engine_host::ResidentClusters(v.fn, v.threads, v.smem, c) >= a.row_blocks) p = {a.row_blocks * c, c};
    }
    l.grid = p.grid, l.cluster = p.cluster, a.cluster = p.cluster;
    a.slots = engine_host::MaxSlots(a.row_blocks, a.kstages, l.grid);
  }
  const size_t need = static_cast<size_t>(a.row_blocks) * a.slots * 16 * v.strips * 8 * v.nt8 * 4;
  if (need > w.ws.bytes) {
    std::printf("workspace too small: %zu bytes needed\n", need);
    std::exit(1);
  }
  return l;
}

cudaError_t Run(const Launch& l, cudaStream_t s) {
  if (l.cluster > 1) return engine_host::LaunchPlanned(l.fn, sparse::StreamPlan{l.grid, l.cluster}, l.threads, l.smem, s, l.args);
  sparse::cuda::engine::Args a = l.args;
  sparse::cuda::engine::SetDivisors(a, l.grid);
  l.fn<<<l.grid, l.threads, l.smem, s>>>(a);
  return cudaGetLastError();
}

// The variant's n-tiles cover N, and N is not far below them (as engine_probe's Fits); the
// wgmma decodes need N % 8 == 0 (their formats do not stage ragged B: no kWgB).
bool FitsN(const UnstVariant& v, int n) {
  return n <= 8 * v.nt8 && (v.nt8 == 1 || n > 4 * v.nt8) && (!v.wg || n % 8 == 0);
}

// The variant of decode `kind` with the smallest ring capacity that holds the stream's densest
// stage (the most stages in flight), for type t and N; null if none.
const UnstVariant* Pick(const UnstStream& s, DType t, int n, int kind) {
  const UnstVariant* best = nullptr;
  for (const UnstVariant& v : AllUnstVariants()) {
    if (v.kind != kind || v.type != t || !FitsN(v, n) || v.strips != s.strips || v.kks != s.kks ||
        v.layout != s.layout)
      continue;
    if (v.capacity_words < s.stats.max_stage_words) continue;
    if (!best || v.capacity_words < best->capacity_words) best = &v;
  }
  return best;
}

// Whether the comma-separated list names `want`.
bool WantName(const std::string& list, const std::string& want) {
  for (size_t at = 0; at <= list.size();) {
    const size_t c = std::min(list.find(',', at), list.size());
    if (list.compare(at, c - at, want) == 0) return true;
    at = c + 1;
  }
  return false;
}
// Whether KINDS (a comma-separated list; unset: every kind) names decode `kind`.
bool WantKind(int kind) {
  const char* kinds = std::getenv("KINDS");
  return !kinds || WantName(kinds, kUnstKindNames[kind]);
}

int Check() {
  std::mt19937_64 rng(20261224);
  struct Case {
    int m, k, n;
    double sparsity;
    bool special, inf;
  };
  // Sparsities 50-95 %, fully dense (0) and empty (1); K off 16 (37, 999, 1000); M off 16 and
  // off the 128-row block; row blocks cut between blocks (stream-K) on the larger shapes.
  const Case cases[] = {
      {7, 96, 8, 0.5, false, false},     {16, 16, 1, 0.0, false, false},    {1, 32, 3, 0.7, false, false},
      {33, 37, 16, 0.5, true, false},    {100, 320, 64, 0.9, true, false},  {129, 256, 8, 0.95, true, true},
      {257, 999, 16, 0.7, true, true},   {300, 2048, 1, 0.9, false, false}, {131, 1000, 3, 0.5, true, true},
      {512, 512, 32, 0.7, false, false}, {64, 4096, 8, 0.95, false, false}, {1000, 3008, 64, 0.5, true, true},
      {77, 16, 64, 1.0, false, false},   {200, 128, 16, 0.0, false, true},  {4096, 4096, 8, 0.7, false, false},
      {2000, 4096, 64, 0.9, false, true}, {1000, 1000, 1, 0.95, true, false}, {384, 2048, 16, 0.5, false, false},
  };
  int failures = 0, runs = 0;
  EngineWorkspace w;
  const bool filtered = std::getenv("KINDS") != nullptr;
  for (const Case& cs : cases) {
    for (DType t : {DType::kF16, DType::kBF16}) {
      const double tol = t == DType::kF16 ? 5e-3 : 2e-2;
      std::vector<uint16_t> a = RandomA(cs.m, cs.k, cs.sparsity, cs.special, t, rng);
      std::vector<uint16_t> b(static_cast<size_t>(cs.k) * cs.n);
      std::normal_distribution<float> nrm(0.f, 1.f);
      for (auto& x : b) x = ToBits(nrm(rng), t);
      if (cs.inf) {
        b[static_cast<size_t>(cs.k / 3) * cs.n] = ToBits(INFINITY, t);
        b[static_cast<size_t>(cs.k / 2) * cs.n + (cs.n - 1)] = ToBits(-INFINITY, t);
        b[static_cast<size_t>(cs.k - 1) * cs.n + cs.n / 2] = ToBits(NAN, t);
      }
      // CSR's reference differs from the dense product's only where B holds an Inf or a NaN.
      std::vector<double> ref, ref_csr;
      Reference(a, b, cs.m, cs.k, cs.n, t, &ref);
      if (cs.inf) Reference(a, b, cs.m, cs.k, cs.n, t, &ref_csr, true);
      DevBuf db(b.size() * 2), dc(static_cast<size_t>(cs.m) * cs.n * 2);
      CK(cudaMemcpy(db.p, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
      // One stream per layout (image layout, strips, stage width) the variants use.
      std::vector<std::unique_ptr<UnstStream>> streams;
      bool any = false;
      for (const UnstVariant& v : AllUnstVariants()) {
        if (v.type != t || !FitsN(v, cs.n)) continue;
        if (!WantKind(v.kind)) continue;
        UnstStream* s = nullptr;
        for (auto& x : streams)
          if (x->strips == v.strips && x->kks == v.kks && x->layout == v.layout) s = x.get();
        if (!s) {
          streams.push_back(std::make_unique<UnstStream>(Encode(a, cs.m, cs.k, v.strips, v.kks, v.layout)));
          s = streams.back().get();
        }
        if (v.capacity_words < s->stats.max_stage_words) continue;  // the encoder would refuse it
        any = true;
        Operand op(*s);
        Launch l = MakeLaunch(v, *s, op, db.p, dc.p, cs.n, w);
        for (int rep = 0; rep < 2; ++rep) {  // twice: the workspace must be clean again
          CK(cudaMemset(dc.p, 0xff, dc.bytes));
          cudaError_t e = Run(l, 0);
          if (e == cudaSuccess) e = cudaDeviceSynchronize();
          ++runs;
          if (e != cudaSuccess) {
            std::printf("FAIL %s m=%d k=%d n=%d s=%.2f: %s\n", v.name, cs.m, cs.k, cs.n, cs.sparsity, cudaGetErrorName(e));
            std::printf("check: %d runs, %d failures\n", runs, failures + 1);
            return 1;
          }
          std::vector<uint16_t> c(static_cast<size_t>(cs.m) * cs.n);
          CK(cudaMemcpy(c.data(), dc.p, c.size() * 2, cudaMemcpyDeviceToHost));
          int bad = 0;
          const double err = Compare(c, v.layout == UnstLayout::kRows && cs.inf ? ref_csr : ref, t, &bad);
          if (bad || !(err < tol)) {
            std::printf("FAIL %s m=%d k=%d n=%d s=%.2f%s%s rep %d: relerr %.3g, %d bad\n", v.name, cs.m, cs.k, cs.n,
                        cs.sparsity, cs.special ? " special" : "", cs.inf ? " inf" : "", rep, err, bad);
            ++failures;
          }
        }
      }
      if (!any && !filtered) {  // (KINDS may name only kinds that do not take this N)
        std::printf("FAIL m=%d k=%d n=%d: no variant has room for the densest stage\n", cs.m, cs.k, cs.n);
        ++failures;
      }
    }
  }
  std::printf("check: %d runs, %d failures\n", runs, failures);
  return failures ? 1 : 0;
}

std::vector<double> ParseList(const char* env, std::vector<double> fallback) {
  const char* s = std::getenv(env);
  if (!s) return fallback;
  std::vector<double> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atof(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

// A random matrix for timing (values do not matter: cheap uniform ones, never zero).
std::vector<uint16_t> TimingA(int m, int k, double sparsity, DType t, std::mt19937_64& rng) {
  std::vector<uint16_t> a(static_cast<size_t>(m) * k, 0);
  const uint64_t keep = static_cast<uint64_t>((1.0 - sparsity) * 18446744073709551615.0);
  for (auto& x : a) {
    const uint64_t r = rng();
    if (r < keep || sparsity <= 0) x = ToBits(static_cast<float>((r >> 40) & 1023) / 512.f - 1.f + 1.f / 4096, t);
  }
  return a;
}

// Whether the comma-separated list names type t ("f16", "bf16").
bool WantType(const std::string& list, DType t) { return WantName(list, t == DType::kF16 ? "f16" : "bf16"); }

int Time(const std::vector<std::pair<int, int>>& shapes) {
  const std::vector<double> sps = ParseList("SPARSITY", {0.5, 0.7, 0.9});
  std::vector<int> ns;
  for (double x : ParseList("NS", {1, 8, 16, 32, 64})) ns.push_back(static_cast<int>(x));
  const char* types = std::getenv("TYPES") ? std::getenv("TYPES") : "f16,bf16";
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Cublas cb;
  const bool have_cublas = cb.Load(st);
  if (!have_cublas) std::printf("cuBLAS not loaded: dense columns empty\n");
  Timer timer(st);
  EngineWorkspace w;
  std::mt19937_64 rng(7);
  std::printf("%-34s %-11s %4s %4s | %8s %8s | %8s %8s | %6s %6s | %6s %6s | %6s\n", "variant", "shape", "sp", "n",
              "cub_ev", "cub_gr", "ev_us", "gr_us", "x_ev", "x_gr", "B/w", "wf/st", "floor");
  for (DType t : {DType::kF16, DType::kBF16}) {
    if (!WantType(types, t)) continue;
    for (const auto& shape_mk : shapes) {
      const int m = shape_mk.first, k = shape_mk.second;
      std::vector<uint16_t> dense_host = TimingA(m, k, 0.0, t, rng);
      const auto dense = RotatedCopies(dense_host);
      for (double sp : sps) {
        const std::vector<uint16_t> a = TimingA(m, k, sp, t, rng);
        // The stream in each image layout a variant uses (all variants: 8 strips, 128 columns),
        // each in rotated copies of at least 256 MB (a cold L2 per launch).
        struct Encoded {
          UnstStream s;
          std::vector<Operand*> ops;
        };
        std::vector<std::unique_ptr<Encoded>> enc;
        auto stream_for = [&](const UnstVariant& v) -> Encoded& {
          for (auto& x : enc)
            if (x->s.layout == v.layout && x->s.strips == v.strips && x->s.kks == v.kks) return *x;
          enc.push_back(std::make_unique<Encoded>());
          Encoded& x = *enc.back();
          x.s = Encode(a, m, k, v.strips, v.kks, v.layout);
          const int copies = static_cast<int>(std::max<size_t>(3, (256u << 20) / x.s.Bytes() + 1));
          for (int i = 0; i < copies; ++i) x.ops.push_back(new Operand(x.s));
          return x;
        };
        for (int n : ns) {
          const std::vector<uint16_t> b = RandomB(k, n, t, rng);
          DevBuf db(b.size() * 2), dc(static_cast<size_t>(m) * n * 2);
          CK(cudaMemcpy(db.p, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
          const DenseTimes cub = TimeDense(cb, have_cublas, timer, dense, db.p, dc.p, m, k, n, t);
          const double cub_ev = cub.events, cub_gr = cub.graph;
          char shape[32];
          std::snprintf(shape, sizeof(shape), "%dx%d", m, k);
          for (int kind = 0; kind < kUnstKinds; ++kind) {
            if (!WantKind(kind)) continue;
            // Any variant of the kind names the stream's layout; Pick then the capacity.
            const UnstVariant* lay = nullptr;
            for (const UnstVariant& x : AllUnstVariants())
              if (x.kind == kind && x.type == t && FitsN(x, n)) lay = &x;
            if (!lay) {
              std::printf("%-34s %-11s %4.2f %4d | no %s variant for this N\n", "-", shape, sp, n, kUnstKindNames[kind]);
              continue;
            }
            Encoded& e = stream_for(*lay);
            const UnstStream& s = e.s;
            const UnstVariant* v = Pick(s, t, n, kind);
            if (!v) {
              std::printf("%-34s %-11s %4.2f %4d | no %s variant has room for %d words\n", "-", shape, sp, n,
                          kUnstKindNames[kind], s.stats.max_stage_words);
              continue;
            }
            std::vector<Launch> ls;
            for (Operand* o : e.ops) ls.push_back(MakeLaunch(*v, s, *o, db.p, dc.p, n, w));
            auto f = [&](int i) { return Run(ls[i % ls.size()], st); };
            const double ev = timer.Events(f);
            const double gr = timer.Graph(f, static_cast<int>(e.ops.size()) * 2);
            const size_t bytes = s.Bytes();
            const double floor_us = bytes / kCopyBytesPerSecond * 1e6;
            std::printf("%-34s %-11s %4.2f %4d | %8.1f %8.1f | %8.1f %8.1f | %6.2f %6.2f | %6.3f %6.3f | %6.2f\n",
                        v->name, shape, sp, n, cub_ev, cub_gr, ev, gr, cub_ev / ev, cub_gr / gr,
                        static_cast<double>(bytes) / (static_cast<double>(m) * k),
                        s.stats.stores ? static_cast<double>(s.stats.wavefronts) / s.stats.stores : 0.0, ev / floor_us);
            std::fflush(stdout);
          }
        }
        for (auto& x : enc)
          for (Operand* o : x->ops) delete o;
      }
    }
  }
  return 0;
}

// One launch of the variant named `name` on an M x K matrix of sparsity sp and N columns of B
// (ones), set up and handed to body(variant, stream, launch, A); 2 when there is no such variant
// or it has no room for the matrix.
template <class Body>
int WithVariant(const char* name, int m, int k, int n, double sp, Body body) {
  for (const UnstVariant& v : AllUnstVariants()) {
    if (std::strcmp(v.name, name) != 0) continue;
    std::mt19937_64 rng(3);
    const std::vector<uint16_t> a = TimingA(m, k, sp, v.type, rng);
    const UnstStream s = Encode(a, m, k, v.strips, v.kks, v.layout);
    if (s.stats.max_stage_words > v.capacity_words) {
      std::printf("%s has room for %d words a stage; the densest holds %d\n", name, v.capacity_words,
                  s.stats.max_stage_words);
      return 2;
    }
    Operand op(s);
    EngineWorkspace w;
    DevBuf db(static_cast<size_t>(k) * n * 2), dc(static_cast<size_t>(m) * n * 2);
    CK(cudaMemset(db.p, 0x3c, db.bytes));
    Launch l = MakeLaunch(v, s, op, db.p, dc.p, n, w);
    return body(v, s, l, a, db, dc);
  }
  std::printf("no variant %s\n", name);
  return 2;
}

// A few launches of one variant (for Nsight Compute), cuBLAS beside it.
int One(const char* name, int m, int k, int n, double sp) {
  return WithVariant(name, m, k, n, sp, [&](const UnstVariant& v, const UnstStream& s, Launch& l,
                                            const std::vector<uint16_t>& a, DevBuf& db, DevBuf& dc) {
    for (int i = 0; i < 3; ++i) CK(Run(l, 0));
    CK(cudaDeviceSynchronize());
    std::printf("one: %s %dx%d n=%d s=%.2f grid %d smem %d bytes %zu\n", name, m, k, n, sp, l.grid, l.smem, s.Bytes());
    CublasBeside(a, db.p, dc.p, m, k, n, v.type);
    return 0;
  });
}

// Where each stage's time goes (mode "stages"; a kind with the engine's trace hooks, such as
// unprt, unrowpt: the lean kinds compile them out and report nothing, unless the build has
// -DSPARSE_ENGINE_SMEM_TRACE, UNST_EXTRA_FLAGS in unst_build.sh): the engine's per-stage stamps
// of the last of nine event-timed launches (each after an L2 flush), reported as engine_probe's
// `stages` mode reports them (stage_report.h).
int Stages(const char* name, int m, int k, int n, double sp) {
  return WithVariant(name, m, k, n, sp, [&](const UnstVariant&, const UnstStream&, Launch& l,
                                            const std::vector<uint16_t>&, DevBuf&, DevBuf&) {
    Timer timer;
    const StageTrace r = TraceStages(l.args, l.grid, [&] { return timer.Events([&](int) { return Run(l, 0); }, 9); });
    std::printf("stages: %s %dx%d n=%d s=%.2f grid %d, %lld items (%d row blocks x %d stages), events %.2f us (SM clock at %.0f MHz nominal)\n",
                name, m, k, n, sp, l.grid, l.args.total, l.args.row_blocks, l.args.kstages, r.events, 1.0 / r.us);
    PrintStages(r);
    return 0;
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode == "list") {
    for (const UnstVariant& v : AllUnstVariants())
      std::printf("%s smem %d threads %d per_sm %d capacity %d words\n", v.name, v.smem, v.threads, v.per_sm,
                  v.capacity_words);
    return 0;
  }
  if (mode == "check") return Check();
  if (mode == "time") {
    std::vector<std::pair<int, int>> shapes;
    for (int i = 2; i < argc; ++i) {
      int m = 0, k = 0;
      if (std::sscanf(argv[i], "%dx%d", &m, &k) == 2) shapes.push_back({m, k});
    }
    if (shapes.empty()) shapes = {{11008, 4096}, {4096, 11008}, {4096, 4096}};
    return Time(shapes);
  }
  if (mode == "one" && argc > 6)
    return One(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atof(argv[6]));
  if (mode == "stages" && argc > 6)
    return Stages(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atof(argv[6]));
  std::printf("usage: unst_probe check | list | time [MxK ...] | one|stages VARIANT M K N S\n");
  return 2;
}
