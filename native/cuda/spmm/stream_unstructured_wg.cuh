#ifndef SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_WG_CUH_
#define SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_WG_CUH_
// Unstructured f16/bf16 weights on the streaming engine (issue 24), second candidate decode:
// scatter into images that warpgroup MMA reads from shared memory. The stream is
// common/unstructured_stream.h's kWg64 layout (per nonzero one 32-bit word, swizzled image
// offset << 16 | value; a stage's header holds one word start per 64-row unit and 64-column
// k-block). The four warps of a warpgroup own four strips of the row block (rows 64 g ..
// 64 g + 63 for warpgroup g) and share two images of 64 x 64 halves (8 KB each) laid out as a
// 128-byte-swizzled tensor copy would write them; per k-block the warpgroup scatters the
// segment's words into one image (load a word, store its low half: 128 words per warpgroup
// instruction), fences the generic stores against the async proxy, meets at a named barrier,
// and issues four wgmma.m64nNk16 with A and B both read through descriptors (B as TwoFourWg
// stages it). While those run, the next k-block is scattered into the other image. Every
// k-block of a stage is multiplied, empty or not: C is the dense product's (0 x Inf = NaN).
// Device code only, sm_90a.
#include <cstdint>

#include "cuda/spmm/stream_engine.cuh"
#include "cuda/spmm/stream_unstructured.cuh"

