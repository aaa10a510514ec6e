// Tensor-core SpMM host side: the device copy of the tiles (TcMatrix), the configuration
// names and the pick, and the launcher with its instantiations (spmm_tc_kernel.cuh).
#include "cuda/spmm/spmm_tc.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "cuda/common/cluster_launch.h"
#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_tc_kernel.cuh"

namespace sparse {

cudaError_t TcMatrix::Upload(const TcTiles& t, DType dtype, cudaStream_t stream) {
  offsets_.Reset(), entries_.Reset();
  if (dtype == DType::kF32) return cudaErrorInvalidValue;
  m_ = t.m, k_ = t.k, strips_ = t.strips, ktiles_ = t.ktiles, dtype_ = dtype;
  return UploadParts({{&offsets_, t.offsets.data(), 4 * t.offsets.size()},
                      {&entries_, t.entries.data(), 4 * t.entries.size()}},
                     stream);
}

cudaError_t TcMatrix::Build(const SpmmProblem& p, cudaStream_t stream) {
  std::vector<int> offsets, cols;
  std::vector<uint16_t> vals;
  cudaError_t e = DownloadCsr16(p, stream, &offsets, &cols, &vals);
  if (e != cudaSuccess) return e;
  TcTiles t;
  if (!BuildTcTiles(p.m, p.k, offsets.data(), cols.data(), vals.data(), &t).empty()) return cudaErrorInvalidValue;
  return Upload(t, p.dtype, stream);
}

cudaError_t TcMatrix::CopyFrom(const TcMatrix& o, cudaStream_t stream) {
  m_ = o.m_, k_ = o.k_, strips_ = o.strips_, ktiles_ = o.ktiles_, dtype_ = o.dtype_;
  return CopyParts({{&offsets_, &o.offsets_}, {&entries_, &o.entries_}}, stream);
}

std::string TcVariantName(const TcChoice& ch) {
  char name[40];
  std::snprintf(name, sizeof(name), "tc_w%d_s%d_p%d", ch.warps, ch.splits, ch.stages);
  return name;
}

bool ParseTcVariant(const char* name, TcChoice* ch) {
  int w = 0, s = 0, p = 0;
  char tail = 0;
  if (std::sscanf(name, "tc_w%d_s%d_p%d%c", &w, &s, &p, &tail) != 3) return false;
  ch->warps = w, ch->splits = s, ch->stages = p;
  return true;
}

namespace {

int NT8For(int n) { return n <= 8 ? 1 : n <= 16 ? 2 : n <= 32 ? 4 : 8; }

template <DType kType, int kWB, int kNT8, int kP>
cudaError_t LaunchConfig(const TcMatrix& a, const SpmmProblem& p, const TcChoice& ch, cudaStream_t stream) {
  using L = cuda::TcLayout<kWB, kNT8, kP>;
  auto kernel = cuda::SpmmTcKernel<kType, kWB, kNT8, kP>;
  cuda::TcArgs args;
  args.offsets = a.offsets();
  args.entries = a.entries();
  args.b = p.b;
  args.c = p.c;
  args.m = p.m, args.k = p.k, args.n = p.n;
  args.strips = a.strips(), args.ktiles = a.ktiles(), args.splits = ch.splits;
  const int row_blocks = (a.strips() + kWB - 1) / kWB;
  const dim3 grid(static_cast<unsigned>(row_blocks) * ch.splits, (p.n + 8 * kNT8 - 1) / (8 * kNT8), 1);
  return LaunchClustered(kernel, args, grid, 32 * kWB, L::kSmemBytes, ch.splits, stream);
}

template <DType kType, int kWB, int kNT8>
cudaError_t LaunchStages(const TcMatrix& a, const SpmmProblem& p, const TcChoice& ch, cudaStream_t s) {
  if (ch.stages == 4) return LaunchConfig<kType, kWB, kNT8, 4>(a, p, ch, s);
  if (ch.stages == 8) return LaunchConfig<kType, kWB, kNT8, 8>(a, p, ch, s);
  return cudaErrorInvalidValue;
}

template <DType kType, int kWB>
cudaError_t LaunchNT8(const TcMatrix& a, const SpmmProblem& p, const TcChoice& ch, cudaStream_t s) {
  switch (NT8For(p.n)) {
    case 1: return LaunchStages<kType, kWB, 1>(a, p, ch, s);
    case 2: return LaunchStages<kType, kWB, 2>(a, p, ch, s);
    case 4: return LaunchStages<kType, kWB, 4>(a, p, ch, s);
    default: return LaunchStages<kType, kWB, 8>(a, p, ch, s);
  }
}

template <DType kType>
cudaError_t LaunchType(const TcMatrix& a, const SpmmProblem& p, const TcChoice& ch, cudaStream_t s) {
  if (ch.warps == 4) return LaunchNT8<kType, 4>(a, p, ch, s);
  if (ch.warps == 8) return LaunchNT8<kType, 8>(a, p, ch, s);
  return cudaErrorInvalidValue;
}

}  // namespace

bool TcCanRun(const SpmmProblem& p, const TcChoice& ch) {
  if (p.dtype == DType::kF32) return false;
  if (p.n <= 0 || p.n % 8 != 0 || !Aligned(p.b, 16) || !Aligned(p.c, 16)) return false;
  if (ch.warps != 4 && ch.warps != 8) return false;
  if (ch.stages != 4 && ch.stages != 8) return false;
  if (ch.splits != 1 && ch.splits != 2 && ch.splits != 4 && ch.splits != 8) return false;
  const int major = ComputeMajor();
  if (major < 8 || (ch.splits > 1 && major < 9)) return false;
  const int ktiles = (p.k + kTcTileCols - 1) / kTcTileCols;
  if (ch.splits > 1 && ch.splits > ktiles) return false;
  const int64_t row_blocks = ((int64_t)(p.m + 15) / 16 + ch.warps - 1) / ch.warps;
  if (row_blocks * ch.splits > 0x7fffffff || (p.n + 63) / 64 > 65535) return false;
  return true;
}

TcChoice SelectTc(const SpmmProblem& p, int sm_count) {
  TcChoice ch;
  const int strips = (p.m + 15) / 16;
  const int ktiles = (p.k + kTcTileCols - 1) / kTcTileCols;
  const int64_t col_blocks = (p.n + 8 * NT8For(p.n) - 1) / (8 * NT8For(p.n));
  ch.warps = 8;
  ch.stages = 4;
  const bool clusters = ComputeMajor() >= 9;
  // Split K over a cluster until the grid has two blocks per SM (each split keeping at least
  // 4 k-tiles).
  const int64_t row_blocks = (strips + 7) / 8;
  ch.splits = 1;
  while (clusters && ch.splits < 8 && row_blocks * col_blocks * ch.splits < 2LL * sm_count &&
         ktiles / (ch.splits * 2) >= 4)
    ch.splits *= 2;
  return ch;
}

std::vector<std::string> TcVariants(const SpmmProblem& p) {
  std::vector<std::string> out;
  for (int w : {4, 8})
    for (int s : {1, 2, 4, 8})
      for (int st : {4, 8}) {
        TcChoice ch;
        ch.warps = w, ch.splits = s, ch.stages = st;
        if (TcCanRun(p, ch)) out.push_back(TcVariantName(ch));
      }
  return out;
}

cudaError_t LaunchSpmmTc(const TcMatrix& a, const SpmmProblem& p, const TcChoice& ch, cudaStream_t stream) {
  if (a.empty() || a.m() != p.m || a.k() != p.k || a.dtype() != p.dtype || !TcCanRun(p, ch))
    return cudaErrorInvalidValue;
  if (p.m == 0 || p.n == 0) return cudaSuccess;
  if (p.dtype == DType::kF16) return LaunchType<DType::kF16>(a, p, ch, stream);
  return LaunchType<DType::kBF16>(a, p, ch, stream);
}

// ---------------------------------------------------------------------------------------
// The table entry (spmm_family.h).

namespace {

// Rank 30 -- f16/bf16 on tensor cores where it wins: N a multiple of 8 up to 64, density
// (nnz / (m k)) from 40%, or from 25% when N >= 32, and the GPU able to run it. The bounds
// come from the device sweep of every variant on the LLM layers (BENCHMARKS.md, v4): the
// tensor-core kernel was 1.1-3.0x faster than the best SIMT variant at 50% sparsity, 1.2-2.2x
// at 70% with N >= 32, and slower below those densities (0.4-0.9x at 90-95%: there the SIMT
// kernels move fewer bytes per instruction).
constexpr int kTcMaxN = 64;
constexpr int kTcWideN = 32;
constexpr double kTcMinDensity = 0.4;
constexpr double kTcMinDensityWide = 0.25;

bool SelectTcFamily(const SpmmProblem& p, int sm_count, SpmmChoice* ch) {
  if (p.dtype == DType::kF32 || p.n % 8 != 0 || p.n > kTcMaxN) return false;
  const double density = p.m > 0 && p.k > 0 ? static_cast<double>(p.nnz) / (static_cast<double>(p.m) * p.k) : 0.0;
  if (density < (p.n >= kTcWideN ? kTcMinDensityWide : kTcMinDensity)) return false;
  const TcChoice tc = SelectTc(p, sm_count);
  if (!TcCanRun(p, tc)) return false;
  ch->Set(tc);
  return true;
}

bool ParseTcFamily(const char* name, SpmmChoice* ch) {
  TcChoice tc;
  if (!ParseTcVariant(name, &tc)) return false;
  ch->Set(tc);
  return true;
}

std::string TcFamilyName(const SpmmChoice& ch) { return TcVariantName(ch.Get<TcChoice>()); }
bool TcFamilyCanRun(const SpmmProblem& p, const SpmmChoice& ch) { return TcCanRun(p, ch.Get<TcChoice>()); }
void TcFamilyVariants(const SpmmProblem& p, std::vector<std::string>* out) {
  for (const std::string& v : TcVariants(p)) out->push_back(v);
}

cudaError_t TcPrepare(const SpmmProblem& p, const SpmmChoice&, cudaStream_t stream,
                      std::unique_ptr<SpmmOperand>* out, std::string*) {
  auto a = std::make_unique<TcMatrix>();
  const cudaError_t e = a->Build(p, stream);
  if (e == cudaSuccess) *out = std::move(a);
  return e;
}

cudaError_t TcLaunch(const SpmmProblem& p, const SpmmChoice& ch, const SpmmOperand* a, int, cudaStream_t stream) {
  return LaunchSpmmTc(*static_cast<const TcMatrix*>(a), p, ch.Get<TcChoice>(), stream);
}

const SpmmFamily kTcFamily = {
    "tc", "tc_w\\d+_s\\d+_p\\d+", 30, SelectTcFamily, ParseTcFamily, TcFamilyName, TcFamilyCanRun, TcFamilyVariants,
    "tiles", TcPrepare, TcLaunch,
};

}  // namespace

SPARSE_SPMM_FAMILY(kTcFamily);

}  // namespace sparse
