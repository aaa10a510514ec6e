// The CUDA side of the benchmark harness: our kernels and the cuBLAS / cuSPARSE baselines,
// timed on the same data with CUDA events, cold L2 (rotated copies or a flush), and a CUDA
// graph for tiny launches. See bench.h for the contract.
#include "cuda/bench/bench.h"

#if !SPARSE_WITH_CUDA

namespace sparse {
namespace bench {
bool CudaBuilt() { return false; }
static BenchError NotBuilt() {
  return BenchError("cudaNotBuilt", "CUDA not built: this addon was compiled without the CUDA toolkit");
}
DeviceInfo QueryDevice() {
  DeviceInfo d;
  d.reason = "CUDA not built: this addon was compiled without the CUDA toolkit";
  return d;
}
BenchResult BenchSpmmCuda(const BenchCase&, const BenchOptions&) { throw NotBuilt(); }
BenchResult BenchSddmmCuda(const BenchCase&, const BenchOptions&) { throw NotBuilt(); }
Ceilings MeasureCeilingsCuda() { throw NotBuilt(); }
}  // namespace bench
}  // namespace sparse

#else  // SPARSE_WITH_CUDA

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "cuda/bench/device_util.h"
#include "cuda/bench/libs.h"
#include "cuda/sddmm/sddmm.h"
#include "cuda/sddmm/sddmm_tc.h"
#include "cuda/spmm/spmm.h"
#include "cuda/spmm/spmm_tc.h"

namespace sparse {
namespace bench {
namespace {

// ---------------------------------------------------------------------------------------
// Errors and RAII.

void Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later cases can run
  throw BenchError(cudaGetErrorName(e), std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                                            cudaGetErrorString(e) + ")");
}

void CheckCublas(cublasStatus_t s, const char* what) {
  if (s != 0) throw BenchError(CublasStatusName(s), std::string(what) + ": " + CublasStatusName(s));
}

void CheckCusparse(cusparseStatus_t s, const char* what) {
  if (s != 0) throw BenchError(CusparseStatusName(s), std::string(what) + ": " + CusparseStatusName(s));
}

// Device memory, freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { Reset(bytes); }
  ~DeviceBuffer() { Free(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Free();
      ptr_ = o.ptr_, bytes_ = o.bytes_;
      o.ptr_ = nullptr, o.bytes_ = 0;
    }
    return *this;
  }
  void Reset(size_t bytes) {
    Free();
    // NOTE: a 0-byte request still gets a valid pointer, so descriptors never see null.
    Check(cudaMalloc(&ptr_, bytes ? bytes : 16), "cudaMalloc");
    bytes_ = bytes;
  }
  template <typename T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  void Free() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

cudaDataType CudaType(DType t) {
  return t == DType::kF32 ? CUDA_R_32F : (t == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF);
}

// ---------------------------------------------------------------------------------------
// The process-wide context: one stream, the library handles, the L2 flush buffer and a pool
// of events. Created on first use; guarded by a mutex (one benchmark at a time).

struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;
  int64_t l2_bytes = 0;
  std::string pci;
  cublasHandle_t cublas = nullptr;
  std::string cublas_reason;
  cusparseHandle_t cusparse = nullptr;
  std::string cusparse_reason;
  DeviceBuffer flush;
  std::vector<cudaEvent_t> events;
  double clock_min = -1, clock_max = -1;

  void EnsureEvents(size_t n) {
    while (events.size() < n) {
      cudaEvent_t e;
      Check(cudaEventCreate(&e), "cudaEventCreate");
      events.push_back(e);
    }
  }
  void SampleClock() {
    const Nvml& nvml = GetNvml(pci);
    if (!nvml.loaded) return;
    unsigned int mhz = 0;
    if (nvml.GetClockInfo(nvml.device, kNvmlClockSm, &mhz) != 0) return;
    if (clock_min < 0 || mhz < clock_min) clock_min = mhz;
    if (mhz > clock_max) clock_max = mhz;
  }
};

std::mutex g_mutex;

// NOTE: never destroyed: tearing down library handles at process exit races the CUDA
// runtime's own teardown.
Context& Ctx() {
  static Context* ctx = nullptr;
  if (ctx) return *ctx;
  int count = 0;
  Check(cudaGetDeviceCount(&count), "no CUDA device");
  if (count == 0) throw BenchError("cudaErrorNoDevice", "no CUDA device: cudaErrorNoDevice");
  auto c = std::make_unique<Context>();
  Check(cudaGetDevice(&c->device), "cudaGetDevice");
  int l2 = 0;
  Check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c->device), "cudaDeviceGetAttribute");
  c->l2_bytes = l2;
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, c->device) == cudaSuccess) c->pci = bus;
  Check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  // The flush buffer: writing twice the L2 size evicts every operand line.
  c->flush.Reset(static_cast<size_t>(std::max<int64_t>(c->l2_bytes, 1 << 20)) * 2);
  const Cublas& cb = GetCublas();
  if (!cb.loaded) {
    c->cublas_reason = "cuBLAS " + cb.reason;
  } else if (cb.Create(&c->cublas) != 0) {
    c->cublas = nullptr;
    c->cublas_reason = "cublasCreate failed";
  } else {
    cb.SetStream(c->cublas, c->stream);
    cb.SetMathMode(c->cublas, kCublasDefaultMath);
  }
  const Cusparse& cs = GetCusparse();
  if (!cs.loaded) {
    c->cusparse_reason = "cuSPARSE " + cs.reason;
  } else if (cs.Create(&c->cusparse) != 0) {
    c->cusparse = nullptr;
    c->cusparse_reason = "cusparseCreate failed";
  } else {
    cs.SetStream(c->cusparse, c->stream);
  }
  ctx = c.release();
  return *ctx;
}

// ---------------------------------------------------------------------------------------
// Runners: one per implementation. Each owns its copies of the operands (rotated through
// so that every timed launch reads memory that is not in L2) and launches on ctx.stream.

class Runner {
 public:
  virtual ~Runner() = default;
  // Bytes of operands one launch touches (inputs and output), for the L2 decision.
  virtual size_t Footprint() const = 0;
  // Allocates `copies` independent operand sets (copy 0 may alias the case's master data).
  virtual void Setup(int copies) = 0;
  // Enqueues one launch on operand set `copy`.
  virtual void Launch(int copy) = 0;
  // The output of operand set 0 as doubles: SpMM C (m x n, row-major); SDDMM the nnz
  // sampled values in CSR order.
  virtual std::vector<double> Output() = 0;
  std::string detail;
};

// The case's operands on the device, made once per case. For SpMM `dense_b` is B (k x n);
// for SDDMM `lhs` is L (m x k) and `rhs` is R (n x k).
struct Master {
  DType dtype;
  int m, k, n, nnz;
  DeviceBuffer offsets, indices, values, row_indices;
  bool has_row_indices = false;
  DeviceBuffer dense_b;   // SpMM
  DeviceBuffer lhs, rhs;  // SDDMM
};

size_t Bytes(int64_t count, DType t) { return static_cast<size_t>(count) * DTypeBytes(t); }

