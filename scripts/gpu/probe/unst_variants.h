// The unstructured scatter format's engine variants for its workbench (unst_probe.cu): one
// group per ring capacity, each compiled in its own object (unst_variants.cu with -DGROUP=N)
// so that the GPU machine builds them in parallel.
#ifndef SPARSE_SCRIPTS_UNST_VARIANTS_H_
#define SPARSE_SCRIPTS_UNST_VARIANTS_H_
#include <cuda_runtime_api.h>

#include <vector>

#include "common/dtype.h"
#include "cuda/spmm/stream_unstructured.cuh"
#include "scripts/gpu/probe/probe_util.h"

namespace sparse {
namespace probe {

using UnstKernelFn = void (*)(cuda::engine::Args);

struct UnstVariant {
  const char* name;
  DType type;
  int cap;             // nonzeros per 16 x 16 tile the ring's stages hold, on average
  int strips, kks;     // the stream's layout: strips per row block, columns per stage
  int capacity_words;  // a stage's room (BuildUnstStream's max_stage_words)
  int nt8, threads, smem, per_sm;
  UnstKernelFn fn;
};

// The ring capacities, one group each (per tile: any, 50 % + margin, 70 %, 90 %, 95 %).
constexpr int kUnstCaps[] = {256, 144, 88, 32, 16};
constexpr int kUnstGroups = 5;

std::vector<UnstVariant> UnstGroup0();
std::vector<UnstVariant> UnstGroup1();
std::vector<UnstVariant> UnstGroup2();
std::vector<UnstVariant> UnstGroup3();
std::vector<UnstVariant> UnstGroup4();

inline const std::vector<UnstVariant>& AllUnstVariants() {
  static std::vector<UnstVariant> all = [] {
    std::vector<UnstVariant> v;
    for (auto g : {UnstGroup0, UnstGroup1, UnstGroup2, UnstGroup3, UnstGroup4}) {
      std::vector<UnstVariant> x = g();
      v.insert(v.end(), x.begin(), x.end());
    }
    return v;
  }();
  return all;
}

}  // namespace probe
}  // namespace sparse
#endif
