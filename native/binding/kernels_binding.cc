// N-API glue for the kernels (no numerics here): argument checks that name the field,
// AsyncWorkers whose Execute() sees only plain C++ data, and CUDA statuses turned into
// JavaScript errors carrying the CUDA error name as `code`.
//
// Exports (declared for TypeScript in src/kernels/binding.ts):
//   cudaInfo() -> {built, available, reason?, code?, name, smCount, computeCapability, ...}
//   spmm(args) / sddmm(args) -> Promise<void>, filling the caller's `c` / `out` in place
//   spmmReference(args) / sddmmReference(args) -> Promise<Float64Array>
//   spmmVariants({m, k, n, nnz, dtype, indexBits?}) -> {selected, variants} (SpMM kernel
//     variants for tuning; spmm(args) takes an optional `variant` to force one)
//   spmmTime(args + {variants, reps?}) -> Promise<Float64Array> (ms per launch per variant)
#include "binding/kernels_binding.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/problems.h"
#include "common/tc_tiles.h"
#include "cpu/cpu_kernels.h"

#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/common/convert.h"
#include "cuda/common/device_buffer.h"
#include "cuda/sddmm/sddmm.h"
#include "cuda/spmm/spmm.h"
#include "cuda/spmm/spmm_tc.h"
#endif

namespace sparse {
namespace binding {
namespace {

// ---------------------------------------------------------------------------------------
// Status of a job run off the JavaScript thread.

struct Status {
  bool ok = true;
  std::string code;  // e.g. "cudaErrorMemoryAllocation"; empty when ok
  std::string message;
  static Status Ok() { return {}; }
  static Status Fail(std::string code, std::string message) { return {false, std::move(code), std::move(message)}; }
};

#if SPARSE_WITH_CUDA
Status CudaFail(cudaError_t e, const std::string& what) {
  const std::string name = cudaGetErrorName(e);
  return Status::Fail(name, what + " failed: " + name + " (" + cudaGetErrorString(e) + ")");
}
#define SPARSE_CUDA_TRY(expr, what)                        \
  do {                                                     \
    const cudaError_t sparse_e_ = (expr);                  \
    if (sparse_e_ != cudaSuccess) return CudaFail(sparse_e_, what); \
  } while (0)
#endif

// Runs `job` on the libuv pool and settles a promise with `result` (or undefined). The
// typed arrays the job reads and writes are held by references until it settles, so their
// memory stays put while Execute() runs. Execute() touches no N-API object.
class KernelWorker : public Napi::AsyncWorker {
 public:
  KernelWorker(Napi::Env env, std::function<Status()> job)
      : Napi::AsyncWorker(env, "sparse:kernel"), job_(std::move(job)), deferred_(Napi::Promise::Deferred::New(env)) {}

  void Keep(Napi::Value v) {
    if (v.IsObject()) keep_.push_back(Napi::Persistent(v.As<Napi::Object>()));
  }
  void SetResult(Napi::Object v) { result_ = Napi::Persistent(v); }
  Napi::Promise Promise() const { return deferred_.Promise(); }

  // Keeps `keep` (the typed arrays the job reads or writes) alive until the job ends, sets the
  // value the promise resolves to (undefined when empty), queues the job, returns the promise.
  static Napi::Promise Launch(KernelWorker* w, const std::vector<Napi::Value>& keep, Napi::Object result = Napi::Object()) {
    for (const auto& v : keep) w->Keep(v);
    if (!result.IsEmpty()) w->SetResult(result);
    Napi::Promise promise = w->Promise();
    w->Queue();
    return promise;
  }

 protected:
  void Execute() override {
    try {
      status_ = job_();
    } catch (const std::exception& e) {
      status_ = Status::Fail("internal", std::string("native kernel failed: ") + e.what());
    }
    if (!status_.ok) SetError(status_.message);
  }
  void OnOK() override {
    deferred_.Resolve(result_.IsEmpty() ? Env().Undefined() : static_cast<Napi::Value>(result_.Value()));
  }
  void OnError(const Napi::Error&) override {
    Napi::Error err = Napi::Error::New(Env(), status_.message);
    err.Set("code", Napi::String::New(Env(), status_.code));
    deferred_.Reject(err.Value());
  }

