// N-API glue of the benchmark harness (native/bench, both devices: one bench::Run). Validates
// arguments cheaply (the TypeScript side validates fully first), runs each benchmark in an
// AsyncWorker whose Execute() holds only plain C++ data, and returns the samples as
// Float64Arrays.
//
// Exports:
//   benchCudaBuilt: boolean
//   benchDeviceInfo(): {available, reason?, name, smCount, ...}
//   benchCeilings(device: 'cuda' | 'cpu', threads?: number): Promise<{copyGBps, f32Tflops, ...}>
//   benchSpmm(args) / benchSddmm(args): Promise<{impls: [...], l2Bytes, smClockMhz}>
//     (args.variant, SpMM on CUDA only: our kernel's variant, launched with CudaSpmmVariant)
// Errors reject with an Error whose `code` is the CUDA error name (or "cudaNotBuilt").
#include "binding/exports.h"

#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"

namespace sparse {
namespace binding {
namespace {

using bench::BenchCase;
using bench::BenchError;
using bench::BenchOptions;
using bench::BenchResult;
using bench::Ceilings;
using bench::DeviceInfo;
using bench::ImplResult;

[[noreturn]] void ThrowType(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, msg); }
[[noreturn]] void ThrowRange(Napi::Env env, const std::string& msg) { throw Napi::RangeError::New(env, msg); }

int GetInt(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where, int min = 0) {
  Napi::Value v = o.Get(key);
  if (!v.IsNumber()) ThrowType(env, where + "." + key + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (d != static_cast<double>(static_cast<int64_t>(d)) || d < min || d > 2147483647.0)
    ThrowRange(env, where + "." + key + " must be an integer >= " + std::to_string(min) + ", got " +
                        std::to_string(d));
  return static_cast<int>(d);
}

double GetNumber(const Napi::Object& o, const char* key, double fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
}

DType ParseDType(Napi::Env env, Napi::Value v, const std::string& where) {
  if (!v.IsString()) ThrowType(env, where + " must be 'f32', 'f16' or 'bf16'");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s == "f32") return DType::kF32;
  if (s == "f16") return DType::kF16;
  if (s == "bf16") return DType::kBF16;
  ThrowRange(env, where + " must be 'f32', 'f16' or 'bf16', got '" + s + "'");
}

// The typed array `where`.`key` of `type` and exactly `length` elements (null when `optional`
// and absent); a reference in `keep` holds it until the benchmark ends.
template <typename T>
const T* GetTyped(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where,
                  napi_typedarray_type type, const char* type_name, size_t length, bool optional,
                  std::vector<Napi::ObjectReference>* keep) {
  Napi::Value v = o.Get(key);
  if (optional && (v.IsUndefined() || v.IsNull())) return nullptr;
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    ThrowType(env, where + "." + key + " must be a " + type_name);
  auto arr = v.As<Napi::TypedArrayOf<T>>();
  if (arr.ElementLength() != length)
    ThrowRange(env, where + "." + key + " must have " + std::to_string(length) + " elements, got " +
                        std::to_string(arr.ElementLength()));
  keep->push_back(Napi::Persistent(arr.template As<Napi::Object>()));
  return arr.Data();
}

// o[key] = v, or null when v < 0 (not measured).
void SetNumberOrNull(Napi::Env env, Napi::Object o, const char* key, double v) {
  o.Set(key, v >= 0 ? Napi::Value(Napi::Number::New(env, v)) : env.Null());
}

Napi::Object ResultToJs(Napi::Env env, const BenchResult& r) {
  Napi::Object out = Napi::Object::New(env);
  Napi::Array impls = Napi::Array::New(env, r.impls.size());
  for (size_t i = 0; i < r.impls.size(); ++i) {
    const ImplResult& ir = r.impls[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", ir.name);
    o.Set("available", ir.available);
    if (!ir.reason.empty()) o.Set("reason", ir.reason);
    if (!ir.detail.empty()) o.Set("detail", ir.detail);
    if (ir.available) {
      o.Set("l2Mode", ir.l2_mode);
      o.Set("copies", ir.copies);
      Napi::Float64Array s = Napi::Float64Array::New(env, ir.samples_ms.size());
      for (size_t j = 0; j < ir.samples_ms.size(); ++j) s[j] = ir.samples_ms[j];
      o.Set("samples", s);
      if (ir.graph_ms_per_launch >= 0) o.Set("graphMsPerLaunch", ir.graph_ms_per_launch);
      if (ir.spacer_us > 0) o.Set("spacerUs", ir.spacer_us);
      if (ir.rel_err >= 0 || ir.rel_err != ir.rel_err) {
        o.Set("relErr", ir.rel_err);
        o.Set("checkAgainst", ir.check_against);
      }
    }
    impls.Set(i, o);
  }
  out.Set("impls", impls);
  out.Set("l2Bytes", static_cast<double>(r.l2_bytes));
  if (r.sm_clock_mhz_min >= 0) {
    Napi::Object clk = Napi::Object::New(env);
    clk.Set("min", r.sm_clock_mhz_min);
    clk.Set("max", r.sm_clock_mhz_max);
    out.Set("smClockMhz", clk);
  } else {
    out.Set("smClockMhz", env.Null());
  }
  return out;
}

Napi::Object CeilingsToJs(Napi::Env env, const Ceilings& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("copyGBps", c.copy_gbps);
  SetNumberOrNull(env, o, "f32Tflops", c.f32_tflops);
  SetNumberOrNull(env, o, "tf32Tflops", c.tf32_tflops);
  SetNumberOrNull(env, o, "f16Tflops", c.f16_tflops);
  SetNumberOrNull(env, o, "bf16Tflops", c.bf16_tflops);
  o.Set("gemmSize", c.gemm_size);
  if (!c.note.empty()) o.Set("note", c.note);
  return o;
}

// A promise-returning worker: Run() executes off the JS thread; the result converts on it.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  explicit PromiseWorker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  virtual void Run() = 0;
  virtual Napi::Value Result(Napi::Env env) = 0;
  void Execute() override {
    try {
      Run();
    } catch (const BenchError& e) {
      code_ = e.code();
      SetError(e.what());
    } catch (const std::bad_alloc&) {
      code_ = "ENOMEM";
      SetError("out of host memory");
    } catch (const std::exception& e) {
      code_ = "internal";
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(Result(Env())); }
  void OnError(const Napi::Error& e) override {
    Napi::Error err = Napi::Error::New(Env(), e.Message());
    err.Set("code", code_);
    deferred_.Reject(err.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::string code_;
};

class BenchWorker : public PromiseWorker {
 public:
  BenchWorker(Napi::Env env, bool spmm, bool cuda) : PromiseWorker(env), spmm_(spmm), cuda_(cuda) {}
  BenchCase c;
  BenchOptions o;
  std::vector<Napi::ObjectReference> keep;  // the typed arrays behind c.csr, alive until done

 protected:
  void Run() override {
    result_ = bench::Run(cuda_ ? bench::Device::kCuda : bench::Device::kCpu, spmm_ ? bench::Op::kSpmm : bench::Op::kSddmm,
                         c, o);
  }
  Napi::Value Result(Napi::Env env) override { return ResultToJs(env, result_); }

 private:
  bool spmm_, cuda_;
  BenchResult result_;
};

class CeilingsWorker : public PromiseWorker {
 public:
  CeilingsWorker(Napi::Env env, bool cuda, int threads) : PromiseWorker(env), cuda_(cuda), threads_(threads) {}

 protected:
  void Run() override { result_ = bench::MeasureCeilings(cuda_ ? bench::Device::kCuda : bench::Device::kCpu, threads_); }
  Napi::Value Result(Napi::Env env) override { return CeilingsToJs(env, result_); }

 private:
  bool cuda_;
  int threads_;
  Ceilings result_;
};

bool ParseDevice(Napi::Env env, Napi::Value v) {
  if (!v.IsString()) ThrowType(env, "device must be 'cuda' or 'cpu'");
  std::string d = v.As<Napi::String>().Utf8Value();
  if (d == "cuda") return true;
  if (d == "cpu") return false;
  ThrowRange(env, "device must be 'cuda' or 'cpu', got '" + d + "'");
}

// A CUDA call into an addon built without CUDA fails at once, coded "cudaNotBuilt".
void ThrowIfCudaNotBuilt(Napi::Env env, bool cuda) {
  if (!cuda || bench::CudaBuilt()) return;
  Napi::Error err = Napi::Error::New(env, "CUDA not built: this addon was compiled without the CUDA toolkit");
  err.Set("code", "cudaNotBuilt");
  throw err;
}

// variant: optional SpMM kernel variant name ("" / "auto" / absent = the kernel's choice).
std::string ParseVariant(Napi::Env env, Napi::Value var) {
  if (var.IsUndefined() || var.IsNull()) return "";
  if (!var.IsString()) ThrowType(env, "args.variant must be a string");
  std::string v = var.As<Napi::String>().Utf8Value();
  if (v == "auto") v.clear();
  if (v.size() > 47) ThrowRange(env, "args.variant is too long");
  for (char ch : v)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
      ThrowRange(env, "args.variant must be a variant name like 'split_v4_t8_w1', got '" + v + "'");
  return v;
}

// args.csr: the shape, the pattern and the optional values and row order (kept in `keep`).
void ParseCsr(Napi::Env env, Napi::Value v, DType dtype, bench::HostCsr* csr,
              std::vector<Napi::ObjectReference>* keep) {
  if (!v.IsObject()) ThrowType(env, "args.csr must be an object");
  Napi::Object o = v.As<Napi::Object>();
  const std::string where = "args.csr";
  csr->rows = GetInt(env, o, "rows", where);
  csr->cols = GetInt(env, o, "cols", where);
  csr->row_offsets = GetTyped<int32_t>(env, o, "rowOffsets", where, napi_int32_array, "Int32Array",
                                       static_cast<size_t>(csr->rows) + 1, false, keep);
  csr->nnz = csr->row_offsets[csr->rows];
  if (csr->row_offsets[0] != 0 || csr->nnz < 0) ThrowRange(env, "args.csr.rowOffsets must run from 0 to nnz");
  const size_t nnz = static_cast<size_t>(csr->nnz);
  csr->column_indices =
      GetTyped<int32_t>(env, o, "columnIndices", where, napi_int32_array, "Int32Array", nnz, false, keep);
  csr->values = dtype == DType::kF32
                    ? static_cast<const void*>(GetTyped<float>(env, o, "values", where, napi_float32_array,
                                                               "Float32Array for f32", nnz, true, keep))
                    : GetTyped<uint16_t>(env, o, "values", where, napi_uint16_array, "Uint16Array for f16/bf16",
                                         nnz, true, keep);
  csr->row_indices = GetTyped<int32_t>(env, o, "rowIndices", where, napi_int32_array, "Int32Array",
                                       static_cast<size_t>(csr->rows), true, keep);
}

// args.options (optional): the timing options over their defaults.
void ParseOptions(Napi::Env env, Napi::Value ov, BenchOptions* opt) {
  if (!ov.IsObject()) return;
  Napi::Object o = ov.As<Napi::Object>();
  opt->warmup = static_cast<int>(GetNumber(o, "warmup", opt->warmup));
  opt->min_reps = static_cast<int>(GetNumber(o, "minReps", opt->min_reps));
  opt->min_ms = GetNumber(o, "minMs", opt->min_ms);
  opt->max_reps = static_cast<int>(GetNumber(o, "maxReps", opt->max_reps));
  opt->graph_below_ms = GetNumber(o, "graphBelowMs", opt->graph_below_ms);
  opt->graph_launches = static_cast<int>(GetNumber(o, "graphLaunches", opt->graph_launches));
  opt->threads = static_cast<int>(GetNumber(o, "threads", opt->threads));
  opt->seed = static_cast<uint64_t>(GetNumber(o, "seed", static_cast<double>(opt->seed)));
  Napi::Value chk = o.Get("check");
  if (chk.IsBoolean()) opt->check = chk.As<Napi::Boolean>().Value();
  if (opt->min_reps < 1 || opt->max_reps < 1 || opt->warmup < 0 || opt->min_ms < 0)
    ThrowRange(env, "args.options: minReps and maxReps must be >= 1, warmup and minMs >= 0");
}

Napi::Value Bench(const Napi::CallbackInfo& info, bool spmm) {
  Napi::Env env = info.Env();
  const std::string fn = spmm ? "benchSpmm" : "benchSddmm";
  if (info.Length() < 1 || !info[0].IsObject()) ThrowType(env, fn + "(args): args must be an object");
  Napi::Object a = info[0].As<Napi::Object>();
  const bool cuda = ParseDevice(env, a.Get("device"));
  auto* w = new BenchWorker(env, spmm, cuda);
  std::unique_ptr<BenchWorker> guard(w);  // released once queued
  BenchCase& c = w->c;
  c.dtype = ParseDType(env, a.Get("dtype"), "args.dtype");
  c.m = GetInt(env, a, "m", "args");
  c.k = GetInt(env, a, "k", "args");
  c.n = GetInt(env, a, "n", "args");
  Napi::Value ib = a.Get("indexBits");
  c.index_bits = ib.IsNumber() ? ib.As<Napi::Number>().Int32Value() : 32;
  if (c.index_bits != 16 && c.index_bits != 32) ThrowRange(env, "args.indexBits must be 16 or 32");
  c.variant = ParseVariant(env, a.Get("variant"));
  ParseCsr(env, a.Get("csr"), c.dtype, &c.csr, &w->keep);
  Napi::Value impls = a.Get("impls");
  if (!impls.IsArray()) ThrowType(env, "args.impls must be an array of implementation names");
  Napi::Array arr = impls.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value v = arr.Get(i);
    if (!v.IsString()) ThrowType(env, "args.impls[" + std::to_string(i) + "] must be a string");
    c.impls.push_back(v.As<Napi::String>().Utf8Value());
  }
  ParseOptions(env, a.Get("options"), &w->o);
  ThrowIfCudaNotBuilt(env, cuda);
  Napi::Promise p = w->Promise();
  guard.release()->Queue();
  return p;
}

Napi::Value BenchSpmm(const Napi::CallbackInfo& info) { return Bench(info, true); }
Napi::Value BenchSddmm(const Napi::CallbackInfo& info) { return Bench(info, false); }

Napi::Value BenchCeilings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const bool cuda = ParseDevice(env, info.Length() > 0 ? info[0] : env.Undefined());
  int threads = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 0;
  ThrowIfCudaNotBuilt(env, cuda);
  auto* w = new CeilingsWorker(env, cuda, threads);
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

Napi::Value BenchDeviceInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  DeviceInfo d = bench::QueryDevice();
  Napi::Object o = Napi::Object::New(env);
  o.Set("available", d.available);
  if (!d.available) {
    o.Set("reason", d.reason);
    return o;
  }
  o.Set("name", d.name);
  o.Set("smCount", d.sm_count);
  o.Set("computeCapability", d.compute_capability);
  o.Set("l2Bytes", static_cast<double>(d.l2_bytes));
  o.Set("memoryBytes", static_cast<double>(d.memory_bytes));
  SetNumberOrNull(env, o, "maxSmClockMhz", d.max_sm_clock_mhz);
  SetNumberOrNull(env, o, "maxMemClockMhz", d.max_mem_clock_mhz);
  SetNumberOrNull(env, o, "smClockMhz", d.sm_clock_mhz);
  SetNumberOrNull(env, o, "memClockMhz", d.mem_clock_mhz);
  o.Set("driver", d.driver);
  o.Set("cublas", d.cublas);
  o.Set("cusparse", d.cusparse);
  return o;
}

}  // namespace

void InitBench(Napi::Env env, Napi::Object exports) {
  exports.Set("benchCudaBuilt", Napi::Boolean::New(env, bench::CudaBuilt()));
  ExportFunctions(env, exports,
                  {{"benchDeviceInfo", BenchDeviceInfo},
                   {"benchCeilings", BenchCeilings},
                   {"benchSpmm", BenchSpmm},
                   {"benchSddmm", BenchSddmm}});
}

}  // namespace binding
}  // namespace sparse
