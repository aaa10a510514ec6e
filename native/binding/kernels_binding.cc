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
//   tcFormat(args) / sddmmChunkStarts(args): the tensor-core kernels' prepared formats
//   bitmapFormat(args) / sp24Format(args) / sp24ToCsr(args): the bitmap and 2:4 formats
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

#include "binding/exports.h"
#include "common/problems.h"
#include "common/bitmap_tiles.h"
#include "common/sparse24.h"
#include "common/tc_tiles.h"
#include "cpu/cpu_kernels.h"

#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda/common/convert.h"
#include "cuda/common/device_buffer.h"
#include "cuda/sddmm/sddmm.h"
#include "cuda/spmm/spmm.h"
#include "cuda/spmm/spmm_prepared.h"
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

// Returns the Status of `expr` from the enclosing function when it is a failure.
#define SPARSE_STATUS_TRY(expr)            \
  do {                                     \
    Status sparse_s_ = (expr);             \
    if (!sparse_s_.ok) return sparse_s_;   \
  } while (0)

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

CsrPattern ParseCsrPattern(Args& a, int m) {
  CsrPattern c;
  c.row_offsets = static_cast<const int*>(a.Array("rowOffsets", napi_int32_array, "Int32Array", int64_t{m} + 1));
  c.nnz = a.Nnz(c.row_offsets, m);
  c.column_indices = static_cast<const int*>(a.Array("columnIndices", napi_int32_array, "Int32Array", c.nnz));
  c.row_indices = static_cast<const int*>(a.Array("rowIndices", napi_int32_array, "Int32Array", m, true));
  return c;
}

