// The CPU benchmark's dense fp32 GEMM: a run-time-loaded CPU BLAS, or our blocked GEMM.
#include "cpu/cpu_gemm.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/site_packages.h"
#include "cpu/parallel.h"

namespace sparse {
namespace {

// ---- Our blocked GEMM ----------------------------------------------------------------
// Goto/BLIS structure: for each kKc-deep slice of K, a kNc-wide panel of op(B) is packed into
// 16-column slivers and a kMc-tall block of A into 6-row slivers; the micro-kernel keeps a
// 6 x 16 tile of C in 12 vector registers across the slice.
constexpr int kMr = 6;     // rows of the micro-tile
constexpr int kNr = 16;    // columns of the micro-tile: two 8-float vectors
constexpr int kKc = 256;   // depth of a slice: a packed A sliver (6 KB) and B sliver (16 KB) stay in L1/L2
constexpr int kMc = 96;    // rows of A packed at once (96 KB, in L2)
constexpr int kNc = 2048;  // columns of B packed at once (2 MB at kKc, in L3)
static_assert(kMc % kMr == 0, "the A block must hold whole 6-row slivers");
static_assert(kNc % kNr == 0, "the B panel must hold whole 16-column slivers");

typedef float V8 __attribute__((vector_size(32)));
typedef float V8u __attribute__((vector_size(32), aligned(4)));  // unaligned access to C
typedef float V4 __attribute__((vector_size(16)));
typedef float V4u __attribute__((vector_size(16), aligned(4)));

// Stores a computed tile: all of it, or its `rows` x `cols` corner at the edges.
inline __attribute__((always_inline)) void StoreTile(const float* t, float* c, int ldc, bool accumulate, int rows, int cols) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float& out = c[static_cast<int64_t>(i) * ldc + j];
      out = accumulate ? out + t[i * kNr + j] : t[i * kNr + j];
    }
}

