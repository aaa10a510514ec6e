// What the bulk copy engine (cp.async.bulk + mbarrier) streams per SM, by copy size, stage
// size, copies in flight and blocks per SM: the producer warp copies a block's contiguous
// range of a 1 GB buffer into a ring of stages; consumer warps only wait and release.
//   copy_probe     prints TB/s per configuration (CUDA events, median of 7)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include "cuda/spmm/stream_engine.cuh"

using namespace sparse::cuda;
using namespace sparse::cuda::engine;

__global__ void __launch_bounds__(160, 1) CopyBench(const unsigned char* src, long long total, int copy_bytes,
                                                     int per_stage, int stages, int lanes, unsigned* sink) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int stage_bytes = copy_bytes * per_stage;
  const uint32_t bars = SmemAddr(smem + stages * stage_bytes);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      MbarInit(bars + 8 * s, 1);
      MbarInit(bars + 8 * (stages + s), 4);
    }
    FenceBarrierInit();
  }
  __syncthreads();
  const long long nst = total / stage_bytes;
  const long long i0 = nst * blockIdx.x / gridDim.x, i1 = nst * (blockIdx.x + 1) / gridDim.x;
  if (warp == 4) {
    int s = 0;
    for (long long i = i0; i < i1; ++i, ++s) {
      const int slot = s % stages;
      if (s >= stages) MbarWait(bars + 8 * (stages + slot), ((s / stages) & 1) ^ 1);
      if (lane == 0) MbarArriveExpectTx(bars + 8 * slot, stage_bytes);
      __syncwarp();
      for (int c = lane; c < per_stage && lane < lanes; c += lanes)
        BulkCopy(SmemAddr(smem + slot * stage_bytes + c * copy_bytes), src + i * stage_bytes + (long long)c * copy_bytes,
                 copy_bytes, bars + 8 * slot);
    }
    return;
  }
  unsigned x = 0;
  int s = 0;
  for (long long i = i0; i < i1; ++i, ++s) {
    const int slot = s % stages;
    MbarWait(bars + 8 * slot, (s / stages) & 1);
    x ^= *reinterpret_cast<const unsigned*>(smem + slot * stage_bytes + 4 * (threadIdx.x & 31));
    __syncwarp();
    if (lane == 0) MbarArrive(bars + 8 * (stages + slot));
  }
  if (x == 0x12345678u) *sink = x;
}

int main(int argc, char** argv) {
  const long long total = argc > 1 ? std::atoll(argv[1]) << 20 : 1ll << 30;
  unsigned char* src;
  unsigned* sink;
  cudaMalloc(&src, total);
  cudaMalloc(&sink, 4);
  cudaMemset(src, 1, total);
  cudaFuncSetAttribute(CopyBench, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::printf("%8s %6s %6s %6s %5s %5s | %7s\n", "copy_B", "per_st", "st_KB", "stages", "cta", "lanes", "TB/s");
  for (int per_sm : {1, 2}) {
    for (int copy : {4096, 8192, 16384}) {
      for (int stage_kb : {16, 32, 64}) {
        const int stage_bytes = stage_kb * 1024;
        if (copy > stage_bytes) continue;
        const int per_stage = stage_bytes / copy;
        const int budget = (per_sm == 1 ? 200 : 100) * 1024;
        const int stages = std::min(8, budget / stage_bytes);
        if (stages < 2) continue;
        for (int lanes : {1, 32}) {
          if (lanes == 32 && per_stage == 1) continue;
          const int smem = stages * stage_bytes + 16 * stages;
          std::vector<float> ts;
          for (int r = 0; r < 8; ++r) {
            cudaEventRecord(e0);
            CopyBench<<<sms * per_sm, 160, smem>>>(src, total, copy, per_stage, stages, lanes, sink);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (r) ts.push_back(ms);
          }
          cudaError_t e = cudaGetLastError();
          if (e != cudaSuccess) {
            std::printf("error %s\n", cudaGetErrorName(e));
            return 1;
          }
          std::sort(ts.begin(), ts.end());
          std::printf("%8d %6d %6d %6d %5d %5d | %7.2f %8.1f us\n", copy, per_stage, stage_kb, stages, per_sm, lanes,
                      total / (ts[ts.size() / 2] * 1e-3) / 1e12, ts[ts.size() / 2] * 1e3);
        }
      }
    }
  }
  return 0;
}
