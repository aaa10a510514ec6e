#ifndef SPARSE_CUDA_SPMM_SPMM_CONFIG_H_
#define SPARSE_CUDA_SPMM_SPMM_CONFIG_H_
// The SpMM tile configuration: every tile size and vector width lives here, checked by
// static_asserts. Host and device code may include this file (no device code).
//
// The tiling (Sputnik's one-dimensional tiling of the output): a subwarp of kThreadsX
// threads owns a 1 x kBlockItemsX strip of one row of C. Each thread owns kVecsX vectors
// of kVecElems consecutive columns, the subwarp's vectors interleaved so that each of its
// loads of a B row is contiguous across the subwarp. A thread block holds `rows_per_block`
// subwarps (a launch-time choice, blockDim.y), each on its own row: with kThreadsX < 32
// several short rows share one warp (subwarp tiling).
#include <cstdint>

#include "common/dtype.h"

namespace sparse {

template <DType kType_, int kIndexBits_, int kVecElems_, int kThreadsX_, int kVecsX_, int kUnroll_ = 0>
struct SpmmConfig {
  static constexpr DType kType = kType_;
  static constexpr int kElemBytes = kType == DType::kF32 ? 4 : 2;
  // Column indices as stored in memory: 16-bit (Sputnik's mixed precision) or 32-bit.
  static constexpr int kIndexBits = kIndexBits_;
  // Elements of B and C per vector memory instruction (float4 = 4 fp32, 16 bytes = 8 halves).
  static constexpr int kVecElems = kVecElems_;
  // Threads that share one output strip (the subwarp width).
  static constexpr int kThreadsX = kThreadsX_;
  // Vectors of B (and of C) each thread loads per nonzero.
  static constexpr int kVecsX = kVecsX_;
  // Width of the strip of C a subwarp owns.
  static constexpr int kBlockItemsX = kThreadsX * kVecsX * kVecElems;
  // Nonzeros each thread stages per sparse tile: one 16-byte load of values (float4, or
  // 8 halves). Indices take one or two 16-byte loads.
  static constexpr int kSparseVec = 16 / kElemBytes;
  // Nonzeros per sparse tile: one vector per thread of the subwarp.
  static constexpr int kBlockItemsK = kThreadsX * kSparseVec;
  // Nonzeros whose B loads are issued before their multiply-adds: kUnrollK * kVecsX
  // independent loads in flight per thread (kUnroll_ > 0 overrides the default: the deep
  // variants, "_u16", keep twice or four times as many loads in flight, as Sputnik's large
  // tiles do).
  static constexpr int kUnrollK = kUnroll_ > 0 ? kUnroll_ : (kVecsX >= 2 ? 4 : 8);
  // Shared memory per subwarp: the staged values (fp32) and pre-scaled offsets (int32).
  static constexpr int kSmemBytesPerRow = kBlockItemsK * (4 + 4);

  static_assert(kIndexBits == 16 || kIndexBits == 32, "column indices are 16- or 32-bit");
  static_assert(kVecElems >= 1 && (kVecElems & (kVecElems - 1)) == 0, "vector widths are powers of two");
  static_assert(kVecElems * kElemBytes <= 16, "one vector memory instruction moves at most 16 bytes");
  static_assert(kThreadsX >= 1 && kThreadsX <= 32 && (32 % kThreadsX) == 0,
                "the subwarp width must divide the warp size, so that a subwarp never spans two warps");
  static_assert(kVecsX >= 1 && kVecsX <= 4, "accumulators per thread: kVecsX * kVecElems floats in registers");
  static_assert(kBlockItemsK % kUnrollK == 0, "the unrolled compute loop divides a full sparse tile");
  static_assert(kSparseVec % 4 == 0, "staged tiles are read back as float4/int4");
};

// Threads per block the launcher aims for (fewer when the grid would leave SMs idle).
constexpr int kSpmmTargetThreadsPerBlock = 128;

}  // namespace sparse
#endif  // SPARSE_CUDA_SPMM_SPMM_CONFIG_H_
