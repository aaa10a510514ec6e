// Module entry point: registers the kernel functions and the benchmark harness.
#include <napi.h>

#include "binding/exports.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  sparse::binding::InitKernels(env, exports);
  sparse::binding::InitBench(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(sparse, Init)
