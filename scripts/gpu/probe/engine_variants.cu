// One group of the streaming engine's variants (see engine_variants.h); GROUP selects it.
#include "scripts/gpu/probe/engine_variants.h"

#include <cstring>
#include <string>
#include <type_traits>

namespace sparse {
namespace probe {

namespace e = cuda::engine;

template <class F, DType kType, int kCW, int kMS, int kNT8, int kKS, int kBudgetKB, int kNG = 1>
static Variant Make(const char* fam) {
  using E = e::Engine<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB, kNG>;
  auto fn = &e::StreamKernel<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB, kNG>;
  CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, E::kSmemBytes));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, E::kThreads, E::kSmemBytes));
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s_w%dx%d%s_n%d_k%d_s%d_%s", fam, kCW, kMS, kNG > 1 ? (kNG == 2 ? "g2" : "g4") : "",
                8 * kNT8 * kNG, kKS, E::kStages, kBudgetKB > 120 ? "1cta" : kBudgetKB > 80 ? "2cta" : "3cta");
  constexpr bool dense_wg = std::is_same<F, e::DenseWg>::value;
  constexpr bool wg = e::HasWgB<F>::value;
  constexpr bool two_four = std::is_same<F, e::TwoFour>::value || std::is_same<F, e::TwoFourTiled>::value || (wg && !dense_wg);
  constexpr bool tiled = std::is_same<F, e::TwoFourTiled>::value || std::is_same<F, e::DenseTiled>::value || wg;
  return Variant{strdup(buf), two_four, tiled,  wg, kType, kNT8 * kNG, E::kRows, kKS, E::kThreads, E::kSmemBytes,
                 per_sm,      fn,        e::HasBK1<F>::value};
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
#elif GROUP == 5
std::vector<Variant> Group5() {
  using T = e::TwoFourTiled;
  return {Make<T, DType::kF16, 16, 2, 2, 128, 200, 4>("s24_f16_tiled"), Make<T, DType::kF16, 16, 2, 1, 128, 200, 4>("s24_f16_tiled"),
          Make<T, DType::kF16, 8, 2, 2, 128, 200, 2>("s24_f16_tiled"), Make<T, DType::kF16, 16, 1, 2, 256, 200, 4>("s24_f16_tiled"),
          Make<T, DType::kF16, 8, 2, 1, 128, 200, 2>("s24_f16_tiled"), Make<T, DType::kF16, 8, 2, 4, 128, 200, 2>("s24_f16_tiled"),
          Make<T, DType::kF16, 16, 2, 2, 128, 200, 2>("s24_f16_tiled"), Make<T, DType::kF16, 16, 2, 1, 128, 200, 2>("s24_f16_tiled")};
}
#elif GROUP == 6
std::vector<Variant> Group6() {
  using D = e::DenseTiled;
  return {Make<D, DType::kF16, 8, 1, 1, 128, 70>("dense_f16_tiled"), Make<D, DType::kF16, 4, 2, 1, 128, 100>("dense_f16_tiled"),
          Make<D, DType::kF16, 8, 1, 1, 256, 100>("dense_f16_tiled"), Make<D, DType::kF16, 16, 1, 1, 128, 200>("dense_f16_tiled"),
          Make<D, DType::kF16, 4, 1, 1, 128, 70>("dense_f16_tiled")};
}
#elif GROUP == 7 || GROUP == 8
// wgmma.sp consumers (sm_90a): one warpgroup (4 consumer warps) or two per block.
#if GROUP == 7
#define WG_TYPE DType::kF16
#define WG_NAME "s24_f16_wg"
std::vector<Variant> Group7() {
#else
#define WG_TYPE DType::kBF16
#define WG_NAME "s24_bf16_wg"
std::vector<Variant> Group8() {
#endif
  using W = e::TwoFourWg;
  return {NT8S(W, WG_TYPE, 4, 1, 256, 100, WG_NAME), NT8S(W, WG_TYPE, 8, 1, 256, 200, WG_NAME),
          NT8S(W, WG_TYPE, 4, 1, 256, 200, WG_NAME), NT8S(W, WG_TYPE, 8, 1, 128, 200, WG_NAME)};
}
#elif GROUP == 9
// The addon's configuration (8 consumer warps, 256-column stages) and the 128-column one, f16
// and bf16, with the fragments read by ld.shared (TwoFourWgLds): against group 7/8's same names
// without "lds".
std::vector<Variant> Group9() {
  using L = e::TwoFourWgLds;
  return {NT8S(L, DType::kF16, 8, 1, 256, 200, "s24_f16_wglds"), NT8S(L, DType::kF16, 8, 1, 128, 200, "s24_f16_wglds"),
          NT8S(L, DType::kBF16, 8, 1, 256, 200, "s24_bf16_wglds")};
}
#elif GROUP == 10
// Dense with warpgroup MMA from shared memory (DenseWg: A in 64-column swizzled images, no
// fragment loads): one block per SM with a deep ring, two and three blocks per SM, 64 and
// 128 rows per block.
std::vector<Variant> Group10() {
  using D = e::DenseWg;
  return {NT8S(D, DType::kF16, 8, 1, 128, 200, "dense_f16_wg"), NT8S(D, DType::kF16, 8, 1, 128, 100, "dense_f16_wg"),
          NT8S(D, DType::kF16, 8, 1, 64, 70, "dense_f16_wg"), NT8S(D, DType::kF16, 4, 1, 128, 100, "dense_f16_wg"),
          NT8S(D, DType::kF16, 8, 1, 256, 200, "dense_f16_wg")};
}
#elif GROUP == 11
// 2:4 with warpgroup MMA and two strips per warp (kMS = 2): row blocks of 256 rows (8 warps)
// or 128 (one warpgroup), so that a stage's B is a smaller share of its bytes at N = 32-64.
std::vector<Variant> Group11() {
  using W = e::TwoFourWg;
  return {NT8S(W, DType::kF16, 8, 2, 128, 200, "s24_f16_wg"), NT8S(W, DType::kF16, 8, 2, 256, 200, "s24_f16_wg"),
          NT8S(W, DType::kF16, 4, 2, 128, 200, "s24_f16_wg"), NT8S(W, DType::kF16, 4, 2, 256, 100, "s24_f16_wg")};
}
#elif GROUP == 12
// 2:4 with warpgroup MMA at N = 1 reading B as it is (TwoFourWgK1, the addon's s24e at N = 1
// since v17), f16 and bf16, against group 14's `_wg_w8x1_n8_k256_s3` at N = 1 (kBWgRows); f16 also
// on four- and five-stage rings (N = 1 moves a sixteenth of N = 8's B: more stages of A may pay
// there, where v15 measured deeper rings at N = 8 only). And one
// warpgroup per block (64 rows) on three-stage rings (66 / 102 / 150 KB at N = 8 / 32 / 64; N = 16's
// is group 7's 100 KB one), against group 7's `_wg_w4x1_` 200 KB rings (8 / 7 / 5 / 4 stages) and the addon's
// `_wg_w8x1_..._s3` on the small shapes: v17 found w4x1 on 4096^2 at N = 64 (64 row blocks in
// clusters of 2: 128 SMs against 96) 12.6 us against 14.0.
std::vector<Variant> Group12() {
  using K = e::TwoFourWgK1;
  using W = e::TwoFourWg;
  return {Make<K, DType::kF16, 8, 1, 1, 256, 124>("s24_f16_wgk1"), Make<K, DType::kBF16, 8, 1, 1, 256, 124>("s24_bf16_wgk1"),
          Make<K, DType::kF16, 8, 1, 1, 256, 164>("s24_f16_wgk1"), Make<K, DType::kF16, 8, 1, 1, 256, 204>("s24_f16_wgk1"),
          Make<W, DType::kF16, 4, 1, 1, 256, 66>("s24_f16_wg"), Make<W, DType::kF16, 4, 1, 4, 256, 102>("s24_f16_wg"),
          Make<W, DType::kF16, 4, 1, 8, 256, 150>("s24_f16_wg"), Make<K, DType::kF16, 4, 1, 1, 256, 200>("s24_f16_wgk1"),
          Make<K, DType::kBF16, 4, 1, 1, 256, 200>("s24_bf16_wgk1")};
}
#elif GROUP == 13
// 2:4 with warpgroup MMA and a ring of 224 KB instead of 200 (one stage more at N = 16-64):
// against group 7's `_wg_` of the same N and K stage.
std::vector<Variant> Group13() {
  using W = e::TwoFourWg;
  return {Make<W, DType::kF16, 8, 1, 2, 256, 224>("s24_f16_wg"), Make<W, DType::kF16, 8, 1, 4, 256, 224>("s24_f16_wg"),
          Make<W, DType::kF16, 8, 1, 8, 256, 224>("s24_f16_wg"), Make<W, DType::kF16, 8, 1, 8, 128, 224>("s24_f16_wg")};
}
#elif GROUP == 14
// 2:4 with warpgroup MMA on smaller rings (fewer bytes in flight per SM: 4 and 3 stages at
// N = 8, 3 at N = 16): against group 7's `_wg_` of the same N and K stage (5 and 4 stages).
std::vector<Variant> Group14() {
  using W = e::TwoFourWg;
  return {Make<W, DType::kF16, 8, 1, 1, 256, 160>("s24_f16_wg"), Make<W, DType::kF16, 8, 1, 1, 256, 124>("s24_f16_wg"),
          Make<W, DType::kF16, 8, 1, 2, 256, 140>("s24_f16_wg")};
}
#endif

}  // namespace probe
}  // namespace sparse
