// The device's ceilings for the roofline figures: device-to-device copy bandwidth and the
// dense GEMM peaks of cuBLAS (fp32, TF32, fp16, bf16), each the median of a few launches.
#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "bench/bench.h"
#include "bench/context.h"
#include "bench/device_util.h"
#include "bench/libs.h"

namespace sparse {
namespace bench {

Ceilings MeasureCeilingsCuda() {
  std::lock_guard<std::mutex> lock(BenchMutex());
  Context& ctx = GetContext();
  Ceilings out;
  cudaStream_t s = ctx.stream;
  Event start, stop;
  const cudaEvent_t a = start.get(), b = stop.get();
  auto time_it = [&](int reps, auto&& fn) {
    fn();
    fn();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      Check(cudaEventRecord(a, s), "cudaEventRecord");
      fn();
      Check(cudaEventRecord(b, s), "cudaEventRecord");
      Check(cudaEventSynchronize(b), "cudaEventSynchronize");
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  size_t free_b = 0, total_b = 0;
  Check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  // Copy bandwidth: 1 GiB device to device (bytes read + written).
  {
    size_t bytes = std::min<size_t>(size_t(1) << 30, free_b / 4);
    DeviceBuffer src, dst;
    AllocateOrThrow(&src, bytes);
    AllocateOrThrow(&dst, bytes);
    Check(cudaMemsetAsync(src.get(), 1, bytes, s), "memset");
    double ms = time_it(10, [&] { Check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s), "copy"); });
    out.copy_gbps = 2.0 * bytes / (ms * 1e-3) / 1e9;
  }
  // GEMM peaks at 8192^3 (smaller when memory is short).
  int n = 8192;
  while (n > 1024 && (size_t)n * n * 4 * 3 > free_b / 2) n /= 2;
  out.gemm_size = n;
  if (!ctx.cublas) {
    out.note = ctx.cublas_reason;
  } else {
    const size_t elems = (size_t)n * n;
    DeviceBuffer A, B, C;
    for (DeviceBuffer* m : {&A, &B, &C}) AllocateOrThrow(m, elems * 4);
    const double flop = 2.0 * n * n * (double)n;
    struct V { DType t; int compute; double* dst; };
    V variants[] = {{DType::kF32, kCublasCompute32F, &out.f32_tflops},
                    {DType::kF32, kCublasCompute32FFastTF32, &out.tf32_tflops},
                    {DType::kF16, kCublasCompute32F, &out.f16_tflops},
                    {DType::kBF16, kCublasCompute32F, &out.bf16_tflops}};
    for (const V& v : variants) {
      try {
        Check(FillNormal(A.get(), elems, v.t, 11, s), "fill");
        Check(FillNormal(B.get(), elems, v.t, 12, s), "fill");
        const cudaDataType t = CudaType(v.t);
        const float alpha = 1.f, beta = 0.f;
        double ms = time_it(5, [&] {
          CheckCublas(GetCublas().GemmEx(ctx.cublas, kCublasOpN, kCublasOpN, n, n, n, &alpha, A.get(), t, n, B.get(),
                                         t, n, &beta, C.get(), t, n, v.compute, kCublasGemmDefault),
                      "cublasGemmEx");
        });
        *v.dst = flop / (ms * 1e-3) / 1e12;
      } catch (const BenchError& e) {
        if (!out.note.empty()) out.note += "; ";
        out.note += e.what();
      }
    }
  }
  return out;
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
