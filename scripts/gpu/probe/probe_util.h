// What the GPU workbenches share (engine_probe.cu, engine_variants.cu, stream_probe.cu): the
// error check, 16-bit conversions, device buffers, cuBLAS loaded at run time (none at link
// time), and the timer: CUDA-event medians after an L2 flush, and the CUDA-graph time per
// launch; a watchdog for launches that never finish. Host code, plus one kernel (FlushRead,
// internal to each object).
#ifndef SPARSE_SCRIPTS_PROBE_UTIL_H_
#define SPARSE_SCRIPTS_PROBE_UTIL_H_
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "common/dtype.h"

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #x); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

namespace sparse {
namespace probe {

inline uint16_t ToBits(float x, DType t) {
  if (t == DType::kF16) return __half_as_ushort(__float2half_rn(x));
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}
inline double FromBits(uint16_t b, DType t) {
  if (t == DType::kF16) return __half2float(__ushort_as_half(b));
  return __bfloat162float(__ushort_as_bfloat16(b));
}

// A launch that never finishes (a barrier that never completes: a hang, not a slow kernel) ends
// the process after `seconds` with a line naming it, rather than holding the GPU until the task's
// limit (v32: a setmaxnreg.inc beyond the registers the launch held hung a check for its whole
// 300 s). One at a time: the scope around a launch and its synchronisation.
class Watchdog {
 public:
  Watchdog(const char* what, unsigned seconds) {
    Name() = what;
    std::signal(SIGALRM, &Fire);
    alarm(seconds);
  }
  ~Watchdog() { alarm(0); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  static const char*& Name() {
    static const char* name = "";
    return name;
  }
  static void Fire(int) {
    static const char kMsg[] = "watchdog: a launch did not finish (a hang?): ";
    const char* name = Name();
    for (int fd : {1, 2}) {
      (void)!write(fd, kMsg, sizeof kMsg - 1);
      (void)!write(fd, name, std::strlen(name));
      (void)!write(fd, "\n", 1);
    }
    _exit(4);
  }
};

// The relative error of an output against a float64 reference, element by element: a
// non-finite reference must be matched in class (NaN, or Inf of the same sign); a non-finite
// output counts as bad unless the reference is past the output type's range (rounds to Inf).
struct ErrorSum {
  double num = 0, den = 0;
  int bad = 0;
  void Add(double r, double o, DType t) {
    if (!std::isfinite(r)) {
      const bool same = (std::isnan(r) && std::isnan(o)) || (std::isinf(r) && std::isinf(o) && (r > 0) == (o > 0));
      if (!same) ++bad;
      return;
    }
    if (!std::isfinite(o)) {
      if (std::fabs(r) < (t == DType::kF16 ? 65000.0 : 3e38)) ++bad;
      return;
    }
    num += (o - r) * (o - r);
    den += r * r;
  }
  double Relative() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit DevBuf(size_t n) : bytes(n) { CK(cudaMalloc(&p, n ? n : 16)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// The streaming engine's fixup workspace for any launch of a workbench (launches on one
// stream run one at a time, and each leaves the counters zero): slots and row-block counters.
struct EngineWorkspace {
  DevBuf ws{static_cast<size_t>(96) << 20};
  DevBuf counters{64 * 1024 * 4};
  EngineWorkspace() {
    CK(cudaMemset(ws.p, 0, ws.bytes));
    CK(cudaMemset(counters.p, 0, counters.bytes));
  }
};

// A dense row-major m x k matrix of 16-bit values as CSR, zeros (+0 and -0) left out.
inline void DenseToCsr(const std::vector<uint16_t>& a, int m, int k, std::vector<int>* off, std::vector<int>* col,
                       std::vector<uint16_t>* val) {
  off->assign(m + 1, 0), col->clear(), val->clear();
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < k; ++c) {
      const uint16_t x = a[static_cast<size_t>(r) * k + c];
      if ((x & 0x7fff) == 0) continue;
      col->push_back(c);
      val->push_back(x);
    }
    (*off)[r + 1] = static_cast<int>(col->size());
  }
}

// cublasGemmEx through dlopen: C[m x n] = A[m x k] * B[k x n], all row-major, fp32 compute.
struct Cublas {
  void* h = nullptr;
  int (*Create)(void**) = nullptr;
  int (*SetStream)(void*, cudaStream_t) = nullptr;
  int (*GemmEx)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*,
                void*, int, int, int, int) = nullptr;
  void* handle = nullptr;
  bool Load(cudaStream_t s) {
    h = dlopen("libcublas.so.13", RTLD_NOW);
    if (!h) h = dlopen("libcublas.so", RTLD_NOW);
    if (!h) return false;
    Create = reinterpret_cast<int (*)(void**)>(dlsym(h, "cublasCreate_v2"));
    SetStream = reinterpret_cast<int (*)(void*, cudaStream_t)>(dlsym(h, "cublasSetStream_v2"));
    GemmEx = reinterpret_cast<decltype(GemmEx)>(dlsym(h, "cublasGemmEx"));
    return Create && GemmEx && SetStream && Create(&handle) == 0 && SetStream(handle, s) == 0;
  }
  cudaError_t Gemm(const void* a, const void* b, void* c, int m, int k, int n, DType t) {
    const float one = 1.f, zero = 0.f;
    const int ty = t == DType::kF16 ? 2 : 14;  // CUDA_R_16F, CUDA_R_16BF
    return GemmEx(handle, 0, 0, n, m, k, &one, b, ty, n, a, ty, k, &zero, c, ty, n, 68, -1) == 0 ? cudaSuccess
                                                                                                : cudaErrorUnknown;
  }
};

// Reads a buffer larger than L2 (clean lines only: a memset would leave dirty lines whose
// write-back lands in the next timed kernel).
static __global__ void FlushRead(const uint4* p, size_t n, unsigned* sink) {
  uint32_t x = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9e3779b9u) *sink = x;
}

struct Timer {
  cudaStream_t s;
  DevBuf flush{256u << 20};
  DevBuf sink{4};
  cudaEvent_t e0, e1;
  explicit Timer(cudaStream_t st = 0) : s(st) {
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
  }
  // Median of CUDA-event times of f(i) (i: the rotation index), each after an L2 flush
  // (TIMER_FLUSH=0: without it, so that only the rotated operands start cold, as in the
  // addon's bench; the flush kernel still runs, one block over 1 MB, about 30 us, so that the
  // host stays ahead of the GPU).
  template <typename F>
  double Events(F f, int reps = 30) {
    static const bool full = !std::getenv("TIMER_FLUSH") || std::atoi(std::getenv("TIMER_FLUSH")) != 0;
    std::vector<float> ts;
    for (int i = 0; i < 3; ++i) CK(f(i));
    for (int i = 0; i < reps; ++i) {
      FlushRead<<<full ? 1056 : 1, 512, 0, s>>>(static_cast<const uint4*>(flush.p), (full ? flush.bytes : (1u << 20)) / 16,
                                                static_cast<unsigned*>(sink.p));
      CK(cudaGetLastError());
      CK(cudaEventRecord(e0, s));
      CK(f(i));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms * 1000.f);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  }
  // Time per launch of a CUDA graph of `count` launches f(0..count-1) (rotated operands:
  // nothing stays in L2 between a copy's uses), median of 9 replays.
  template <typename F>
  double Graph(F f, int count) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < count; ++i) CK(f(i));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    std::vector<float> ts;
    for (int r = 0; r < 9; ++r) {
      CK(cudaEventRecord(e0, s));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms * 1000.f / count);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  }
};

