// The bitmap SpMM's launcher and instantiations (spmm_bitmap_kernel.cuh, spmm_stream.h).
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_bitmap_kernel.cuh"
#include "cuda/spmm/spmm_stream.h"

namespace sparse {
namespace {

struct BitmapLaunchOp {
  template <DType kType, int kWB, int kMS, int kNT8, int kP>
  static cudaError_t Run(const BitmapMatrix& a, const StreamOperands& op, const StreamChoice& ch, cudaStream_t s) {
  using L = cuda::BitmapLayout<kWB, kMS, kNT8, kP>;
  cuda::BitmapArgs args;
  args.offsets = a.offsets();
  args.data = static_cast<const uint4*>(a.data());
  args.ktiles = a.ktiles();
  args.stage_units = a.stage_units();
  const int smem = L::SmemBytes(a.stage_units());
  if (smem > 227 * 1024) return cudaErrorInvalidValue;
  return LaunchStreamKernel<kWB, kMS, kNT8>(cuda::SpmmBitmapKernel<kType, kWB, kMS, kNT8, kP>, args, a, op, ch, smem,
                                            s);
}
};

}  // namespace

cudaError_t LaunchSpmmBitmap(const BitmapMatrix& a, const StreamOperands& op, const StreamChoice& ch,
                             cudaStream_t stream) {
  if (a.empty() || a.dtype() == DType::kF32 || op.n < 1 || !StreamChoiceValid(ch)) return cudaErrorInvalidValue;
  if (a.m() == 0) return cudaSuccess;
  return DispatchStream<BitmapLaunchOp>(a.dtype(), ch, op.n, a, op, ch, stream);
}

// ---------------------------------------------------------------------------------------
// The table entry (spmm_family.h).

namespace {

// Rank 20 -- f16/bf16 at N >= 128 and density >= 20%: the bitmap kernel decodes each 16 x 16
// tile once for up to 128 columns on tensor cores, where the CSR kernels pay per nonzero and
// column (H200: 1.5-4x the CSR kernels' speed there; BENCHMARKS.md, v5).
constexpr int kBitmapMinN = 128;
constexpr double kBitmapMinDensity = 0.2;

bool SelectBitmapFamily(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  if (p.dtype == DType::kF32 || p.n < kBitmapMinN) return false;
  const double density = p.m > 0 && p.k > 0 ? static_cast<double>(p.nnz) / (static_cast<double>(p.m) * p.k) : 0.0;
  if (density < kBitmapMinDensity) return false;
  ch->Set(SelectStream((p.m + 15) / 16, (p.k + 63) / 64, p.n, sm_count, true));
  return true;
}

bool ParseBitmapFamily(const char* name, SpmmChoice* ch) { return ParseStreamFamily("bm", name, ch); }
std::string BitmapFamilyName(const SpmmChoice& ch) { return StreamVariantName("bm", ch.Get<StreamChoice>()); }
bool BitmapFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) { return StreamCanRun(p, ch.Get<StreamChoice>()); }

void BitmapFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  if (p.dtype == DType::kF32) return;
  for (const std::string& v : StreamVariants("bm", p.m, p.k, p.n)) out->push_back(v);
}

cudaError_t BitmapPrepare(const SpmmProblem& p, const SpmmChoice&, cudaStream_t stream,
                          std::unique_ptr<SpmmOperand>* out, std::string* why) {
  return PrepareStreamOperand<BitmapMatrix>(p, stream, BuildBitmapTiles, out, why);
}

cudaError_t BitmapLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* a, int, cudaStream_t stream) {
  return LaunchSpmmBitmap(*static_cast<const BitmapMatrix*>(a), StreamOperandsOf(p), ch.Get<StreamChoice>(), stream);
}

const SpmmFamily kBitmapFamily = {
    "bm", "bm_w\\d+_m\\d+_s\\d+", 20, SelectBitmapFamily, ParseBitmapFamily, BitmapFamilyName, BitmapFamilyCanRun,
    BitmapFamilyVariants, "bitmap tiles", BitmapPrepare, BitmapLaunch,
};

}  // namespace

SPARSE_SPMM_FAMILY(kBitmapFamily);

}  // namespace sparse
