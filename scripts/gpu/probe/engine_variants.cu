// One group of the streaming engine's variants (see engine_variants.h); GROUP selects it.
#include "scripts/gpu/probe/engine_variants.h"

#include <cstring>
#include <string>
#include <type_traits>

namespace sparse {
namespace probe {

namespace e = cuda::engine;

template <class F, DType kType, int kCW, int kMS, int kNT8, int kKS, int kBudgetKB>
static Variant Make(const char* fam) {
  using E = e::Engine<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB>;
  auto fn = &e::StreamKernel<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB>;
  CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, E::kSmemBytes));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, E::kThreads, E::kSmemBytes));
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s_w%dx%d_n%d_k%d_s%d_%s", fam, kCW, kMS, 8 * kNT8, kKS, E::kStages,
                kBudgetKB > 120 ? "1cta" : "2cta");
  return Variant{strdup(buf), std::is_same<F, e::TwoFour>::value || std::is_same<F, e::TwoFourTiled>::value, std::is_same<F, e::TwoFourTiled>::value || std::is_same<F, e::DenseTiled>::value, kType, kNT8, E::kRows, kKS, E::kThreads,
                 E::kSmemBytes, per_sm, fn};
}

#define NT8S(F, T, CW, MS, KS, B, fam) \
  Make<F, T, CW, MS, 1, KS, B>(fam), Make<F, T, CW, MS, 2, KS, B>(fam), Make<F, T, CW, MS, 4, KS, B>(fam), \
      Make<F, T, CW, MS, 8, KS, B>(fam)

#if GROUP == 0
std::vector<Variant> Group0() {
  return {NT8S(e::DenseTiled, DType::kF16, 8, 1, 128, 100, "dense_f16_tiled"), NT8S(e::DenseTiled, DType::kF16, 4, 2, 128, 200, "dense_f16_tiled")};
}
#elif GROUP == 1
std::vector<Variant> Group1() {
  return {NT8S(e::DenseTiled, DType::kF16, 8, 1, 128, 200, "dense_f16_tiled"), NT8S(e::DenseTiled, DType::kF16, 4, 1, 256, 100, "dense_f16_tiled")};
}
#elif GROUP == 2
std::vector<Variant> Group2() {
  return {NT8S(e::TwoFourTiled, DType::kF16, 4, 4, 128, 200, "s24_f16_tiled"), NT8S(e::TwoFour, DType::kF16, 8, 1, 256, 200, "s24_f16")};
}
#elif GROUP == 3
std::vector<Variant> Group3() {
  return {NT8S(e::TwoFourTiled, DType::kF16, 8, 1, 256, 200, "s24_f16_tiled"), NT8S(e::TwoFourTiled, DType::kF16, 4, 1, 256, 100, "s24_f16_tiled"),
          NT8S(e::TwoFourTiled, DType::kF16, 8, 2, 128, 200, "s24_f16_tiled")};
}
#elif GROUP == 4
std::vector<Variant> Group4() {
  return {NT8S(e::TwoFourTiled, DType::kBF16, 8, 1, 256, 200, "s24_bf16_tiled"), NT8S(e::TwoFourTiled, DType::kBF16, 8, 2, 128, 200, "s24_bf16_tiled"),
          NT8S(e::TwoFourTiled, DType::kBF16, 4, 4, 128, 200, "s24_bf16_tiled")};
}
#endif

}  // namespace probe
}  // namespace sparse
