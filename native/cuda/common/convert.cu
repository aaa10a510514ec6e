// Device-side conversions (see convert.h).
#include "cuda/common/convert.h"

#include <algorithm>

namespace sparse {
namespace {

__global__ void IndicesToInt16Kernel(const int* __restrict__ in, int16_t* __restrict__ out, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    out[i] = static_cast<int16_t>(__ldg(in + i));
  }
}

}  // namespace

cudaError_t CudaIndicesToInt16(const int* in, int16_t* out, int count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  if (!in || !out) return cudaErrorInvalidValue;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<long long>((count + threads - 1) / threads, 65535LL * 8));
  IndicesToInt16Kernel<<<blocks, threads, 0, stream>>>(in, out, count);
  return cudaGetLastError();
}

}  // namespace sparse
