// N-API glue of the SDDMM (no numerics here): sddmm (CPU or CUDA) and sddmmReference.
#include "binding/exports.h"
#include "binding/kernel_call.h"

#if SPARSE_WITH_CUDA
#include "cuda/sddmm/sddmm.h"
#endif

namespace sparse {
namespace binding {
namespace {

#if SPARSE_WITH_CUDA
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
Status RunCudaSddmm(const SddmmProblem&) { return NoCuda(); }
#endif  // SPARSE_WITH_CUDA

Napi::Value Sddmm(const Napi::CallbackInfo& info) {
  Args a(info, "sddmm");
  const SddmmCall c = ParseCall<SddmmProblem>(a, kOutput | kDevice | kThreads);
  return KernelWorker::Launch(info.Env(), [c]() -> Status {
    if (c.run.cuda) return RunCudaSddmm(c.p);
    return RunCpu([&] { CpuSddmm(c.p, c.run.threads); });
  }, a.keep());
}

Napi::Value SddmmReference(const Napi::CallbackInfo& info) {
  Args a(info, "sddmmReference");
  const SddmmCall c = ParseCall<SddmmProblem>(a, kThreads);
  return LaunchIntoFloat64(a, static_cast<size_t>(c.p.nnz),
                           [c](double* out) { return RunCpu([&] { ReferenceSddmm(c.p, out, c.run.threads); }); });
}

}  // namespace

void InitSddmm(Napi::Env env, Napi::Object exports) {
  ExportFunctions(env, exports, {{"sddmm", Sddmm}, {"sddmmReference", SddmmReference}});
}

}  // namespace binding
}  // namespace sparse