std::vector<double> ReadDense(const void* src, size_t count, DType t, cudaStream_t stream) {
  std::vector<uint8_t> raw(count * DTypeBytes(t));
  Check(cudaMemcpyAsync(raw.data(), src, raw.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpy D2H");
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> out(count);
  DecodeToDouble(raw.data(), t, count, out.data());
  return out;
}

void CopyD2D(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes) Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpy D2D");
}

// A slab of `copies` operand sets, each a list of (bytes) parts, 256-byte aligned.
class Slab {
 public:
  void Build(const std::vector<size_t>& parts, int copies) {
    offsets_.clear();
    size_t per = 0;
    for (size_t p : parts) {
      offsets_.push_back(per);
      per += (p + 255) / 256 * 256;
    }
    per_copy_ = per;
    buffer_.Reset(per * copies);
  }
  void* at(int copy, int part) const {
    return static_cast<char*>(buffer_.get()) + per_copy_ * copy + offsets_[part];
  }

 private:
  DeviceBuffer buffer_;
  std::vector<size_t> offsets_;
  size_t per_copy_ = 0;
};

// A tensor-core kernel's prepared input (TcMatrix, SddmmTcMask): built once, for operand
// set 0, by `build` (host work, not timed with the kernel), then copied on the device to each
// of the other `copies` sets. Returns the build's host time in ms.
template <typename T, typename Build>
double PrepareOncePerCopy(std::vector<std::unique_ptr<T>>* out, int copies, cudaStream_t s, Build build,
                          const std::string& what) {
  out->clear();
  const auto t0 = std::chrono::steady_clock::now();
  out->push_back(std::make_unique<T>());
  Check(build(*out->back()), ("building " + what).c_str());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (int c = 1; c < copies; ++c) {
    out->push_back(std::make_unique<T>());
    Check(out->back()->CopyFrom(*out->front(), s), ("copying " + what).c_str());
  }
  return ms;
}

// ---- SpMM -----------------------------------------------------------------------------

// `variant` empty: CudaSpmm (the kernel's own selection, or SPARSE_SPMM_VARIANT); else that
// variant through CudaSpmmVariant (`sparse bench --tune` candidates and cached winners).
class OursSpmm : public Runner {
 public:
  OursSpmm(const Master& mm, int index_bits, std::string variant, cudaStream_t s)
      : m_(mm), bits_(index_bits), variant_(std::move(variant)), s_(s) {
    detail = "CudaSpmm, " + std::to_string(bits_) + "-bit indices";
  }
  size_t Footprint() const override {
    if (!tc_.empty() && tc_[0]) {
      return tc_[0]->Bytes() + Bytes((int64_t)m_.k * m_.n, m_.dtype) + Bytes((int64_t)m_.m * m_.n, m_.dtype);
    }
    return Bytes(m_.nnz, m_.dtype) + static_cast<size_t>(m_.nnz) * (bits_ / 8) + 4 * (m_.m + 1) +
           (m_.has_row_indices ? 4 * m_.m : 0) + Bytes((int64_t)m_.k * m_.n, m_.dtype) +
           Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }
  void Setup(int copies) override {
    copies_ = copies;
    slab_.Build({Bytes(m_.nnz, m_.dtype), static_cast<size_t>(m_.nnz) * (bits_ / 8), 4 * (size_t)(m_.m + 1),
                 4 * (size_t)m_.m, Bytes((int64_t)m_.k * m_.n, m_.dtype), Bytes((int64_t)m_.m * m_.n, m_.dtype)},
                copies);
    for (int c = 0; c < copies; ++c) {
      CopyD2D(slab_.at(c, 0), m_.values.get(), Bytes(m_.nnz, m_.dtype), s_);
      if (bits_ == 16)
        Check(NarrowIndices(m_.indices.get<int>(), static_cast<int16_t*>(slab_.at(c, 1)), m_.nnz, s_), "narrow");
      else
        CopyD2D(slab_.at(c, 1), m_.indices.get(), 4 * (size_t)m_.nnz, s_);
      CopyD2D(slab_.at(c, 2), m_.offsets.get(), 4 * (size_t)(m_.m + 1), s_);
      if (m_.has_row_indices) CopyD2D(slab_.at(c, 3), m_.row_indices.get(), 4 * (size_t)m_.m, s_);
      CopyD2D(slab_.at(c, 4), m_.dense_b.get(), Bytes((int64_t)m_.k * m_.n, m_.dtype), s_);
    }
    Check(CanImplementSpmm(Problem(0)), "CanImplementSpmm");
    // The tensor-core kernel reads its tiles (built once per matrix, like the weights of a
    // pruned layer: the build is not timed with the kernel; its host time is in `detail`).
    std::string tc_note;
    const std::string effective = SpmmEffectiveVariant(Problem(0), variant_.c_str());
    if (effective.rfind("tc_", 0) == 0) {
      const double build_ms = PrepareOncePerCopy(
          &tc_, copies, s_, [&](TcMatrix& t) { return t.Build(Problem(0), s_); }, "the tensor-core tiles");
      char buf[128];
      std::snprintf(buf, sizeof(buf), "; tiles built once on the host in %.1f ms, %.2f MB", build_ms,
                    tc_[0]->Bytes() / 1e6);
      tc_note = buf;
    }
    if (variant_.empty()) {
      detail = std::string("CudaSpmm ") + SpmmKernelName(Problem(0)) + ", " + std::to_string(bits_) + "-bit indices";
    } else {
      // The variant's own check (cudaErrorInvalidValue: unknown, or cannot run this problem).
      Check(CudaSpmmPrepared(Problem(0), variant_.c_str(), Tiles(0), s_),
            ("CudaSpmmVariant '" + variant_ + "' (unknown, or it cannot run this problem)").c_str());
      detail = std::string("CudaSpmmVariant spmm_") + DTypeName(m_.dtype) + "_i" + std::to_string(bits_) + "_" +
               variant_ + " (variant chosen by the caller), " + std::to_string(bits_) + "-bit indices";
    }
    detail += tc_note;
  }
  void Launch(int copy) override {
    Check(CudaSpmmPrepared(Problem(copy), variant_.c_str(), Tiles(copy), s_), "CudaSpmm");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 5), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  SpmmProblem Problem(int c) const {
    SpmmProblem p;
    p.m = m_.m, p.k = m_.k, p.n = m_.n, p.nnz = m_.nnz, p.dtype = m_.dtype;
    p.values = slab_.at(c, 0);
    p.column_indices = slab_.at(c, 1);
    p.index_bits = bits_;
    p.row_offsets = static_cast<const int*>(slab_.at(c, 2));
    p.row_indices = m_.has_row_indices ? static_cast<const int*>(slab_.at(c, 3)) : nullptr;
    p.b = slab_.at(c, 4);
    p.c = slab_.at(c, 5);
    return p;
  }
  const TcMatrix* Tiles(int c) const { return c < static_cast<int>(tc_.size()) ? tc_[c].get() : nullptr; }
  const Master& m_;
  int bits_;
  std::string variant_;
  cudaStream_t s_;
  Slab slab_;
  int copies_ = 1;
  std::vector<std::unique_ptr<TcMatrix>> tc_;
};

// Dense GEMM through cublasGemmEx. `compute` is a cublasComputeType_t.
class CublasSpmm : public Runner {
 public:
  CublasSpmm(const Master& mm, cublasHandle_t h, int compute, cudaStream_t s) : m_(mm), h_(h), compute_(compute), s_(s) {
    detail = compute == kCublasCompute32FFastTF32 ? "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores)"
             : mm.dtype == DType::kF32       ? "cublasGemmEx CUBLAS_COMPUTE_32F, default math (fp32 FMA)"
                                            : std::string("cublasGemmEx ") + DTypeName(mm.dtype) +
                                                  " in/out, CUBLAS_COMPUTE_32F (tensor cores, fp32 accumulate)";
  }
  size_t Footprint() const override {
    return Bytes((int64_t)m_.m * m_.k, m_.dtype) + Bytes((int64_t)m_.k * m_.n, m_.dtype) +
           Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }
  void Setup(int copies) override {
    slab_.Build({Bytes((int64_t)m_.m * m_.k, m_.dtype), Bytes((int64_t)m_.k * m_.n, m_.dtype),
                 Bytes((int64_t)m_.m * m_.n, m_.dtype)},
                copies);
    for (int c = 0; c < copies; ++c) {
      Check(Densify(m_.offsets.get<int>(), m_.indices.get<int>(), m_.values.get(), m_.m, m_.k, m_.dtype,
                    slab_.at(c, 0), s_),
            "densify");
      CopyD2D(slab_.at(c, 1), m_.dense_b.get(), Bytes((int64_t)m_.k * m_.n, m_.dtype), s_);
    }
  }
  void Launch(int c) override {
    // Row-major C = A B is column-major C^T = B^T A^T: B (ld n) first, then A (ld k).
    const float alpha = 1.f, beta = 0.f;
    const cudaDataType t = CudaType(m_.dtype);
    CheckCublas(GetCublas().GemmEx(h_, kCublasOpN, kCublasOpN, m_.n, m_.m, m_.k, &alpha, slab_.at(c, 1), t, m_.n,
                                   slab_.at(c, 0), t, m_.k, &beta, slab_.at(c, 2), t, m_.n, compute_,
                                   kCublasGemmDefault),
                "cublasGemmEx");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 2), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  const Master& m_;
  cublasHandle_t h_;
  int compute_;
  cudaStream_t s_;
  Slab slab_;
};

// cuSPARSE SpMM, as an expert calls it: descriptors and workspace made once per operand
// set, cusparseSpMM_preprocess before timing, the fastest CSR algorithm picked by a short
// trial (CSR_ALG2, the row-major algorithm, usually; ALG1 and ALG3 are tried too).
class CusparseSpmm : public Runner {
 public:
  CusparseSpmm(const Master& mm, cusparseHandle_t h, cudaStream_t s) : m_(mm), h_(h), s_(s) {}
  size_t Footprint() const override {
    return Bytes(m_.nnz, m_.dtype) + 4 * (size_t)m_.nnz + 4 * (size_t)(m_.m + 1) +
           Bytes((int64_t)m_.k * m_.n, m_.dtype) + Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }
  void Setup(int copies) override {
    slab_.Build({Bytes(m_.nnz, m_.dtype), 4 * (size_t)m_.nnz, 4 * (size_t)(m_.m + 1),
                 Bytes((int64_t)m_.k * m_.n, m_.dtype), Bytes((int64_t)m_.m * m_.n, m_.dtype)},
                copies);
    for (int c = 0; c < copies; ++c) {
      CopyD2D(slab_.at(c, 0), m_.values.get(), Bytes(m_.nnz, m_.dtype), s_);
      CopyD2D(slab_.at(c, 1), m_.indices.get(), 4 * (size_t)m_.nnz, s_);
      CopyD2D(slab_.at(c, 2), m_.offsets.get(), 4 * (size_t)(m_.m + 1), s_);
      CopyD2D(slab_.at(c, 3), m_.dense_b.get(), Bytes((int64_t)m_.k * m_.n, m_.dtype), s_);
    }
    Check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
    // Pick the algorithm on operand set 0: a warm-up and three launches each.
    std::string errors, trials;
    float best = -1;
    cudaEvent_t a = nullptr, b = nullptr;
    Check(cudaEventCreate(&a), "cudaEventCreate");
    Check(cudaEventCreate(&b), "cudaEventCreate");
    for (int alg : {kCusparseSpmmCsrAlg2, kCusparseSpmmCsrAlg1, kCusparseSpmmCsrAlg3}) {
      try {
        Sets sets;
        MakeSet(0, alg, &sets);
        Run(sets, alg);
        Check(cudaEventRecord(a, s_), "cudaEventRecord");
        for (int i = 0; i < 3; ++i) Run(sets, alg);
        Check(cudaEventRecord(b, s_), "cudaEventRecord");
        Check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0;
        Check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        if (best < 0 || ms < best) best = ms, alg_ = alg;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %.1f us", trials.empty() ? "" : ", ", AlgName(alg).c_str() + 14, ms * 1000 / 3);
        trials += buf;
      } catch (const BenchError& e) {
        cudaStreamSynchronize(s_);
        cudaGetLastError();
        if (!errors.empty()) errors += "; ";
        errors += AlgName(alg) + ": " + e.what();
      }
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (best < 0) throw BenchError("cusparse", "no cuSPARSE CSR SpMM algorithm ran: " + errors);
    detail = "cusparseSpMM " + AlgName(alg_) + " (the fastest in a warm trial: " + trials +
             "), compute fp32, descriptors, workspace and preprocess made before timing";
    sets_.clear();
    for (int c = 0; c < copies; ++c) {
      sets_.push_back(std::make_unique<Sets>());
      MakeSet(c, alg_, sets_.back().get());
    }
  }
  void Launch(int c) override { Run(*sets_[c], alg_); }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 4), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  // One operand set's descriptors and workspace, destroyed with it.
  struct Sets {
    cusparseSpMatDescr_t a = nullptr;
    cusparseDnMatDescr_t b = nullptr, c = nullptr;
    DeviceBuffer work;
    Sets() = default;
    Sets(const Sets&) = delete;
    Sets& operator=(const Sets&) = delete;
    ~Sets() {
      const Cusparse& cs = GetCusparse();
      if (a) cs.DestroySpMat(a);
      if (b) cs.DestroyDnMat(b);
      if (c) cs.DestroyDnMat(c);
    }
  };
  static std::string AlgName(int alg) {
    return alg == kCusparseSpmmCsrAlg1 ? "CUSPARSE_SPMM_CSR_ALG1"
           : alg == kCusparseSpmmCsrAlg2 ? "CUSPARSE_SPMM_CSR_ALG2"
                                         : "CUSPARSE_SPMM_CSR_ALG3";
  }
  void MakeSet(int c, int alg, Sets* s) {
    const Cusparse& cs = GetCusparse();
    const cudaDataType t = CudaType(m_.dtype);
    CheckCusparse(cs.CreateCsr(&s->a, m_.m, m_.k, m_.nnz, slab_.at(c, 2), slab_.at(c, 1), slab_.at(c, 0),
                               kCusparseIndex32I, kCusparseIndex32I, kCusparseIndexBaseZero, t),
                  "cusparseCreateCsr");
    CheckCusparse(cs.CreateDnMat(&s->b, m_.k, m_.n, m_.n, slab_.at(c, 3), t, kCusparseOrderRow), "cusparseCreateDnMat");
    CheckCusparse(cs.CreateDnMat(&s->c, m_.m, m_.n, m_.n, slab_.at(c, 4), t, kCusparseOrderRow), "cusparseCreateDnMat");
    const float alpha = 1.f, beta = 0.f;
    size_t bytes = 0;
    CheckCusparse(cs.SpMMBufferSize(h_, kCusparseOpN, kCusparseOpN, &alpha, s->a, s->b, &beta, s->c, CUDA_R_32F, alg,
                                    &bytes),
                  "cusparseSpMM_bufferSize");
    s->work.Reset(bytes);
    CheckCusparse(cs.SpMMPreprocess(h_, kCusparseOpN, kCusparseOpN, &alpha, s->a, s->b, &beta, s->c, CUDA_R_32F, alg,
                                    s->work.get()),
                  "cusparseSpMM_preprocess");
  }
  void Run(Sets& s, int alg) {
    const float alpha = 1.f, beta = 0.f;
    CheckCusparse(GetCusparse().SpMM(h_, kCusparseOpN, kCusparseOpN, &alpha, s.a, s.b, &beta, s.c, CUDA_R_32F, alg,
                                     s.work.get()),
                  "cusparseSpMM");
  }
  const Master& m_;
  cusparseHandle_t h_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<Sets>> sets_;
  int alg_ = kCusparseSpmmCsrAlg2;
};

// ---- SDDMM ----------------------------------------------------------------------------

class OursSddmm : public Runner {
 public:
  OursSddmm(const Master& mm, cudaStream_t s) : m_(mm), s_(s) { detail = "CudaSddmm"; }
  size_t Footprint() const override {
    return 8 * (size_t)m_.nnz + 4 * (size_t)(m_.m + 1) + (m_.has_row_indices ? 4 * m_.m : 0) +
           Bytes((int64_t)m_.m * m_.k, m_.dtype) + Bytes((int64_t)m_.n * m_.k, m_.dtype) + Bytes(m_.nnz, m_.dtype);
  }
  void Setup(int copies) override {
    slab_.Build({4 * (size_t)(m_.m + 1), 4 * (size_t)m_.nnz, 4 * (size_t)m_.m, Bytes((int64_t)m_.m * m_.k, m_.dtype),
                 Bytes((int64_t)m_.n * m_.k, m_.dtype), Bytes(m_.nnz, m_.dtype)},
                copies);
    for (int c = 0; c < copies; ++c) {
      CopyD2D(slab_.at(c, 0), m_.offsets.get(), 4 * (size_t)(m_.m + 1), s_);
      CopyD2D(slab_.at(c, 1), m_.indices.get(), 4 * (size_t)m_.nnz, s_);
      if (m_.has_row_indices) CopyD2D(slab_.at(c, 2), m_.row_indices.get(), 4 * (size_t)m_.m, s_);
      CopyD2D(slab_.at(c, 3), m_.lhs.get(), Bytes((int64_t)m_.m * m_.k, m_.dtype), s_);
      CopyD2D(slab_.at(c, 4), m_.rhs.get(), Bytes((int64_t)m_.n * m_.k, m_.dtype), s_);
    }
    Check(CanImplementSddmm(Problem(0)), "CanImplementSddmm");
    detail = std::string("CudaSddmm ") + SddmmKernelName(Problem(0));
    masks_.clear();
    if (SddmmUsesTc(Problem(0))) {
      // The tensor-core kernel's chunk starts, built once per mask (not timed with it).
      const double ms = PrepareOncePerCopy(
          &masks_, copies, s_, [&](SddmmTcMask& m) { return m.Build(Problem(0), s_); }, "the SDDMM chunk starts");
      char buf[128];
      std::snprintf(buf, sizeof(buf), "; chunk starts built once on the host in %.1f ms, %.2f MB", ms,
                    masks_[0]->Bytes() / 1e6);
      detail += buf;
    }
  }
  void Launch(int c) override {
    Check(CudaSddmmPrepared(Problem(c), c < static_cast<int>(masks_.size()) ? masks_[c].get() : nullptr, s_),
          "CudaSddmm");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 5), m_.nnz, m_.dtype, s_); }

 private:
  SddmmProblem Problem(int c) const {
    SddmmProblem p;
    p.m = m_.m, p.k = m_.k, p.n = m_.n, p.nnz = m_.nnz, p.dtype = m_.dtype;
    p.row_offsets = static_cast<const int*>(slab_.at(c, 0));
    p.column_indices = static_cast<const int*>(slab_.at(c, 1));
    p.row_indices = m_.has_row_indices ? static_cast<const int*>(slab_.at(c, 2)) : nullptr;
    p.lhs = slab_.at(c, 3);
    p.rhs = slab_.at(c, 4);
    p.out = slab_.at(c, 5);
    return p;
  }
  const Master& m_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<SddmmTcMask>> masks_;
};

