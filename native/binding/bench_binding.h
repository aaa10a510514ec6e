#ifndef SPARSE_BINDING_BENCH_BINDING_H_
#define SPARSE_BINDING_BENCH_BINDING_H_
#include <napi.h>
namespace sparse { namespace binding {
// Registers the benchmark harness (CUDA-event timing, cuBLAS/cuSPARSE baselines) on `exports`.
void InitBench(Napi::Env env, Napi::Object exports);
}}  // namespace sparse::binding
#endif
