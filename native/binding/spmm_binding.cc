// N-API glue of the SpMM (no numerics here): spmm (CPU or CUDA), spmmReference, and the
// kernel variants (spmmVariants, spmmVariantGrammar, spmmTime). On CUDA every call plans the
// matrix once (SpmmPlan: the variant, the index width, the 2:4 check, the prepared operand)
// and runs the plan.
#include "binding/exports.h"
#include "binding/kernel_call.h"

#if SPARSE_WITH_CUDA
#include "cuda/common/convert.h"
#include "cuda/spmm/spmm.h"
#include "cuda/spmm/spmm_plan.h"
#endif

namespace sparse {
namespace binding {
namespace {

#if SPARSE_WITH_CUDA
// Times each of `variants` on the problem `d` (device pointers): `reps` launches between two
// events after 3 warm-up launches, hot L2 (for ranking variants, not for reports); writes
// its ms per launch to time_ms[i]. Each variant is a plan; the variants of one family share
// its prepared operand (built once per form, as in `sparse bench`, not per launch).
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
  std::vector<std::unique_ptr<SpmmPlan>> prepared;  // one per family with a form
  for (size_t i = 0; i < variants.size(); ++i) {
    const char* v = variants[i].c_str();
    const std::string what = std::string("CudaSpmm launch of variant '") + v + "'";
    auto plan = std::make_unique<SpmmPlan>();
    SPARSE_CUDA_TRY(plan->Init(d, v), what.c_str());
    if (plan->form()) {
      bool shared = false;
      for (const auto& other : prepared) shared = shared || plan->ShareOperand(*other);
      if (!shared) SPARSE_CUDA_TRY(plan->Prepare(d, st), "building the prepared matrix");
    }
    for (int w = 0; w < 3; ++w) SPARSE_CUDA_TRY(plan->Run(d, st), what.c_str());
    SPARSE_CUDA_TRY(cudaEventRecord(start, st), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) SPARSE_CUDA_TRY(plan->Run(d, st), "CudaSpmm launch");
    SPARSE_CUDA_TRY(cudaEventRecord(stop, st), "cudaEventRecord");
    SPARSE_CUDA_TRY(cudaEventSynchronize(stop), "timing");
    float ms = 0.0f;
    SPARSE_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    time_ms[i] = reps > 0 ? ms / reps : 0.0;
    if (plan->prepared()) prepared.push_back(std::move(plan));
  }
  return Status::Ok();
}

// index_bits: 0 = the plan's rule (SpmmPlan::IndexBits), 16 or 32 = force.
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
  d.structure = SpmmPlan::Structure(host.dtype, host.m, host.row_offsets,
                                    static_cast<const int*>(host.column_indices), host.values);
  d.row_offsets = offsets.as<int>();
  d.column_indices = indices.get();
  d.index_bits = 32;
  d.values = values.get();
  d.row_indices = host.row_indices ? row_indices.as<int>() : nullptr;
  d.b = b.get();
  d.c = c.get();
  if (SpmmPlan::IndexBits(host.dtype, host.k, index_bits) == 16 && host.k <= 32768) {
    // Sputnik's mixed-precision encoding: 16-bit column indices (half the index bytes).
    SPARSE_CUDA_TRY(indices16.Allocate(sizeof(int16_t) * host.nnz), "cudaMalloc of 16-bit column indices");
    SPARSE_CUDA_TRY(CudaIndicesToInt16(indices.as<int>(), indices16.as<int16_t>(), host.nnz, st), "index conversion");
    d.column_indices = indices16.get();
    d.index_bits = 16;
  }
  SPARSE_CUDA_TRY(CanImplementSpmm(d), "CanImplementSpmm");
  SpmmPlan plan;
  const std::string what = "CudaSpmm launch of variant '" + variant + "'";
  SPARSE_CUDA_TRY(plan.Init(d, variant.c_str()), what.c_str());
  // The prepared operand first, so that a matrix the form refuses (not 2:4, a stage over the
  // bitmap stream's forced capacity) is reported with the builder's reason.
  std::string why;
  const cudaError_t prepared = plan.Prepare(d, st, &why);
  if (prepared != cudaSuccess && !why.empty()) return Status::Fail(cudaGetErrorName(prepared), what + ": " + why);
  SPARSE_CUDA_TRY(prepared, "building the prepared matrix");
  SPARSE_CUDA_TRY(plan.Run(d, st), what.c_str());
  SPARSE_STATUS_TRY(Download(host.c, c, "c", "CudaSpmm", st));
  if (time_variants) return TimeSpmmVariants(d, *time_variants, reps, time_ms, st);
  return Status::Ok();
}
#else
// Built without CUDA: every CUDA job fails with ERR_NO_CUDA.
Status RunCudaSpmm(const SpmmProblem&, int, const std::string&, const std::vector<std::string>* = nullptr, int = 0,
                   double* = nullptr) {
  return NoCuda();
}
#endif  // SPARSE_WITH_CUDA

Napi::Value Spmm(const Napi::CallbackInfo& info) {
  Args a(info, "spmm");
  SpmmCall parsed = ParseCall<SpmmProblem>(a, kOutput | kDevice | kThreads | kIndexBits | kVariant);
  parsed.p.keep_sparse = a.OptionalBool("keepSparse", false);
  const SpmmCall c = parsed;
  return KernelWorker::Launch(info.Env(), [c]() -> Status {
    if (c.run.cuda) return RunCudaSpmm(c.p, c.run.index_bits, c.run.variant);
    return RunCpu([&] { CpuSpmm(c.p, c.run.threads); });
  }, a.keep());
}

// spmmVariants({m, k, n, nnz, dtype, indexBits?, structure?: '2:4', keepSparse?, rowOffsets?,
// columnIndices?, values?}): synchronous, no GPU work. keepSparse: the families that store every
// weight (SpmmFamily::stores_dense) are neither selected nor listed. `selected` is the built-in selection's
// pick ('' without CUDA), `variants` every variant that can run the problem (device buffers
// from cudaMalloc assumed). With the matrix (rowOffsets, columnIndices and its values in the
// dtype), the plan checks its structure itself (SpmmPlan::Structure) and says so:
// `structure: '2:4'` when the 2:4 kernel may run it.
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
  p.index_bits = SpmmPlan::IndexBits(p.dtype, p.k, a.OptionalInt("indexBits", 0));
  p.structure = a.OptionalString("structure", "") == "2:4" ? SpmmProblem::k24 : SpmmProblem::kUnstructured;
  p.keep_sparse = a.OptionalBool("keepSparse", false);
  if (a.Has("rowOffsets")) {
    const CsrPattern csr = ParseMonotoneCsrPattern(a, p.m);
    if (csr.nnz != p.nnz) a.RangeFail("nnz must equal rowOffsets[m]");
    const void* values = a.ValueArray("values", p.dtype, csr.nnz);
    if (SpmmPlan::Structure(p.dtype, p.m, csr.row_offsets, csr.column_indices, values) == SpmmProblem::k24)
      p.structure = SpmmProblem::k24;
  }
  if (p.structure == SpmmProblem::k24) o.Set("structure", "2:4");
  o.Set("selected", SpmmSelectedVariant(p));
  const std::vector<std::string> v = SpmmVariants(p);
  for (size_t i = 0; i < v.size(); ++i) list.Set(static_cast<uint32_t>(i), v[i]);
#else
  (void)a;
#endif
  return o;
}