 private:
  std::function<Status()> job_;
  Napi::Promise::Deferred deferred_;
  std::vector<Napi::ObjectReference> keep_;
  Napi::ObjectReference result_;
  Status status_;
};

// ---------------------------------------------------------------------------------------
// Argument parsing: every message names the field.

class Args {
 public:
  Args(const Napi::CallbackInfo& info, const char* op) : env_(info.Env()), op_(op) {
    if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env_, op_ + ": expected one argument object");
    obj_ = info[0].As<Napi::Object>();
  }

  Napi::Env env() const { return env_; }

  [[noreturn]] void TypeFail(const std::string& msg) const { throw Napi::TypeError::New(env_, op_ + ": " + msg); }
  [[noreturn]] void RangeFail(const std::string& msg) const { throw Napi::RangeError::New(env_, op_ + ": " + msg); }

  int Dim(const char* name) const {
    Napi::Value v = obj_.Get(name);
    if (!v.IsNumber()) TypeFail(std::string(name) + " must be a number");
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0 && d <= 2147483647.0 && std::floor(d) == d)) RangeFail(std::string(name) + " must be an integer in [0, 2^31)");
    return static_cast<int>(d);
  }

  int OptionalInt(const char* name, int fallback) const {
    Napi::Value v = obj_.Get(name);
    if (v.IsUndefined() || v.IsNull()) return fallback;
    return Dim(name);
  }

  std::string String(const char* name, std::initializer_list<const char*> allowed) const {
    Napi::Value v = obj_.Get(name);
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : "|") + std::string(a);
    if (!v.IsString()) TypeFail(std::string(name) + " must be a string (" + list + ")");
    const std::string s = v.As<Napi::String>().Utf8Value();
    for (const char* a : allowed) {
      if (s == a) return s;
    }
    RangeFail(std::string(name) + " must be one of " + list + ", got '" + s + "'");
  }

  // An optional string: `fallback` when absent.
  std::string OptionalString(const char* name, const std::string& fallback) const {
    Napi::Value v = obj_.Get(name);
    if (v.IsUndefined() || v.IsNull()) return fallback;
    if (!v.IsString()) TypeFail(std::string(name) + " must be a string");
    return v.As<Napi::String>().Utf8Value();
  }

  // An array of strings (required).
  std::vector<std::string> Strings(const char* name) const {
    Napi::Value v = obj_.Get(name);
    if (!v.IsArray()) TypeFail(std::string(name) + " must be an array of strings");
    Napi::Array a = v.As<Napi::Array>();
    std::vector<std::string> out;
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value e = a.Get(i);
      if (!e.IsString()) TypeFail(std::string(name) + "[" + std::to_string(i) + "] must be a string");
      out.push_back(e.As<Napi::String>().Utf8Value());
    }
    return out;
  }

  DType DTypeField() const {
    const std::string s = String("dtype", {"f32", "f16", "bf16"});
    return s == "f32" ? DType::kF32 : (s == "f16" ? DType::kF16 : DType::kBF16);
  }

  // A typed array of the given element type and exact length. Returns its data pointer
  // (into the caller's ArrayBuffer: no copy) and records it in `keep`.
  void* Array(const char* name, napi_typedarray_type type, const char* type_name, int64_t length,
              std::vector<Napi::Value>* keep, bool optional = false) const {
    Napi::Value v = obj_.Get(name);
    if (optional && (v.IsUndefined() || v.IsNull())) return nullptr;
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) {
      TypeFail(std::string(name) + " must be a " + type_name);
    }
    Napi::TypedArray ta = v.As<Napi::TypedArray>();
    if (static_cast<int64_t>(ta.ElementLength()) != length) {
      RangeFail(std::string(name) + " has " + std::to_string(ta.ElementLength()) + " elements, expected " +
                std::to_string(length));
    }
    keep->push_back(v);
    return static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
  }

  // Float32Array for f32, Uint16Array (bit patterns) for f16/bf16.
  void* ValueArray(const char* name, DType t, int64_t length, std::vector<Napi::Value>* keep) const {
    return t == DType::kF32 ? Array(name, napi_float32_array, "Float32Array", length, keep)
                            : Array(name, napi_uint16_array, "Uint16Array (f16/bf16 bit patterns)", length, keep);
  }

  // nnz as the CSR states it: rowOffsets[m], which must equal columnIndices.length.
  int Nnz(const int* row_offsets, int m) const {
    Napi::Value v = obj_.Get("columnIndices");
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
      TypeFail("columnIndices must be an Int32Array");
    }
    const int64_t nnz = static_cast<int64_t>(v.As<Napi::TypedArray>().ElementLength());
    if (row_offsets[0] != 0) RangeFail("csr.rowOffsets[0] must be 0");
    if (row_offsets[m] != nnz) RangeFail("csr.rowOffsets[m] must equal nnz (columnIndices.length)");
    return static_cast<int>(nnz);
  }

 private:
  Napi::Env env_;
  std::string op_;
  Napi::Object obj_;
};

