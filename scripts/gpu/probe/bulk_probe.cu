// Workbench: how fast one warp can issue bulk copies (cp.async.bulk, global -> shared, completion
// through an mbarrier's transaction count), the streaming engine's producer step (issue 23;
// v26 found its producer issuing one stage every 0.65-0.7 us on an almost empty unstructured
// stream, docs/stream-engine.md next step 6). No addon, no cuBLAS. Build and run on the GPU
// machine:
//   nvcc -std=c++17 -O3 -I. -Inative -gencode arch=compute_90a,code=sm_90a scripts/gpu/probe/bulk_probe.cu -o /tmp/bp
//   /tmp/bp [SIZES] [COPIES] [BLOCKS_PER_SM]     e.g. /tmp/bp 256,2048,8192,32768 8 1,2
// Each block's lane 0 (of each of PRODUCERS warps, default 1, taking copies in turn) issues
// COPIES copies of SIZE bytes, back to back, into slots of its ring (one mbarrier each),
// stamping the SM clock into shared memory before and after each issue, then waits for each in
// turn and stamps its arrival. Every block reads its own addresses of a 2 GB buffer, fresh per
// launch (cold L2). Prints, per case, the medians over blocks of: the issue of copy k (us after
// the first issue began) and its arrival, and the launch's event time. Variants: plain, with
// an L2 evict-first hint (as the engine's producer), and with BUSY warps of FMAs beside the
// producer (16 by default: the consumers' issue pressure).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scripts/gpu/probe/probe_util.h"  // CK

constexpr int kMaxCopies = 16;

__device__ __forceinline__ uint32_t Smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

struct Params {
  const unsigned char* src;
  long long src_bytes;
  long long base;  // this launch's first byte of src
  int size, copies, hint, busy_iters;
  unsigned long long* stamps;  // per block: copies x {issue start, issue end, arrival}
  float* sink;
  int producers;
};

__global__ void BulkKernel(Params p) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long bars[kMaxCopies];
  __shared__ unsigned long long sst[3 * kMaxCopies];  // the stamps, written out at the end
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) {
    for (int k = 0; k < p.copies; ++k)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(Smem(&bars[k])));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp >= p.producers) {
    // Busy warps: dependent FMAs, the consumers' issue pressure.
    float x = threadIdx.x, y = 1.0001f;
    for (int i = 0; i < p.busy_iters; ++i) x = fmaf(x, y, 0.5f), y = fmaf(y, x, -0.25f);
    if (x == 12345.f) p.sink[threadIdx.x] = y;
    return;
  }
  if (lane != 0) return;
  // Producer warp w (lane 0) issues copies w, w + producers, ... (PRODUCERS warps in all).
  uint64_t policy = 0;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  unsigned long long* st = sst;  // shared memory: no global store between two copies
  for (int k = warp; k < p.copies; k += p.producers) {
    const long long off = (p.base + (static_cast<long long>(blockIdx.x) * p.copies + k) * p.size) % p.src_bytes;
    const uint32_t dst = Smem(ring + static_cast<size_t>(k) * p.size), bar = Smem(&bars[k]);
    st[3 * k] = clock64();
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(p.size) : "memory");
    if (p.hint)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
              dst),
          "l"(p.src + off), "r"(p.size), "r"(bar), "l"(policy)
          : "memory");
    else
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                   "l"(p.src + off), "r"(p.size), "r"(bar)
                   : "memory");
    st[3 * k + 1] = clock64();
  }
  for (int k = warp; k < p.copies; k += p.producers) {
    const uint32_t bar = Smem(&bars[k]);
    uint32_t done = 0;
    while (!done)
      asm volatile(
          "{\n .reg .pred q;\n mbarrier.try_wait.parity.shared::cta.b64 q, [%1], 0;\n selp.u32 %0, 1, 0, q;\n}\n"
          : "=r"(done)
          : "r"(bar)
          : "memory");
    st[3 * k + 2] = clock64();
  }
  unsigned long long* out = p.stamps + static_cast<size_t>(blockIdx.x) * p.copies * 3;
  for (int k = warp; k < p.copies; k += p.producers)
    for (int j = 0; j < 3; ++j) out[3 * k + j] = st[3 * k + j];
}

