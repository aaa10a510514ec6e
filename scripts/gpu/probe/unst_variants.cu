// One group of the unstructured variants (see unst_variants.h): KIND selects the decode,
// GROUP the ring capacity (kUnstCaps[GROUP]); defines UnstGroup_KIND_GROUP.
#include "scripts/gpu/probe/unst_variants.h"

#include <cstdio>
#include <cstring>

namespace sparse {
namespace probe {

namespace e = cuda::engine;

// Format::kCW consumer warps of one strip each (8: a row block of 128 rows, the wgmma decodes'
// two warpgroups of 64 rows; 4: one warpgroup), stages of Format::kKS columns: the images take
// static shared memory (4 KB per warp, or 2 x 8 KB per warpgroup; none for the bitmap decode),
// the ring Format::kBudgetKB beside them (180 KB: one block per SM; 60-70 for two or three).
constexpr int kMS = 1;

// A kind: its decode, the stream's layout (the warpgroup decodes read the 64 x 64 images'
// layout) and the K columns per stage.
template <class Decode, UnstLayout kL, int kStage, int kBudget = 180, int kWarps = 8, int kBlocks = 1,
          int kBlocks64 = kBlocks, int kBlocks32 = kBlocks>
struct FormatOf {
  // Blocks per SM the registers must allow (__launch_bounds__), at N < 32, N = 32 and N = 64.
  static constexpr int kMinBlocks = kBlocks, kMinBlocks32 = kBlocks32, kMinBlocks64 = kBlocks64;
  using F = Decode;
  static constexpr UnstLayout kLayout = kL;
  // B staged for wgmma; kRows (CUDA cores) takes it as the mma.sync formats do (N = 1 unpadded).
  static constexpr bool kWg = kL != UnstLayout::kStrip16 && kL != UnstLayout::kRows;
  static constexpr int kCW = kWarps;
  static constexpr int kKS = kStage;
  static constexpr int kBudgetKB = kBudget;
  static constexpr int kCapShown = 0;  // the capacity in the variant's name, where not the group's
};
template <int kKind, int kCap>
struct Format;
template <int kCap>
struct Format<0, kCap> : FormatOf<e::UnstructuredScatter<kCap, e::kUnstZeroFill>, UnstLayout::kStrip16, 128> {};
template <int kCap>
struct Format<1, kCap> : FormatOf<e::UnstructuredScatter<kCap, e::kUnstClearWritten>, UnstLayout::kStrip16, 128> {};
template <int kCap>
struct Format<2, kCap> : FormatOf<e::UnstructuredWg<kCap, e::kUnstClearWritten>, UnstLayout::kWg64, 128> {};
template <int kCap>
struct Format<3, kCap> : FormatOf<e::UnstructuredWg<kCap, e::kUnstZeroFill>, UnstLayout::kWg64, 128> {};
template <int kCap>
struct Format<4, kCap> : FormatOf<e::UnstructuredWg<kCap, e::kUnstClearWritten>, UnstLayout::kWg64, 256> {};
template <int kCap>
struct Format<5, kCap> : FormatOf<e::UnstructuredWg<kCap, e::kUnstZeroFill>, UnstLayout::kWg64, 128, 70> {};
// The bitmap decodes hold a stage's A fragments (32 registers) beside N / 2 accumulators: at
// N = 64 the registers of two blocks of 10 warps, or three of 6, spill; one block fewer there.
template <int kCap>
struct Format<6, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapMul, 8, false, false>, UnstLayout::kBitmapFrag, 128, 70, 8, 2, 1> {};
template <int kCap>
struct Format<7, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapMul, 8, false, false>, UnstLayout::kBitmapFrag, 128, 60, 4, 3, 2> {};
template <int kCap>
struct Format<8, kCap> : FormatOf<e::UnstructuredWg<kCap, e::kUnstZeroFill>, UnstLayout::kWg64, 128, 60, 4, 2> {};
template <int kCap>
struct Format<9, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPairs, 8, false, false>, UnstLayout::kBitmapFrag, 128, 60, 4, 3, 2> {};
template <int kCap>
struct Format<10, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 8, false, false>, UnstLayout::kBitmapFrag, 128, 70, 8, 2, 1> {};
template <int kCap>
struct Format<11, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 8, false, false>, UnstLayout::kBitmapFrag, 128, 60, 4, 3, 2> {};
template <int kCap>
struct Format<12, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred>, UnstLayout::kBitmapFrag, 128, 69, 8, 2, 1> {};
template <int kCap>
struct Format<13, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 8, false, false>, UnstLayout::kBitmapFrag, 256, 70, 8, 2, 1> {};
template <int kCap>
struct Format<14, kCap> : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred>, UnstLayout::kBitmapFrag, 128, 59, 4, 3, 2> {};
template <int kCap>
struct Format<15, kCap>
    : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 4, true>, UnstLayout::kBitmapFrag, 128, 69, 8, 2, 1> {};
template <int kCap>
struct Format<16, kCap>
    : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 4, true>, UnstLayout::kBitmapFrag, 128, 59, 4, 3, 2> {};
template <int kCap>
struct Format<17, kCap>
    : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 2, true>, UnstLayout::kBitmapFrag, 128, 52, 4, 4, 2, 3> {};
template <int kCap>
struct Format<18, kCap>
    : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred8, 4, true>, UnstLayout::kBitmapFrag, 128, 69, 8, 2, 1> {};
template <int kCap>
struct Format<19, kCap>
    : FormatOf<e::UnstructuredBitmap<kCap, e::kBitmapPred, 2, true>, UnstLayout::kBitmapFrag, 128, 69, 8, 2, 1> {};
// The pair kinds: UnstructuredPairs at the capacity (registers per tile) for a group's (values
// per tile), named by it; stage width, ring budget, warps, blocks per SM (N < 64, N = 64) and
// the engine's lean kernel as named.
constexpr int PairCap(int values) { return values >= 256 ? 128 : values >= 144 ? 100 : values >= 88 ? 72 : values; }
template <int kCap, int kStage, int kBudget, int kWarps, int kBlocks, int kBlocks64, bool kLean = true,
          bool kTrim = false, int kChunk = 8>
struct PairsOf : FormatOf<e::UnstructuredPairs<PairCap(kCap), kLean, kTrim, kChunk>, UnstLayout::kPairFrag, kStage,
                          kBudget, kWarps, kBlocks, kBlocks64> {
  static constexpr int kCapShown = PairCap(kCap);
};
template <int kCap>
struct Format<20, kCap> : PairsOf<kCap, 128, 108, 8, 2, 1> {};
template <int kCap>
struct Format<21, kCap> : PairsOf<kCap, 128, 72, 4, 3, 2> {};
template <int kCap>
struct Format<22, kCap> : PairsOf<kCap, 256, 200, 8, 1, 1> {};
template <int kCap>
struct Format<23, kCap> : PairsOf<kCap, 128, 200, 8, 1, 1> {};
template <int kCap>
struct Format<24, kCap> : PairsOf<kCap, 256, 100, 4, 2, 2> {};
template <int kCap>
struct Format<25, kCap> : PairsOf<kCap, 128, 108, 8, 2, 1, false> {};
template <int kCap>
struct Format<26, kCap> : PairsOf<kCap, 128, 108, 8, 2, 1, true, true> {};
template <int kCap>
struct Format<27, kCap> : PairsOf<kCap, 128, 108, 8, 2, 1, true, true, 4> {};
template <int kCap>
struct Format<28, kCap> : PairsOf<kCap, 128, 108, 8, 2, 2, true, true, 4> {};
template <int kCap>
struct Format<29, kCap> : PairsOf<kCap, 128, 108, 8, 2, 1, false, true> {};
template <int kCap>
struct Format<30, kCap> : PairsOf<kCap, 128, 108, 8, 2, 2, true, false, 2> {};
template <int kCap>
struct Format<31, kCap> : PairsOf<kCap, 128, 108, 8, 2, 2, true, false, 4> {};
template <int kCap>
struct Format<32, kCap> : FormatOf<e::UnstructuredRows<kCap>, UnstLayout::kRows, 128, 108, 8, 2, 1> {};
template <int kCap>
struct Format<33, kCap> : FormatOf<e::UnstructuredRows<kCap, true>, UnstLayout::kRows, 128, 108, 8, 2, 1> {};
// unrowp with the engine's trace hooks (HasLean reads the derived kLean).
template <int kCap>
struct UnstRowsTraced : e::UnstructuredRows<kCap, true> {
  static constexpr bool kLean = false;
};
template <int kCap>
struct Format<34, kCap> : FormatOf<UnstRowsTraced<kCap>, UnstLayout::kRows, 128, 108, 8, 2, 1> {};

template <int kKind, int kCap, DType kType, int kNT8>
static UnstVariant Make() {
  using Fm = Format<kKind, kCap>;
  using F = typename Fm::F;
  constexpr int kKS = Fm::kKS, kBudgetKB = Fm::kBudgetKB, kCW = Fm::kCW;
  using E = e::Engine<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB>;
  static_assert(E::kSmemBytes + F::template ImageBytes<kCW, kMS, kKS>() + 1024 <= 227 * 1024,
                "the ring and the images fit in an SM's shared memory");
  constexpr int kMinBlocks = kNT8 == 8 ? Fm::kMinBlocks64 : kNT8 == 4 ? Fm::kMinBlocks32 : Fm::kMinBlocks;
  auto fn = &e::StreamKernel<F, kType, kCW, kMS, kNT8, kKS, kBudgetKB, 1, kMinBlocks>;
  CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, E::kSmemBytes));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, E::kThreads, E::kSmemBytes));
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s_%s_c%d_w%dx%d_n%d_k%d_s%d", kUnstKindNames[kKind],
                kType == DType::kF16 ? "f16" : "bf16", Fm::kCapShown ? Fm::kCapShown : kCap, kCW, kMS, 8 * kNT8, kKS,
                E::kStages);
  return UnstVariant{strdup(buf), kKind, Fm::kLayout, Fm::kWg, kType, kCap, E::kStrips, kKS,
                     F::template CapacityWords<E::kStrips, kKS>(), kNT8, E::kThreads, E::kSmemBytes, per_sm, fn};
}

