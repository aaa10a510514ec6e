#ifndef SPARSE_CUDA_SDDMM_SDDMM_TC_KERNEL_CUH_
#define SPARSE_CUDA_SDDMM_SDDMM_TC_KERNEL_CUH_
// The tensor-core SDDMM for f16/bf16: out[i] = dot(L[row(i)], R[col(i)]) for the nonzeros of
// a CSR mask, for short K (attention heads: K <= 128). Why: with random masks every 16 x 8
// tile of the output holds a nonzero even at 90% sparsity, so a tile-skipping kernel does
// the dense FLOPs anyway; on tensor cores those FLOPs are cheap (mma.sync reaches several
// hundred TFLOP/s, 10x a dot product per nonzero on CUDA cores), and what a dense GEMM pays
// on top -- writing all M x N outputs -- is exactly what the mask saves. So: compute the
// dense product a chunk at a time in registers, round it once into shared memory, and copy
// out only the masked entries (their CSR range per chunk comes from the chunk starts of
// common/tc_tiles.h). Each output is its own dot product: an Inf/NaN elsewhere in L or R
// cannot reach it (sparse semantics hold without a slow path).
//
// Structure: a block is kWB warps; warp w owns 16 rows (a strip) with its L fragments for
// all of K in registers (loaded once). The block walks `chunks_per_block` chunks of 256 mask
// columns, 64 at a time: R's 64 x K slice is staged by cp.async (three slices in flight,
// shared by the warps), each warp runs 8 x (K / 16) mma.m16n8k16 into fp32 accumulators and
// stores the rounded 16 x 64 result in its chunk image; after 4 slices the warp copies its
// rows' masked entries of the chunk to `out` (coalesced stores). The column indices of a
// chunk are loaded into registers when the chunk starts, four slices before they are used,
// and each row's CSR range one chunk ahead: no global load latency on the critical path
// (the first version waited on them at every chunk: 3-6x slower, BENCHMARKS.md v4).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/dtype.h"
#include "common/tc_tiles.h"
#include "cuda/spmm/spmm_tc_kernel.cuh"  // the cp.async / ldmatrix / mma wrappers

namespace sparse {
namespace cuda {

struct SddmmTcArgs {
  const void* lhs;       // m x k, 16-byte aligned, k % 8 == 0
  const void* rhs;       // n x k, 16-byte aligned
  const int* column_indices;
  const int* starts;     // m x (chunks + 1)
  void* out;             // nnz
  int m, k, n, chunks, chunks_per_block;
};

constexpr int kSddmmSlice = 64;  // mask columns per R slice
constexpr int kSddmmImageStride = kTcSddmmChunk + 8;  // halves per row of a warp's chunk image

template <int kWB, int kKS>
struct SddmmTcLayout {
  static constexpr int kRChunks = 2 * kKS + 1;  // 16-byte chunks per staged R row (odd: conflict-free)
  static constexpr int kSliceBytes = kSddmmSlice * kRChunks * 16;
  static constexpr int kImageBytes = 16 * kSddmmImageStride * 2;
  static constexpr int kStages = 3;  // R slices in flight: two loading while one is used
  static constexpr int kSmemBytes = kStages * kSliceBytes + kWB * kImageBytes;
  static_assert(kWB == 4 || kWB == 8, "4 or 8 warps");
  static_assert(kKS == 2 || kKS == 4 || kKS == 8, "K up to 32, 64 or 128");
};

// Grid: x = ceil(m / (16 kWB)), y = ceil(chunks / chunks_per_block). Block: 32 kWB threads.
template <DType kType, int kWB, int kKS>
__global__ void __launch_bounds__(32 * kWB, 8 / kWB * 2) SddmmTcKernel(SddmmTcArgs a) {
  using L = SddmmTcLayout<kWB, kKS>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int row0 = (blockIdx.x * kWB + warp) * 16;
  const int chunk0 = blockIdx.y * a.chunks_per_block;
  const int chunk1 = min(a.chunks, chunk0 + a.chunks_per_block);
  const int slices = (chunk1 - chunk0) * (kTcSddmmChunk / kSddmmSlice);
  const unsigned short* lhs = static_cast<const unsigned short*>(a.lhs);
  const unsigned short* rhs = static_cast<const unsigned short*>(a.rhs);
  unsigned short* image = reinterpret_cast<unsigned short*>(smem + L::kStages * L::kSliceBytes + warp * L::kImageBytes);
  constexpr int kSlicesPerChunk = kTcSddmmChunk / kSddmmSlice;

  // R's slice s: mask columns (chunk0 * 256 + s * 64) .. + 63, all of K (zero-filled past n, k).
  auto load_slice = [&](int s) {
    unsigned char* buf = smem + (s % L::kStages) * L::kSliceBytes;
    const int col0 = chunk0 * kTcSddmmChunk + s * kSddmmSlice;
    for (int q = threadIdx.x; q < kSddmmSlice * 2 * kKS; q += 32 * kWB) {
      const int r = q / (2 * kKS), ch = q % (2 * kKS);
      const int col = col0 + r, kk = ch * 8;
      const bool ok = col < a.n && kk < a.k;
      const void* src = ok ? static_cast<const void*>(rhs + static_cast<int64_t>(col) * a.k + kk) : a.rhs;
      CpAsync16(SmemAddr(buf + (r * L::kRChunks + ch) * 16), src, ok ? 16 : 0);
    }
  };
  if (slices > 0) load_slice(0);
  CpAsyncCommit();
  if (slices > 1) load_slice(1);
  CpAsyncCommit();

  // The CSR range of each of the warp's rows in the current chunk (lanes 0..15), and in the
  // next one (loaded a chunk ahead).
  auto seg_of = [&](int chunk, int& beg, int& end) {
    beg = end = 0;
    if (lane < 16 && row0 + lane < a.m && chunk < chunk1) {
      const int* st = a.starts + static_cast<int64_t>(row0 + lane) * (a.chunks + 1) + chunk;
      beg = __ldg(st);
      end = __ldg(st + 1);
    }
  };
  int seg_beg, seg_end, next_beg, next_end;
  seg_of(chunk0, seg_beg, seg_end);

  // This warp's L fragments (row-major A of the mma), all of K, zero past m and k.
  uint32_t af[kKS][4];
#pragma unroll
  for (int ks = 0; ks < kKS; ++ks) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int r = row0 + g + (q & 1) * 8;
      const int kk = ks * 16 + 2 * t + (q >> 1) * 8;
      af[ks][q] = (r < a.m && kk < a.k)
                      ? __ldg(reinterpret_cast<const unsigned int*>(lhs + static_cast<int64_t>(r) * a.k + kk))
                      : 0u;
    }
  }