// ParseCsrPattern plus the check the host-side format builders rely on: offsets that never
// decrease, so that every row's range lies inside the arrays.
CsrPattern ParseMonotoneCsrPattern(Args& a, int m) {
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

void ParseRunOptions(Args& a, unsigned reads, int k, RunOptions* o) {
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
void ParseOperands(Args& a, unsigned reads, SpmmProblem* p) {
  p->index_bits = 32;
  p->values = a.ValueArray("values", p->dtype, p->nnz);
  p->b = a.ValueArray("b", p->dtype, static_cast<int64_t>(p->k) * p->n);
  if (reads & kOutput) p->c = a.ValueArray("c", p->dtype, static_cast<int64_t>(p->m) * p->n);
  if (const char* err = CheckSpmmProblem(*p)) a.RangeFail(err);
}

void ParseOperands(Args& a, unsigned reads, SddmmProblem* p) {
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
Napi::Promise LaunchIntoFloat64(const Args& a, size_t length, std::function<Status(double*)> job) {
  Napi::Float64Array result = Napi::Float64Array::New(a.env(), length);
  double* out = result.Data();
  return KernelWorker::Launch(a.env(), [job = std::move(job), out]() { return job(out); }, a.keep(), result);
}

// ---------------------------------------------------------------------------------------
// CUDA jobs: upload, launch, download; every device allocation is owned by a DeviceBuffer
// and freed on every path. The output is poisoned on the device (all bits set: NaN in
// f32, f16 and bf16) so that an element the kernel misses comes back as NaN.

Status NoCuda() {
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

Status UploadAll(std::initializer_list<Upload> uploads, cudaStream_t st) {
  for (const Upload& u : uploads) {
    if (u.optional && !u.src) continue;
    SPARSE_CUDA_TRY(u.dst->Upload(u.src, u.bytes, st), std::string("upload of ") + u.field);
  }
  return Status::Ok();
}

// The output array `field` on the device, `bytes` long, poisoned.
Status AllocatePoisoned(DeviceBuffer* out, size_t bytes, const char* field, cudaStream_t st) {
  SPARSE_CUDA_TRY(out->Allocate(bytes), std::string("cudaMalloc of ") + field);
  if (bytes > 0) SPARSE_CUDA_TRY(cudaMemsetAsync(out->get(), 0xff, bytes, st), std::string("poisoning ") + field);
  return Status::Ok();
}

// Copies the output `field` back into the caller's array and waits for the stream (a
// failure of the launch itself is reported as `what`).
Status Download(void* host, const DeviceBuffer& out, const char* field, const char* what, cudaStream_t st) {
  if (out.bytes() > 0)
    SPARSE_CUDA_TRY(cudaMemcpyAsync(host, out.get(), out.bytes(), cudaMemcpyDeviceToHost, st),
                    std::string("download of ") + field);
  SPARSE_CUDA_TRY(cudaStreamSynchronize(st), what);
  return Status::Ok();
}

// Times each of `variants` on the problem `d` (device pointers): `reps` launches between two
// events after 3 warm-up launches, hot L2 (for ranking variants, not for reports); writes
// its ms per launch to time_ms[i].
Status TimeSpmmVariants(const SpmmProblem& d, const std::vector<std::string>& variants, int reps, double* time_ms,
                        cudaStream_t st) {
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
  // The variants that read a prepared form (tensor-core tiles, bitmap, 2:4) get it built
  // once per form (as in `sparse bench`), not per launch.
  SpmmPrepared tc, bitmap, s24;
  for (size_t i = 0; i < variants.size(); ++i) {
    const char* v = variants[i].c_str();
    const std::string effective = SpmmEffectiveVariant(d, v);
    SpmmPrepared* tp = effective.rfind("tc_", 0) == 0 ? &tc : effective.rfind("bm_", 0) == 0 ? &bitmap
                       : effective.rfind("s24_", 0) == 0 ? &s24 : nullptr;
    if (tp && tp->empty()) SPARSE_CUDA_TRY(tp->Build(d, effective, st), "building the prepared matrix");
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
  return Status::Ok();
}

// index_bits: 0 = choose (16-bit for f16/bf16 when k <= 32768, as Sputnik), 16 or 32 = force.
// variant: "" or "auto" = the kernel selection, else a name from SpmmVariants (forced).
// With `time_variants`, each of those variants is also timed after the checked launch
// (TimeSpmmVariants).
Status RunCudaSpmm(const SpmmProblem& host, int index_bits, const std::string& variant,
                   const std::vector<std::string>* time_variants = nullptr, int reps = 0, double* time_ms = nullptr) {
  const size_t elem = DTypeBytes(host.dtype);
  DeviceBuffer offsets, indices, indices16, row_indices, values, b, c;
  JobStream stream;  // declared last: destroyed first, after synchronizing
  SPARSE_STATUS_TRY(stream.Create());
  const cudaStream_t st = stream.get();
  SPARSE_STATUS_TRY(UploadAll({{&offsets, host.row_offsets, sizeof(int) * (host.m + 1), "rowOffsets"},
                               {&indices, host.column_indices, sizeof(int) * host.nnz, "columnIndices"},
                               {&values, host.values, elem * host.nnz, "values"},
                               {&row_indices, host.row_indices, sizeof(int) * host.m, "rowIndices", true},
                               {&b, host.b, elem * host.k * static_cast<size_t>(host.n), "b"}},
                              st));
  SPARSE_STATUS_TRY(AllocatePoisoned(&c, elem * host.m * static_cast<size_t>(host.n), "c", st));

  SpmmProblem d = host;
  // The 2:4 kernel may run a 2:4 matrix (the selection and SpmmVariants look at this).
  if (host.dtype != DType::kF32 && IsTwoFour(host.m, host.row_offsets, static_cast<const int*>(host.column_indices),
                                             static_cast<const uint16_t*>(host.values)))
    d.structure = SpmmProblem::k24;
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
  SPARSE_STATUS_TRY(Download(host.c, c, "c", "CudaSpmm", st));
  if (time_variants) return TimeSpmmVariants(d, *time_variants, reps, time_ms, st);
  return Status::Ok();
}

Status RunCudaSddmm(const SddmmProblem& host) {
  const size_t elem = DTypeBytes(host.dtype);
  DeviceBuffer offsets, indices, row_indices, lhs, rhs, out;
  JobStream stream;  // declared last: destroyed first, after synchronizing
  SPARSE_STATUS_TRY(stream.Create());
  const cudaStream_t st = stream.get();
  SPARSE_STATUS_TRY(UploadAll({{&offsets, host.row_offsets, sizeof(int) * (host.m + 1), "rowOffsets"},
                               {&indices, host.column_indices, sizeof(int) * host.nnz, "columnIndices"},
                               {&row_indices, host.row_indices, sizeof(int) * host.m, "rowIndices", true},
                               {&lhs, host.lhs, elem * host.m * static_cast<size_t>(host.k), "lhs"},
                               {&rhs, host.rhs, elem * host.n * static_cast<size_t>(host.k), "rhs"}},
                              st));
  SPARSE_STATUS_TRY(AllocatePoisoned(&out, elem * host.nnz, "out", st));

  SddmmProblem d = host;
  d.row_offsets = offsets.as<int>();
  d.column_indices = indices.as<int>();
  d.row_indices = host.row_indices ? row_indices.as<int>() : nullptr;
  d.lhs = lhs.get();
  d.rhs = rhs.get();
  d.out = out.get();
  SPARSE_CUDA_TRY(CanImplementSddmm(d), "CanImplementSddmm");
  SPARSE_CUDA_TRY(CudaSddmm(d, st), "CudaSddmm launch");
  return Download(host.out, out, "out", "CudaSddmm", st);
}
#else
// Built without CUDA: every CUDA job fails with ERR_NO_CUDA.
Status RunCudaSpmm(const SpmmProblem&, int, const std::string&, const std::vector<std::string>* = nullptr, int = 0,
                   double* = nullptr) {
  return NoCuda();
}
Status RunCudaSddmm(const SddmmProblem&) { return NoCuda(); }
#endif  // SPARSE_WITH_CUDA

// Runs a CPU kernel (which reports no status).
template <typename Kernel>
Status RunCpu(Kernel&& kernel) {
  kernel();
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------
// Exported functions.

Napi::Value Spmm(const Napi::CallbackInfo& info) {
  Args a(info, "spmm");
  const SpmmCall c = ParseCall<SpmmProblem>(a, kOutput | kDevice | kThreads | kIndexBits | kVariant);
  return KernelWorker::Launch(info.Env(), [c]() -> Status {
    if (c.run.cuda) return RunCudaSpmm(c.p, c.run.index_bits, c.run.variant);
    return RunCpu([&] { CpuSpmm(c.p, c.run.threads); });
  }, a.keep());
}

// The device index width spmm would use (see RunCudaSpmm).
int EffectiveIndexBits(DType t, int k, int index_bits) {
  if (index_bits == 16 || index_bits == 32) return index_bits;
  return t != DType::kF32 && k <= 32768 ? 16 : 32;
}

// A new typed array holding a copy of `count` elements at `src`.
template <typename TypedArray, typename T>
TypedArray CopyToJs(Napi::Env env, const T* src, size_t count) {
  TypedArray out = TypedArray::New(env, count);
  if (count) std::memcpy(out.Data(), src, sizeof(T) * count);
  return out;
}

// The arguments of the format builders: {m, k, rowOffsets, columnIndices, values: Uint16Array}.
struct Csr16Args {
  int m = 0, k = 0;
  CsrPattern c;
  const uint16_t* values = nullptr;
};
Csr16Args ParseCsr16(Args& a) {
  Csr16Args r;
  r.m = a.Dim("m"), r.k = a.Dim("k");
  r.c = ParseMonotoneCsrPattern(a, r.m);
  r.values = static_cast<const uint16_t*>(a.Array("values", napi_uint16_array, "Uint16Array", r.c.nnz));
  return r;
}

// tcFormat({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {offsets, entries}
// (Uint32Array): the tensor-core SpMM's tiles, built on the host exactly as the kernels do.
// Synchronous; pure C++ (also in a CPU-only build), for tests and inspection.
Napi::Value TcFormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "tcFormat");
  const Csr16Args c = ParseCsr16(a);
  TcTiles t;
  const std::string err = BuildTcTiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("offsets", CopyToJs<Napi::Uint32Array>(env, t.offsets.data(), t.offsets.size()));
  o.Set("entries", CopyToJs<Napi::Uint32Array>(env, t.entries.data(), t.entries.size()));
  return o;
}

// bitmapFormat({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {offsets, data,
// strips, ktiles}: the bitmap kernel's tiles (common/bitmap_tiles.h). Synchronous; pure C++.
Napi::Value BitmapFormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "bitmapFormat");
  const Csr16Args c = ParseCsr16(a);
  BitmapTiles t;
  const std::string err = BuildBitmapTiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("offsets", CopyToJs<Napi::Uint32Array>(env, t.offsets.data(), t.offsets.size()));
  o.Set("data", CopyToJs<Napi::Uint32Array>(env, t.data.data(), t.data.size()));
  o.Set("strips", t.strips);
  o.Set("ktiles", t.ktiles);
  return o;
}

// sp24Format({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {values, meta,
// strips, ksteps}: the 2:4 kernel's tiles (common/sparse24.h); a RangeError naming the first
// group with more than two nonzeros when the matrix is not 2:4. Synchronous; pure C++.
Napi::Value Sp24FormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "sp24Format");
  const Csr16Args c = ParseCsr16(a);
  Sp24Tiles t;
  const std::string err = BuildSp24Tiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("values", CopyToJs<Napi::Uint16Array>(env, t.values.data(), t.values.size()));
  o.Set("meta", CopyToJs<Napi::Uint32Array>(env, t.meta.data(), t.meta.size()));
  o.Set("strips", t.strips);
  o.Set("ksteps", t.ksteps);
  return o;
}

