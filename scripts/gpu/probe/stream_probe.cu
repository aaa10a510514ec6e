// Development probe for the streaming tensor-core SpMMs (bitmap and 2:4), outside the addon:
// one binary that checks every variant against a float64 reference (poisoned outputs, fresh
// random inputs, awkward shapes, Inf in B) and times them beside dense cuBLAS (loaded at run
// time) with a cold L2. Built here with nvcc (scripts/gpu/probe/build.sh) and run on the GPU
// machine; the product's own tests and `sparse bench` are the record, this is the workbench.
//   stream_probe check            correctness of every variant
//   stream_probe time [filter]    timing table (median of CUDA-event times, cold L2)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/bitmap_tiles.cc"
#include "common/sparse24.cc"
#include "cuda/spmm/spmm_24.cu"
#include "cuda/spmm/spmm_bitmap.cu"
#include "cuda/spmm/spmm_stream.cu"
// The table of families the three files above register into, and its helpers.
#include "cuda/spmm/spmm.cu"
#include "scripts/gpu/probe/probe_util.h"

using namespace sparse;
using namespace sparse::probe;

struct Csr {
  int m = 0, k = 0;
  std::vector<int> off, col;
  std::vector<uint16_t> val;
};

// Random unstructured CSR: each element kept with probability 1 - s; a few special rows.
static Csr RandomCsr(int m, int k, double s, DType t, std::mt19937_64& rng, bool special) {
  Csr a;
  a.m = m, a.k = k;
  a.off.assign(m + 1, 0);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<float> nrm(0.f, 1.f);
  for (int r = 0; r < m; ++r) {
    const bool empty = special && (r % 7 == 3);
    const bool dense = special && (r % 11 == 5);
    for (int c = 0; c < k; ++c) {
      if (empty) break;
      if (dense || u(rng) >= s) {
        a.col.push_back(c);
        float v = nrm(rng);
        if (v == 0.f) v = 1.f;
        a.val.push_back(ToBits(v, t));
      }
    }
    a.off[r + 1] = static_cast<int>(a.col.size());
  }
  return a;
}

// Random 2:4 CSR: two of every four columns (fewer in some groups when `special`).
static Csr Random24(int m, int k, DType t, std::mt19937_64& rng, bool special) {
  Csr a;
  a.m = m, a.k = k;
  a.off.assign(m + 1, 0);
  std::normal_distribution<float> nrm(0.f, 1.f);
  for (int r = 0; r < m; ++r) {
    for (int g = 0; g * 4 < k; ++g) {
      int pick[4] = {0, 1, 2, 3};
      std::shuffle(pick, pick + 4, rng);
      int keep = 2;
      if (special) keep = static_cast<int>(rng() % 3);
      std::sort(pick, pick + keep);
      for (int i = 0; i < keep; ++i) {
        const int c = g * 4 + pick[i];
        if (c >= k) continue;
        a.col.push_back(c);
        float v = nrm(rng);
        if (v == 0.f) v = 1.f;
        a.val.push_back(ToBits(v, t));
      }
    }
    a.off[r + 1] = static_cast<int>(a.col.size());
  }
  return a;
}

// float64 reference of rows `rows` (sparse semantics: nonzeros only).
static void Reference(const Csr& a, const std::vector<uint16_t>& b, int n, DType t, const std::vector<int>& rows,
                      std::vector<double>* ref) {
  ref->assign(rows.size() * static_cast<size_t>(n), 0.0);
  for (size_t i = 0; i < rows.size(); ++i) {
    const int r = rows[i];
    double* out = ref->data() + i * n;
    for (int p = a.off[r]; p < a.off[r + 1]; ++p) {
      const double v = FromBits(a.val[p], t);
      const uint16_t* brow = b.data() + static_cast<size_t>(a.col[p]) * n;
      for (int j = 0; j < n; ++j) out[j] += v * FromBits(brow[j], t);
    }
  }
}

