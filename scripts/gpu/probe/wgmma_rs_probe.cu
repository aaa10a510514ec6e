// The register-A wgmma's rate (issue 25, v31's next step 1: why a 128-column stage of the
// unstructured GEMM kernels takes about 920 cycles for 512 of multiply). One block per SM, one
// or two consumer warpgroups, each running `stages` stages of four m64nNk16 wgmma (the engine's
// K stage of 64) on a fixed B in shared memory, pipelined as the engine's loop is (issue stage
// i, wait for stage i - 1's group). Nothing is loaded from global memory: what is left is the
// tensor pipe, the issue, and (mode dec) a decode-like refill of the A registers from shared
// memory between the issue and the wait. Modes:
//   ss   A from shared memory (the dense kernels' wgmma)
//   rs   A from registers, the same four registers every stage
//   dec  A from registers, refilled each stage into the other of two buffers by kLoads
//        ld.shared and a few dependent integer operations per register (the decode's shape)
//   junk A from registers, the same four every stage; the refill's work done into registers
//        no wgmma reads (is the cost the refill, or writing registers a wgmma reads?)
//   sdec A from shared memory; the refill's work stored into the A tile of shared memory
//        (the layout is not wgmma's: timing only), a proxy fence, then the next stage's issue
// Prints cycles per stage (median over the blocks, clock64) and the tensor pipe's share at 2048
// multiply-adds a cycle an SM. Built and run on the GPU machine (one arch, sm_90a):
//   nvcc -std=c++17 -O3 -I. -Inative -DSPARSE_WITH_CUDA=1 -gencode arch=compute_90a,code=sm_90a \
//     --expt-relaxed-constexpr scripts/gpu/probe/wgmma_rs_probe.cu -o /tmp/wrs && /tmp/wrs
// (run.sh: `sh 'nvcc ... && /tmp/wrs'`).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda/gemm/gemm_engine.cuh"

namespace gm = sparse::cuda::gemm;
namespace wg = sparse::cuda::wg;
using sparse::DType;

namespace {

constexpr int kStages = 256;

template <int kN, int kMode, int kGroups>
__global__ void __launch_bounds__(384, 1) Probe(unsigned long long* cycles) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int cw = threadIdx.x / 128;
  // B: 64 K rows x kN columns in the 128-byte swizzle (whatever its contents), A for ss after it.
  constexpr int kBBytes = 64 * kN * 2;
  for (int i = threadIdx.x; i < (kBBytes + 128 * 64 * 2) / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(smem)[i] = 0x3c003c00u ^ (i * 2654435761u & 0x00ff00ffu);
  __syncthreads();
  if (cw >= kGroups) return;
  const uint32_t b0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t a0 = b0 + kBBytes + cw * 64 * 128;
  float d[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) d[i] = 0.f;
  uint32_t af[2][4][4];
#pragma unroll
  for (int b = 0; b < 2; ++b)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) af[b][j][q] = 0x3c003c00u + threadIdx.x + j + q;
  const uint32_t probe = b0 + 4 * (threadIdx.x & 127);
  uint32_t junk = 0;
  const unsigned long long t0 = clock64();
  for (int s = 0; s < kStages; ++s) {
    wg::Pin<kN / 2>(d);
    wg::Fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint64_t bd = wg::Desc(gm::kBDesc, b0 + 2048 * j);
      if constexpr (kMode == 0 || kMode == 4)
        gm::Wgmma<DType::kF16, kN>::Run(d, wg::Desc(gm::kADesc, a0 + 32 * j), bd, 1);
      else if ((s & 1) == 0)
        gm::WgmmaRs<DType::kF16, kN>::Run(d, af[0][j], bd);
      else
        gm::WgmmaRs<DType::kF16, kN>::Run(d, af[kMode == 2 ? 1 : 0][j], bd);
    }
    wg::Commit();
    wg::Wait<1>();
    wg::Pin<kN / 2>(d);
    if constexpr (kMode >= 2) {
      // Refill the buffer the next stage reads (stage s - 1's group, its last reader, is done):
      // per register a shared-memory load and a short dependent chain, as DecodeTile's.
      // (each branch names its buffer: a buffer chosen at run time would go to local memory)
      const auto refill = [&](uint32_t(&nb)[4][4]) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          uint32_t rec;
          asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(rec) : "r"(probe + 512 * j + 64 * (s & 7)));
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const uint32_t bits = (rec >> (4 * q)) & 0xfu;
            uint32_t v = 0;
            if (bits & 1u)
              asm volatile("ld.shared.u32 %0, [%1];\n"
                           : "=r"(v)
                           : "r"(probe + 4 * (__popc(rec & ((1u << (4 * q)) - 1u)) & 31)));
            nb[j][q] = v ^ bits;
          }
        }
      };
      if constexpr (kMode == 2) {
        if (s & 1)
          refill(af[0]);
        else
          refill(af[1]);
      } else {
        uint32_t nb[4][4];
        refill(nb);
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            if constexpr (kMode == 3)
              junk ^= nb[j][q];
            else  // (sdec: this warpgroup's A rows, 16 bytes a lane apart; a stage's A is 16 KB a warpgroup)
              asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(a0 + (((s & 1) * 4 + j) * 4 + q) * 512 % 8192 +
                                                              4 * (threadIdx.x & 127)),
                           "r"(nb[j][q])
                           : "memory");
          }
        if constexpr (kMode == 4) gm::FenceProxyAsync();
      }
    }
  }
  wg::Wait<0>();
  wg::Pin<kN / 2>(d);
  const unsigned long long t1 = clock64();
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) sum += d[i];
  if ((threadIdx.x & 127) == 0) cycles[2 * blockIdx.x + cw] = (t1 - t0) + (sum == 12345.f || junk == 7u ? 1 : 0);
}

