#ifndef SPARSE_BINDING_EXPORTS_H_
#define SPARSE_BINDING_EXPORTS_H_
// What each binding file registers on the module's exports (addon.cc calls both), and the
// helper they register their functions with.
#include <napi.h>

#include <initializer_list>

namespace sparse {
namespace binding {

// Device queries (kernels_binding.cc), then one file per op: CPU/CUDA SpMM, its variants and
// reference (spmm_binding.cc), SDDMM (sddmm_binding.cc), the prepared formats
// (formats_binding.cc).
void InitKernels(Napi::Env env, Napi::Object exports);
// The benchmark harness: CUDA-event timing, cuBLAS/cuSPARSE baselines (bench_binding.cc).
void InitBench(Napi::Env env, Napi::Object exports);

struct ExportedFunction {
  const char* name;
  Napi::Value (*fn)(const Napi::CallbackInfo&);
};

// Sets exports[name] to a JavaScript function called `name` for each of `functions`.
inline void ExportFunctions(Napi::Env env, Napi::Object exports, std::initializer_list<ExportedFunction> functions) {
  for (const ExportedFunction& f : functions) exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
}

}  // namespace binding
}  // namespace sparse
#endif  // SPARSE_BINDING_EXPORTS_H_