// The CSR pattern every entry point takes: rowOffsets (m + 1), nnz = rowOffsets[m],
// columnIndices (nnz, int32) and the optional row order rowIndices (m).
struct CsrPattern {
  const int* row_offsets;
  int nnz;
  const int* column_indices;
  const int* row_indices;
};

CsrPattern ParseCsrPattern(const Args& a, int m, std::vector<Napi::Value>* keep) {
  CsrPattern c;
  c.row_offsets = static_cast<const int*>(a.Array("rowOffsets", napi_int32_array, "Int32Array", int64_t{m} + 1, keep));
  c.nnz = a.Nnz(c.row_offsets, m);
  c.column_indices = static_cast<const int*>(a.Array("columnIndices", napi_int32_array, "Int32Array", c.nnz, keep));
  c.row_indices = static_cast<const int*>(a.Array("rowIndices", napi_int32_array, "Int32Array", m, keep, true));
  return c;
}

// ParseCsrPattern plus the check the host-side format builders rely on: offsets that never
// decrease, so that every row's range lies inside the arrays.
CsrPattern ParseMonotoneCsrPattern(const Args& a, int m, std::vector<Napi::Value>* keep) {
  const CsrPattern c = ParseCsrPattern(a, m, keep);
  for (int r = 0; r < m; ++r)
    if (c.row_offsets[r + 1] < c.row_offsets[r]) a.RangeFail("rowOffsets must not decrease");
  return c;
}

// Parses the fields shared by spmm and spmmReference into a host problem.
SpmmProblem ParseSpmm(const Args& a, std::vector<Napi::Value>* keep, bool with_output) {
  SpmmProblem p;
  p.m = a.Dim("m");
  p.k = a.Dim("k");
  p.n = a.Dim("n");
  p.dtype = a.DTypeField();
  if (static_cast<int64_t>(p.m) * p.n > (int64_t{1} << 40) || static_cast<int64_t>(p.k) * p.n > (int64_t{1} << 40)) {
    a.RangeFail("the dense operands are too large");
  }
  const CsrPattern csr = ParseCsrPattern(a, p.m, keep);
  p.row_offsets = csr.row_offsets;
  p.nnz = csr.nnz;
  p.column_indices = csr.column_indices;
  p.row_indices = csr.row_indices;
  p.index_bits = 32;
  p.values = a.ValueArray("values", p.dtype, p.nnz, keep);
  p.b = a.ValueArray("b", p.dtype, static_cast<int64_t>(p.k) * p.n, keep);
  if (with_output) p.c = a.ValueArray("c", p.dtype, static_cast<int64_t>(p.m) * p.n, keep);
  if (const char* err = CheckSpmmProblem(p)) a.RangeFail(err);
  return p;
}

SddmmProblem ParseSddmm(const Args& a, std::vector<Napi::Value>* keep, bool with_output) {
  SddmmProblem p;
  p.m = a.Dim("m");
  p.k = a.Dim("k");
  p.n = a.Dim("n");
  p.dtype = a.DTypeField();
  if (static_cast<int64_t>(p.m) * p.k > (int64_t{1} << 40) || static_cast<int64_t>(p.n) * p.k > (int64_t{1} << 40)) {
    a.RangeFail("the dense operands are too large");
  }
  const CsrPattern csr = ParseCsrPattern(a, p.m, keep);
  p.row_offsets = csr.row_offsets;
  p.nnz = csr.nnz;
  p.column_indices = csr.column_indices;
  p.row_indices = csr.row_indices;
  p.lhs = a.ValueArray("lhs", p.dtype, static_cast<int64_t>(p.m) * p.k, keep);
  p.rhs = a.ValueArray("rhs", p.dtype, static_cast<int64_t>(p.n) * p.k, keep);
  if (with_output) p.out = a.ValueArray("out", p.dtype, p.nnz, keep);
  if (const char* err = CheckSddmmProblem(p)) a.RangeFail(err);
  return p;
}

