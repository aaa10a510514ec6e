#ifndef SPARSE_CUDA_SPMM_WGMMA_CUH_
#define SPARSE_CUDA_SPMM_WGMMA_CUH_
// Hopper warpgroup MMA (wgmma, sm_90a only): the sparse m64nNk32 form with A (the 2:4 weights,
// compressed to 64 x 16) in registers and B (32 x N) in shared memory through a matrix
// descriptor; the dense m64nNk16 form with A and B both through descriptors (WgmmaSs,
// N = 8 ... 64) and with A in registers (WgmmaRs). Device code only; the code that calls it is compiled for sm_90a.
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

// One instruction per dtype and N: D's N / 2 accumulators, A's four registers, B's
// descriptor, the metadata, selector 0, scale-d (1: accumulate), scales 1, B transposed (N
// contiguous). The operand lists below are the only part that depends on N.
#define SPARSE_WG_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SPARSE_WG_D8(i) SPARSE_WG_D4(i), SPARSE_WG_D4(i + 4)
#define SPARSE_WG_D16(i) SPARSE_WG_D8(i), SPARSE_WG_D8(i + 8)
#define SPARSE_WG_D32(i) SPARSE_WG_D16(i), SPARSE_WG_D16(i + 16)
#define SPARSE_WG_D64(i) SPARSE_WG_D32(i), SPARSE_WG_D32(i + 32)
#define SPARSE_WG_D128(i) SPARSE_WG_D64(i), SPARSE_WG_D64(i + 64)

#define SPARSE_WG_OPERANDS_8 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, %9, %10, p, 1, 1, 1;\n}\n"
#define SPARSE_WG_SCALE_8 "%11"
#define SPARSE_WG_OPERANDS_16 "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, %13, %14, p, 1, 1, 1;\n}\n"
#define SPARSE_WG_SCALE_16 "%15"
#define SPARSE_WG_OPERANDS_32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, %21, %22, p, 1, 1, 1;\n}\n"
#define SPARSE_WG_SCALE_32 "%23"
#define SPARSE_WG_OPERANDS_64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, %37, %38, p, 1, 1, 1;\n}\n"
#define SPARSE_WG_SCALE_64 "%39"
// N = 128 and 256 (the GEMM engine's 2:4 tiles, gemm_engine.cuh): the same with 64 and 128
// accumulators.
#define SPARSE_WG_OPERANDS_128 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, %69, %70, p, 1, 1, 1;\n}\n"
#define SPARSE_WG_SCALE_128 "%71"
#define SPARSE_WG_OPERANDS_256 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, %133, %134, p, 1, 1, 1;\n}\n"
#define SPARSE_WG_SCALE_256 "%135"

#define SPARSE_WGMMA_SP(NN, TYPE, PTX, DOPS)                                                            \
  template <>                                                                                         \
  struct WgmmaSp<DType::TYPE, NN> {                                                                   \
    __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SPARSE_WG_SCALE_##NN ", 0;\n"                     \
                   "wgmma.mma_async.sp.sync.aligned.m64n" #NN "k32.f32." PTX "." PTX " "               \
                   SPARSE_WG_OPERANDS_##NN                                                            \
                   : DOPS                                                                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));      \
    }                                                                                                 \
  };

SPARSE_WGMMA_SP(8, kF16, "f16", SPARSE_WG_D4(0))
SPARSE_WGMMA_SP(8, kBF16, "bf16", SPARSE_WG_D4(0))
SPARSE_WGMMA_SP(16, kF16, "f16", SPARSE_WG_D8(0))
SPARSE_WGMMA_SP(16, kBF16, "bf16", SPARSE_WG_D8(0))
SPARSE_WGMMA_SP(32, kF16, "f16", SPARSE_WG_D16(0))
SPARSE_WGMMA_SP(32, kBF16, "bf16", SPARSE_WG_D16(0))
SPARSE_WGMMA_SP(64, kF16, "f16", SPARSE_WG_D32(0))
SPARSE_WGMMA_SP(64, kBF16, "bf16", SPARSE_WG_D32(0))
SPARSE_WGMMA_SP(128, kF16, "f16", SPARSE_WG_D64(0))
SPARSE_WGMMA_SP(128, kBF16, "bf16", SPARSE_WG_D64(0))
SPARSE_WGMMA_SP(256, kF16, "f16", SPARSE_WG_D128(0))
SPARSE_WGMMA_SP(256, kBF16, "bf16", SPARSE_WG_D128(0))