// The dense baseline of SDDMM: the full product L R^T (m x n, inner k) in cuBLAS, in the
// faster of two operand orders. Both are one cublasGemmEx(T, N) reading the same L and R
// and writing the same m x n values (same FLOPs and bytes); they differ in which operand
// cuBLAS tiles as "A" (its M dimension), and its kernel heuristics treat M and N
// differently, which shows on tall-skinny shapes:
//   order "RL": column-major C^T (n x m) = R L^T, i.e. out row-major m x n (what
//               PyTorch's L @ R.T calls): GemmEx(T, N, n, m, k, R, ld k, L, ld k, C, ld n);
//   order "LR": column-major C (m x n) = L R^T, i.e. out stored transposed (row-major
//               n x m): GemmEx(T, N, m, n, k, L, ld k, R, ld k, C, ld m).
// As for cuSPARSE's SpMM algorithm, a short trial in Setup (one warm-up and 5 launches of
// each order, rotating through the operand copies) picks the order; `detail` names it and
// the trial's times.
class CublasSddmm : public Runner {
 public:
  CublasSddmm(const Master& mm, cublasHandle_t h, int compute, const HostCsr& csr, cudaStream_t s)
      : m_(mm), h_(h), compute_(compute), csr_(csr), s_(s) {
    how_ = compute == kCublasCompute32FFastTF32 ? "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32"
           : mm.dtype == DType::kF32        ? "cublasGemmEx CUBLAS_COMPUTE_32F, default math"
                                            : std::string("cublasGemmEx ") + DTypeName(mm.dtype) +
                                                  " in/out, CUBLAS_COMPUTE_32F (tensor cores)";
    detail = "full product L R^T, " + how_;
  }
  size_t Footprint() const override {
    return Bytes((int64_t)m_.m * m_.k, m_.dtype) + Bytes((int64_t)m_.n * m_.k, m_.dtype) +
           Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }
  void Setup(int copies) override {
    slab_.Build({Bytes((int64_t)m_.m * m_.k, m_.dtype), Bytes((int64_t)m_.n * m_.k, m_.dtype),
                 Bytes((int64_t)m_.m * m_.n, m_.dtype)},
                copies);
    for (int c = 0; c < copies; ++c) {
      CopyD2D(slab_.at(c, 0), m_.lhs.get(), Bytes((int64_t)m_.m * m_.k, m_.dtype), s_);
      CopyD2D(slab_.at(c, 1), m_.rhs.get(), Bytes((int64_t)m_.n * m_.k, m_.dtype), s_);
    }
    Check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
    // The order trial. An order cuBLAS rejects is skipped; none running is this
    // baseline's error.
    constexpr int kTrialLaunches = 5;
    cudaEvent_t a = nullptr, b = nullptr;
    Check(cudaEventCreate(&a), "cudaEventCreate");
    Check(cudaEventCreate(&b), "cudaEventCreate");
    float best = -1;
    std::string trials, errors;
    for (bool lr : {false, true}) {
      try {
        Run(0, lr);  // warm-up (heuristic, kernel load)
        Check(cudaEventRecord(a, s_), "cudaEventRecord");
        for (int i = 0; i < kTrialLaunches; ++i) Run((i + 1) % copies, lr);
        Check(cudaEventRecord(b, s_), "cudaEventRecord");
        Check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0;
        Check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        if (best < 0 || ms < best) best = ms, lr_ = lr;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%s %.1f us", trials.empty() ? "" : ", ", lr ? "LR" : "RL",
                      ms * 1000 / kTrialLaunches);
        trials += buf;
      } catch (const BenchError& e) {
        cudaStreamSynchronize(s_);
        cudaGetLastError();
        if (!errors.empty()) errors += "; ";
        errors += std::string(lr ? "order LR: " : "order RL: ") + e.what();
      }
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (best < 0) throw BenchError("cublas", "no cuBLAS operand order ran: " + errors);
    detail = "full product L R^T, " + how_ + ", order " +
             (lr_ ? std::string("LR (C = L R^T column-major: GemmEx(T, N, m, n, k, L, R), out stored transposed)")
                  : std::string("RL (C^T = R L^T column-major: GemmEx(T, N, n, m, k, R, L), out row-major)")) +
             ", the faster in a trial: " + trials;
  }
  void Launch(int c) override { Run(c, lr_); }
  std::vector<double> Output() override {
    std::vector<double> full = ReadDense(slab_.at(0, 2), (size_t)m_.m * m_.n, m_.dtype, s_);
    std::vector<double> out(m_.nnz);
    for (int r = 0; r < m_.m; ++r)
      for (int i = csr_.row_offsets[r]; i < csr_.row_offsets[r + 1]; ++i) {
        const size_t col = static_cast<size_t>(csr_.column_indices[i]);
        out[i] = lr_ ? full[col * m_.m + r] : full[(size_t)r * m_.n + col];
      }
    return out;
  }