// ---------------------------------------------------------------------------------------
// CUDA jobs: upload, launch, download; every device allocation is owned by a DeviceBuffer
// and freed on every path. The output is poisoned on the device (all bits set: NaN in
// f32, f16 and bf16) so that an element the kernel misses comes back as NaN.

#if SPARSE_WITH_CUDA
Status CheckDevice() {
  int count = 0;
  SPARSE_CUDA_TRY(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count == 0) return Status::Fail("cudaErrorNoDevice", "no CUDA device is present");
  return Status::Ok();
}

// index_bits: 0 = choose (16-bit for f16/bf16 when k <= 32768, as Sputnik), 16 or 32 = force.
// variant: "" or "auto" = the kernel selection, else a name from SpmmVariants (forced).
// With `time_variants`, each of those variants is also timed after the checked launch
// (`reps` launches between two events after 3 warm-up launches, hot L2: for ranking
// variants, not for reports) and its ms per launch written to time_ms[i].
Status RunCudaSpmm(const SpmmProblem& host, int index_bits, const std::string& variant,
                   const std::vector<std::string>* time_variants = nullptr, int reps = 0, double* time_ms = nullptr) {
  Status s = CheckDevice();
  if (!s.ok) return s;
  const size_t elem = DTypeBytes(host.dtype);
  DeviceBuffer offsets, indices, indices16, row_indices, values, b, c;
  Stream stream;  // declared last: destroyed first, after synchronizing (see below)
  SPARSE_CUDA_TRY(stream.Create(), "cudaStreamCreate");
  struct SyncOnExit {
    cudaStream_t s;
    ~SyncOnExit() { cudaStreamSynchronize(s); }
  } sync_on_exit{stream.get()};
  const cudaStream_t st = stream.get();
  SPARSE_CUDA_TRY(offsets.Upload(host.row_offsets, sizeof(int) * (host.m + 1), st), "upload of rowOffsets");
  SPARSE_CUDA_TRY(indices.Upload(host.column_indices, sizeof(int) * host.nnz, st), "upload of columnIndices");
  SPARSE_CUDA_TRY(values.Upload(host.values, elem * host.nnz, st), "upload of values");
  if (host.row_indices) SPARSE_CUDA_TRY(row_indices.Upload(host.row_indices, sizeof(int) * host.m, st), "upload of rowIndices");
  SPARSE_CUDA_TRY(b.Upload(host.b, elem * host.k * static_cast<size_t>(host.n), st), "upload of b");
  const size_t c_bytes = elem * host.m * static_cast<size_t>(host.n);
  SPARSE_CUDA_TRY(c.Allocate(c_bytes), "cudaMalloc of c");
  if (c_bytes > 0) SPARSE_CUDA_TRY(cudaMemsetAsync(c.get(), 0xff, c_bytes, st), "poisoning c");

  SpmmProblem d = host;
  d.row_offsets = offsets.as<int>();
  d.column_indices = indices.get();
  d.index_bits = 32;
  d.values = values.get();
  d.row_indices = host.row_indices ? row_indices.as<int>() : nullptr;
  d.b = b.get();
  d.c = c.get();
  const bool want16 = index_bits == 16 || (index_bits == 0 && host.dtype != DType::kF32 && host.k <= 32768);
  if (want16 && host.k <= 32768) {
    // Sputnik's mixed-precision encoding: 16-bit column indices (half the index bytes).
    SPARSE_CUDA_TRY(indices16.Allocate(sizeof(int16_t) * host.nnz), "cudaMalloc of 16-bit column indices");
    SPARSE_CUDA_TRY(CudaIndicesToInt16(indices.as<int>(), indices16.as<int16_t>(), host.nnz, st), "index conversion");
    d.column_indices = indices16.get();
    d.index_bits = 16;
  }
  SPARSE_CUDA_TRY(CanImplementSpmm(d), "CanImplementSpmm");
  SPARSE_CUDA_TRY(CudaSpmmVariant(d, variant.c_str(), st), ("CudaSpmm launch of variant '" + variant + "'").c_str());
  if (c_bytes > 0) SPARSE_CUDA_TRY(cudaMemcpyAsync(host.c, c.get(), c_bytes, cudaMemcpyDeviceToHost, st), "download of c");
  SPARSE_CUDA_TRY(cudaStreamSynchronize(st), "CudaSpmm");
  if (time_variants) {
    cudaEvent_t start = nullptr, stop = nullptr;
    SPARSE_CUDA_TRY(cudaEventCreate(&start), "cudaEventCreate");
    struct Events {
      cudaEvent_t* a;
      cudaEvent_t* b;
      ~Events() {
        if (*a) cudaEventDestroy(*a);
        if (*b) cudaEventDestroy(*b);
      }
    } events{&start, &stop};
    SPARSE_CUDA_TRY(cudaEventCreate(&stop), "cudaEventCreate");
    // The tensor-core variants read tiles built once (as in `sparse bench`), not per launch.
    TcMatrix tiles;
    for (size_t i = 0; i < time_variants->size(); ++i) {
      const char* v = (*time_variants)[i].c_str();
      const TcMatrix* tp = nullptr;
      if (SpmmEffectiveVariant(d, v).rfind("tc_", 0) == 0) {
        if (tiles.empty()) SPARSE_CUDA_TRY(tiles.Build(d, st), "building the tensor-core tiles");
        tp = &tiles;
      }
      for (int w = 0; w < 3; ++w)
        SPARSE_CUDA_TRY(CudaSpmmPrepared(d, v, tp, st), (std::string("CudaSpmm launch of variant '") + v + "'").c_str());
      SPARSE_CUDA_TRY(cudaEventRecord(start, st), "cudaEventRecord");
      for (int r = 0; r < reps; ++r) SPARSE_CUDA_TRY(CudaSpmmPrepared(d, v, tp, st), "CudaSpmm launch");
      SPARSE_CUDA_TRY(cudaEventRecord(stop, st), "cudaEventRecord");
      SPARSE_CUDA_TRY(cudaEventSynchronize(stop), "timing");
      float ms = 0.0f;
      SPARSE_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      time_ms[i] = reps > 0 ? ms / reps : 0.0;
    }
  }
  return Status::Ok();
}