#if defined(__x86_64__)
#define SPARSE_GEMM_AVX2 1
// C tile (6 x 16, ldc) = (accumulate ? C : 0) + A sliver (kc x 6) * B sliver (kc x 16), with
// the 12 accumulators in ymm registers. `rows`/`cols` < the full tile at the edges: computed
// in full, stored in part.
__attribute__((always_inline, target("avx2,fma"))) inline void MicroKernelAvx2(int kc, const float* __restrict a,
                                                                              const float* __restrict b, float* c,
                                                                              int ldc, bool accumulate, int rows,
                                                                              int cols) {
  V8 c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {},
     c51 = {};
  for (int p = 0; p < kc; ++p) {
    const V8 b0 = *reinterpret_cast<const V8*>(b);
    const V8 b1 = *reinterpret_cast<const V8*>(b + 8);
    c00 += a[0] * b0, c01 += a[0] * b1;
    c10 += a[1] * b0, c11 += a[1] * b1;
    c20 += a[2] * b0, c21 += a[2] * b1;
    c30 += a[3] * b0, c31 += a[3] * b1;
    c40 += a[4] * b0, c41 += a[4] * b1;
    c50 += a[5] * b0, c51 += a[5] * b1;
    a += kMr;
    b += kNr;
  }
  alignas(32) V8 acc[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (rows == kMr && cols == kNr) {
    for (int i = 0; i < kMr; ++i) {
      V8u* row = reinterpret_cast<V8u*>(c + static_cast<int64_t>(i) * ldc);
      if (accumulate) row[0] += acc[i][0], row[1] += acc[i][1];
      else row[0] = acc[i][0], row[1] = acc[i][1];
    }
    return;
  }
  StoreTile(reinterpret_cast<const float*>(acc), c, ldc, accumulate, rows, cols);
}

__attribute__((target("avx2,fma"))) void MacroKernelAvx2(int mc, int nc, int kc, const float* pa, const float* pb,
                                                          float* c, int ldc, bool accumulate) {
  for (int j = 0; j < nc; j += kNr)
    for (int i = 0; i < mc; i += kMr)
      MicroKernelAvx2(kc, pa + static_cast<int64_t>(i) * kc, pb + static_cast<int64_t>(j) * kc,
                      c + static_cast<int64_t>(i) * ldc + j, ldc, accumulate, std::min(kMr, mc - i),
                      std::min(kNr, nc - j));
}
#endif

// The same with 128-bit vectors (SSE, NEON): the 16 columns in two halves of 8, so that the
// 12 accumulators fit 16 registers. NOTE: one 6 x 16 pass in 128-bit halves would need 24
// accumulators and spills (measured 25x slower).
inline __attribute__((always_inline)) void MicroKernelGeneric(int kc, const float* __restrict a, const float* __restrict b,
                                                              float* c, int ldc, bool accumulate, int rows, int cols) {
  alignas(16) float t[kMr * kNr];
  for (int h = 0; h < 2; ++h) {
    V4 acc[kMr][2] = {};
    const float* ap = a;
    const float* bp = b + 8 * h;
    for (int p = 0; p < kc; ++p) {
      const V4 b0 = *reinterpret_cast<const V4*>(bp);
      const V4 b1 = *reinterpret_cast<const V4*>(bp + 4);
      for (int i = 0; i < kMr; ++i) acc[i][0] += ap[i] * b0, acc[i][1] += ap[i] * b1;
      ap += kMr;
      bp += kNr;
    }
    for (int i = 0; i < kMr; ++i) {
      *reinterpret_cast<V4*>(t + i * kNr + 8 * h) = acc[i][0];
      *reinterpret_cast<V4*>(t + i * kNr + 8 * h + 4) = acc[i][1];
    }
  }
  StoreTile(t, c, ldc, accumulate, rows, cols);
}

void MacroKernelGeneric(int mc, int nc, int kc, const float* pa, const float* pb, float* c, int ldc, bool accumulate) {
  for (int j = 0; j < nc; j += kNr)
    for (int i = 0; i < mc; i += kMr)
      MicroKernelGeneric(kc, pa + static_cast<int64_t>(i) * kc, pb + static_cast<int64_t>(j) * kc,
                         c + static_cast<int64_t>(i) * ldc + j, ldc, accumulate, std::min(kMr, mc - i),
                         std::min(kNr, nc - j));
}

bool HasAvx2() {
#if SPARSE_GEMM_AVX2
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

void MacroKernel(int mc, int nc, int kc, const float* pa, const float* pb, float* c, int ldc, bool accumulate) {
#if SPARSE_GEMM_AVX2
  if (HasAvx2()) return MacroKernelAvx2(mc, nc, kc, pa, pb, c, ldc, accumulate);
#endif
  MacroKernelGeneric(mc, nc, kc, pa, pb, c, ldc, accumulate);
}

// A[i0 .. i0+mc) x [p0 .. p0+kc) into 6-row slivers, p-major within a sliver; rows past mc are 0.
void PackA(const GemmArgs& g, int i0, int mc, int p0, int kc, float* out) {
  for (int i = 0; i < mc; i += kMr)
    for (int p = 0; p < kc; ++p)
      for (int r = 0; r < kMr; ++r)
        *out++ = i + r < mc ? g.a[static_cast<int64_t>(i0 + i + r) * g.lda + p0 + p] : 0.f;
}

// op(B)[p0 .. p0+kc) x [j0 .. j0+nc) into 16-column slivers, p-major; columns past nc are 0.
void PackB(const GemmArgs& g, int p0, int kc, int j0, int nc, float* out) {
  for (int j = 0; j < nc; j += kNr) {
    const int w = std::min(kNr, nc - j);
    for (int p = 0; p < kc; ++p) {
      if (!g.b_transposed) {
        const float* src = g.b + static_cast<int64_t>(p0 + p) * g.ldb + j0 + j;
        std::memcpy(out, src, sizeof(float) * w);
      } else {
        for (int q = 0; q < w; ++q) out[q] = g.b[static_cast<int64_t>(j0 + j + q) * g.ldb + p0 + p];
      }
      std::fill(out + w, out + kNr, 0.f);
      out += kNr;
    }
  }
}

struct AlignedFloats {
  float* p = nullptr;
  explicit AlignedFloats(size_t n) { p = static_cast<float*>(std::aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64)); }
  ~AlignedFloats() { std::free(p); }
};

// One thread's GEMM on its slice (rows [i_begin, i_end), columns [j_begin, j_end) of C).
void GemmSlice(const GemmArgs& g, int i_begin, int i_end, int j_begin, int j_end) {
  AlignedFloats pa(static_cast<size_t>(kMc) * kKc), pb(static_cast<size_t>(kNc) * kKc);
  if (g.k == 0) {
    for (int i = i_begin; i < i_end; ++i) std::fill(g.c + static_cast<int64_t>(i) * g.ldc + j_begin, g.c + static_cast<int64_t>(i) * g.ldc + j_end, 0.f);
    return;
  }
  for (int j0 = j_begin; j0 < j_end; j0 += kNc) {
    const int nc = std::min(kNc, j_end - j0);
    for (int p0 = 0; p0 < g.k; p0 += kKc) {
      const int kc = std::min(kKc, g.k - p0);
      PackB(g, p0, kc, j0, nc, pb.p);
      for (int i0 = i_begin; i0 < i_end; i0 += kMc) {
        const int mc = std::min(kMc, i_end - i0);
        PackA(g, i0, mc, p0, kc, pa.p);
        MacroKernel(mc, nc, kc, pa.p, pb.p, g.c + static_cast<int64_t>(i0) * g.ldc + j0, g.ldc, p0 > 0);
      }
    }
  }
}

// ---- The CPU BLAS, loaded at run time ------------------------------------------------
// CBLAS enum values (cblas.h, identical in every implementation).
enum : int { kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112 };
using Sgemm32 = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Sgemm64 = void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                         float, float*, int64_t);

