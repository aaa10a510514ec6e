#ifndef SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_CUH_
#define SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_CUH_
// Unstructured f16/bf16 weights on the streaming engine (issue 24), decoded by scatter: the
// stream of common/unstructured_stream.h (per nonzero one 32-bit word, image offset << 16 |
// value; a stage is one run of variable length at the offset table's entry) is copied stage by
// stage into the ring; each consumer warp zero-fills a dense image of its strip's 16 x 16 tiles
// in shared memory, stores its strip's nonzeros into it (per word: a load, an add, a 16-bit
// store; 32 words per instruction, ordered offline so that they hit distinct banks where the
// counts allow), and multiplies the image with ldmatrix + mma.sync m16n8k16 exactly as the
// dense format does (DenseSteps). Every tile of the stage is multiplied, empty or not, so the
// result is the dense product's: 0 x Inf in B gives NaN as cuBLAS's does. Device code only.
#include <cstdint>

#include "cuda/spmm/stream_engine.cuh"

namespace sparse {
namespace cuda {
namespace engine {

__device__ __forceinline__ uint32_t LdShared16(uint32_t addr) {
  unsigned short v;
  asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t LdShared32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
// The low 16 bits of v.
__device__ __forceinline__ void StShared16(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(static_cast<unsigned short>(v)) : "memory");
}
__device__ __forceinline__ void StSharedZero128(uint32_t addr) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};\n" ::"r"(addr), "r"(0) : "memory");
}

__device__ __forceinline__ void StSharedZero16(uint32_t addr) {
  asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(static_cast<unsigned short>(0)) : "memory");
}

// Whether stage (rb, ks) is the first this block consumes (the engine's own ItemsOfBlock):
// the decodes that keep their images zero between stages (clearing only what they wrote)
// zero-fill them once, here.
__device__ __forceinline__ bool FirstItemOfBlock(const Args& a, int rb, int ks) {
  return static_cast<long long>(rb) * a.kstages + ks == ItemsOfBlock(a).i0;
}

// How a decode gets its images back to zero for the next stage.
enum UnstClear : int {
  kUnstZeroFill = 0,      // zero-fill the whole image before each scatter
  kUnstClearWritten = 1,  // after the multiply, store zeros at the offsets just written (the
                          // words are re-read from the stage); zero-filled once per launch
};

