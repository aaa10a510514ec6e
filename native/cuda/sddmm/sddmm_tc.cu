// Tensor-core SDDMM host side: the chunk starts on the device, the configuration pick and
// the launcher (sddmm_tc_kernel.cuh).
#include "cuda/sddmm/sddmm_tc.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/tc_tiles.h"
#include "cuda/common/device_info.h"
#include "cuda/sddmm/sddmm_tc_kernel.cuh"

namespace sparse {

cudaError_t SddmmTcMask::Build(const SddmmProblem& p, cudaStream_t stream) {
  starts_.Reset();
  if (p.m < 0 || p.n < 0 || p.nnz < 0) return cudaErrorInvalidValue;
  std::vector<int> offsets(static_cast<size_t>(p.m) + 1), cols(p.nnz);
  cudaError_t e = cudaMemcpyAsync(offsets.data(), p.row_offsets, 4 * offsets.size(), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess && p.nnz > 0)
    e = cudaMemcpyAsync(cols.data(), p.column_indices, 4 * (size_t)p.nnz, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return e;
  if (offsets[0] != 0 || offsets[p.m] != p.nnz) return cudaErrorInvalidValue;
  std::vector<int> starts;
  if (!BuildSddmmChunkStarts(p.m, p.n, offsets.data(), cols.data(), &starts).empty()) return cudaErrorInvalidValue;
  m_ = p.m, n_ = p.n, chunks_ = (p.n + kTcSddmmChunk - 1) / kTcSddmmChunk;
  e = starts_.Upload(starts.data(), 4 * starts.size(), stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);  // `starts` goes away after the return
  if (e != cudaSuccess) starts_.Reset();
  return e;
}

cudaError_t SddmmTcMask::CopyFrom(const SddmmTcMask& o, cudaStream_t stream) {
  m_ = o.m_, n_ = o.n_, chunks_ = o.chunks_;
  cudaError_t e = starts_.Allocate(o.starts_.bytes());
  if (e == cudaSuccess && o.starts_.bytes())
    e = cudaMemcpyAsync(starts_.get(), o.starts_.get(), o.starts_.bytes(), cudaMemcpyDeviceToDevice, stream);
  if (e != cudaSuccess) starts_.Reset();
  return e;
}

namespace {

struct Pick {
  int warps, ks, chunks_per_block;
};

// Warps per block: 8 (a 128-row block reads R half as often) unless that leaves the grid
// short of two blocks per SM. (K = 128 with 8 warps fits one block per SM in shared memory;
// 4 warps fit two, but measured 1.35x slower on the attention shapes: R is read twice as
// often.) Chunks per block: grow while the grid keeps four blocks per SM
// (fewer blocks re-read L less often and pipeline longer).
Pick PickConfig(const SddmmProblem& p) {
  const int sms = SmCount();
  const int chunks = (p.n + kTcSddmmChunk - 1) / kTcSddmmChunk;
  Pick pk;
  pk.ks = p.k <= 32 ? 2 : p.k <= 64 ? 4 : 8;
  const int64_t rb8 = (p.m + 127) / 128;
  pk.warps = rb8 * chunks >= 2LL * sms ? 8 : 4;
  const int64_t rows = (p.m + 16 * pk.warps - 1) / (16 * pk.warps);
  pk.chunks_per_block = 1;
  while (pk.chunks_per_block < chunks && rows * ((chunks + 2 * pk.chunks_per_block - 1) / (2 * pk.chunks_per_block)) >= 4LL * sms)
    pk.chunks_per_block *= 2;
  return pk;
}

template <DType kType, int kWB, int kKS>
cudaError_t Launch(const SddmmTcMask& mask, const SddmmProblem& p, const Pick& pk, cudaStream_t stream) {
  using L = cuda::SddmmTcLayout<kWB, kKS>;
  auto kernel = cuda::SddmmTcKernel<kType, kWB, kKS>;
  static thread_local bool attr_done = false;
  if (!attr_done) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes);
    if (e != cudaSuccess) return e;
    attr_done = true;
  }
  cuda::SddmmTcArgs a;
  a.lhs = p.lhs, a.rhs = p.rhs, a.column_indices = p.column_indices, a.starts = mask.starts(), a.out = p.out;
  a.m = p.m, a.k = p.k, a.n = p.n, a.chunks = mask.chunks(), a.chunks_per_block = pk.chunks_per_block;
  const dim3 grid((p.m + 16 * kWB - 1) / (16 * kWB), (a.chunks + pk.chunks_per_block - 1) / pk.chunks_per_block);
  kernel<<<grid, 32 * kWB, L::kSmemBytes, stream>>>(a);
  return cudaGetLastError();
}

template <DType kType, int kWB>
cudaError_t LaunchKS(const SddmmTcMask& mask, const SddmmProblem& p, const Pick& pk, cudaStream_t s) {
  if (pk.ks == 2) return Launch<kType, kWB, 2>(mask, p, pk, s);
  if (pk.ks == 4) return Launch<kType, kWB, 4>(mask, p, pk, s);
  return Launch<kType, kWB, 8>(mask, p, pk, s);
}

template <DType kType>
cudaError_t LaunchType(const SddmmTcMask& mask, const SddmmProblem& p, const Pick& pk, cudaStream_t s) {
  return pk.warps == 8 ? LaunchKS<kType, 8>(mask, p, pk, s) : LaunchKS<kType, 4>(mask, p, pk, s);
}

}  // namespace

bool SddmmTcCanRun(const SddmmProblem& p) {
  if (p.dtype == DType::kF32 || p.k <= 0 || p.k > 128 || p.k % 8 != 0) return false;
  if (!Aligned(p.lhs, 16) || !Aligned(p.rhs, 16)) return false;
  if ((p.m + 63) / 64 > 0x7fffffff) return false;
  return ComputeMajor() >= 8;
}

cudaError_t LaunchSddmmTc(const SddmmTcMask& mask, const SddmmProblem& p, cudaStream_t stream) {
  if (mask.empty() || mask.m() != p.m || mask.n() != p.n || !SddmmTcCanRun(p)) return cudaErrorInvalidValue;
  if (p.m == 0 || p.nnz == 0) return cudaSuccess;
  const Pick pk = PickConfig(p);
  if ((mask.chunks() + pk.chunks_per_block - 1) / pk.chunks_per_block > 65535) return cudaErrorInvalidValue;
  if (p.dtype == DType::kF16) return LaunchType<DType::kF16>(mask, p, pk, stream);
  return LaunchType<DType::kBF16>(mask, p, pk, stream);
}

const char* SddmmTcName(const SddmmProblem& p) {
  thread_local char name[48];
  const Pick pk = PickConfig(p);
  std::snprintf(name, sizeof(name), "tc_w%d_k%d_c%d", pk.warps, pk.ks, pk.chunks_per_block);
  return name;
}

}  // namespace sparse