// A few cuBLAS launches of the same product (A a host matrix), after a variant's: one Nsight
// Compute run then profiles both. Nothing when cuBLAS does not load.
inline void CublasBeside(const std::vector<uint16_t>& a, const void* b, void* c, int m, int k, int n, DType t) {
  Cublas cb;
  if (!cb.Load(0)) return;
  DevBuf da(static_cast<size_t>(m) * k * 2);
  CK(cudaMemcpy(da.p, a.data(), da.bytes, cudaMemcpyHostToDevice));
  for (int i = 0; i < 3; ++i) CK(cb.Gemm(da.p, b, c, m, k, n, t));
  CK(cudaDeviceSynchronize());
}

// B (K x N, row-major) of normal random values, rounded to t.
inline std::vector<uint16_t> RandomB(int k, int n, DType t, std::mt19937_64& rng) {
  std::vector<uint16_t> b(static_cast<size_t>(k) * n);
  std::normal_distribution<float> nrm(0.f, 1.f);
  for (auto& x : b) x = ToBits(nrm(rng), t);
  return b;
}

// Copies of a host matrix on the device, 256 MB or more in all (and two more than that
// needs): rotated through, no copy is still in L2 when it is used again.
inline std::vector<std::unique_ptr<DevBuf>> RotatedCopies(const std::vector<uint16_t>& host) {
  std::vector<std::unique_ptr<DevBuf>> out;
  const int copies = static_cast<int>((256u << 20) / (host.size() * 2) + 2);
  for (int i = 0; i < copies; ++i) {
    out.push_back(std::make_unique<DevBuf>(host.size() * 2));
    CK(cudaMemcpy(out.back()->p, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  }
  return out;
}

// cuBLAS's dense product on rotated copies of A (RotatedCopies) (nothing stays in L2 between a copy's uses):
// the events median and the graph time per launch, both 0 without cuBLAS.
struct DenseTimes {
  double events = 0, graph = 0;
};
inline DenseTimes TimeDense(Cublas& cb, bool have_cublas, Timer& timer, const std::vector<std::unique_ptr<DevBuf>>& dense,
                            const void* b, void* c, int m, int k, int n, DType t) {
  DenseTimes d;
  if (!have_cublas) return d;
  auto g = [&](int i) { return cb.Gemm(dense[i % dense.size()]->p, b, c, m, k, n, t); };
  d.events = timer.Events(g);
  d.graph = timer.Graph(g, static_cast<int>(dense.size()) * 2);
  return d;
}

}  // namespace probe
}  // namespace sparse
#endif  // SPARSE_SCRIPTS_PROBE_UTIL_H_
