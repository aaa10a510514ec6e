#ifndef SPARSE_BENCH_DEVICE_UTIL_H_
#define SPARSE_BENCH_DEVICE_UTIL_H_
// Small device helpers of the benchmark harness (device_util.cu): random operands made on
// the device (so large B matrices never cross PCIe or the JS heap) and CSR densification
// for the dense baselines. Host-callable; asynchronous on `stream`.
#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/dtype.h"

namespace sparse {
namespace bench {

// Fills `count` elements of `dtype` at `dst` (device) with pseudo-random standard-normal
// values, a pure function of (seed, index).
cudaError_t FillNormal(void* dst, size_t count, DType dtype, uint64_t seed, cudaStream_t stream);

// dense[rows x cols] (device, row-major, `dtype`) = the CSR matrix (device arrays);
// elements outside the pattern are zero. `values` null means ones.
cudaError_t Densify(const int* row_offsets, const int* column_indices, const void* values, int rows, int cols,
                    DType dtype, void* dense, cudaStream_t stream);

// Narrows int32 column indices to int16 (device to device), for the 16-bit index encoding.
cudaError_t NarrowIndices(const int* src, int16_t* dst, size_t count, cudaStream_t stream);

// A one-thread kernel that busy-waits `ns` nanoseconds of GPU time (%globaltimer) and
// touches no memory: placed before each timed launch so that the host, enqueuing ahead,
// never lets the stream run dry between the start event and the launch.
cudaError_t Spin(uint64_t ns, cudaStream_t stream);

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_DEVICE_UTIL_H_
