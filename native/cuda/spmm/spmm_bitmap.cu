// The bitmap SpMM's launcher and instantiations (spmm_bitmap_kernel.cuh, spmm_stream.h).
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_bitmap_kernel.cuh"
#include "cuda/spmm/spmm_stream.h"

namespace sparse {
namespace {

struct BitmapLaunchOp {
  template <DType kType, int kWB, int kNT8, int kP>
  static cudaError_t Run(const BitmapMatrix& a, const StreamOperands& op, const StreamChoice& ch, cudaStream_t s) {
  using L = cuda::BitmapLayout<kWB, kNT8, kP>;
  cuda::BitmapArgs args;
  args.offsets = a.offsets();
  args.data = static_cast<const uint4*>(a.data());
  args.b = op.b, args.c = op.c;
  args.m = a.m(), args.k = a.k(), args.n = op.n;
  args.strips = a.strips(), args.ktiles = a.ktiles(), args.splits = ch.splits;
  args.stage_units = a.stage_units();
  args.vec_b = op.n % 8 == 0 && Aligned(op.b, 16);
  const int smem = L::SmemBytes(a.stage_units());
  if (smem > 227 * 1024) return cudaErrorInvalidValue;
  const int64_t row_blocks = (a.strips() + kWB - 1) / kWB;
  const int col_blocks = (op.n + 8 * kNT8 - 1) / (8 * kNT8);
  return LaunchStream(cuda::SpmmBitmapKernel<kType, kWB, kNT8, kP>, args, row_blocks, col_blocks, ch, smem, s);
}
};

}  // namespace

cudaError_t LaunchSpmmBitmap(const BitmapMatrix& a, const StreamOperands& op, const StreamChoice& ch,
                             cudaStream_t stream) {
  if (a.empty() || a.dtype() == DType::kF32 || op.n < 1 || !StreamChoiceValid(ch)) return cudaErrorInvalidValue;
  if (a.m() == 0) return cudaSuccess;
  return DispatchStream<BitmapLaunchOp>(a.dtype(), ch, op.n, a, op, ch, stream);
}

}  // namespace sparse
