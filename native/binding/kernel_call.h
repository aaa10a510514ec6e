#ifndef SPARSE_BINDING_KERNEL_CALL_H_
#define SPARSE_BINDING_KERNEL_CALL_H_
// What every kernel entry point of the binding shares (spmm_binding.cc, sddmm_binding.cc,
// formats_binding.cc, kernels_binding.cc): the Status of a job run off the JavaScript thread,
// the AsyncWorker that runs it, the argument parser whose messages name the field, the
// problem parsers, and the CUDA jobs' upload, poison and download steps. N-API glue only.
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/problems.h"
#include "cpu/cpu_kernels.h"

#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/common/device_buffer.h"
#endif

namespace sparse {
namespace binding {

// ---------------------------------------------------------------------------------------
// Status of a job run off the JavaScript thread.

struct Status {
  bool ok = true;
  std::string code;  // e.g. "cudaErrorMemoryAllocation"; empty when ok
  std::string message;
  static Status Ok() { return {}; }
  static Status Fail(std::string code, std::string message) { return {false, std::move(code), std::move(message)}; }
};

// Returns the Status of `expr` from the enclosing function when it is a failure.
#define SPARSE_STATUS_TRY(expr)            \
  do {                                     \
    Status sparse_s_ = (expr);             \
    if (!sparse_s_.ok) return sparse_s_;   \
  } while (0)

#if SPARSE_WITH_CUDA
inline Status CudaFail(cudaError_t e, const std::string& what) {
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

  // Queues `job` on a new worker that keeps `keep` (the typed arrays the job reads or writes)
  // alive until the job ends; the promise resolves to `result` (undefined when empty).
  static Napi::Promise Launch(Napi::Env env, std::function<Status()> job, const std::vector<Napi::Value>& keep,
                              Napi::Object result = Napi::Object()) {
    auto* w = new KernelWorker(env, std::move(job));
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
  // The typed arrays read so far (Array, ValueArray): a job keeps them alive while it runs.
  const std::vector<Napi::Value>& keep() const { return keep_; }

  [[noreturn]] void TypeFail(const std::string& msg) const { throw Napi::TypeError::New(env_, op_ + ": " + msg); }
  [[noreturn]] void RangeFail(const std::string& msg) const { throw Napi::RangeError::New(env_, op_ + ": " + msg); }

  // Whether the argument object has `name` (neither undefined nor null).
  bool Has(const char* name) const {
    Napi::Value v = obj_.Get(name);
    return !v.IsUndefined() && !v.IsNull();
  }

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

  // An optional boolean: `fallback` when absent.
  bool OptionalBool(const char* name, bool fallback) const {
    Napi::Value v = obj_.Get(name);
    if (v.IsUndefined() || v.IsNull()) return fallback;
    if (!v.IsBoolean()) TypeFail(std::string(name) + " must be a boolean");
    return v.As<Napi::Boolean>().Value();
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
  // (into the caller's ArrayBuffer: no copy) and records it in keep().
  void* Array(const char* name, napi_typedarray_type type, const char* type_name, int64_t length,
              bool optional = false) {
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
    keep_.push_back(v);
    return static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
  }

  // Float32Array for f32, Uint16Array (bit patterns) for f16/bf16.
  void* ValueArray(const char* name, DType t, int64_t length) {
    return t == DType::kF32 ? Array(name, napi_float32_array, "Float32Array", length)
                            : Array(name, napi_uint16_array, "Uint16Array (f16/bf16 bit patterns)", length);
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
  std::vector<Napi::Value> keep_;
};

// The CSR pattern every entry point takes: rowOffsets (m + 1), nnz = rowOffsets[m],
// columnIndices (nnz, int32) and the optional row order rowIndices (m).
struct CsrPattern {
  const int* row_offsets;
  int nnz;
  const int* column_indices;
  const int* row_indices;
};

inline CsrPattern ParseCsrPattern(Args& a, int m) {
  CsrPattern c;
  c.row_offsets = static_cast<const int*>(a.Array("rowOffsets", napi_int32_array, "Int32Array", int64_t{m} + 1));
  c.nnz = a.Nnz(c.row_offsets, m);
  c.column_indices = static_cast<const int*>(a.Array("columnIndices", napi_int32_array, "Int32Array", c.nnz));
  c.row_indices = static_cast<const int*>(a.Array("rowIndices", napi_int32_array, "Int32Array", m, true));
  return c;
}

// ParseCsrPattern plus the check the host-side format builders rely on: offsets that never
// decrease, so that every row's range lies inside the arrays.
inline CsrPattern ParseMonotoneCsrPattern(Args& a, int m) {
  const CsrPattern c = ParseCsrPattern(a, m);
  for (int r = 0; r < m; ++r)
    if (c.row_offsets[r + 1] < c.row_offsets[r]) a.RangeFail("rowOffsets must not decrease");
  return c;
}

// The head of every problem, in this order: m, k, n, dtype, the size of the largest dense
// operand (at most 2^40 elements: SpMM's B is k x n and C m x n, SDDMM's L is m x k and R
// n x k), then the CSR pattern (m rows).
template <typename Problem>
void ParseProblemHead(Args& a, bool spmm, Problem* p) {
  p->m = a.Dim("m");
  p->k = a.Dim("k");
  p->n = a.Dim("n");
  p->dtype = a.DTypeField();
  const int64_t rows = spmm ? std::max(p->m, p->k) : std::max(p->m, p->n);
  const int64_t width = spmm ? p->n : p->k;
  if (rows * width > (int64_t{1} << 40)) a.RangeFail("the dense operands are too large");
  const CsrPattern csr = ParseCsrPattern(a, p->m);
  p->row_offsets = csr.row_offsets;
  p->nnz = csr.nnz;
  p->column_indices = csr.column_indices;
  p->row_indices = csr.row_indices;
}

// What an entry point reads after its problem, in this order (each only when asked).
enum Reads : unsigned {
  kOutput = 1u << 0,     // the output array (c / out), before the fields below
  kDevice = 1u << 1,     // device: 'cuda' | 'cpu'
  kThreads = 1u << 2,    // threads (CPU; 0 = all cores)
  kIndexBits = 1u << 3,  // indexBits: 16 | 32 (SpMM on CUDA; absent = choose)
  kVariant = 1u << 4,    // variant (SpMM on CUDA; absent = the selection)
};

struct RunOptions {
  bool cuda = false;
  int threads = 0;
  int index_bits = 0;
  std::string variant;
};

inline void ParseRunOptions(Args& a, unsigned reads, int k, RunOptions* o) {
  if (reads & kDevice) o->cuda = a.String("device", {"cuda", "cpu"}) == "cuda";
  if (reads & kThreads) o->threads = a.OptionalInt("threads", 0);
  if (reads & kIndexBits) {
    o->index_bits = a.OptionalInt("indexBits", 0);
    if (o->index_bits != 0 && o->index_bits != 16 && o->index_bits != 32) a.RangeFail("indexBits must be 16 or 32");
    if (o->index_bits == 16 && k > 32768) a.RangeFail("indexBits 16 needs k <= 32768");
  }
  if (reads & kVariant) o->variant = a.OptionalString("variant", "");
}

// One argument parser per problem kind: its operands after the head (values, B and C for
// SpMM; L, R and out for SDDMM; the output only when `reads` has kOutput), re-checked with
// Check*Problem. Pointers are host pointers into the caller's typed arrays.
inline void ParseOperands(Args& a, unsigned reads, SpmmProblem* p) {
  p->index_bits = 32;
  p->values = a.ValueArray("values", p->dtype, p->nnz);
  p->b = a.ValueArray("b", p->dtype, static_cast<int64_t>(p->k) * p->n);
  if (reads & kOutput) p->c = a.ValueArray("c", p->dtype, static_cast<int64_t>(p->m) * p->n);
  if (const char* err = CheckSpmmProblem(*p)) a.RangeFail(err);
}

inline void ParseOperands(Args& a, unsigned reads, SddmmProblem* p) {
  p->lhs = a.ValueArray("lhs", p->dtype, static_cast<int64_t>(p->m) * p->k);
  p->rhs = a.ValueArray("rhs", p->dtype, static_cast<int64_t>(p->n) * p->k);
  if (reads & kOutput) p->out = a.ValueArray("out", p->dtype, p->nnz);
  if (const char* err = CheckSddmmProblem(*p)) a.RangeFail(err);
}

// An entry point's arguments: the problem, then what it `reads` besides.
template <typename Problem>
struct Call {
  Problem p;
  RunOptions run;
};
using SpmmCall = Call<SpmmProblem>;
using SddmmCall = Call<SddmmProblem>;

template <typename Problem>
Call<Problem> ParseCall(Args& a, unsigned reads) {
  Call<Problem> c;
  ParseProblemHead(a, std::is_same<Problem, SpmmProblem>::value, &c.p);
  ParseOperands(a, reads, &c.p);
  ParseRunOptions(a, reads, c.p.k, &c.run);
  return c;
}

// Queues `job` writing `length` doubles into a new Float64Array, which the promise resolves to.
inline Napi::Promise LaunchIntoFloat64(const Args& a, size_t length, std::function<Status(double*)> job) {
  Napi::Float64Array result = Napi::Float64Array::New(a.env(), length);
  double* out = result.Data();
  return KernelWorker::Launch(a.env(), [job = std::move(job), out]() { return job(out); }, a.keep(), result);
}

// ---------------------------------------------------------------------------------------
// CUDA jobs: upload, launch, download; every device allocation is owned by a DeviceBuffer
// and freed on every path. The output is poisoned on the device (all bits set: NaN in
// f32, f16 and bf16) so that an element the kernel misses comes back as NaN.

inline Status NoCuda() {
  return Status::Fail("ERR_NO_CUDA", "the native addon was built without CUDA (nvcc was not found when it was compiled)");
}

#if SPARSE_WITH_CUDA
// A job's stream, made after checking that a device is present. NOTE: declare it after the
// job's DeviceBuffers: it is destroyed first, after synchronizing, so that no buffer is freed
// under a running kernel, whatever path the job returns by.
class JobStream {
 public:
  JobStream() = default;
  JobStream(const JobStream&) = delete;
  JobStream& operator=(const JobStream&) = delete;
  ~JobStream() {
    if (stream_.get()) cudaStreamSynchronize(stream_.get());
  }
  Status Create() {
    int count = 0;
    SPARSE_CUDA_TRY(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (count == 0) return Status::Fail("cudaErrorNoDevice", "no CUDA device is present");
    SPARSE_CUDA_TRY(stream_.Create(), "cudaStreamCreate");
    return Status::Ok();
  }
  cudaStream_t get() const { return stream_.get(); }

 private:
  Stream stream_;
};

// One host array for the device: `bytes` from `src` into `dst` (allocated even when empty).
// An `optional` array with a null `src` was left out: nothing is allocated. Failures say
// "upload of <field>".
struct Upload {
  DeviceBuffer* dst;
  const void* src;
  size_t bytes;
  const char* field;
  bool optional = false;
};

inline Status UploadAll(std::initializer_list<Upload> uploads, cudaStream_t st) {
  for (const Upload& u : uploads) {
    if (u.optional && !u.src) continue;
    SPARSE_CUDA_TRY(u.dst->Upload(u.src, u.bytes, st), std::string("upload of ") + u.field);
  }
  return Status::Ok();
}

// The output array `field` on the device, `bytes` long, poisoned.
inline Status AllocatePoisoned(DeviceBuffer* out, size_t bytes, const char* field, cudaStream_t st) {
  SPARSE_CUDA_TRY(out->Allocate(bytes), std::string("cudaMalloc of ") + field);
  if (bytes > 0) SPARSE_CUDA_TRY(cudaMemsetAsync(out->get(), 0xff, bytes, st), std::string("poisoning ") + field);
  return Status::Ok();
}

// Copies the output `field` back into the caller's array and waits for the stream (a
// failure of the launch itself is reported as `what`).
inline Status Download(void* host, const DeviceBuffer& out, const char* field, const char* what, cudaStream_t st) {
  if (out.bytes() > 0)
    SPARSE_CUDA_TRY(cudaMemcpyAsync(host, out.get(), out.bytes(), cudaMemcpyDeviceToHost, st),
                    std::string("download of ") + field);
  SPARSE_CUDA_TRY(cudaStreamSynchronize(st), what);
  return Status::Ok();
}

#endif  // SPARSE_WITH_CUDA

// Runs a CPU kernel (which reports no status).
template <typename Kernel>
Status RunCpu(Kernel&& kernel) {
  kernel();
  return Status::Ok();
}

// A new typed array holding a copy of `count` elements at `src`.
template <typename TypedArray, typename T>
TypedArray CopyToJs(Napi::Env env, const T* src, size_t count) {
  TypedArray out = TypedArray::New(env, count);
  if (count) std::memcpy(out.Data(), src, sizeof(T) * count);
  return out;
}

}  // namespace binding
}  // namespace sparse
#endif  // SPARSE_BINDING_KERNEL_CALL_H_