struct Loaded {
  CpuBlas info;
  Sgemm32 sgemm32 = nullptr;  // LP64 interface
  Sgemm64 sgemm64 = nullptr;  // ILP64 interface (NumPy's scipy_openblas64_)
  void (*set_threads32)(int) = nullptr;
  void (*set_threads64)(int64_t) = nullptr;
};

std::string LoadedPath(void* h, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) return map->l_name;
  return fallback;
}

// The library's name and version from its config string (OpenBLAS: "OpenBLAS 0.3.31 ...").
std::string NameOf(void* h, const std::string& path) {
  for (const char* sym : {"openblas_get_config", "scipy_openblas_get_config", "scipy_openblas_get_config64_",
                          "openblas_get_config64_"}) {
    if (auto f = reinterpret_cast<const char* (*)()>(dlsym(h, sym))) {
      const std::string s = f() ? f() : "";
      // "OpenBLAS 0.3.31.188.0  USE64BITINT DYNAMIC_ARCH ..." -> "OpenBLAS 0.3.31.188.0"
      const size_t first = s.find(' ');
      const size_t second = first == std::string::npos ? std::string::npos : s.find(' ', first + 1);
      return second == std::string::npos ? s : s.substr(0, second);
    }
  }
  if (dlsym(h, "MKL_Get_Max_Threads")) return "Intel MKL";
  if (dlsym(h, "bli_info_get_version_str")) return "BLIS";
  const size_t slash = path.rfind('/');
  return path.substr(slash == std::string::npos ? 0 : slash + 1);
}