 private:
  void Run(int c, bool lr) {
    const float alpha = 1.f, beta = 0.f;
    const cudaDataType t = CudaType(m_.dtype);
    if (lr) {
      // Column-major C (m x n, ld m) = L R^T: L is k x m column-major (ld k), transposed;
      // R is k x n column-major (ld k).
      CheckCublas(GetCublas().GemmEx(h_, kCublasOpT, kCublasOpN, m_.m, m_.n, m_.k, &alpha, slab_.at(c, 0), t, m_.k,
                                     slab_.at(c, 1), t, m_.k, &beta, slab_.at(c, 2), t, m_.m, compute_,
                                     kCublasGemmDefault),
                  "cublasGemmEx");
    } else {
      // Row-major out = L R^T is column-major out^T = R L^T: R (k x n col-major, ld k)
      // transposed, times L (k x m col-major, ld k).
      CheckCublas(GetCublas().GemmEx(h_, kCublasOpT, kCublasOpN, m_.n, m_.m, m_.k, &alpha, slab_.at(c, 1), t, m_.k,
                                     slab_.at(c, 0), t, m_.k, &beta, slab_.at(c, 2), t, m_.n, compute_,
                                     kCublasGemmDefault),
                  "cublasGemmEx");
    }
  }
  const Master& m_;
  cublasHandle_t h_;
  int compute_;
  const HostCsr& csr_;
  cudaStream_t s_;
  Slab slab_;
  std::string how_;
  bool lr_ = false;
};