// sp24ToCsr({m, k, values: Uint16Array, meta: Uint32Array}) -> {rowOffsets, columnIndices,
// values}: the nonzeros of 2:4 tiles (zeros left out, columns ascending). Synchronous.
Napi::Value Sp24ToCsrJs(const Napi::CallbackInfo& info) {
  Args a(info, "sp24ToCsr");
  Sp24Tiles t;
  t.m = a.Dim("m"), t.k = a.Dim("k");
  t.strips = (t.m + kSp24TileRows - 1) / kSp24TileRows;
  t.ksteps = (t.k + kSp24TileCols - 1) / kSp24TileCols;
  const int64_t tiles = static_cast<int64_t>(t.strips) * t.ksteps;
  const uint16_t* v = static_cast<const uint16_t*>(a.Array("values", napi_uint16_array, "Uint16Array", tiles * 256));
  const uint32_t* e = static_cast<const uint32_t*>(a.Array("meta", napi_uint32_array, "Uint32Array", tiles * 16));
  t.values.assign(v, v + tiles * 256);
  t.meta.assign(e, e + tiles * 16);
  // Every group's two indices must be distinct and ascending (what mma.sp accepts).
  for (int64_t i = 0; i < tiles * 16; ++i)
    for (int nib = 0; nib < 8; ++nib) {
      const uint32_t x = t.meta[i] >> (4 * nib) & 15u;
      if ((x & 3u) >= (x >> 2)) a.RangeFail("meta word " + std::to_string(i) + " holds indices that are not ascending");
    }
  std::vector<int> offsets, cols;
  std::vector<uint16_t> vals;
  Sp24TilesToCsr(t, &offsets, &cols, &vals);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("rowOffsets", CopyToJs<Napi::Int32Array>(env, offsets.data(), offsets.size()));
  o.Set("columnIndices", CopyToJs<Napi::Int32Array>(env, cols.data(), cols.size()));
  o.Set("values", CopyToJs<Napi::Uint16Array>(env, vals.data(), vals.size()));
  return o;
}

