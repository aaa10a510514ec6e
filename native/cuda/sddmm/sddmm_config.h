#ifndef SPARSE_CUDA_SDDMM_SDDMM_CONFIG_H_
#define SPARSE_CUDA_SDDMM_SDDMM_CONFIG_H_
// The SDDMM configuration: every tile size and vector width lives here, checked by
// static_asserts. Host and device code may include this file (no device code).
//
// The tiling: a subwarp of kThreadsK lanes owns one row of the mask and computes its
// nonzeros in runs of kNnzPerRun consecutive nonzeros. The lanes split the inner dimension
// K, each taking vectors of kVecElems elements of the L row and of each R row (vector
// loads), accumulate partial dot products in fp32, then sum them with shuffles.
#include "common/dtype.h"

namespace sparse {

template <DType kType_, int kVecElems_, int kThreadsK_, int kNnzPerRun_, bool kLhsInRegisters_>
struct SddmmConfig {
  static constexpr DType kType = kType_;
  static constexpr int kElemBytes = kType == DType::kF32 ? 4 : 2;
  // Elements of L and R per vector memory instruction.
  static constexpr int kVecElems = kVecElems_;
  // Lanes that share one run of nonzeros, splitting K between them (the subwarp width).
  static constexpr int kThreadsK = kThreadsK_;
  // Nonzeros a subwarp computes at once: kNnzPerRun independent R loads in flight per lane.
  static constexpr int kNnzPerRun = kNnzPerRun_;
  // K elements the subwarp covers with one vector per lane.
  static constexpr int kChunkK = kThreadsK * kVecElems;
  // True when the whole L row fits one chunk (k <= kChunkK): it is loaded once per row and
  // held in registers across all runs; otherwise L is streamed chunk by chunk per run.
  static constexpr bool kLhsInRegisters = kLhsInRegisters_;

  static_assert(kVecElems >= 1 && (kVecElems & (kVecElems - 1)) == 0, "vector widths are powers of two");
  static_assert(kVecElems * kElemBytes <= 16, "one vector memory instruction moves at most 16 bytes");
  static_assert(kThreadsK >= 1 && kThreadsK <= 32 && (32 % kThreadsK) == 0,
                "the subwarp width must divide the warp size, so that shuffles stay inside one warp");
  static_assert(kNnzPerRun >= 1 && kNnzPerRun <= 16, "kNnzPerRun fp32 accumulators per lane");
};

// Threads per block of the SDDMM launcher.
constexpr int kSddmmThreadsPerBlock = 128;

}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_CONFIG_H_