// cuSPARSE SDDMM (CUSPARSE_SDDMM_ALG_DEFAULT): descriptors, workspace and
// cusparseSDDMM_preprocess made before timing. R (n x k, row-major) is described as the
// k x n column-major matrix R^T, so no transpose flag is needed; when a cuSPARSE version
// rejects that layout, R is described row-major with opB = transpose instead.
class CusparseSddmm : public Runner {
 public:
  CusparseSddmm(const Master& mm, cusparseHandle_t h, cudaStream_t s) : m_(mm), h_(h), s_(s) {}
  size_t Footprint() const override {
    return 8 * (size_t)m_.nnz + 4 * (size_t)(m_.m + 1) + Bytes((int64_t)m_.m * m_.k, m_.dtype) +
           Bytes((int64_t)m_.n * m_.k, m_.dtype) + Bytes(m_.nnz, m_.dtype);
  }
  void Setup(int copies) override {
    slab_.Build({4 * (size_t)(m_.m + 1), 4 * (size_t)m_.nnz, Bytes((int64_t)m_.m * m_.k, m_.dtype),
                 Bytes((int64_t)m_.n * m_.k, m_.dtype), Bytes(m_.nnz, m_.dtype)},
                copies);
    for (int c = 0; c < copies; ++c) {
      CopyD2D(slab_.at(c, 0), m_.offsets.get(), 4 * (size_t)(m_.m + 1), s_);
      CopyD2D(slab_.at(c, 1), m_.indices.get(), 4 * (size_t)m_.nnz, s_);
      CopyD2D(slab_.at(c, 2), m_.lhs.get(), Bytes((int64_t)m_.m * m_.k, m_.dtype), s_);
      CopyD2D(slab_.at(c, 3), m_.rhs.get(), Bytes((int64_t)m_.n * m_.k, m_.dtype), s_);
    }
    std::string first_error;
    for (int layout = 0; layout < 2; ++layout) {
      try {
        sets_.clear();
        for (int c = 0; c < copies; ++c) {
          sets_.push_back(std::make_unique<Sets>());
          MakeSet(c, layout, sets_.back().get());
        }
        Launch(0);
        Check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
        detail = std::string("cusparseSDDMM CUSPARSE_SDDMM_ALG_DEFAULT, compute fp32, ") +
                 (layout == 0 ? "R described as column-major R^T" : "R row-major with opB = transpose") +
                 ", descriptors, workspace and preprocess made before timing";
        return;
      } catch (const BenchError& e) {
        cudaStreamSynchronize(s_);
        cudaGetLastError();
        sets_.clear();
        if (first_error.empty()) first_error = e.what();
      }
    }
    throw BenchError("cusparse", first_error);
  }
  void Launch(int c) override {
    const float alpha = 1.f, beta = 0.f;
    Sets& s = *sets_[c];
    CheckCusparse(GetCusparse().SDDMM(h_, kCusparseOpN, s.op_b, &alpha, s.a, s.b, &beta, s.c, CUDA_R_32F,
                                      kCusparseSddmmAlgDefault, s.work.get()),
                  "cusparseSDDMM");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 4), m_.nnz, m_.dtype, s_); }

 private:
  struct Sets {
    cusparseDnMatDescr_t a = nullptr, b = nullptr;
    cusparseSpMatDescr_t c = nullptr;
    int op_b = kCusparseOpN;
    DeviceBuffer work;
    Sets() = default;
    Sets(const Sets&) = delete;
    Sets& operator=(const Sets&) = delete;
    ~Sets() {
      const Cusparse& cs = GetCusparse();
      if (a) cs.DestroyDnMat(a);
      if (b) cs.DestroyDnMat(b);
      if (c) cs.DestroySpMat(c);
    }
  };
  void MakeSet(int c, int layout, Sets* s) {
    const Cusparse& cs = GetCusparse();
    const cudaDataType t = CudaType(m_.dtype);
    CheckCusparse(cs.CreateDnMat(&s->a, m_.m, m_.k, m_.k, slab_.at(c, 2), t, kCusparseOrderRow), "cusparseCreateDnMat");
    if (layout == 0) {
      CheckCusparse(cs.CreateDnMat(&s->b, m_.k, m_.n, m_.k, slab_.at(c, 3), t, kCusparseOrderCol),
                    "cusparseCreateDnMat");
      s->op_b = kCusparseOpN;
    } else {
      CheckCusparse(cs.CreateDnMat(&s->b, m_.n, m_.k, m_.k, slab_.at(c, 3), t, kCusparseOrderRow),
                    "cusparseCreateDnMat");
      s->op_b = kCusparseOpT;
    }
    CheckCusparse(cs.CreateCsr(&s->c, m_.m, m_.n, m_.nnz, slab_.at(c, 0), slab_.at(c, 1), slab_.at(c, 4),
                               kCusparseIndex32I, kCusparseIndex32I, kCusparseIndexBaseZero, t),
                  "cusparseCreateCsr");
    const float alpha = 1.f, beta = 0.f;
    size_t bytes = 0;
    CheckCusparse(cs.SDDMMBufferSize(h_, kCusparseOpN, s->op_b, &alpha, s->a, s->b, &beta, s->c, CUDA_R_32F,
                                     kCusparseSddmmAlgDefault, &bytes),
                  "cusparseSDDMM_bufferSize");
    s->work.Reset(bytes);
    CheckCusparse(cs.SDDMMPreprocess(h_, kCusparseOpN, s->op_b, &alpha, s->a, s->b, &beta, s->c, CUDA_R_32F,
                                     kCusparseSddmmAlgDefault, s->work.get()),
                  "cusparseSDDMM_preprocess");
  }
  const Master& m_;
  cusparseHandle_t h_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<Sets>> sets_;
};