std::vector<int> Ints(const char* s, const char* dflt) {
  std::vector<int> v;
  std::string t = s ? s : dflt;
  for (size_t at = 0; at <= t.size();) {
    const size_t c = std::min(t.find(',', at), t.size());
    if (c > at) v.push_back(std::atoi(t.substr(at, c - at).c_str()));
    at = c + 1;
  }
  return v;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int main(int argc, char** argv) {
  const std::vector<int> sizes = Ints(argc > 1 ? argv[1] : nullptr, "256,2048,8192,32768");
  const int copies = std::min(kMaxCopies, std::atoi(argc > 2 ? argv[2] : "8"));
  const std::vector<int> per_sm = Ints(argc > 3 ? argv[3] : nullptr, "1,2");
  const int busy_warps = std::getenv("BUSY") ? std::atoi(std::getenv("BUSY")) : 16;
  const std::vector<int> producers = Ints(std::getenv("PRODUCERS"), "1");
  int dev = 0, sms = 0, clock_khz = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  const double us_per_clk = 1e3 / clock_khz;
  const long long src_bytes = 2LL << 30;
  unsigned char* src = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&src, src_bytes));
  CK(cudaMemset(src, 1, src_bytes));
  CK(cudaMalloc(&sink, 4096));
  const int max_blocks = sms * 4;
  unsigned long long* stamps = nullptr;
  CK(cudaMalloc(&stamps, sizeof(unsigned long long) * max_blocks * copies * 3));
  CK(cudaFuncSetAttribute(BulkKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::printf("SM clock %.0f MHz; %d copies a block; medians over blocks, us after the first issue began\n",
              clock_khz / 1e3, copies);
  long long base = 0;
  for (int prod : producers)
    for (int busy : {0, busy_warps})
      for (int hint : {0, 1})
        for (int bps : per_sm)
          for (int size : sizes) {
          const size_t smem = static_cast<size_t>(size) * copies;
          if (smem * bps > 220 * 1024) continue;
          const int grid = sms * bps;
          std::vector<double> ev;
          std::vector<std::vector<double>> iss(copies), arr(copies);
          for (int rep = 0; rep < 5; ++rep) {
            Params p{src, src_bytes, base, size, copies, hint, busy ? 4000 : 0, stamps, sink, prod};
            base = (base + static_cast<long long>(grid) * copies * size + (1 << 20)) % src_bytes;
            CK(cudaEventRecord(e0));
            BulkKernel<<<grid, 32 * (prod + busy), smem>>>(p);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep == 0) continue;  // warm-up
            ev.push_back(ms * 1e3);
            std::vector<unsigned long long> h(static_cast<size_t>(grid) * copies * 3);
            CK(cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost));
            for (int b = 0; b < grid; ++b) {
              const unsigned long long* s = &h[static_cast<size_t>(b) * copies * 3];
              for (int k = 0; k < copies; ++k) {
                iss[k].push_back((s[3 * k + 1] - s[0]) * us_per_clk);
                arr[k].push_back((s[3 * k + 2] - s[0]) * us_per_clk);
              }
            }
          }
          std::printf("size %6d  blocks/SM %d  hint %d  busy %2d  producers %d | event %6.2f us | issued:", size, bps,
                      hint, busy ? busy_warps : 0, prod, Median(ev));
          for (int k = 0; k < copies; ++k) std::printf(" %.2f", Median(iss[k]));
          std::printf(" | arrived:");
          for (int k = 0; k < copies; ++k) std::printf(" %.2f", Median(arr[k]));
          std::printf("\n");
        }
  return 0;
}
