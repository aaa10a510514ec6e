// Device helpers of the benchmark harness; see device_util.h.
#include "bench/device_util.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/random_normal.h"
#include "cuda/common/vector.cuh"

namespace sparse {
namespace bench {
namespace {

// Box-Muller on two 24-bit uniforms from one 64-bit hash (common/random_normal.h).
__device__ __forceinline__ float NormalAt(uint64_t seed, size_t i) {
  float u1, u2;
  UniformPairAt(seed, i, &u1, &u2);
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

using cuda::FromFloat;

template <typename T>
__global__ void FillNormalKernel(T* dst, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = FromFloat<T>(NormalAt(seed, i));
}

template <typename T>
__global__ void DensifyKernel(const int* row_offsets, const int* column_indices, const T* values, int rows,
                              size_t cols, T* dense) {
  int r = blockIdx.x;
  if (r >= rows) return;
  for (int i = row_offsets[r] + threadIdx.x; i < row_offsets[r + 1]; i += blockDim.x)
    dense[r * cols + column_indices[i]] = values ? values[i] : FromFloat<T>(1.0f);
}

__global__ void NarrowKernel(const int* src, int16_t* dst, size_t count) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = static_cast<int16_t>(src[i]);
}

__global__ void SpinKernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

int GridFor(size_t count) {
  size_t blocks = (count + 255) / 256;
  return static_cast<int>(blocks < 65535 ? (blocks ? blocks : 1) : 65535);
}

}  // namespace

cudaError_t FillNormal(void* dst, size_t count, DType dtype, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  switch (dtype) {
    case DType::kF32: FillNormalKernel<<<GridFor(count), 256, 0, stream>>>((float*)dst, count, seed); break;
    case DType::kF16: FillNormalKernel<<<GridFor(count), 256, 0, stream>>>((__half*)dst, count, seed); break;
    case DType::kBF16: FillNormalKernel<<<GridFor(count), 256, 0, stream>>>((__nv_bfloat16*)dst, count, seed); break;
  }
  return cudaGetLastError();
}

cudaError_t Densify(const int* row_offsets, const int* column_indices, const void* values, int rows, int cols,
                    DType dtype, void* dense, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(dense, 0, (size_t)rows * cols * DTypeBytes(dtype), stream);
  if (e != cudaSuccess || rows == 0) return e;
  switch (dtype) {
    case DType::kF32:
      DensifyKernel<<<rows, 128, 0, stream>>>(row_offsets, column_indices, (const float*)values, rows, cols,
                                              (float*)dense);
      break;
    case DType::kF16:
      DensifyKernel<<<rows, 128, 0, stream>>>(row_offsets, column_indices, (const __half*)values, rows, cols,
                                              (__half*)dense);
      break;
    case DType::kBF16:
      DensifyKernel<<<rows, 128, 0, stream>>>(row_offsets, column_indices, (const __nv_bfloat16*)values, rows, cols,
                                              (__nv_bfloat16*)dense);
      break;
  }
  return cudaGetLastError();
}

cudaError_t NarrowIndices(const int* src, int16_t* dst, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  NarrowKernel<<<GridFor(count), 256, 0, stream>>>(src, dst, count);
  return cudaGetLastError();
}

cudaError_t Spin(uint64_t ns, cudaStream_t stream) {
  SpinKernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

}  // namespace bench
}  // namespace sparse