// Tries one file; true when it has an sgemm we can call.
bool TryOpen(const std::string& file, Loaded* out, std::string* errors) {
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    if (!errors->empty()) *errors += "; ";
    *errors += e ? e : file;
    return false;
  }
  Loaded l;
  for (const char* sym : {"cblas_sgemm", "scipy_cblas_sgemm"}) {
    if ((l.sgemm32 = reinterpret_cast<Sgemm32>(dlsym(h, sym)))) {
      l.info.symbol = sym;
      break;
    }
  }
  if (!l.sgemm32) {
    for (const char* sym : {"scipy_cblas_sgemm64_", "cblas_sgemm64_"}) {
      if ((l.sgemm64 = reinterpret_cast<Sgemm64>(dlsym(h, sym)))) {
        l.info.symbol = sym;
        break;
      }
    }
  }
  if (!l.sgemm32 && !l.sgemm64) {
    if (!errors->empty()) *errors += "; ";
    *errors += file + ": no cblas_sgemm";
    dlclose(h);
    return false;
  }
  for (const char* sym : {"openblas_set_num_threads", "scipy_openblas_set_num_threads", "MKL_Set_Num_Threads"})
    if ((l.set_threads32 = reinterpret_cast<void (*)(int)>(dlsym(h, sym)))) break;
  if (!l.set_threads32) {
    for (const char* sym : {"scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "bli_thread_set_num_threads"})
      if ((l.set_threads64 = reinterpret_cast<void (*)(int64_t)>(dlsym(h, sym)))) break;
  }
  l.info.loaded = true;
  l.info.path = LoadedPath(h, file);
  l.info.name = NameOf(h, l.info.path);
  *out = l;
  return true;
}

// The wheels' bundled OpenBLAS under the usual site-packages folders (newest Python first).
std::vector<std::string> WheelCandidates() {
  return GlobUnderRoots(SitePackagesRoots(),
                        {"/numpy.libs/libscipy_openblas*.so", "/scipy.libs/libscipy_openblas*.so",
                         "/scipy_openblas32/lib/libscipy_openblas*.so", "/scipy_openblas64/lib/libscipy_openblas*.so",
                         "/numpy.libs/libopenblas*.so"});
}

// A library that is neither OpenBLAS, BLIS nor MKL (none of their identifying symbols): the
// Netlib reference BLAS (Debian's libblas.so.3 / libcblas.so.3 when no optimised alternative
// is selected). It runs a 1024^2 x 256 product about 15x slower than an optimised GEMM, so it
// is never the CPU baseline (issue 22: it made CPU speedups look 13x larger).
bool IsReference(void* h) {
  for (const char* sym : {"openblas_get_config", "scipy_openblas_get_config", "scipy_openblas_get_config64_",
                          "openblas_get_config64_", "MKL_Get_Max_Threads", "bli_info_get_version_str"})
    if (dlsym(h, sym)) return false;
  return true;
}

// The GEMM rate of `run` on a kMeasureSize^3 product with all cores, GFLOP/s.
constexpr int kMeasureSize = 512;
double MeasureGflops(const std::function<void(const GemmArgs&)>& run) {
  const int n = kMeasureSize;
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f, b[i] = a[(i * 31) % a.size()];
  GemmArgs g;
  g.m = g.n = g.k = n;
  g.a = a.data(), g.lda = n;
  g.b = b.data(), g.ldb = n;
  g.c = c.data(), g.ldc = n;
  run(g);
  // NOTE: the best of at least 5 runs and 100 ms (at most 50 runs): on a busy machine one
  // run can take several times its quiet time, and the best is the library's own speed.
  double best = 1e30, total = 0;
  for (int r = 0; r < 50 && (r < 5 || total < 0.1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run(g);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s), total += s;
  }
  return 2.0 * n * n * n / best / 1e9;
}

void CallLoaded(const Loaded& l, const GemmArgs& g, int threads) {
  const int use = ResolveThreads(threads, static_cast<int64_t>(g.m) * g.n * std::max(g.k, 1), int64_t{1} << 22);
  if (l.set_threads32) l.set_threads32(use);
  else if (l.set_threads64) l.set_threads64(use);
  const int tb = g.b_transposed ? kCblasTrans : kCblasNoTrans;
  if (l.sgemm32)
    l.sgemm32(kCblasRowMajor, kCblasNoTrans, tb, g.m, g.n, g.k, 1.f, g.a, g.lda, g.b, g.ldb, 0.f, g.c, g.ldc);
  else
    l.sgemm64(kCblasRowMajor, kCblasNoTrans, tb, g.m, g.n, g.k, 1.f, g.a, g.lda, g.b, g.ldb, 0.f, g.c, g.ldc);
}

std::string Fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The CPU baseline, chosen once per process: every library of the search list that loads
// (deduplicated by file; the reference BLAS set aside), and our BlockedSgemm, are timed on one
// 512^3 product and the fastest is used. $SPARSE_CPU_BLAS forces a choice; the others are
// still timed, so that the ceiling (the best rate seen) stays the machine's.
const Loaded& GetLoaded() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string errors;
    std::vector<Loaded> found;
    std::vector<std::string> reference;
    std::vector<std::string> seen;
    auto consider = [&](const std::string& file) {
      Loaded l;
      if (!TryOpen(file, &l, &errors)) return;
      if (std::find(seen.begin(), seen.end(), l.info.path) != seen.end()) return;
      seen.push_back(l.info.path);
      void* h = dlopen(l.info.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      const bool ref = h && IsReference(h);
      if (h) dlclose(h);
      if (ref) reference.push_back(l.info.path);
      else found.push_back(l);
    };
    const char* forced = std::getenv("SPARSE_CPU_BLAS");
    const std::string force = forced ? forced : "";
    for (const char* so : {"libopenblas.so.0", "libopenblas.so", "libblis.so.4", "libblis.so", "libmkl_rt.so.2",
                           "libmkl_rt.so", "libcblas.so.3", "libblas.so.3"})
      consider(so);
    for (const std::string& f : WheelCandidates()) consider(f);

    // Time each candidate, ours last.
    std::string measured;
    double best_rate = 0;
    int best = -1;  // index into `found`, -1: ours
    for (size_t i = 0; i < found.size(); ++i) {
      found[i].info.gflops = MeasureGflops([&](const GemmArgs& g) { CallLoaded(found[i], g, 0); });
      measured += (measured.empty() ? "" : ", ") + found[i].info.name + " " + Fixed1(found[i].info.gflops);
      if (found[i].info.gflops > best_rate) best_rate = found[i].info.gflops, best = static_cast<int>(i);
      // NOTE: a library not used keeps one thread, so its pool does not spin beside the chosen one.
      if (found[i].set_threads32) found[i].set_threads32(1);
      else if (found[i].set_threads64) found[i].set_threads64(1);
    }
    const double ours = MeasureGflops([](const GemmArgs& g) { BlockedSgemm(g, 0); });
    measured += (measured.empty() ? "" : ", ") + std::string("our GEMM ") + Fixed1(ours);
    if (ours >= best_rate) best_rate = ours, best = -1;
    std::string summary = "ceiling " + Fixed1(best_rate) + " GFLOP/s at 512^3 (measured: " + measured + " GFLOP/s)";
    if (!reference.empty()) {
      summary += "; the reference BLAS is never used (";
      for (size_t i = 0; i < reference.size(); ++i) summary += (i ? ", " : "") + reference[i];
      summary += ")";
    }

    if (!force.empty()) {
      // NOTE: an override that silently fell through to another library would mislead.
      if (force == "builtin") {
        loaded.info.reason = "SPARSE_CPU_BLAS=builtin";
        loaded.info.gflops = ours;
      } else {
        std::string why;
        Loaded l;
        if (TryOpen(force, &l, &why)) {
          loaded = l;
          loaded.info.gflops = MeasureGflops([&](const GemmArgs& g) { CallLoaded(loaded, g, 0); });
          best_rate = std::max(best_rate, loaded.info.gflops);
          summary = "ceiling " + Fixed1(best_rate) + " GFLOP/s at 512^3 (measured: " + measured + ", SPARSE_CPU_BLAS " +
                    Fixed1(loaded.info.gflops) + " GFLOP/s)";
        } else {
          loaded.info.reason = "SPARSE_CPU_BLAS=" + force + " did not load (" + why + ")";
          loaded.info.gflops = ours;
        }
      }
      loaded.info.choice = "forced by SPARSE_CPU_BLAS; " + summary;
      loaded.info.ceiling_gflops = best_rate;
      return;
    }
    if (best >= 0) {
      loaded = found[best];
      if (loaded.set_threads32) loaded.set_threads32(ResolveThreads(0, 1 << 30));
      else if (loaded.set_threads64) loaded.set_threads64(ResolveThreads(0, 1 << 30));
    } else {
      loaded.info.gflops = ours;
      loaded.info.reason = found.empty() ? "no optimised CPU BLAS found" : "faster than the CPU BLAS found";
    }
    loaded.info.choice = "the fastest; " + summary;
    loaded.info.ceiling_gflops = best_rate;
  });
  return loaded;
}

}  // namespace

