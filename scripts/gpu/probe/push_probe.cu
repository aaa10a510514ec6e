// Workbench: one st.async message between the two blocks of a cluster, the streaming engine's
// ClusterPush (native/cuda/spmm/stream_engine.cuh) reduced to its protocol, to tell
// compute-sanitizer's racecheck limits from a fault of ours (issue 23, docs/stream-engine.md,
// next step 6: racecheck gave no summary in 70-400 s on ClusterPush, where ClusterReduce
// finishes in seconds with 0 hazards; synccheck and memcheck were clean). No addon, no cuBLAS.
// Build and run on the GPU machine:
//   nvcc -std=c++17 -O3 -I. -Inative -DSPARSE_WITH_CUDA=1 -gencode arch=compute_90a,code=sm_90a \
//     --expt-relaxed-constexpr scripts/gpu/probe/push_probe.cu -o /tmp/pp
//   /tmp/pp FORM [CLUSTERS]      FORM: engine | allwait | reduce; CLUSTERS default 66
//   timeout 120 compute-sanitizer --tool racecheck /tmp/pp engine 1
// Each cluster of 2 blocks (256 threads, 8 warps) has per warp 8 float4 a lane of "sums". Warp
// w's sums are added in block w % 2: a warp of the other block sends them into that block's
// area with st.async, completing the bytes its barrier expects; the receiving warp waits for
// the barrier (acquire at cluster scope), adds them to its own and writes the result.
// Forms:
//   engine   as ClusterPush: the barrier initialised and armed (one arrival, expect_tx of every
//            byte) by thread 0, every thread arrives on the cluster barrier (relaxed); only the
//            sending warps wait on it before they send, the receivers never do
//   allwait  the same, every warp waiting on the cluster barrier before it sends or receives
//   reduce   no st.async: each block writes its sums into the partner's area with plain
//            shared::cluster stores between two full cluster barriers (ClusterReduce's order)
// Prints `push FORM: N clusters, F wrong values` and exits 1 on any wrong value (the output is
// poisoned with NaN before the launch).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/spmm/stream_engine.cuh"
#include "scripts/gpu/probe/probe_util.h"  // CK, Watchdog

namespace eng = sparse::cuda::engine;

namespace {

constexpr int kWarps = 8, kF4 = 8;
// The area: the barrier (16 bytes), then (kWarps / 2) receiving warps' kF4 float4 a lane.
constexpr int kAreaBytes = 16 + (kWarps / 2) * kF4 * 512;
constexpr int kPushBytes = (kWarps / 2) * kF4 * 512;

// The value warp w of block `rank` of cluster c holds in float4 j, lane l (component q).
__host__ __device__ inline float Sum(int c, int rank, int w, int j, int l, int q) {
  return static_cast<float>(((c * 7 + rank * 3 + w) * 13 + j * 5 + l) % 97) + 0.25f * q;
}

template <int kForm>  // 0 engine, 1 allwait, 2 reduce
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32 * kWarps) PushKernel(float* out) {
  __shared__ __align__(128) unsigned char area[kAreaBytes];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, c = blockIdx.x / 2;
  const uint32_t rank = eng::ClusterRank(), bar = sparse::cuda::SmemAddr(area);
  const uint32_t mine = sparse::cuda::SmemAddr(area + 16) + (w / 2) * kF4 * 512 + 16 * lane;
  float4 acc[kF4];
  for (int j = 0; j < kF4; ++j)
    acc[j] = make_float4(Sum(c, rank, w, j, lane, 0), Sum(c, rank, w, j, lane, 1), Sum(c, rank, w, j, lane, 2),
                         Sum(c, rank, w, j, lane, 3));
  const bool sends = static_cast<uint32_t>(w % 2) != rank;
  if (kForm == 2) {
    // ClusterReduce's order: both blocks' areas exist (barrier 1), the senders store into the
    // partner's, barrier 2 (release / acquire) makes them visible, the receivers read their own.
    eng::ClusterArriveRelaxed();
    eng::ClusterWait();
    if (sends) {
      const uint32_t rbuf = eng::MapaShared(mine, rank ^ 1u);
      for (int j = 0; j < kF4; ++j)
        asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(rbuf + j * 512), "f"(acc[j].x),
                     "f"(acc[j].y), "f"(acc[j].z), "f"(acc[j].w)
                     : "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  } else {
    if (threadIdx.x == 0) {
      eng::MbarInit(bar, 1);
      eng::FenceBarrierInit();
      eng::MbarArriveExpectTx(bar, kPushBytes);  // its one arrival; the phase ends with the bytes
    }
    __syncthreads();
    eng::ClusterArriveRelaxed();
    if (kForm == 1) eng::ClusterWait();
    if (sends) {
      if (kForm == 0) eng::ClusterWait();  // the partner's barrier is initialised
      const uint32_t other = rank ^ 1u, rbar = eng::MapaShared(bar, other), rbuf = eng::MapaShared(mine, other);
      for (int j = 0; j < kF4; ++j) eng::StAsync(rbuf + j * 512, acc[j], rbar);
      return;
    }
    eng::MbarWaitCluster(bar, 0);
  }
  if (sends) return;
  float* o = out + ((static_cast<size_t>(c) * kWarps + w) * kF4) * 128 + 4 * lane;
  for (int j = 0; j < kF4; ++j) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(mine + j * 512));
    o[j * 128 + 0] = acc[j].x + v.x, o[j * 128 + 1] = acc[j].y + v.y;
    o[j * 128 + 2] = acc[j].z + v.z, o[j * 128 + 3] = acc[j].w + v.w;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string form = argc > 1 ? argv[1] : "engine";
  const int clusters = argc > 2 ? std::max(1, std::atoi(argv[2])) : 66;
  void (*kernel)(float*) = form == "engine"    ? PushKernel<0>
                           : form == "allwait" ? PushKernel<1>
                           : form == "reduce"  ? PushKernel<2>
                                               : nullptr;
  if (kernel == nullptr) {
    std::printf("usage: push_probe engine|allwait|reduce [CLUSTERS]\n");
    return 2;
  }
  const size_t floats = static_cast<size_t>(clusters) * kWarps * kF4 * 128;
  sparse::probe::DevBuf out(floats * sizeof(float));
  CK(cudaMemset(out.p, 0xff, out.bytes));  // NaN
  {
    const sparse::probe::Watchdog watch(form.c_str(), 60);
    kernel<<<2 * clusters, 32 * kWarps>>>(static_cast<float*>(out.p));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  std::vector<float> got(floats);
  CK(cudaMemcpy(got.data(), out.p, out.bytes, cudaMemcpyDeviceToHost));
  long long wrong = 0;
  for (int c = 0; c < clusters; ++c)
    for (int w = 0; w < kWarps; ++w) {
      const int rank = w % 2;  // the block that adds warp w's sums
      for (int j = 0; j < kF4; ++j)
        for (int l = 0; l < 32; ++l)
          for (int q = 0; q < 4; ++q) {
            const float want = Sum(c, rank, w, j, l, q) + Sum(c, rank ^ 1, w, j, l, q);
            const float g = got[((static_cast<size_t>(c) * kWarps + w) * kF4 + j) * 128 + 4 * l + q];
            wrong += !(g == want);
          }
    }
  std::printf("push %s: %d clusters, %lld wrong values\n", form.c_str(), clusters, wrong);
  return wrong ? 1 : 0;
}