template <int kN, int kMode, int kGroups>
void Run(int sms, const char* mode) {
  const int smem = 64 * kN * 2 + 128 * 64 * 2 + 1024;
  auto kernel = Probe<kN, kMode, kGroups>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  unsigned long long* dev = nullptr;
  cudaMalloc(&dev, sizeof(unsigned long long) * 2 * sms);
  for (int rep = 0; rep < 2; ++rep) kernel<<<sms, 384, smem>>>(dev);
  const cudaError_t e = cudaDeviceSynchronize();
  std::vector<unsigned long long> h(2 * sms);
  cudaMemcpy(h.data(), dev, h.size() * sizeof h[0], cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (e != cudaSuccess) {
    std::printf("%-4s N %3d groups %d: %s\n", mode, kN, kGroups, cudaGetErrorString(e));
    return;
  }
  std::vector<double> per;
  for (int b = 0; b < sms; ++b)
    for (int g = 0; g < kGroups; ++g) per.push_back(static_cast<double>(h[2 * b + g]) / kStages);
  std::sort(per.begin(), per.end());
  const double med = per[per.size() / 2];
  // Multiply-adds a stage an SM: kGroups warpgroups x 4 x 64 x kN x 16.
  const double ideal = kGroups * 4.0 * 64 * kN * 16 / 2048;
  std::printf("%-4s N %3d groups %d: %7.1f cycles a stage (ideal %5.0f: tensor pipe %5.1f %%)\n", mode, kN, kGroups, med,
              ideal, 100 * ideal / med);
}

}  // namespace

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  Run<128, 0, 2>(sms, "ss");
  Run<128, 1, 2>(sms, "rs");
  Run<128, 2, 2>(sms, "dec");
  Run<128, 1, 1>(sms, "rs");
  Run<128, 2, 1>(sms, "dec");
  Run<128, 3, 2>(sms, "junk");
  Run<128, 4, 2>(sms, "sdec");
  Run<128, 3, 1>(sms, "junk");
  Run<128, 4, 1>(sms, "sdec");
  Run<256, 0, 2>(sms, "ss");
  Run<256, 4, 2>(sms, "sdec");
  Run<256, 1, 2>(sms, "rs");
  Run<256, 2, 2>(sms, "dec");
  Run<256, 1, 1>(sms, "rs");
  return 0;
}