  unsigned short* out16 = static_cast<unsigned short*>(a.out);
  // Column indices of the first 64 entries of each row in the chunk (2 per lane per row),
  // loaded when the chunk starts and used when it ends, four slices later.
  int col[32];
  for (int s = 0; s < slices; ++s) {
    CpAsyncWait<1>();
    __syncthreads();  // slice s is in; everyone is done with slice s - 1's buffer
    if (s + 2 < slices) load_slice(s + 2);
    CpAsyncCommit();
    const int chunk = chunk0 + s / kSlicesPerChunk;
    if (s % kSlicesPerChunk == 0) {
#pragma unroll
      for (int q = 0; q < 32; ++q) {
        const int b = __shfl_sync(0xffffffffu, seg_beg, q >> 1), e = __shfl_sync(0xffffffffu, seg_end, q >> 1);
        const int idx = b + lane + (q & 1) * 32;
        col[q] = idx < e ? __ldg(a.column_indices + idx) : -1;
      }
      seg_of(chunk + 1, next_beg, next_end);
    }
    const uint32_t buf = SmemAddr(smem + (s % L::kStages) * L::kSliceBytes);
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < kKS; ++ks) {
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        uint32_t bf[4];
        const int r = 16 * p + (lane >> 4) * 8 + (lane & 7);
        LdMatrixX4(buf + (r * L::kRChunks + 2 * ks + ((lane >> 3) & 1)) * 16, bf);
        Mma16816<kType>(acc[2 * p], af[ks], bf[0], bf[1]);
        Mma16816<kType>(acc[2 * p + 1], af[ks], bf[2], bf[3]);
      }
    }
    // Round once into the chunk image (rows g and g + 8, columns 2t, 2t + 1 of each 8).
    const int cbase = (s % kSlicesPerChunk) * kSddmmSlice;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int c = cbase + j * 8 + 2 * t;
      *reinterpret_cast<uint32_t*>(image + g * kSddmmImageStride + c) = PackOut<kType>(acc[j][0], acc[j][1]);
      *reinterpret_cast<uint32_t*>(image + (g + 8) * kSddmmImageStride + c) = PackOut<kType>(acc[j][2], acc[j][3]);
    }
    if ((s + 1) % kSlicesPerChunk != 0) continue;
    // The chunk is complete: copy out the masked entries of the warp's 16 rows.
    __syncwarp();
    const int col_base = chunk * kTcSddmmChunk;
#pragma unroll
    for (int q = 0; q < 32; ++q) {
      const int b = __shfl_sync(0xffffffffu, seg_beg, q >> 1);
      if (col[q] >= 0) out16[b + lane + (q & 1) * 32] = image[(q >> 1) * kSddmmImageStride + (col[q] - col_base)];
    }
    // Rows with more than 64 entries in the chunk (masks denser than 25%): the rest.
    for (int r = 0; r < 16; ++r) {
      const int b = __shfl_sync(0xffffffffu, seg_beg, r), e = __shfl_sync(0xffffffffu, seg_end, r);
      for (int i = b + 64 + lane; i < e; i += 32) {
        out16[i] = image[r * kSddmmImageStride + (__ldg(a.column_indices + i) - col_base)];
      }
    }
    seg_beg = next_beg;
    seg_end = next_end;
    __syncwarp();  // the image is rewritten by the next chunk
  }
  CpAsyncWait<0>();
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_SDDMM_SDDMM_TC_KERNEL_CUH_