namespace sparse {
namespace cuda {
namespace wg {

// Generic-proxy shared-memory stores made visible to the async proxy (wgmma's operand reads).
__device__ __forceinline__ void FenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// kSwizzle128KMajor and WgmmaSs (dense wgmma, A and B from shared memory): cuda/spmm/wgmma.cuh.

}  // namespace wg

namespace engine {

// kCapPerTile: the ring's room per 16 x 16 tile, as UnstructuredScatter's (the same stage
// copies: StageBytes and Issue are inherited; only the header differs). kClear (UnstClear):
// kUnstClearWritten stores zeros at an image's written offsets once its wgmma group is
// complete (a word load and a 16-bit store per nonzero); kUnstZeroFill zero-fills the image
// there instead (four 16-byte stores per thread and k-block).
//
// The images are static shared memory beside the ring: two of 8 KB per warpgroup
// (ImageBytes()). Needs kNG == 1, kMS == 1 (a warpgroup's four strips are its 64 contiguous
// rows), kCW % 4 == 0 and kKS a multiple of 128 (an even number of k-blocks per stage: a
// stage's first k-block goes to image 0, whose last clear came before a barrier).
template <int kCapPerTile, int kClear = kUnstClearWritten>
struct UnstructuredWg : UnstructuredScatter<kCapPerTile> {
  static constexpr int kKBlock = 64;
  static constexpr int kImageBytes = 64 * kKBlock * 2;
  template <int kStrips, int kKS>
  static constexpr int HeaderBytes() {
    return (2 * (kStrips / 4 * (kKS / kKBlock) + 1) + 15) / 16 * 16;
  }
  template <int kStrips, int kKS>
  static constexpr int StageABytes() {
    static_assert(kStrips % 4 == 0 && kKS % (2 * kKBlock) == 0, "whole warpgroups, k-blocks in pairs");
    static_assert(UnstructuredScatter<kCapPerTile>::template CapacityWords<kStrips, kKS>() <= 65535,
                  "word starts are 16 bits");
    return (HeaderBytes<kStrips, kKS>() + 4 * UnstructuredScatter<kCapPerTile>::template CapacityWords<kStrips, kKS>() +
            127) / 128 * 128;
  }
  template <int kCW, int kMS, int kKS>
  static constexpr int ImageBytes() {
    return kCW / 4 * 2 * kImageBytes;
  }
  template <DType kType, int kCW, int kMS, int kNT8, int kKS, int kNG>
  __device__ static void Compute(const Args& a, int rb, int ks, const unsigned char* st, const unsigned char* bs,
                                 float (&acc)[kMS][kNT8][4]) {
    static_assert(kNG == 1 && kMS == 1 && kCW % 4 == 0, "whole warpgroups of one strip per warp, no n-split");
    static_assert(kKS % (2 * kKBlock) == 0, "k-blocks in pairs");
    constexpr int kBlocks = kKS / kKBlock;
    constexpr int kStrips = kCW;
    // NOTE: 1024-byte alignment: the swizzle pattern is a function of the address bits 4-9.
    __shared__ __align__(1024) unsigned char image[kCW / 4][2][kImageBytes];
    const int t = threadIdx.x & 127, g = threadIdx.x >> 7;
    const int bar = 2 + g;  // named barrier of the warpgroup (0: __syncthreads, 1: the engine's)
    const uint32_t img = SmemAddr(image[g][0]);
    if (FirstItemOfBlock(a, rb, ks)) {
      // --- once per launch: both images to zero (each k-block leaves its image zero again)
#pragma unroll
      for (int i = 0; i < 2 * kImageBytes / (16 * 128); ++i) StSharedZero128(img + 16 * (128 * i + t));
      NamedBarrier(bar, 128);
    }
    const uint32_t hdr = SmemAddr(st) + 2 * g * kBlocks;
    const uint32_t words = SmemAddr(st) + HeaderBytes<kStrips, kKS>();
    // The descriptors of image 0's first k16 slice and of the stage's B; a slice's start is an
    // addition to the 14-bit address field (shared addresses < 2^18: no carry out of it).
    const uint64_t da = wg::Desc(wg::kSwizzle128KMajor, img), db = wg::Desc(a.b_desc, SmemAddr(bs));
    // Rows past M (a row block's last strips) and columns past K have no words: their image
    // rows stay zero, as B's rows past K arrive as zeros; a uniform path for the wgmma chain.
    auto scatter = [&](int kb) {
      const uint32_t base = img + (kb & 1) * kImageBytes;
      const int end = static_cast<int>(LdShared16(hdr + 2 * kb + 2));
#pragma unroll 4
      for (int i = static_cast<int>(LdShared16(hdr + 2 * kb)) + t; i < end; i += 128) {
        const uint32_t w = LdShared32(words + 4 * i);
        StShared16(base + (w >> 16), w);
      }
    };
    auto clear = [&](int kb) {
      const uint32_t base = img + (kb & 1) * kImageBytes;
      if (kClear == kUnstZeroFill) {
#pragma unroll
        for (int i = 0; i < kImageBytes / (16 * 128); ++i) StSharedZero128(base + 16 * (128 * i + t));
      } else {
        const int end = static_cast<int>(LdShared16(hdr + 2 * kb + 2));
#pragma unroll 4
        for (int i = static_cast<int>(LdShared16(hdr + 2 * kb)) + t; i < end; i += 128)
          StSharedZero16(base + (LdShared32(words + 4 * i) >> 16));
      }
    };
    wg::Pin<kNT8 * 4>(&acc[0][0][0]);
#pragma unroll
    for (int kb = 0; kb < kBlocks; ++kb) {
      // --- scatter k-block kb into image kb % 2 (its previous k-block's zeros were stored
      // before the last barrier); k-block kb - 1's wgmma reads the other image meanwhile
      scatter(kb);
      if (kb > 0) {
        // --- k-block kb - 1's group complete: its image back to zero
        wg::Wait<0>();
        wg::Pin<kNT8 * 4>(&acc[0][0][0]);
        clear(kb - 1);
      }
      // --- the warpgroup's stores visible to the tensor cores, then four k16 slices
      wg::FenceProxyAsyncShared();
      NamedBarrier(bar, 128);
      wg::Fence();
#pragma unroll
      for (int j = 0; j < kKBlock / 16; ++j)
        wg::WgmmaSs<kType, 8 * kNT8>::Run(&acc[0][0][0], da + (((kb & 1) * kImageBytes + 32 * j) >> 4),
                                           db + (((kb * (kKBlock / 16) + j) * 16 * 16 * kNT8) >> 4));
      wg::Commit();
    }
    // --- the stage's B is read by the last group: complete before the engine releases the
    // stage; the last image back to zero while its words are still in the stage
    wg::Wait<0>();
    wg::Pin<kNT8 * 4>(&acc[0][0][0]);
    clear(kBlocks - 1);
  }
};

}  // namespace engine
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_STREAM_UNSTRUCTURED_WG_CUH_