// ---------------------------------------------------------------------------------------
// Timing.

constexpr int kMaxCopies = 64;

// Times one runner. L2 policy: operands of 2 x L2 or more are cold anyway ("none"); smaller
// ones are rotated through enough copies to span 3 x L2 when that takes at most kMaxCopies
// copies ("rotate"), else the L2 is flushed by a 2 x L2 memset before each launch, outside
// the timed region ("flush").
void TimeRunner(Runner& r, const BenchOptions& o, Context& ctx, ImplResult* out) {
  const size_t fp = std::max<size_t>(r.Footprint(), 1);
  const size_t l2 = static_cast<size_t>(ctx.l2_bytes);
  int copies = 1;
  std::string mode = "none";
  if (fp < 2 * l2) {
    const size_t want = (3 * l2 + fp - 1) / fp;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (want <= kMaxCopies && want * fp < free_b / 2) {
      copies = static_cast<int>(want);
      mode = "rotate";
    } else {
      mode = "flush";
    }
  }
  r.Setup(copies);
  Check(cudaStreamSynchronize(ctx.stream), "setup");
  out->l2_mode = mode;
  out->copies = copies;
  out->detail = r.detail;

  // NOTE: each sample brackets one launch with events. If the host enqueued more slowly than
  // the GPU ran (tiny kernels, libraries with a few microseconds of host work per call), the
  // stream would run dry after the start event and the sample would include the host's
  // launch latency. So a spacer kernel (no memory traffic) runs before each start event,
  // longer than the host needs per iteration: the host stays ahead and the events time the
  // device alone. The flush, when used, runs before the spacer.
  double spacer_us = 20;
  auto timed_batch = [&](int reps, int first, std::vector<double>* samples, std::vector<double>* host_us) {
    ctx.EnsureEvents(2 * static_cast<size_t>(reps));
    for (int i = 0; i < reps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (mode == "flush")
        Check(cudaMemsetAsync(ctx.flush.get(), (first + i) & 0xff, ctx.flush.size(), ctx.stream), "flush");
      Check(Spin(static_cast<uint64_t>(spacer_us * 1000), ctx.stream), "spacer");
      Check(cudaEventRecord(ctx.events[2 * i], ctx.stream), "cudaEventRecord");
      r.Launch((first + i) % copies);
      Check(cudaEventRecord(ctx.events[2 * i + 1], ctx.stream), "cudaEventRecord");
      if (host_us) host_us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    ctx.SampleClock();  // the GPU is still busy with the queued launches
    Check(cudaStreamSynchronize(ctx.stream), "timed launches");
    for (int i = 0; i < reps; ++i) {
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, ctx.events[2 * i], ctx.events[2 * i + 1]), "cudaEventElapsedTime");
      samples->push_back(ms);
    }
  };

  // Warm-up (module load, library heuristics, clocks), timed only to size the run and the
  // spacer (twice the host's median time per iteration, 10 to 200 us).
  std::vector<double> warm, host;
  timed_batch(std::max(o.warmup, 3), 0, &warm, &host);
  std::sort(warm.begin(), warm.end());
  std::sort(host.begin(), host.end());
  spacer_us = std::min(200.0, std::max(10.0, 2 * host[host.size() / 2]));
  const double estimate = std::max(warm[warm.size() / 2], 1e-4);
  int reps = static_cast<int>(std::ceil(o.min_ms / estimate));
  reps = std::max(o.min_reps, std::min(o.max_reps, reps));
  reps = std::max(reps, 1);
  out->samples_ms.reserve(reps);
  timed_batch(reps, 0, &out->samples_ms, nullptr);
  out->spacer_us = spacer_us;

  std::vector<double> sorted = out->samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median < o.graph_below_ms && o.graph_launches > 0) {
    // Launch overhead shown apart: a graph of many launches, time per launch.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    try {
      Check(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
      try {
        for (int i = 0; i < o.graph_launches; ++i) r.Launch(i % copies);
      } catch (...) {
        cudaStreamEndCapture(ctx.stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        graph = nullptr;
        throw;
      }
      Check(cudaStreamEndCapture(ctx.stream, &graph), "cudaStreamEndCapture");
      Check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
      Check(cudaGraphLaunch(exec, ctx.stream), "cudaGraphLaunch");  // warm-up
      ctx.EnsureEvents(10);
      std::vector<double> g;
      for (int i = 0; i < 5; ++i) {
        if (mode == "flush") Check(cudaMemsetAsync(ctx.flush.get(), i, ctx.flush.size(), ctx.stream), "flush");
        Check(cudaEventRecord(ctx.events[2 * i], ctx.stream), "cudaEventRecord");
        Check(cudaGraphLaunch(exec, ctx.stream), "cudaGraphLaunch");
        Check(cudaEventRecord(ctx.events[2 * i + 1], ctx.stream), "cudaEventRecord");
      }
      Check(cudaStreamSynchronize(ctx.stream), "graph launches");
      for (int i = 0; i < 5; ++i) {
        float ms = 0;
        Check(cudaEventElapsedTime(&ms, ctx.events[2 * i], ctx.events[2 * i + 1]), "cudaEventElapsedTime");
        g.push_back(ms);
      }
      std::sort(g.begin(), g.end());
      out->graph_ms_per_launch = g[g.size() / 2] / o.graph_launches;
    } catch (const BenchError&) {
      // Not capturable (a library may allocate inside): no graph figure.
      cudaStreamSynchronize(ctx.stream);
      cudaGetLastError();
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
}

// Dense baselines whose output serves as the reference for the check, by dtype.
std::string ReferenceFor(DType t) {
  return t == DType::kF32 ? "cublas_f32" : (t == DType::kF16 ? "cublas_f16" : "cublas_bf16");
}

std::unique_ptr<Runner> MakeRunner(bool spmm, const std::string& name, const BenchCase& c, const Master& mm,
                                   Context& ctx, std::string* reason) {
  auto needs_dtype = [&](DType t) {
    if (c.dtype == t) return true;
    *reason = name + " needs " + DTypeName(t) + " operands (this case is " + DTypeName(c.dtype) + ")";
    return false;
  };
  auto need_cublas = [&]() {
    if (ctx.cublas) return true;
    *reason = ctx.cublas_reason;
    return false;
  };
  if (name == "ours") {
    if (spmm) return std::make_unique<OursSpmm>(mm, c.index_bits, c.variant, ctx.stream);
    return std::make_unique<OursSddmm>(mm, ctx.stream);
  }
  int compute = -1;
  if (name == "cublas_f32" && needs_dtype(DType::kF32)) compute = kCublasCompute32F;
  if (name == "cublas_tf32" && needs_dtype(DType::kF32)) compute = kCublasCompute32FFastTF32;
  if (name == "cublas_f16" && needs_dtype(DType::kF16)) compute = kCublasCompute32F;
  if (name == "cublas_bf16" && needs_dtype(DType::kBF16)) compute = kCublasCompute32F;
  if (compute >= 0) {
    if (!need_cublas()) return nullptr;
    if (spmm) return std::make_unique<CublasSpmm>(mm, ctx.cublas, compute, ctx.stream);
    return std::make_unique<CublasSddmm>(mm, ctx.cublas, compute, c.csr, ctx.stream);
  }
  if (!reason->empty()) return nullptr;
  if (name == "cusparse") {
    if (!ctx.cusparse) {
      *reason = ctx.cusparse_reason;
      return nullptr;
    }
    if (spmm) return std::make_unique<CusparseSpmm>(mm, ctx.cusparse, ctx.stream);
    return std::make_unique<CusparseSddmm>(mm, ctx.cusparse, ctx.stream);
  }
  *reason = "unknown implementation '" + name + "'";
  return nullptr;
}

void UploadMaster(const BenchCase& c, bool spmm, Master* mm, cudaStream_t s) {
  mm->dtype = c.dtype;
  mm->m = c.m, mm->k = c.k, mm->n = c.n, mm->nnz = c.csr.nnz;
  const int rows = c.csr.rows;
  mm->offsets.Reset(4 * (size_t)(rows + 1));
  mm->indices.Reset(4 * (size_t)c.csr.nnz);
  mm->values.Reset(Bytes(c.csr.nnz, c.dtype));
  mm->row_indices.Reset(4 * (size_t)rows);
  Check(cudaMemcpyAsync(mm->offsets.get(), c.csr.row_offsets, 4 * (size_t)(rows + 1), cudaMemcpyHostToDevice, s),
        "cudaMemcpy H2D");
  if (c.csr.nnz)
    Check(cudaMemcpyAsync(mm->indices.get(), c.csr.column_indices, 4 * (size_t)c.csr.nnz, cudaMemcpyHostToDevice, s),
          "cudaMemcpy H2D");
  if (c.csr.values && c.csr.nnz) {
    Check(cudaMemcpyAsync(mm->values.get(), c.csr.values, Bytes(c.csr.nnz, c.dtype), cudaMemcpyHostToDevice, s),
          "cudaMemcpy H2D");
  } else if (c.csr.nnz) {
    // Pattern-only mask (SDDMM): values are unused by the kernels, but kept defined.
    Check(FillNormal(mm->values.get(), c.csr.nnz, c.dtype, 0x5eed0000ull, s), "fill");
  }
  mm->has_row_indices = c.csr.row_indices != nullptr;
  if (mm->has_row_indices)
    Check(cudaMemcpyAsync(mm->row_indices.get(), c.csr.row_indices, 4 * (size_t)rows, cudaMemcpyHostToDevice, s),
          "cudaMemcpy H2D");
  if (spmm) {
    mm->dense_b.Reset(Bytes((int64_t)c.k * c.n, c.dtype));
    Check(FillNormal(mm->dense_b.get(), (size_t)c.k * c.n, c.dtype, 0x5eedB000ull, s), "fill");
  } else {
    mm->lhs.Reset(Bytes((int64_t)c.m * c.k, c.dtype));
    mm->rhs.Reset(Bytes((int64_t)c.n * c.k, c.dtype));
    Check(FillNormal(mm->lhs.get(), (size_t)c.m * c.k, c.dtype, 0x5eed1000ull, s), "fill");
    Check(FillNormal(mm->rhs.get(), (size_t)c.n * c.k, c.dtype, 0x5eed2000ull, s), "fill");
  }
  Check(cudaStreamSynchronize(s), "upload");
}

void ValidateCase(const BenchCase& c, bool spmm) {
  const int rows = c.m, cols = spmm ? c.k : c.n;
  if (c.m < 0 || c.k < 0 || c.n < 0) throw BenchError("usage", "m, k and n must be non-negative");
  if (c.csr.rows != rows || c.csr.cols != cols)
    throw BenchError("usage", "csr shape " + std::to_string(c.csr.rows) + "x" + std::to_string(c.csr.cols) +
                                  " does not match the problem (" + std::to_string(rows) + "x" + std::to_string(cols) +
                                  ")");
  if (c.csr.row_offsets[0] != 0 || c.csr.row_offsets[rows] != c.csr.nnz)
    throw BenchError("usage", "csr.rowOffsets must run from 0 to nnz");
}

BenchResult RunCase(const BenchCase& c, const BenchOptions& o, bool spmm) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ValidateCase(c, spmm);
  Context& ctx = Ctx();
  ctx.clock_min = ctx.clock_max = -1;
  Master mm;
  UploadMaster(c, spmm, &mm, ctx.stream);

  // The reference runs first so that every later output can be checked against it.
  std::vector<std::string> order = c.impls;
  const std::string ref_name = ReferenceFor(c.dtype);
  auto it = std::find(order.begin(), order.end(), ref_name);
  if (it != order.end()) std::rotate(order.begin(), it, it + 1);

  BenchResult res;
  res.l2_bytes = ctx.l2_bytes;
  std::vector<double> reference;
  bool have_reference = false;
  for (const std::string& name : order) {
    ImplResult ir;
    ir.name = name;
    std::string reason;
    try {
      std::unique_ptr<Runner> r = MakeRunner(spmm, name, c, mm, ctx, &reason);
      if (!r) {
        ir.reason = reason;
      } else {
        TimeRunner(*r, o, ctx, &ir);
        ir.available = true;
        if (o.check) {
          std::vector<double> outv = r->Output();
          if (name == ref_name) {
            reference = std::move(outv);
            have_reference = true;
          } else if (have_reference) {
            ir.rel_err = RelativeError(outv, reference);
            ir.check_against = ref_name;
          }
        }
      }
    } catch (const BenchError& e) {
      cudaStreamSynchronize(ctx.stream);
      cudaGetLastError();
      if (name == "ours") throw;  // the case fails when our kernel does
      ir.available = false;
      ir.reason = e.what();
      ir.samples_ms.clear();
    }
    res.impls.push_back(std::move(ir));
  }
  // Report in the order asked.
  std::vector<ImplResult> ordered;
  for (const std::string& name : c.impls)
    for (size_t i = 0; i < res.impls.size(); ++i)
      if (res.impls[i].name == name) {
        ordered.push_back(std::move(res.impls[i]));
        res.impls.erase(res.impls.begin() + i);
        break;
      }
  res.impls = std::move(ordered);
  res.sm_clock_mhz_min = ctx.clock_min;
  res.sm_clock_mhz_max = ctx.clock_max;
  return res;
}

}  // namespace

