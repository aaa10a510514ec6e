// The streaming engine's variants for the workbench (engine_probe.cu): one table per group,
// each group compiled in its own object (engine_variants.cu with -DGROUP=N) so that the GPU
// machine builds them in parallel.
#ifndef SPARSE_SCRIPTS_ENGINE_VARIANTS_H_
#define SPARSE_SCRIPTS_ENGINE_VARIANTS_H_
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/dtype.h"
#include "cuda/spmm/stream_engine.cuh"
#include "scripts/gpu/probe/probe_util.h"


namespace sparse {
namespace probe {

using KernelFn = void (*)(cuda::engine::Args);

struct Variant {
  const char* name;
  bool two_four;
  bool tiled;
  bool wg;  // wgmma format: B staged for the tensor cores' descriptor (N rounded up to 16/32/64)
  DType type;
  int nt8, rows, kks, threads, smem, per_sm;
  KernelFn fn;
  bool k1;  // the format reads B as kBWgK1 (N = 1)
};

struct Launch {
  cuda::engine::Args args{};
  KernelFn fn = nullptr;
  int grid = 0, threads = 0, smem = 0, cluster = 0;
};

std::vector<Variant> Group0();
std::vector<Variant> Group1();
std::vector<Variant> Group2();
std::vector<Variant> Group3();
std::vector<Variant> Group4();
std::vector<Variant> Group5();
std::vector<Variant> Group6();
std::vector<Variant> Group7();
std::vector<Variant> Group8();
std::vector<Variant> Group9();
std::vector<Variant> Group10();
std::vector<Variant> Group11();
std::vector<Variant> Group12();
std::vector<Variant> Group13();
std::vector<Variant> Group14();

inline const std::vector<Variant>& AllVariants() {
  static std::vector<Variant> all = [] {
    std::vector<Variant> v;
    for (auto g : {Group0, Group1, Group2, Group3, Group4, Group5, Group6, Group7, Group8, Group9, Group10, Group11, Group12, Group13, Group14}) {
      std::vector<Variant> x = g();
      v.insert(v.end(), x.begin(), x.end());
    }
    return v;
  }();
  return all;
}

}  // namespace probe
}  // namespace sparse
#endif
