// The 2:4 SpMM family: its launcher and instantiations (spmm_24_kernel.cuh), and its entry in
// the table of kernel families (spmm_family.h). Its prepared operand, Sp24Matrix, and the
// streaming configuration it shares with the bitmap kernel are in spmm_stream.h.
#include "common/gemm_plan.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_24_kernel.cuh"
#include "cuda/spmm/spmm_stream.h"

namespace sparse {
namespace {

struct Sp24LaunchOp {
  template <DType kType, int kWB, int kMS, int kNT8, int kP>
  static cudaError_t Run(const Sp24Matrix& a, const StreamOperands& op, const StreamChoice& ch, cudaStream_t s) {
  using L = cuda::Sp24Layout<kWB, kMS, kNT8, kP>;
  cuda::Sp24Args args;
  args.values = static_cast<const uint4*>(a.values());
  args.meta = static_cast<const uint4*>(a.meta());
  args.ksteps = a.ksteps();
  return LaunchStreamKernel<kWB, kMS, kNT8>(cuda::Spmm24Kernel<kType, kWB, kMS, kNT8, kP>, args, a, op, ch,
                                            L::kSmemBytes, s);
}
};

}  // namespace

cudaError_t LaunchSpmm24(const Sp24Matrix& a, const StreamOperands& op, const StreamChoice& ch,
                             cudaStream_t stream) {
  if (a.empty() || a.dtype() == DType::kF32 || op.n < 1 || !StreamChoiceValid(ch)) return cudaErrorInvalidValue;
  if (a.m() == 0) return cudaSuccess;
  return DispatchStream<Sp24LaunchOp>(a.dtype(), ch, op.n, a, op, ch, stream);
}

// ---------------------------------------------------------------------------------------
// The table entry (spmm_family.h).

namespace {

// Rank 10 -- a 2:4 matrix in f16/bf16 (the caller checked the pattern: SpmmPlan::Structure):
// the 2:4 kernel (spmm_24_kernel.cuh) moves 1.125 bytes per weight and runs mma.sp; on the
// H200 it was faster than every other kernel of ours at every N measured (1 to 256;
// BENCHMARKS.md, v5).
// Not below 2.5 % dense (DenseWorkPays, common/gemm_plan.h: the kernels of the nonzeros take those).
bool SelectSp24Family(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  if (p.dtype == DType::kF32 || p.structure != SpmmProblem::k24 || !DenseWorkPays(p.m, p.k, p.nnz)) return false;
  ch->Set(SelectStream((p.m + 15) / 16, (p.k + 63) / 64, p.n, sm_count, false));
  return true;
}

bool ParseSp24Family(const char* name, SpmmChoice* ch) { return ParseStreamFamily("s24", name, ch); }
std::string Sp24FamilyName(const SpmmChoice& ch) { return StreamVariantName("s24", ch.Get<StreamChoice>()); }

// Only where the caller vouched for the pattern.
bool Sp24FamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) {
  return p.structure == SpmmProblem::k24 && StreamCanRun(p, ch.Get<StreamChoice>());
}

void Sp24FamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  if (p.dtype == DType::kF32 || p.structure != SpmmProblem::k24) return;
  for (const std::string& v : StreamVariants("s24", p.m, p.k, p.n)) out->push_back(v);
}

cudaError_t Sp24Prepare(const SpmmProblem& p, const SpmmChoice&, cudaStream_t stream,
                        std::unique_ptr<SpmmOperand>* out, std::string* why) {
  return PrepareStreamOperand<Sp24Matrix>(p, stream, BuildSp24Tiles, out, why);
}

cudaError_t Sp24Launch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* a, int, cudaStream_t stream) {
  return LaunchSpmm24(*static_cast<const Sp24Matrix*>(a), StreamOperandsOf(p), ch.Get<StreamChoice>(), stream);
}

const SpmmFamily kSp24Family = {
    "s24", "s24_w\\d+_m\\d+_s\\d+", 10, SelectSp24Family, ParseSp24Family, Sp24FamilyName, Sp24FamilyCanRun,
    Sp24FamilyVariants, "2:4 tiles", Sp24Prepare, Sp24Launch,
};

}  // namespace

SPARSE_SPMM_FAMILY(kSp24Family);

}  // namespace sparse