Status RunCudaSddmm(const SddmmProblem& host) {
  Status s = CheckDevice();
  if (!s.ok) return s;
  const size_t elem = DTypeBytes(host.dtype);
  DeviceBuffer offsets, indices, row_indices, lhs, rhs, out;
  Stream stream;
  SPARSE_CUDA_TRY(stream.Create(), "cudaStreamCreate");
  struct SyncOnExit {
    cudaStream_t s;
    ~SyncOnExit() { cudaStreamSynchronize(s); }
  } sync_on_exit{stream.get()};
  const cudaStream_t st = stream.get();
  SPARSE_CUDA_TRY(offsets.Upload(host.row_offsets, sizeof(int) * (host.m + 1), st), "upload of rowOffsets");
  SPARSE_CUDA_TRY(indices.Upload(host.column_indices, sizeof(int) * host.nnz, st), "upload of columnIndices");
  if (host.row_indices) SPARSE_CUDA_TRY(row_indices.Upload(host.row_indices, sizeof(int) * host.m, st), "upload of rowIndices");
  SPARSE_CUDA_TRY(lhs.Upload(host.lhs, elem * host.m * static_cast<size_t>(host.k), st), "upload of lhs");
  SPARSE_CUDA_TRY(rhs.Upload(host.rhs, elem * host.n * static_cast<size_t>(host.k), st), "upload of rhs");
  const size_t out_bytes = elem * host.nnz;
  SPARSE_CUDA_TRY(out.Allocate(out_bytes), "cudaMalloc of out");
  if (out_bytes > 0) SPARSE_CUDA_TRY(cudaMemsetAsync(out.get(), 0xff, out_bytes, st), "poisoning out");

  SddmmProblem d = host;
  d.row_offsets = offsets.as<int>();
  d.column_indices = indices.as<int>();
  d.row_indices = host.row_indices ? row_indices.as<int>() : nullptr;
  d.lhs = lhs.get();
  d.rhs = rhs.get();
  d.out = out.get();
  SPARSE_CUDA_TRY(CanImplementSddmm(d), "CanImplementSddmm");
  SPARSE_CUDA_TRY(CudaSddmm(d, st), "CudaSddmm launch");
  if (out_bytes > 0) SPARSE_CUDA_TRY(cudaMemcpyAsync(host.out, out.get(), out_bytes, cudaMemcpyDeviceToHost, st), "download of out");
  SPARSE_CUDA_TRY(cudaStreamSynchronize(st), "CudaSddmm");
  return Status::Ok();
}
#endif  // SPARSE_WITH_CUDA