// sddmmChunkStarts({m, n, rowOffsets, columnIndices}) -> Int32Array: the tensor-core
// SDDMM's chunk starts of a mask (common/tc_tiles.h). Synchronous; pure C++.
Napi::Value SddmmChunkStartsJs(const Napi::CallbackInfo& info) {
  Args a(info, "sddmmChunkStarts");
  const int m = a.Dim("m"), n = a.Dim("n");
  const CsrPattern c = ParseMonotoneCsrPattern(a, m);
  std::vector<int> starts;
  const std::string err = BuildSddmmChunkStarts(m, n, c.row_offsets, c.column_indices, &starts);
  if (!err.empty()) a.RangeFail(err);
  Napi::Int32Array out = Napi::Int32Array::New(info.Env(), starts.size());
  if (!starts.empty()) std::memcpy(out.Data(), starts.data(), 4 * starts.size());
  return out;
}

// spmmVariants({m, k, n, nnz, dtype, indexBits?, structure?: '2:4'}): synchronous, no GPU work. `selected` is
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
  p.structure = a.OptionalString("structure", "") == "2:4" ? SpmmProblem::k24 : SpmmProblem::kUnstructured;
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
  const SpmmCall c = ParseCall<SpmmProblem>(a, kOutput | kIndexBits);
  const std::vector<std::string> variants = a.Strings("variants");
  const int reps = a.OptionalInt("reps", 20);
  return LaunchIntoFloat64(a, variants.size(), [c, variants, reps](double* out) {
    return RunCudaSpmm(c.p, c.run.index_bits, "", &variants, reps, out);
  });
}

