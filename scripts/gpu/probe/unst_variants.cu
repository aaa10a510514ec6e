// One group of the unstructured scatter variants (see unst_variants.h); GROUP selects the ring
// capacity (kUnstCaps[GROUP]) and defines UnstGroup<GROUP>.
#include "scripts/gpu/probe/unst_variants.h"

#include <cstdio>
#include <cstring>

namespace sparse {
namespace probe {

namespace e = cuda::engine;

// 8 consumer warps of one strip each (a row block of 128 rows), stages of 128 columns, one block
// per SM: the images take 8 x 4 KB of static shared memory, the ring kBudgetKB beside them.
constexpr int kCW = 8, kMS = 1, kKS = 128, kBudgetKB = 180;

template <int kCap, DType kType, int kNT8>
static UnstVariant Make() {
  using F = e::UnstructuredScatter<kCap>;
  using E = e::Engine<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB>;
  static_assert(E::kSmemBytes + F::template ImageBytes<kCW, kMS, kKS>() + 1024 <= 227 * 1024,
                "the ring and the images fit in an SM's shared memory");
  auto fn = &e::StreamKernel<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB>;
  CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, E::kSmemBytes));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, E::kThreads, E::kSmemBytes));
  char buf[96];
  std::snprintf(buf, sizeof(buf), "unst_%s_c%d_w%dx%d_n%d_k%d_s%d", kType == DType::kF16 ? "f16" : "bf16", kCap, kCW,
                kMS, 8 * kNT8, kKS, E::kStages);
  return UnstVariant{strdup(buf), kType, kCap, E::kStrips, kKS, F::template CapacityWords<E::kStrips, kKS>(),
                     kNT8, E::kThreads, E::kSmemBytes, per_sm, fn};
}

template <int kCap>
static std::vector<UnstVariant> Types() {
  return {Make<kCap, DType::kF16, 1>(),  Make<kCap, DType::kF16, 2>(),  Make<kCap, DType::kF16, 4>(),
          Make<kCap, DType::kF16, 8>(),  Make<kCap, DType::kBF16, 1>(), Make<kCap, DType::kBF16, 2>(),
          Make<kCap, DType::kBF16, 4>(), Make<kCap, DType::kBF16, 8>()};
}

#define UNST_GROUP_FN(g) UNST_GROUP_FN_(g)
#define UNST_GROUP_FN_(g) UnstGroup##g
static_assert(GROUP >= 0 && GROUP < kUnstGroups, "a group per capacity");
std::vector<UnstVariant> UNST_GROUP_FN(GROUP)() { return Types<kUnstCaps[GROUP]>(); }

}  // namespace probe
}  // namespace sparse