void BlockedSgemm(const GemmArgs& g, int threads) {
  if (g.m <= 0 || g.n <= 0) return;
  // Split the longer side of C in whole micro-tiles; each thread packs its own operands.
  const bool by_rows = g.m / kMr >= g.n / kNr;
  const int tiles = by_rows ? (g.m + kMr - 1) / kMr : (g.n + kNr - 1) / kNr;
  const int parts = std::max(1, std::min(tiles, ResolveThreads(threads, static_cast<int64_t>(g.m) * g.n * std::max(g.k, 1), 1 << 18)));
  ForkJoin(parts, [&](int t) {
    const int unit = by_rows ? kMr : kNr, extent = by_rows ? g.m : g.n;
    const int begin = std::min(extent, static_cast<int>(static_cast<int64_t>(tiles) * t / parts) * unit);
    const int end = std::min(extent, static_cast<int>(static_cast<int64_t>(tiles) * (t + 1) / parts) * unit);
    if (begin >= end) return;
    if (by_rows) GemmSlice(g, begin, end, 0, g.n);
    else GemmSlice(g, 0, g.m, begin, end);
  });
}

const CpuBlas& GetCpuBlas() { return GetLoaded().info; }

void DenseSgemm(const GemmArgs& g, int threads, std::string* detail) {
  const Loaded& l = GetLoaded();
  const int nthreads = ResolveThreads(threads, 1 << 30);
  if (!l.info.loaded) {
    BlockedSgemm(g, threads);
    if (detail)
      *detail = "our blocked fp32 GEMM (packed 6x16 micro-kernel, " +
                std::string(HasAvx2() ? "AVX2/FMA" : "128-bit vectors") +
                "), " + std::to_string(nthreads) + " threads; " + l.info.reason + "; " + l.info.choice;
    return;
  }
  // OpenBLAS's threads spin while they wait for work: on a busy machine a small product split
  // across them waited up to 200x its one-thread time. A thread gets at least 2^22
  // multiply-adds (about 0.3 ms of one core), as our own GEMM does with its smaller grain.
  const int use = ResolveThreads(threads, static_cast<int64_t>(g.m) * g.n * std::max(g.k, 1), int64_t{1} << 22);
  const bool can_set = l.set_threads32 || l.set_threads64;
  CallLoaded(l, g, threads);
  if (detail)
    *detail = l.info.name + " " + l.info.symbol + " (" + l.info.path + "), " +
              (can_set ? std::to_string(use) + (use == 1 ? " thread" : " threads") : "the library's default threads") +
              "; " + l.info.choice;
}

}  // namespace sparse