bool CudaBuilt() { return true; }

DeviceInfo QueryDevice() {
  DeviceInfo d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    d.reason = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorName(e) : "no CUDA device";
    return d;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp p;
  if ((e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess) {
    d.reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorName(e);
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  d.l2_bytes = p.l2CacheSize;
  d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) d.max_sm_clock_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess) d.max_mem_clock_mhz = khz / 1000.0;
  int drv = 0;
  if (cudaDriverGetVersion(&drv) == cudaSuccess) d.driver = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) {
    const Nvml& nvml = GetNvml(bus);
    unsigned int mhz = 0;
    if (nvml.loaded && nvml.GetClockInfo(nvml.device, kNvmlClockSm, &mhz) == 0) d.sm_clock_mhz = mhz;
    if (nvml.loaded && nvml.GetClockInfo(nvml.device, kNvmlClockMem, &mhz) == 0) d.mem_clock_mhz = mhz;
  }
  const Cublas& cb = GetCublas();
  d.cublas = cb.loaded ? cb.soname : "unavailable: " + cb.reason;
  const Cusparse& cs = GetCusparse();
  d.cusparse = cs.loaded ? cs.soname : "unavailable: " + cs.reason;
  return d;
}

BenchResult BenchSpmmCuda(const BenchCase& c, const BenchOptions& o) { return RunCase(c, o, true); }
BenchResult BenchSddmmCuda(const BenchCase& c, const BenchOptions& o) { return RunCase(c, o, false); }

