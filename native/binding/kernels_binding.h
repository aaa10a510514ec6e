#ifndef SPARSE_BINDING_KERNELS_BINDING_H_
#define SPARSE_BINDING_KERNELS_BINDING_H_
#include <napi.h>
namespace sparse { namespace binding {
// Registers device queries, CPU/CUDA SpMM and SDDMM on `exports`.
void InitKernels(Napi::Env env, Napi::Object exports);
}}  // namespace sparse::binding
#endif
