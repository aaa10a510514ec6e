#ifndef SPARSE_CUDA_COMMON_CONVERT_H_
#define SPARSE_CUDA_COMMON_CONVERT_H_
// Host interface of small device-side conversions. No device code here.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace sparse {

// out[i] = (int16_t)in[i] for i < count, on `stream`. `in`: device, count int32, each in
// [0, 32768) (the caller validated the column indices); `out`: device, count int16.
// Sputnik's mixed-precision SpMM reads 16-bit column indices: half the index bytes.
cudaError_t CudaIndicesToInt16(const int* in, int16_t* out, int count, cudaStream_t stream);

}  // namespace sparse
#endif  // SPARSE_CUDA_COMMON_CONVERT_H_
