// Host side of the streaming tensor-core SpMMs: the device matrices, configuration names and
// the built-in picks (spmm_stream.h). The launchers are in spmm_bitmap.cu and spmm_24.cu.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_stream.h"

namespace sparse {
namespace {

// k-units of 64 rows.
int64_t KStages(int k) { return (static_cast<int64_t>(k) + 63) / 64; }

std::vector<std::string> Variants(const char* prefix, int64_t strips, int64_t kstages, int n) {
  std::vector<std::string> out;
  const bool bitmap = std::strcmp(prefix, "bm") == 0;
  for (int w : {4, 8})
    for (int ms : {1, 2})
      for (int s : {1, 2, 4, 8}) {
        StreamChoice ch;
        ch.warps = w, ch.strips = ms, ch.splits = s;
        if (!StreamChoiceValid(ch) || s > kstages) continue;
        // NOTE: a bitmap stage holds up to 2.3 KB per strip (four dense tiles); 16 strips a
        // block at 8 stages (N <= 32) would need 330 KB of shared memory for dense matrices.
        if (bitmap && w * ms == 16 && StreamNT8(n) <= 4) continue;
        const int64_t row_blocks = (strips + w * ms - 1) / (w * ms);
        if (row_blocks * s > 0x7fffffff || (n + 8 * StreamNT8(n) - 1) / (8 * StreamNT8(n)) > 65535) continue;
        out.push_back(StreamVariantName(prefix, ch));
      }
  return out;
}

}  // namespace

std::vector<std::string> StreamVariants(const char* prefix, int m, int k, int n) {
  return Variants(prefix, (static_cast<int64_t>(m) + 15) / 16, KStages(k), n);
}

std::string StreamVariantName(const char* prefix, const StreamChoice& ch) {
  char name[48];
  std::snprintf(name, sizeof(name), "%s_w%d_m%d_s%d", prefix, ch.warps, ch.strips, ch.splits);
  return name;
}

bool ParseStreamVariant(const char* prefix, const char* name, StreamChoice* ch) {
  const size_t len = std::strlen(prefix);
  if (std::strncmp(name, prefix, len) != 0) return false;
  int w = 0, ms = 0, s = 0;
  char tail = 0;
  if (std::sscanf(name + len, "_w%d_m%d_s%d%c", &w, &ms, &s, &tail) != 3) return false;
  ch->warps = w, ch->strips = ms, ch->splits = s;
  return true;
}

bool StreamChoiceValid(const StreamChoice& ch) {
  if (ch.warps != 4 && ch.warps != 8) return false;
  if (ch.strips != 1 && ch.strips != 2) return false;
  if (ch.splits != 1 && ch.splits != 2 && ch.splits != 4 && ch.splits != 8) return false;
  const int major = ComputeMajor();
  return major >= 8 && (ch.splits == 1 || major >= 9);
}

bool StreamCanRun(const SpmmProblem& p, const StreamChoice& ch) {
  if (p.dtype == DType::kF32 || !StreamChoiceValid(ch)) return false;
  const int64_t rows = static_cast<int64_t>(ch.warps) * ch.strips * 16;
  return (p.m + rows - 1) / rows * ch.splits <= 0x7fffffff && (p.n + 127) / 128 <= 65535;
}

bool ParseStreamFamily(const char* prefix, const char* name, SpmmChoice* ch) {
  StreamChoice s;
  if (!ParseStreamVariant(prefix, name, &s)) return false;
  ch->Set(s);
  return true;
}

int StreamNT8(int n) { return n <= 8 ? 1 : n <= 16 ? 2 : n <= 32 ? 4 : n <= 64 ? 8 : 16; }

StreamChoice SelectStream(int64_t strips, int64_t kstages, int n, int sm_count, bool bitmap) {
  StreamChoice ch;
  // NOTE: at small N (<= 16 columns) the kernels stream A and are bound by the bytes in
  // flight per SM: the most warps, one strip each (4 warps a block), and enough cluster
  // splits for four blocks per SM. Wider, B's slice is re-read from L2 by every block and
  // from shared memory by every warp: two strips per warp (each B fragment serves both) up
  // to 64 columns; beyond, 8 warps a block, and one strip per warp for the bitmap kernel,
  // whose decode then needs the registers. Two blocks per SM suffice there. Each split keeps
  // at least 4 units of 64 rows of K to pipeline. (The variant sweep on the H200 of
  // 2026-11-30: docs/benchmarks-history.md, v5.)
  ch.warps = n > 64 ? 8 : 4;
  ch.strips = n > 16 && !(bitmap && n > 64) ? 2 : 1;
  const int per_sm = n > 16 ? 2 : 4;
  const int64_t rows = ch.warps * ch.strips;
  const int64_t row_blocks = (strips + rows - 1) / rows;
  const int64_t col_blocks = (n + 8 * StreamNT8(n) - 1) / (8 * StreamNT8(n));
  // NOTE: never more blocks than fit on the GPU at once (a second wave doubles the time: on
  // the H200 the 2:4 kernel at N = 16 took 21 us with 8 stages and 512 blocks where 3 fit per
  // SM, against 13 us at N = 8 with 4 per SM). The 2:4 kernel's shared memory is known here;
  // the bitmap kernel's depends on the matrix, so it keeps the target alone.
  int64_t resident = per_sm;
  if (!bitmap) {
    const int smem = detail::Sp24SmemBytes(ch.warps, ch.strips, StreamNT8(n), detail::StreamStagesFor(StreamNT8(n))) + 1024;
    const int64_t by_smem = (228 * 1024) / smem;
    const int64_t by_warps = 64 / ch.warps;
    resident = std::max<int64_t>(1, std::min<int64_t>(per_sm, std::min(by_smem, by_warps)));
  }
  const bool clusters = ComputeMajor() >= 9;
  while (clusters && ch.splits < 8 && row_blocks * col_blocks * ch.splits * 2 <= resident * sm_count &&
         kstages / (ch.splits * 2) >= 4)
    ch.splits *= 2;
  return ch;
}

// ---------------------------------------------------------------------------------------
// BitmapMatrix

int BitmapStageUnits(const BitmapTiles& t) {
  int best = 1;
  for (int s = 0; s < t.strips; ++s)
    for (int kt = 0; kt < t.ktiles; ++kt) {
      const size_t a = static_cast<size_t>(s) * t.ktiles + kt;
      const size_t b = static_cast<size_t>(s) * t.ktiles + std::min(kt + 4, t.ktiles);
      best = std::max(best, static_cast<int>(t.offsets[b] - t.offsets[a]));
    }
  return best;
}

cudaError_t BitmapMatrix::Upload(const BitmapTiles& t, DType dtype, cudaStream_t stream) {
  offsets_.Reset(), data_.Reset();
  if (dtype == DType::kF32) return cudaErrorInvalidValue;
  m_ = t.m, k_ = t.k, strips_ = t.strips, ktiles_ = t.ktiles, dtype_ = dtype;
  stage_units_ = BitmapStageUnits(t);
  return UploadParts({{&offsets_, t.offsets.data(), 4 * t.offsets.size()}, {&data_, t.data.data(), 4 * t.data.size()}},
                     stream);
}

cudaError_t BitmapMatrix::CopyFrom(const BitmapMatrix& o, cudaStream_t stream) {
  m_ = o.m_, k_ = o.k_, strips_ = o.strips_, ktiles_ = o.ktiles_, stage_units_ = o.stage_units_, dtype_ = o.dtype_;
  return CopyParts({{&offsets_, &o.offsets_}, {&data_, &o.data_}}, stream);
}

StreamChoice SelectBitmap(const BitmapMatrix& a, int n, int sm_count) {
  return SelectStream(a.strips(), KStages(a.k()), n, sm_count, true);
}

std::vector<std::string> BitmapVariants(const BitmapMatrix& a, int n) {
  return Variants("bm", a.strips(), KStages(a.k()), n);
}

// ---------------------------------------------------------------------------------------
// Sp24Matrix

cudaError_t Sp24Matrix::Upload(const Sp24Tiles& t, DType dtype, cudaStream_t stream) {
  values_.Reset(), meta_.Reset();
  if (dtype == DType::kF32) return cudaErrorInvalidValue;
  m_ = t.m, k_ = t.k, strips_ = t.strips, ksteps_ = t.ksteps, dtype_ = dtype;
  return UploadParts({{&values_, t.values.data(), 2 * t.values.size()}, {&meta_, t.meta.data(), 4 * t.meta.size()}},
                     stream);
}

cudaError_t Sp24Matrix::CopyFrom(const Sp24Matrix& o, cudaStream_t stream) {
  m_ = o.m_, k_ = o.k_, strips_ = o.strips_, ksteps_ = o.ksteps_, dtype_ = o.dtype_;
  return CopyParts({{&values_, &o.values_}, {&meta_, &o.meta_}}, stream);
}

StreamChoice SelectSp24(const Sp24Matrix& a, int n, int sm_count) {
  return SelectStream(a.strips(), KStages(a.k()), n, sm_count, false);
}

std::vector<std::string> Sp24Variants(const Sp24Matrix& a, int n) {
  return Variants("s24", a.strips(), KStages(a.k()), n);
}

}  // namespace sparse
