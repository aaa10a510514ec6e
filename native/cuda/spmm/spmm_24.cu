// The 2:4 SpMM's launcher and instantiations (spmm_24_kernel.cuh, spmm_stream.h).
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_24_kernel.cuh"
#include "cuda/spmm/spmm_stream.h"

namespace sparse {
namespace {

struct Sp24LaunchOp {
  template <DType kType, int kWB, int kNT8, int kP>
  static cudaError_t Run(const Sp24Matrix& a, const StreamOperands& op, const StreamChoice& ch, cudaStream_t s) {
  using L = cuda::Sp24Layout<kWB, kNT8, kP>;
  cuda::Sp24Args args;
  args.values = static_cast<const uint4*>(a.values());
  args.meta = static_cast<const uint4*>(a.meta());
  args.b = op.b, args.c = op.c;
  args.m = a.m(), args.k = a.k(), args.n = op.n;
  args.strips = a.strips(), args.ksteps = a.ksteps(), args.splits = ch.splits;
  args.vec_b = op.n % 8 == 0 && Aligned(op.b, 16);
  const int smem = L::kSmemBytes;
  const int64_t row_blocks = (a.strips() + kWB - 1) / kWB;
  const int col_blocks = (op.n + 8 * kNT8 - 1) / (8 * kNT8);
  return LaunchStream(cuda::Spmm24Kernel<kType, kWB, kNT8, kP>, args, row_blocks, col_blocks, ch, smem, s);
}
};

}  // namespace

cudaError_t LaunchSpmm24(const Sp24Matrix& a, const StreamOperands& op, const StreamChoice& ch,
                             cudaStream_t stream) {
  if (a.empty() || a.dtype() == DType::kF32 || op.n < 1 || !StreamChoiceValid(ch)) return cudaErrorInvalidValue;
  if (a.m() == 0) return cudaSuccess;
  return DispatchStream<Sp24LaunchOp>(a.dtype(), ch, op.n, a, op, ch, stream);
}

}  // namespace sparse