Status NoCuda() {
  return Status::Fail("ERR_NO_CUDA", "the native addon was built without CUDA (nvcc was not found when it was compiled)");
}

// ---------------------------------------------------------------------------------------
// Exported functions.

Napi::Value Spmm(const Napi::CallbackInfo& info) {
  Args a(info, "spmm");
  std::vector<Napi::Value> keep;
  const SpmmProblem p = ParseSpmm(a, &keep, true);
  const bool cuda = a.String("device", {"cuda", "cpu"}) == "cuda";
  const int threads = a.OptionalInt("threads", 0);
  const int index_bits = a.OptionalInt("indexBits", 0);
  if (index_bits != 0 && index_bits != 16 && index_bits != 32) a.RangeFail("indexBits must be 16 or 32");
  if (index_bits == 16 && p.k > 32768) a.RangeFail("indexBits 16 needs k <= 32768");
  const std::string variant = a.OptionalString("variant", "");
  auto* w = new KernelWorker(info.Env(), [p, cuda, threads, index_bits, variant]() -> Status {
    if (!cuda) {
      CpuSpmm(p, threads);
      return Status::Ok();
    }
#if SPARSE_WITH_CUDA
    return RunCudaSpmm(p, index_bits, variant);
#else
    (void)index_bits;
    return NoCuda();
#endif
  });
  return KernelWorker::Launch(w, keep);
}

// The device index width spmm would use (see RunCudaSpmm).
int EffectiveIndexBits(DType t, int k, int index_bits) {
  if (index_bits == 16 || index_bits == 32) return index_bits;
  return t != DType::kF32 && k <= 32768 ? 16 : 32;
}

// tcFormat({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {offsets, entries}
// (Uint32Array): the tensor-core SpMM's tiles, built on the host exactly as the kernels do.
// Synchronous; pure C++ (also in a CPU-only build), for tests and inspection.
Napi::Value TcFormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "tcFormat");
  std::vector<Napi::Value> keep;
  const int m = a.Dim("m"), k = a.Dim("k");
  const CsrPattern c = ParseMonotoneCsrPattern(a, m, &keep);
  const uint16_t* vals = static_cast<const uint16_t*>(a.Array("values", napi_uint16_array, "Uint16Array", c.nnz, &keep));
  TcTiles t;
  const std::string err = BuildTcTiles(m, k, c.row_offsets, c.column_indices, vals, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Uint32Array off = Napi::Uint32Array::New(env, t.offsets.size());
  std::memcpy(off.Data(), t.offsets.data(), 4 * t.offsets.size());
  Napi::Uint32Array ent = Napi::Uint32Array::New(env, t.entries.size());
  if (!t.entries.empty()) std::memcpy(ent.Data(), t.entries.data(), 4 * t.entries.size());
  Napi::Object o = Napi::Object::New(env);
  o.Set("offsets", off);
  o.Set("entries", ent);
  return o;
}

// sddmmChunkStarts({m, n, rowOffsets, columnIndices}) -> Int32Array: the tensor-core
// SDDMM's chunk starts of a mask (common/tc_tiles.h). Synchronous; pure C++.
Napi::Value SddmmChunkStartsJs(const Napi::CallbackInfo& info) {
  Args a(info, "sddmmChunkStarts");
  std::vector<Napi::Value> keep;
  const int m = a.Dim("m"), n = a.Dim("n");
  const CsrPattern c = ParseMonotoneCsrPattern(a, m, &keep);
  std::vector<int> starts;
  const std::string err = BuildSddmmChunkStarts(m, n, c.row_offsets, c.column_indices, &starts);
  if (!err.empty()) a.RangeFail(err);
  Napi::Int32Array out = Napi::Int32Array::New(info.Env(), starts.size());
  if (!starts.empty()) std::memcpy(out.Data(), starts.data(), 4 * starts.size());
  return out;
}