#undef SPARSE_WGMMA_SP

// m64n8k32 with B K-major (imm-trans-b 0: K contiguous in each of B's 16-byte core-matrix
// rows); otherwise as WgmmaSp<kType, 8>. The streaming engine's N = 1 path (kBWgK1).
template <DType kType>
struct WgmmaSpK;
#define SPARSE_WGMMA_SP_K(TYPE, PTX)                                                                   \
  template <>                                                                                         \
  struct WgmmaSpK<DType::TYPE> {                                                                      \
    __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b, uint32_t e) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %11, 0;\n"                                      \
                   "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32." PTX "." PTX " "                    \
                   "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, %9, %10, p, 1, 1, 0;\n}\n"                  \
                   : SPARSE_WG_D4(0)                                                                  \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(e), "n"(0), "r"(1));      \
    }                                                                                                 \
  };
SPARSE_WGMMA_SP_K(kF16, "f16")
SPARSE_WGMMA_SP_K(kBF16, "bf16")
#undef SPARSE_WGMMA_SP_K

// A 64 x 16 K-major operand with the 128-byte swizzle (layout 1): rows of 128 bytes, 8-row
// groups 1024 bytes apart (stride byte offset); the leading byte offset is unused with a
// swizzle (written as 1, as gemm_engine.cuh's kADesc, which is proven on the GPU). The k16
// slice j of a 64-column image starts 32 j bytes into its rows.
constexpr uint64_t kSwizzle128KMajor = (1ull << 62) | ((1024ull >> 4) << 32) | (1ull << 16);

// wgmma m64nNk16, A and B from shared memory (dense), N = 8 / 16 / 32 / 64: D's N / 2
// accumulators (d[4 j + q]: the m16n8 C fragment q of n-tile j for warp w's rows 16 w ..),
// A's and B's descriptors, D += A B, scales 1, A K-major (tnspA 0), B N-major (tnspB 1).
template <DType kType, int kN>
struct WgmmaSs;

#define SPARSE_WGSS_D8 "%0, %1, %2, %3"
#define SPARSE_WGSS_D16 SPARSE_WGSS_D8 ", %4, %5, %6, %7"
#define SPARSE_WGSS_D32 SPARSE_WGSS_D16 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define SPARSE_WGSS_D64 \
  SPARSE_WGSS_D32 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define SPARSE_WGSS_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SPARSE_WGSS_F8 SPARSE_WGSS_F4(0), SPARSE_WGSS_F4(4)