// kCapPerTile: the ring's room for a stage, in nonzeros per 16 x 16 tile on average over the
// stage (256: any matrix). The ring's stages are fixed slots, so the capacity is what a stage
// may hold, not what it holds: a variant for 50 % sparsity (128 per tile) with some margin
// keeps about twice the stages in flight of one that admits dense stages. The encoder refuses a
// matrix whose densest stage does not fit (BuildUnstStream's max_stage_words,
// CapacityWords()).
//
// The images are static shared memory beside the engine's ring (ImageBytes(): kKS x 32 bytes
// per consumer warp and strip), not in the ring's stages: one image per warp, reused stage after
// stage, where a per-stage image would multiply it by the ring's depth. The host keeps the
// ring's budget plus ImageBytes() within the 227 KB of an SM.
//
// kClear (UnstClear): kUnstZeroFill zero-fills the image's tiles before each scatter (8 16-byte
// stores per lane and stage); kUnstClearWritten stores zeros at the written offsets after the
// multiply (a load and a 16-bit store per word: fewer at >= 90 %, where a lane has under 7
// words a stage).
template <int kCapPerTile, int kClear = kUnstZeroFill>
struct UnstructuredScatter {
  static_assert(kCapPerTile > 0 && kCapPerTile <= 256, "a 16 x 16 tile holds at most 256 nonzeros");
  static constexpr int kKStep = 16;
  template <int kStrips>
  static constexpr int HeaderBytes() {
    return (2 * (kStrips + 1) + 15) / 16 * 16;
  }
  template <int kStrips, int kKS>
  static constexpr int CapacityWords() {
    return kCapPerTile * kStrips * (kKS / 16);
  }
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    static_assert(kKS % 16 == 0 && kKS <= 2048, "image offsets are 16 bits");
    static_assert(CapacityWords<kStrips, kKS>() <= 65535, "word starts are 16 bits");
    return (HeaderBytes<kStrips>() + 4 * CapacityWords<kStrips, kKS>() + 127) / 128 * 128;
  }
  template <int kCW, int kMS, int kKS>
  static constexpr int ImageBytes() {
    return kCW * kMS * kKS * 32;
  }
  // The stage's run, from the offset table (a1: row_blocks kstages + 1 uint32 in 16-byte units;
  // read-only path: the producer reads a block's entries in order, eight to a sector).
  template <int kStrips, int kKS>
  __device__ static uint32_t StageBytes(const Args& a, int rb, int ks) {
    const uint32_t* off = static_cast<const uint32_t*>(a.a1) + static_cast<int64_t>(rb) * a.kstages + ks;
    return (__ldg(off + 1) - __ldg(off)) * 16;
  }
  // Up to four lanes copy equal parts (of at least 8 KB, as IssueStageRun splits).
  template <int kStrips, int kKS>
  __device__ static void Issue(const Args& a, int rb, int ks, unsigned char* st, uint32_t bar, int lane,
                               uint64_t policy) {
    const uint32_t* off = static_cast<const uint32_t*>(a.a1) + static_cast<int64_t>(rb) * a.kstages + ks;
    const uint32_t u0 = __ldg(off), units = __ldg(off + 1) - u0;
    const uint32_t parts = units >= 2048 ? 4 : units >= 1024 ? 2 : 1;
    const uint32_t per = (units + parts - 1) / parts;
    const uint32_t b = static_cast<uint32_t>(lane) * per;
    if (static_cast<uint32_t>(lane) < parts && b < units)
      BulkCopyHint(SmemAddr(st + 16 * b), static_cast<const unsigned char*>(a.a0) + 16 * (static_cast<int64_t>(u0) + b),
                   16 * min(per, units - b), bar, policy);
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    constexpr int kStrips = kCW / kNG * kMS;
    constexpr int kImage = kKS * 32;  // one strip's image: kKS / 16 tiles of 512 bytes
    __shared__ __align__(128) unsigned char image[kCW][kMS * kImage];
    const int lane = threadIdx.x & 31, cw = threadIdx.x >> 5, warp = cw / kNG;
    const uint32_t img = SmemAddr(image[cw]);
    if (kClear == kUnstClearWritten && FirstItemOfBlock(a, rb, ks)) {
      // --- once per launch: the whole image (before a warp past the last strip leaves: it may
      // have strips in a later row block)
      for (int i = lane; i < kMS * kImage / 16; i += 32) StSharedZero128(img + 16 * i);
      __syncwarp();
    }
    // A strip past the last has no words and no rows to store.
    if (rb * kStrips + warp * kMS >= a.strips) return;
    const int steps = (min(kKS, a.k - ks * kKS) + 15) / 16;
    if (kClear == kUnstZeroFill) {
      // --- zero-fill the images (conflict-free: a warp stores 512 contiguous bytes)
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms)
#pragma unroll 4
        for (int t = 0; t < steps; ++t) StSharedZero128(img + ms * kImage + t * 512 + lane * 16);
      __syncwarp();
    }
    // --- scatter: lane j stores words j, j + 32, ... of each of its strips
    const uint32_t hdr = SmemAddr(st) + 2 * warp * kMS;
    const uint32_t words = SmemAddr(st) + HeaderBytes<kStrips>();
#pragma unroll
    for (int ms = 0; ms < kMS; ++ms) {
      const int end = static_cast<int>(LdShared16(hdr + 2 * ms + 2));
      const uint32_t base = img + ms * kImage;
#pragma unroll 4
      for (int i = static_cast<int>(LdShared16(hdr + 2 * ms)) + lane; i < end; i += 32) {
        const uint32_t w = LdShared32(words + 4 * i);
        StShared16(base + (w >> 16), w);
      }
    }
    __syncwarp();
    // --- multiply: image tile kk of strip ms is ldmatrix.x4's four 8 x 8 blocks in order
    DenseSteps<kType, kMS, kNT8, kNG>(
        a, bs, steps, [&](int ms, int kk, uint32_t(&af)[4]) { LdMatrixX4(img + ms * kImage + kk * 512 + lane * 16, af); },
        acc);
    if (kClear == kUnstClearWritten) {
      // --- clear: the same words' offsets back to zero, once every lane's ldmatrix has read
      // them (the engine's __syncwarp after Compute orders this before the next scatter)
      __syncwarp();
#pragma unroll
      for (int ms = 0; ms < kMS; ++ms) {
        const int end = static_cast<int>(LdShared16(hdr + 2 * ms + 2));
        const uint32_t base = img + ms * kImage;
#pragma unroll 4
        for (int i = static_cast<int>(LdShared16(hdr + 2 * ms)) + lane; i < end; i += 32)
          StSharedZero16(base + (LdShared32(words + 4 * i) >> 16));
      }
    }
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Fix(const Args&, int, int, int, float (&)[kMS][kNT8][4]) {}
};

}  // namespace engine
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_CUH_