// Returns the relative error (inf when a non-finite class differs or an output is unwritten).
static double Compare(const std::vector<uint16_t>& c, int n, DType t, const std::vector<int>& rows,
                      const std::vector<double>& ref, int* bad) {
  ErrorSum e;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < n; ++j) e.Add(ref[i * n + j], FromBits(c[static_cast<size_t>(rows[i]) * n + j], t), t);
  *bad = e.bad;
  return e.Relative();
}

enum class Kind { kBitmap, k24 };

struct Prepared {
  Kind kind;
  BitmapMatrix bm;
  Sp24Matrix s24;
  std::vector<std::string> variants;
  size_t bytes = 0;
};

static bool Prepare(Kind kind, const Csr& a, DType t, int n, Prepared* p) {
  p->kind = kind;
  if (kind == Kind::kBitmap) {
    BitmapTiles tiles;
    std::string err = BuildBitmapTiles(a.m, a.k, a.off.data(), a.col.data(), a.val.data(), &tiles);
    if (!err.empty()) return std::printf("build: %s\n", err.c_str()), false;
    CK(p->bm.Upload(tiles, t, 0));
    p->variants = BitmapVariants(p->bm, n);
    p->bytes = tiles.Bytes();
  } else {
    Sp24Tiles tiles;
    std::string err = BuildSp24Tiles(a.m, a.k, a.off.data(), a.col.data(), a.val.data(), &tiles);
    if (!err.empty()) return std::printf("build: %s\n", err.c_str()), false;
    CK(p->s24.Upload(tiles, t, 0));
    p->variants = Sp24Variants(p->s24, n);
    p->bytes = tiles.Bytes();
  }
  return true;
}

static cudaError_t Run(const Prepared& p, const std::string& variant, const StreamOperands& op) {
  StreamChoice ch;
  if (p.kind == Kind::kBitmap) {
    if (variant == "auto") ch = SelectBitmap(p.bm, op.n, SmCount());
    else if (!ParseStreamVariant("bm", variant.c_str(), &ch)) return cudaErrorInvalidValue;
    return LaunchSpmmBitmap(p.bm, op, ch, 0);
  }
  if (variant == "auto") ch = SelectSp24(p.s24, op.n, SmCount());
  else if (!ParseStreamVariant("s24", variant.c_str(), &ch)) return cudaErrorInvalidValue;
  return LaunchSpmm24(p.s24, op, ch, 0);
}

static std::string ChosenName(const Prepared& p, int n) {
  if (p.kind == Kind::kBitmap) return StreamVariantName("bm", SelectBitmap(p.bm, n, SmCount()));
  return StreamVariantName("s24", SelectSp24(p.s24, n, SmCount()));
}