template <int kKind, int kCap>
static std::vector<UnstVariant> Types() {
  return {Make<kKind, kCap, DType::kF16, 1>(),  Make<kKind, kCap, DType::kF16, 2>(),
          Make<kKind, kCap, DType::kF16, 4>(),  Make<kKind, kCap, DType::kF16, 8>(),
          Make<kKind, kCap, DType::kBF16, 1>(), Make<kKind, kCap, DType::kBF16, 2>(),
          Make<kKind, kCap, DType::kBF16, 4>(), Make<kKind, kCap, DType::kBF16, 8>()};
}

#define UNST_GROUP_FN(k, g) UNST_GROUP_FN_(k, g)
#define UNST_GROUP_FN_(k, g) UnstGroup_##k##_##g
static_assert(KIND >= 0 && KIND < kUnstKinds, "a decode kind");
static_assert(GROUP >= 0 && GROUP < kUnstGroups, "a group per capacity");
#if defined(UNST_STUB)
// A group left out of a partial build (unst_build.sh's UNST_ONLY): no variants.
std::vector<UnstVariant> UNST_GROUP_FN(KIND, GROUP)() { return {}; }
#else
std::vector<UnstVariant> UNST_GROUP_FN(KIND, GROUP)() { return Types<KIND, kUnstCaps[GROUP]>(); }
#endif

}  // namespace probe
}  // namespace sparse