Napi::Value Sddmm(const Napi::CallbackInfo& info) {
  Args a(info, "sddmm");
  const SddmmCall c = ParseCall<SddmmProblem>(a, kOutput | kDevice | kThreads);
  return KernelWorker::Launch(info.Env(), [c]() -> Status {
    if (c.run.cuda) return RunCudaSddmm(c.p);
    return RunCpu([&] { CpuSddmm(c.p, c.run.threads); });
  }, a.keep());
}

Napi::Value SpmmReference(const Napi::CallbackInfo& info) {
  Args a(info, "spmmReference");
  const SpmmCall c = ParseCall<SpmmProblem>(a, kThreads);
  return LaunchIntoFloat64(a, static_cast<size_t>(c.p.m) * c.p.n,
                           [c](double* out) { return RunCpu([&] { ReferenceSpmm(c.p, out, c.run.threads); }); });
}

Napi::Value SddmmReference(const Napi::CallbackInfo& info) {
  Args a(info, "sddmmReference");
  const SddmmCall c = ParseCall<SddmmProblem>(a, kThreads);
  return LaunchIntoFloat64(a, static_cast<size_t>(c.p.nnz),
                           [c](double* out) { return RunCpu([&] { ReferenceSddmm(c.p, out, c.run.threads); }); });
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
  ExportFunctions(env, exports,
                  {{"cudaInfo", CudaInfo},
                   {"spmm", Spmm},
                   {"spmmVariants", SpmmVariantsJs},
                   {"tcFormat", TcFormatJs},
                   {"bitmapFormat", BitmapFormatJs},
                   {"sp24Format", Sp24FormatJs},
                   {"sp24ToCsr", Sp24ToCsrJs},
                   {"sddmmChunkStarts", SddmmChunkStartsJs},
                   {"spmmTime", SpmmTime},
                   {"sddmm", Sddmm},
                   {"spmmReference", SpmmReference},
                   {"sddmmReference", SddmmReference}});
}

}  // namespace binding
}  // namespace sparse
