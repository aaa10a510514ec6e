// N-API glue for the kernels (no numerics here): argument checks that name the field,
// AsyncWorkers whose Execute() sees only plain C++ data, and CUDA statuses turned into
// JavaScript errors carrying the CUDA error name as `code`. One file per op, as in the
// harness (native/bench); what they share is kernel_call.h.
//
// Exports (declared for TypeScript in src/kernels/binding.ts):
//   cudaInfo() -> {built, available, reason?, code?, name, smCount, computeCapability, ...}
//     (this file)
//   spmm(args) -> Promise<void>, filling the caller's `c` in place (args.keepSparse: the
//     selection keeps A sparse); spmmReference(args) -> Promise<Float64Array>;
//     spmmVariants({m, k, n, nnz, dtype, indexBits?, structure?, keepSparse?}) ->
//     {selected, variants}; spmmVariantGrammar() -> string[]; spmmTime(args + {variants,
//     reps?}) -> Promise<Float64Array> (spmm_binding.cc)
//   sddmm(args) -> Promise<void>, filling `out`; sddmmReference(args) (sddmm_binding.cc)
//   tcFormat / sddmmChunkStarts / bitmapFormat / sp24Format / sp24ToCsr: the kernels'
//     prepared formats built on the host (formats_binding.cc)
#include "binding/exports.h"

#include <string>

#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sparse {
namespace binding {

void InitSpmm(Napi::Env env, Napi::Object exports);
void InitSddmm(Napi::Env env, Napi::Object exports);
void InitFormats(Napi::Env env, Napi::Object exports);

namespace {

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
  ExportFunctions(env, exports, {{"cudaInfo", CudaInfo}});
  InitSpmm(env, exports);
  InitSddmm(env, exports);
  InitFormats(env, exports);
}

}  // namespace binding
}  // namespace sparse
