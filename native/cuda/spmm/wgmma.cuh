#ifndef SPARSE_CUDA_SPMM_WGMMA_CUH_
#define SPARSE_CUDA_SPMM_WGMMA_CUH_
// Hopper warpgroup MMA (wgmma, sm_90a only): the sparse m64nNk32 form with A (the 2:4 weights,
// compressed to 64 x 16) in registers and B (32 x N) in shared memory through a matrix
// descriptor. Device code only; the code that calls it is compiled for sm_90a.
//
// Register layouts (per warp w of the warpgroup, its rows 16 w .. 16 w + 15):
//   A: a[4], the dense m16n8k16 A fragment of the compressed 16 x 16 strip (our 2:4 tiles of
//      common/sparse24.h hold it in this order: 16 bytes per lane);
//   metadata: one 32-bit word per lane, lanes with lane % 4 in {0, 1} supply it (selector 0),
//      the word of mma.sp m16n8k32 (indices ordered within each group of four);
//   D: N / 2 floats, d[4 j + q] = the m16n8 C fragment q of n-tile j.
// B descriptor (64 bits): start address >> 4 in bits 0-13, leading byte offset >> 4 in bits
// 16-29, stride byte offset >> 4 in bits 32-45, layout (0 none, 1 128-byte, 2 64-byte,
// 3 32-byte swizzle) in bits 62-63. The host builds the fixed part (offsets, layout); the
// device ORs in the start address.
#include <cstdint>

#include "common/dtype.h"

namespace sparse {
namespace cuda {
namespace wg {

__device__ __forceinline__ void Fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void Commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void Wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving reads or writes of the accumulators across a wait.
template <int kCount>
__device__ __forceinline__ void Pin(float* d) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ uint64_t Desc(uint64_t fixed, uint32_t smem_addr) {
  return fixed | static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
}

template <DType kType, int kN>
struct WgmmaSp;

template <>
struct WgmmaSp<DType::kF16, 8> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %11, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 "
        "{%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, %8, %9, %10, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kBF16, 8> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %11, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16 "
        "{%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, %8, %9, %10, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kF16, 16> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %15, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, "
        "{%8, %9, %10, %11}, %12, %13, %14, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kBF16, 16> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %15, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, "
        "{%8, %9, %10, %11}, %12, %13, %14, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kF16, 32> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %23, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "{%16, %17, %18, %19}, %20, %21, %22, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kBF16, 32> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %23, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "{%16, %17, %18, %19}, %20, %21, %22, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kF16, 64> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %39, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, %37, %38, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

template <>
struct WgmmaSp<DType::kBF16, 64> {
  __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %39, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, %37, %38, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));
  }
};

}  // namespace wg
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_WGMMA_CUH_