// spmmVariantParse(name) -> string: the variant a family parses from `name`, written back by
// that family ("" when none parses it; always "" without CUDA). Synchronous, no GPU.
Napi::Value SpmmVariantParseJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "spmmVariantParse: name must be a string");
#if SPARSE_WITH_CUDA
  return Napi::String::New(env, SpmmParsedVariant(info[0].As<Napi::String>().Utf8Value().c_str()));
#else
  return Napi::String::New(env, "");
#endif
}

// spmmVariantGrammar() -> string[]: one regular expression per SpMM kernel family (the
// whole variant name; [] without CUDA). Synchronous.
Napi::Value SpmmVariantGrammarJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env);
#if SPARSE_WITH_CUDA
  const std::vector<std::string> g = SpmmVariantGrammar();
  for (size_t i = 0; i < g.size(); ++i) out.Set(static_cast<uint32_t>(i), g[i]);
#endif
  return out;
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

Napi::Value SpmmReference(const Napi::CallbackInfo& info) {
  Args a(info, "spmmReference");
  const SpmmCall c = ParseCall<SpmmProblem>(a, kThreads);
  return LaunchIntoFloat64(a, static_cast<size_t>(c.p.m) * c.p.n,
                           [c](double* out) { return RunCpu([&] { ReferenceSpmm(c.p, out, c.run.threads); }); });
}

}  // namespace

void InitSpmm(Napi::Env env, Napi::Object exports) {
  ExportFunctions(env, exports,
                  {{"spmm", Spmm},
                   {"spmmVariants", SpmmVariantsJs},
                   {"spmmVariantGrammar", SpmmVariantGrammarJs},
                   {"spmmVariantParse", SpmmVariantParseJs},
                   {"spmmTime", SpmmTime},
                   {"spmmReference", SpmmReference}});
}

}  // namespace binding
}  // namespace sparse