static int Check() {
  std::mt19937_64 rng(20261130);
  struct Case {
    int m, k, n;
    double s;
    bool special, inf;
  };
  const Case cases[] = {
      {7, 96, 40, 0.5, false, false},   {16, 16, 8, 0.0, false, false},   {1, 1, 1, 0.0, false, false},
      {33, 70, 1, 0.7, true, false},    {100, 333, 17, 0.9, true, false}, {257, 1000, 64, 0.5, true, false},
      {129, 257, 130, 0.8, true, false}, {64, 4096, 16, 0.9, false, false}, {300, 2048, 8, 0.6, true, true},
      {512, 512, 256, 0.7, false, false}, {1000, 3000, 24, 0.95, true, true}, {128, 128, 16, 1.0, false, false},
  };
  int failures = 0, runs = 0;
  for (DType t : {DType::kF16, DType::kBF16}) {
    const double tol = t == DType::kF16 ? 5e-3 : 2e-2;
    for (const Case& cs : cases) {
      for (Kind kind : {Kind::kBitmap, Kind::k24}) {
        Csr a = kind == Kind::kBitmap ? RandomCsr(cs.m, cs.k, cs.s, t, rng, cs.special)
                                      : Random24(cs.m, cs.k, t, rng, cs.special);
        // Decode round trip of the host format.
        {
          std::vector<int> off, col;
          std::vector<uint16_t> val;
          if (kind == Kind::kBitmap) {
            BitmapTiles tl;
            BuildBitmapTiles(a.m, a.k, a.off.data(), a.col.data(), a.val.data(), &tl);
            BitmapTilesToCsr(tl, &off, &col, &val);
          } else {
            Sp24Tiles tl;
            BuildSp24Tiles(a.m, a.k, a.off.data(), a.col.data(), a.val.data(), &tl);
            Sp24TilesToCsr(tl, &off, &col, &val);
          }
          if (off != a.off || col != a.col || val != a.val) {
            std::printf("FAIL round trip %s m=%d k=%d\n", kind == Kind::kBitmap ? "bitmap" : "2:4", a.m, a.k);
            ++failures;
          }
        }
        std::vector<uint16_t> b(static_cast<size_t>(cs.k) * cs.n);
        std::normal_distribution<float> nrm(0.f, 1.f);
        for (auto& x : b) x = ToBits(nrm(rng), t);
        if (cs.inf) {
          for (int j = 0; j < cs.n; ++j) b[static_cast<size_t>(cs.k / 3) * cs.n + j] = ToBits(INFINITY, t);
          b[static_cast<size_t>(cs.k / 2) * cs.n] = ToBits(NAN, t);
        }
        std::vector<int> rows(cs.m);
        for (int r = 0; r < cs.m; ++r) rows[r] = r;
        std::vector<double> ref;
        Reference(a, b, cs.n, t, rows, &ref);
        Prepared p;
        if (!Prepare(kind, a, t, cs.n, &p)) {
          ++failures;
          continue;
        }
        DevBuf db(b.size() * 2), dc(static_cast<size_t>(cs.m) * cs.n * 2);
        CK(cudaMemcpy(db.p, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
        std::vector<std::string> vars = p.variants;
        vars.push_back("auto");
        for (const std::string& v : vars) {
          CK(cudaMemset(dc.p, 0xff, dc.bytes));
          StreamOperands op;
          op.n = cs.n, op.b = db.p, op.c = dc.p;
          cudaError_t e = Run(p, v, op);
          if (e == cudaSuccess) e = cudaDeviceSynchronize();
          ++runs;
          if (e != cudaSuccess) {
            std::printf("FAIL %s %s m=%d k=%d n=%d: %s\n", DTypeName(t), v.c_str(), cs.m, cs.k, cs.n, cudaGetErrorName(e));
            ++failures;
            cudaGetLastError();
            continue;
          }
          std::vector<uint16_t> c(static_cast<size_t>(cs.m) * cs.n);
          CK(cudaMemcpy(c.data(), dc.p, c.size() * 2, cudaMemcpyDeviceToHost));
          int bad = 0;
          const double err = Compare(c, cs.n, t, rows, ref, &bad);
          if (bad || !(err < tol)) {
            std::printf("FAIL %s %s m=%d k=%d n=%d s=%.2f: relerr %.3g, %d bad\n", DTypeName(t), v.c_str(), cs.m, cs.k,
                        cs.n, cs.s, err, bad);
            ++failures;
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

static int Time(const char* filter) {
  Cublas cb;
  const bool have_cublas = cb.Load(0);
  if (!have_cublas) std::printf("cuBLAS not loaded: dense column empty\n");
  Timer timer;
  std::mt19937_64 rng(7);
  const int shapes[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
  const int ns[] = {1, 8, 16, 32, 64, 128, 256};
  std::printf("%-6s %-5s %-12s %5s %5s | %9s | %9s %-16s | %9s %-16s | %7s %7s\n", "kind", "dtype", "shape", "s", "n",
              "dense_us", "auto_us", "auto", "best_us", "best", "x_dense", "floor_x");
  for (Kind kind : {Kind::kBitmap, Kind::k24}) {
    if (filter && std::strcmp(filter, kind == Kind::kBitmap ? "bm" : "s24") != 0 && std::strcmp(filter, "all") != 0)
      continue;
    const std::vector<double> sps = kind == Kind::kBitmap ? std::vector<double>{0.5, 0.7, 0.9} : std::vector<double>{0.5};
    for (auto& sh : shapes) {
      for (double s : sps) {
        for (DType t : {DType::kF16, DType::kBF16}) {
          if (t == DType::kBF16 && !(sh[0] == 11008)) continue;
          Csr a = kind == Kind::kBitmap ? RandomCsr(sh[0], sh[1], s, t, rng, false) : Random24(sh[0], sh[1], t, rng, false);
          DevBuf da(static_cast<size_t>(sh[0]) * sh[1] * 2);
          {
            std::vector<uint16_t> dense(static_cast<size_t>(sh[0]) * sh[1], 0);
            for (int r = 0; r < a.m; ++r)
              for (int p = a.off[r]; p < a.off[r + 1]; ++p) dense[static_cast<size_t>(r) * a.k + a.col[p]] = a.val[p];
            CK(cudaMemcpy(da.p, dense.data(), dense.size() * 2, cudaMemcpyHostToDevice));
          }
          for (int n : ns) {
            Prepared p;
            if (!Prepare(kind, a, t, n, &p)) return 1;
            std::vector<uint16_t> b(static_cast<size_t>(a.k) * n);
            std::normal_distribution<float> nrm(0.f, 1.f);
            for (auto& x : b) x = ToBits(nrm(rng), t);
            DevBuf db(b.size() * 2), dc(static_cast<size_t>(a.m) * n * 2);
            CK(cudaMemcpy(db.p, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
            StreamOperands op;
            op.n = n, op.b = db.p, op.c = dc.p;
            double dense_us = 0;
            if (have_cublas) {
              dense_us = timer.Events([&](int) { return cb.Gemm(da.p, db.p, dc.p, a.m, a.k, n, t); }, 25);
            }
            const double auto_us = timer.Events([&](int) { return Run(p, "auto", op); }, 25);
            double best = 1e30;
            std::string best_name;
            for (const std::string& v : p.variants) {
              const double us = timer.Events([&](int) { return Run(p, v, op); }, 11);
              if (us < best) best = us, best_name = v;
            }
            const double floor_us = (p.bytes + (static_cast<double>(a.k) + a.m) * n * 2) / 4.24e6;
            char shape[32];
            std::snprintf(shape, sizeof(shape), "%dx%d", a.m, a.k);
            std::printf("%-6s %-5s %-12s %5.2f %5d | %9.1f | %9.1f %-16s | %9.1f %-16s | %7.2f %7.2f\n",
                        kind == Kind::kBitmap ? "bm" : "s24", DTypeName(t), shape, s, n, dense_us, auto_us,
                        ChosenName(p, n).c_str(), best, best_name.c_str(), dense_us / auto_us, auto_us / floor_us);
            std::fflush(stdout);
          }
        }
      }
    }
  }
  return 0;
}

// One case, auto variant, a few launches (for Nsight Compute).
static int One(const char* kind_name, int m, int k, double s, int n) {
  std::mt19937_64 rng(3);
  const Kind kind = std::strcmp(kind_name, "bm") == 0 ? Kind::kBitmap : Kind::k24;
  Csr a = kind == Kind::kBitmap ? RandomCsr(m, k, s, DType::kF16, rng, false) : Random24(m, k, DType::kF16, rng, false);
  Prepared p;
  if (!Prepare(kind, a, DType::kF16, n, &p)) return 1;
  DevBuf db(static_cast<size_t>(k) * n * 2), dc(static_cast<size_t>(m) * n * 2);
  CK(cudaMemset(db.p, 0x3c, db.bytes));
  StreamOperands op;
  op.n = n, op.b = db.p, op.c = dc.p;
  for (int i = 0; i < 3; ++i) CK(Run(p, "auto", op));
  CK(cudaDeviceSynchronize());
  std::printf("one: %s %dx%d s=%.2f n=%d %s\n", kind_name, m, k, s, n, ChosenName(p, n).c_str());
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode == "check") return Check();
  if (mode == "time") return Time(argc > 2 ? argv[2] : nullptr);
  if (mode == "one" && argc > 6) return One(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atof(argv[5]), std::atoi(argv[6]));
  std::printf("usage: stream_probe check|time [bm|s24|all]\n");
  return 2;
}