#define SPARSE_WGSS_F16 SPARSE_WGSS_F8, SPARSE_WGSS_F4(8), SPARSE_WGSS_F4(12)
#define SPARSE_WGSS_F32 SPARSE_WGSS_F16, SPARSE_WGSS_F4(16), SPARSE_WGSS_F4(20), SPARSE_WGSS_F4(24), SPARSE_WGSS_F4(28)
// IA, IB, IS: the operand numbers of A's and B's descriptors and of scale-d (after D's N / 2).
#define SPARSE_WGSS(NN, IA, IB, IS, TYPE, PTX, DOPS)                                                         \
  template <>                                                                                          \
  struct WgmmaSs<DType::TYPE, NN> {                                                                    \
    __device__ __forceinline__ static void Run(float* d, uint64_t a, uint64_t b) {                     \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32." PTX "." PTX " {" SPARSE_WGSS_D##NN \
                   "}, " IA ", " IB ", p, 1, 1, 0, 1;\n}\n"                                            \
                   : DOPS                                                                              \
                   : "l"(a), "l"(b), "r"(1));                                                          \
    }                                                                                                  \
  };

SPARSE_WGSS(8, "%4", "%5", "%6", kF16, "f16", SPARSE_WGSS_F4(0))
SPARSE_WGSS(8, "%4", "%5", "%6", kBF16, "bf16", SPARSE_WGSS_F4(0))
SPARSE_WGSS(16, "%8", "%9", "%10", kF16, "f16", SPARSE_WGSS_F8)
SPARSE_WGSS(16, "%8", "%9", "%10", kBF16, "bf16", SPARSE_WGSS_F8)
SPARSE_WGSS(32, "%16", "%17", "%18", kF16, "f16", SPARSE_WGSS_F16)
SPARSE_WGSS(32, "%16", "%17", "%18", kBF16, "bf16", SPARSE_WGSS_F16)
SPARSE_WGSS(64, "%32", "%33", "%34", kF16, "f16", SPARSE_WGSS_F32)
SPARSE_WGSS(64, "%32", "%33", "%34", kBF16, "bf16", SPARSE_WGSS_F32)

#undef SPARSE_WGSS

// wgmma m64nNk16 with A from registers (dense), N = 8 / 16 / 32 / 64: D's N / 2 accumulators,
// A's four registers (warp w's rows 16 w ..: the m16n8k16 A fragment), B's descriptor, D += A B,
// scales 1, B N-major (tnspB 1). The unstructured bitmap decode (stream_unstructured_bitmap.cuh).
template <DType kType, int kN>
struct WgmmaRs;
// IA: the operand number of A's first register (after D's N / 2); B and scale-d follow it.
// RunLoHi: B's descriptor as its two 32-bit halves, joined in the instruction's own block: a
// caller that steps the start address adds to the low half alone (a 32-bit add a wgmma where
// the 64-bit one cost ptxas about six instructions, the halves moved to uniform registers one by
// one; v25). The start address field (bits 0-13) of a shared address below 256 KB never carries.
#define SPARSE_WGRS(NN, IA, IB, IS, IL, IH, ILS, TYPE, PTX, DOPS)                                           \
  template <>                                                                                          \
  struct WgmmaRs<DType::TYPE, NN> {                                                                    \
    __device__ __forceinline__ static void Run(float* d, const uint32_t (&a)[4], uint64_t b) {         \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IS ", 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32." PTX "." PTX " {" SPARSE_WGSS_D##NN \
                   "}, " IA ", " IB ", p, 1, 1, 1;\n}\n"                                               \
                   : DOPS                                                                              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));                      \
    }                                                                                                  \
    __device__ __forceinline__ static void RunLoHi(float* d, const uint32_t (&a)[4], uint32_t lo, uint32_t hi) { \
      asm volatile("{\n.reg .pred p;\n.reg .b64 bd;\nsetp.ne.b32 p, " ILS ", 0;\nmov.b64 bd, {" IL ", " IH "};\n" \
                   "wgmma.mma_async.sync.aligned.m64n" #NN "k16.f32." PTX "." PTX " {" SPARSE_WGSS_D##NN \
                   "}, " IA ", bd, p, 1, 1, 1;\n}\n"                                                  \
                   : DOPS                                                                              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(lo), "r"(hi), "r"(1));            \
    }                                                                                                  \
  };
SPARSE_WGRS(8, "{%4, %5, %6, %7}", "%8", "%9", "%8", "%9", "%10", kF16, "f16", SPARSE_WGSS_F4(0))
SPARSE_WGRS(8, "{%4, %5, %6, %7}", "%8", "%9", "%8", "%9", "%10", kBF16, "bf16", SPARSE_WGSS_F4(0))
SPARSE_WGRS(16, "{%8, %9, %10, %11}", "%12", "%13", "%12", "%13", "%14", kF16, "f16", SPARSE_WGSS_F8)
SPARSE_WGRS(16, "{%8, %9, %10, %11}", "%12", "%13", "%12", "%13", "%14", kBF16, "bf16", SPARSE_WGSS_F8)
SPARSE_WGRS(32, "{%16, %17, %18, %19}", "%20", "%21", "%20", "%21", "%22", kF16, "f16", SPARSE_WGSS_F16)
SPARSE_WGRS(32, "{%16, %17, %18, %19}", "%20", "%21", "%20", "%21", "%22", kBF16, "bf16", SPARSE_WGSS_F16)
SPARSE_WGRS(64, "{%32, %33, %34, %35}", "%36", "%37", "%36", "%37", "%38", kF16, "f16", SPARSE_WGSS_F32)
SPARSE_WGRS(64, "{%32, %33, %34, %35}", "%36", "%37", "%36", "%37", "%38", kBF16, "bf16", SPARSE_WGSS_F32)
#undef SPARSE_WGRS

}  // namespace wg
}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_WGMMA_CUH_