// spmmVariants({m, k, n, nnz, dtype, indexBits?}): synchronous, no GPU work. `selected` is
// the built-in selection's pick ('' without CUDA), `variants` every variant that can run
// the problem (device buffers from cudaMalloc assumed).
Napi::Value SpmmVariantsJs(const Napi::CallbackInfo& info) {
  Args a(info, "spmmVariants");
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  Napi::Array list = Napi::Array::New(env);
  o.Set("selected", "");
  o.Set("variants", list);
#if SPARSE_WITH_CUDA
  SpmmProblem p;
  p.m = a.Dim("m"), p.k = a.Dim("k"), p.n = a.Dim("n"), p.nnz = a.Dim("nnz");
  p.dtype = a.DTypeField();
  p.index_bits = EffectiveIndexBits(p.dtype, p.k, a.OptionalInt("indexBits", 0));
  o.Set("selected", SpmmSelectedVariant(p));
  const std::vector<std::string> v = SpmmVariants(p);
  for (size_t i = 0; i < v.size(); ++i) list.Set(static_cast<uint32_t>(i), v[i]);
#else
  (void)a;
#endif
  return o;
}

// spmmTime(spmm args + {variants: string[], reps?: number}): runs the problem once (checked
// launch, filling c) and times each variant; resolves to a Float64Array of ms per launch.
Napi::Value SpmmTime(const Napi::CallbackInfo& info) {
  Args a(info, "spmmTime");
  std::vector<Napi::Value> keep;
  const SpmmProblem p = ParseSpmm(a, &keep, true);
  const int index_bits = a.OptionalInt("indexBits", 0);
  if (index_bits != 0 && index_bits != 16 && index_bits != 32) a.RangeFail("indexBits must be 16 or 32");
  if (index_bits == 16 && p.k > 32768) a.RangeFail("indexBits 16 needs k <= 32768");
  const std::vector<std::string> variants = a.Strings("variants");
  const int reps = a.OptionalInt("reps", 20);
  Napi::Float64Array result = Napi::Float64Array::New(info.Env(), variants.size());
  double* out = result.Data();
  auto* w = new KernelWorker(info.Env(), [p, index_bits, variants, reps, out]() -> Status {
#if SPARSE_WITH_CUDA
    return RunCudaSpmm(p, index_bits, "", &variants, reps, out);
#else
    (void)p, (void)index_bits, (void)variants, (void)reps, (void)out;
    return NoCuda();
#endif
  });
  return KernelWorker::Launch(w, keep, result);
}

Napi::Value Sddmm(const Napi::CallbackInfo& info) {
  Args a(info, "sddmm");
  std::vector<Napi::Value> keep;
  const SddmmProblem p = ParseSddmm(a, &keep, true);
  const bool cuda = a.String("device", {"cuda", "cpu"}) == "cuda";
  const int threads = a.OptionalInt("threads", 0);
  auto* w = new KernelWorker(info.Env(), [p, cuda, threads]() -> Status {
    if (!cuda) {
      CpuSddmm(p, threads);
      return Status::Ok();
    }
#if SPARSE_WITH_CUDA
    return RunCudaSddmm(p);
#else
    return NoCuda();
#endif
  });
  return KernelWorker::Launch(w, keep);
}

Napi::Value SpmmReference(const Napi::CallbackInfo& info) {
  Args a(info, "spmmReference");
  std::vector<Napi::Value> keep;
  const SpmmProblem p = ParseSpmm(a, &keep, false);
  const int threads = a.OptionalInt("threads", 0);
  Napi::Float64Array result = Napi::Float64Array::New(info.Env(), static_cast<size_t>(p.m) * p.n);
  double* out = result.Data();
  auto* w = new KernelWorker(info.Env(), [p, threads, out]() -> Status {
    ReferenceSpmm(p, out, threads);
    return Status::Ok();
  });
  return KernelWorker::Launch(w, keep, result);
}

Napi::Value SddmmReference(const Napi::CallbackInfo& info) {
  Args a(info, "sddmmReference");
  std::vector<Napi::Value> keep;
  const SddmmProblem p = ParseSddmm(a, &keep, false);
  const int threads = a.OptionalInt("threads", 0);
  Napi::Float64Array result = Napi::Float64Array::New(info.Env(), static_cast<size_t>(p.nnz));
  double* out = result.Data();
  auto* w = new KernelWorker(info.Env(), [p, threads, out]() -> Status {
    ReferenceSddmm(p, out, threads);
    return Status::Ok();
  });
  return KernelWorker::Launch(w, keep, result);
}

