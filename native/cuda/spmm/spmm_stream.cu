// Host side of the streaming tensor-core SpMMs: the device matrices, configuration names and
// the built-in picks (spmm_stream.h). The launchers are in spmm_bitmap.cu and spmm_24.cu.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cuda/common/device_info.h"
#include "cuda/spmm/spmm_stream.h"

namespace sparse {
namespace {

cudaError_t CopyBuffer(DeviceBuffer* dst, const DeviceBuffer& src, cudaStream_t stream) {
  cudaError_t e = dst->Allocate(src.bytes());
  if (e == cudaSuccess && src.bytes())
    e = cudaMemcpyAsync(dst->get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, stream);
  return e;
}

// k-units of 64 rows.
int64_t KStages(int k) { return (static_cast<int64_t>(k) + 63) / 64; }

std::vector<std::string> Variants(const char* prefix, int64_t strips, int64_t kstages, int n) {
  std::vector<std::string> out;
  for (int w : {4, 8})
    for (int s : {1, 2, 4, 8})
      for (int p : {4, 6}) {
        StreamChoice ch;
        ch.warps = w, ch.splits = s, ch.stages = p;
        if (!StreamChoiceValid(ch) || s > kstages) continue;
        const int64_t row_blocks = (strips + w - 1) / w;
        if (row_blocks * s > 0x7fffffff || (n + 8 * StreamNT8(n) - 1) / (8 * StreamNT8(n)) > 65535) continue;
        out.push_back(StreamVariantName(prefix, ch));
      }
  return out;
}

}  // namespace

std::string StreamVariantName(const char* prefix, const StreamChoice& ch) {
  char name[48];
  std::snprintf(name, sizeof(name), "%s_w%d_s%d_p%d", prefix, ch.warps, ch.splits, ch.stages);
  return name;
}

bool ParseStreamVariant(const char* prefix, const char* name, StreamChoice* ch) {
  const size_t len = std::strlen(prefix);
  if (std::strncmp(name, prefix, len) != 0) return false;
  int w = 0, s = 0, p = 0;
  char tail = 0;
  if (std::sscanf(name + len, "_w%d_s%d_p%d%c", &w, &s, &p, &tail) != 3) return false;
  ch->warps = w, ch->splits = s, ch->stages = p;
  return true;
}

bool StreamChoiceValid(const StreamChoice& ch) {
  if (ch.warps != 4 && ch.warps != 8) return false;
  if (ch.splits != 1 && ch.splits != 2 && ch.splits != 4 && ch.splits != 8) return false;
  if (ch.stages != 4 && ch.stages != 6) return false;
  const int major = ComputeMajor();
  return major >= 8 && (ch.splits == 1 || major >= 9);
}

int StreamNT8(int n) { return n <= 8 ? 1 : n <= 16 ? 2 : n <= 32 ? 4 : n <= 64 ? 8 : 16; }

StreamChoice SelectStream(int64_t strips, int64_t kstages, int n, int sm_count) {
  StreamChoice ch;
  ch.warps = 4;
  ch.stages = 4;
  const int64_t row_blocks = (strips + ch.warps - 1) / ch.warps;
  const int64_t col_blocks = (n + 8 * StreamNT8(n) - 1) / (8 * StreamNT8(n));
  // NOTE: the kernels are memory-bound at small N: bytes in flight per SM decide the rate,
  // and each block keeps 3 stages of its warps' tiles in flight. Four blocks per SM (16
  // warps) hold enough; split K over a cluster until the grid has them, while each split
  // keeps 4 stages to pipeline.
  const bool clusters = ComputeMajor() >= 9;
  while (clusters && ch.splits < 8 && row_blocks * col_blocks * ch.splits < 4LL * sm_count &&
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
  cudaError_t e = offsets_.Upload(t.offsets.data(), 4 * t.offsets.size(), stream);
  if (e == cudaSuccess) e = data_.Upload(t.data.data(), 4 * t.data.size(), stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);  // `t` may go away after the return
  if (e != cudaSuccess) offsets_.Reset(), data_.Reset();
  return e;
}

cudaError_t BitmapMatrix::CopyFrom(const BitmapMatrix& o, cudaStream_t stream) {
  m_ = o.m_, k_ = o.k_, strips_ = o.strips_, ktiles_ = o.ktiles_, stage_units_ = o.stage_units_, dtype_ = o.dtype_;
  cudaError_t e = CopyBuffer(&offsets_, o.offsets_, stream);
  if (e == cudaSuccess) e = CopyBuffer(&data_, o.data_, stream);
  if (e != cudaSuccess) offsets_.Reset(), data_.Reset();
  return e;
}

StreamChoice SelectBitmap(const BitmapMatrix& a, int n, int sm_count) {
  return SelectStream(a.strips(), KStages(a.k()), n, sm_count);
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
  cudaError_t e = values_.Upload(t.values.data(), 2 * t.values.size(), stream);
  if (e == cudaSuccess) e = meta_.Upload(t.meta.data(), 4 * t.meta.size(), stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) values_.Reset(), meta_.Reset();
  return e;
}

cudaError_t Sp24Matrix::CopyFrom(const Sp24Matrix& o, cudaStream_t stream) {
  m_ = o.m_, k_ = o.k_, strips_ = o.strips_, ksteps_ = o.ksteps_, dtype_ = o.dtype_;
  cudaError_t e = CopyBuffer(&values_, o.values_, stream);
  if (e == cudaSuccess) e = CopyBuffer(&meta_, o.meta_, stream);
  if (e != cudaSuccess) values_.Reset(), meta_.Reset();
  return e;
}

StreamChoice SelectSp24(const Sp24Matrix& a, int n, int sm_count) {
  return SelectStream(a.strips(), KStages(a.k()), n, sm_count);
}

std::vector<std::string> Sp24Variants(const Sp24Matrix& a, int n) {
  return Variants("s24", a.strips(), KStages(a.k()), n);
}

}  // namespace sparse