Ceilings MeasureCeilingsCuda() {
  std::lock_guard<std::mutex> lock(g_mutex);
  Context& ctx = Ctx();
  Ceilings out;
  cudaStream_t s = ctx.stream;
  cudaEvent_t a, b;
  Check(cudaEventCreate(&a), "cudaEventCreate");
  Check(cudaEventCreate(&b), "cudaEventCreate");
  auto time_it = [&](int reps, auto&& fn) {
    fn();
    fn();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      Check(cudaEventRecord(a, s), "cudaEventRecord");
      fn();
      Check(cudaEventRecord(b, s), "cudaEventRecord");
      Check(cudaEventSynchronize(b), "cudaEventSynchronize");
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  size_t free_b = 0, total_b = 0;
  Check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  // Copy bandwidth: 1 GiB device to device (bytes read + written).
  {
    size_t bytes = std::min<size_t>(size_t(1) << 30, free_b / 4);
    DeviceBuffer src(bytes), dst(bytes);
    Check(cudaMemsetAsync(src.get(), 1, bytes, s), "memset");
    double ms = time_it(10, [&] { Check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s), "copy"); });
    out.copy_gbps = 2.0 * bytes / (ms * 1e-3) / 1e9;
  }
  // GEMM peaks at 8192^3 (smaller when memory is short).
  int n = 8192;
  while (n > 1024 && (size_t)n * n * 4 * 3 > free_b / 2) n /= 2;
  out.gemm_size = n;
  if (!ctx.cublas) {
    out.note = ctx.cublas_reason;
  } else {
    const size_t elems = (size_t)n * n;
    DeviceBuffer A(elems * 4), B(elems * 4), C(elems * 4);
    const double flop = 2.0 * n * n * (double)n;
    struct V { DType t; int compute; double* dst; };
    V variants[] = {{DType::kF32, kCublasCompute32F, &out.f32_tflops},
                    {DType::kF32, kCublasCompute32FFastTF32, &out.tf32_tflops},
                    {DType::kF16, kCublasCompute32F, &out.f16_tflops},
                    {DType::kBF16, kCublasCompute32F, &out.bf16_tflops}};
    for (const V& v : variants) {
      try {
        Check(FillNormal(A.get(), elems, v.t, 11, s), "fill");
        Check(FillNormal(B.get(), elems, v.t, 12, s), "fill");
        const cudaDataType t = CudaType(v.t);
        const float alpha = 1.f, beta = 0.f;
        double ms = time_it(5, [&] {
          CheckCublas(GetCublas().GemmEx(ctx.cublas, kCublasOpN, kCublasOpN, n, n, n, &alpha, A.get(), t, n, B.get(),
                                         t, n, &beta, C.get(), t, n, v.compute, kCublasGemmDefault),
                      "cublasGemmEx");
        });
        *v.dst = flop / (ms * 1e-3) / 1e12;
      } catch (const BenchError& e) {
        if (!out.note.empty()) out.note += "; ";
        out.note += e.what();
      }
    }
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return out;
}

}  // namespace bench
}  // namespace sparse

#endif  // SPARSE_WITH_CUDA