// cudaInfo(): never throws. `available` is false (with `reason` and `code`) when the addon
// was built without CUDA, when no driver is installed (cudaErrorInsufficientDriver: the
// CUDA runtime is linked statically, so loading never needs libcudart or libcuda), or
// when no device is present.
Napi::Value CudaInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", "");
  o.Set("smCount", 0);
  o.Set("computeCapability", "");
  o.Set("totalMemory", 0);
  o.Set("l2Bytes", 0);
  o.Set("deviceCount", 0);
#if SPARSE_WITH_CUDA
  o.Set("built", true);
  o.Set("targets", "sm_80 sm_90 compute_90");
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  o.Set("runtimeVersion", runtime);
  o.Set("driverVersion", driver);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    const std::string code = e != cudaSuccess ? cudaGetErrorName(e) : "cudaErrorNoDevice";
    std::string reason = e != cudaSuccess ? code + ": " + cudaGetErrorString(e) : "no CUDA device is present";
    if (e == cudaErrorInsufficientDriver && driver == 0) reason = code + ": no NVIDIA driver is installed (no GPU on this machine?)";
    cudaGetLastError();  // clear, so that later calls do not see a stale error
    o.Set("available", false);
    o.Set("code", code);
    o.Set("reason", reason);
    return o;
  }
  cudaDeviceProp prop;
  const cudaError_t pe = cudaGetDeviceProperties(&prop, 0);
  if (pe != cudaSuccess) {
    o.Set("available", false);
    o.Set("code", cudaGetErrorName(pe));
    o.Set("reason", std::string(cudaGetErrorName(pe)) + ": " + cudaGetErrorString(pe));
    return o;
  }
  auto attr = [](cudaDeviceAttr a) {
    int v = 0;
    cudaDeviceGetAttribute(&v, a, 0);
    return v;
  };
  o.Set("available", true);
  o.Set("deviceCount", count);
  o.Set("name", prop.name);
  o.Set("smCount", prop.multiProcessorCount);
  o.Set("computeCapability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  o.Set("major", prop.major);
  o.Set("minor", prop.minor);
  o.Set("totalMemory", static_cast<double>(prop.totalGlobalMem));
  o.Set("l2Bytes", prop.l2CacheSize);
  o.Set("sharedMemPerBlockOptin", static_cast<double>(prop.sharedMemPerBlockOptin));
  o.Set("sharedMemPerSm", static_cast<double>(prop.sharedMemPerMultiprocessor));
  o.Set("maxThreadsPerSm", prop.maxThreadsPerMultiProcessor);
  o.Set("clockKhz", attr(cudaDevAttrClockRate));
  o.Set("memoryClockKhz", attr(cudaDevAttrMemoryClockRate));
  o.Set("memoryBusWidth", attr(cudaDevAttrGlobalMemoryBusWidth));
#else
  o.Set("built", false);
  o.Set("targets", "");
  o.Set("available", false);
  o.Set("code", "ERR_NO_CUDA");
  o.Set("reason", "the native addon was built without CUDA (nvcc was not found when it was compiled)");
#endif
  return o;
}

}  // namespace

void InitKernels(Napi::Env env, Napi::Object exports) {
  exports.Set("cudaInfo", Napi::Function::New(env, CudaInfo, "cudaInfo"));
  exports.Set("spmm", Napi::Function::New(env, Spmm, "spmm"));
  exports.Set("spmmVariants", Napi::Function::New(env, SpmmVariantsJs, "spmmVariants"));
  exports.Set("tcFormat", Napi::Function::New(env, TcFormatJs, "tcFormat"));
  exports.Set("sddmmChunkStarts", Napi::Function::New(env, SddmmChunkStartsJs, "sddmmChunkStarts"));
  exports.Set("spmmTime", Napi::Function::New(env, SpmmTime, "spmmTime"));
  exports.Set("sddmm", Napi::Function::New(env, Sddmm, "sddmm"));
  exports.Set("spmmReference", Napi::Function::New(env, SpmmReference, "spmmReference"));
  exports.Set("sddmmReference", Napi::Function::New(env, SddmmReference, "sddmmReference"));
}

}  // namespace binding
}  // namespace sparse
