#ifndef SPARSE_CUDA_COMMON_DEVICE_BUFFER_H_
#define SPARSE_CUDA_COMMON_DEVICE_BUFFER_H_
// RAII owners for device memory and streams (host code; no device code). Every exit path,
// errors included, frees what was allocated.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace sparse {

// A device allocation of `bytes` bytes (cudaMalloc: 256-byte aligned), freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
  ~DeviceBuffer() { Reset(); }

  // Allocates `bytes` (at least 1, so that a zero-length operand still has a valid
  // address). Returns the cudaMalloc status; on failure the buffer stays empty.
  cudaError_t Allocate(size_t bytes) {
    Reset();
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) return e;
    ptr_ = p;
    bytes_ = bytes;
    return cudaSuccess;
  }
  // Allocates and copies `bytes` from host memory `src` (may be pageable).
  cudaError_t Upload(const void* src, size_t bytes, cudaStream_t stream) {
    cudaError_t e = Allocate(bytes);
    if (e != cudaSuccess || bytes == 0) return e;
    return cudaMemcpyAsync(ptr_, src, bytes, cudaMemcpyHostToDevice, stream);
  }
  void Reset() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A non-blocking stream, destroyed on scope exit.
class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaError_t Create() { return cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace sparse
#endif  // SPARSE_CUDA_COMMON_DEVICE_BUFFER_H_
